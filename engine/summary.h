#pragma once
// The short report `clustersweep run` ends with: points, feasible rows, and the best designs by
// the spec's objective (one row per design), read back from the finished store in chunks.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "engine/store_reader.h"
#include "spaces/space.h"

namespace clustersweep::engine {

struct BestRow {
  std::uint64_t row = 0;
  std::uint64_t design_id = 0;
  double objective = 0;
};

// The `top` designs with the lowest objective among feasible rows (one row per design, its best;
// ties keep the lower row), best first. Objective "cost" is priced with the store's attributes.
std::vector<BestRow> best_designs(const StoreReader& store, spaces::Objective objective,
                                  std::size_t top);

// Counts feasible rows.
std::uint64_t count_feasible(const StoreReader& store);

// Prints the table of best designs: the objective, step time, time to train, MFU, energy, cost, the
// design axes that vary in `space` and the plan.
void print_best_designs(const StoreReader& store, const spaces::Space& space, std::size_t top,
                        std::ostream& out);

}  // namespace clustersweep::engine
