#pragma once
// The short report `clustersweep run` ends with: points, feasible rows, and the best designs by
// the spec's objective (one row per design), read back from the finished store in chunks.
#include <array>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "engine/store_reader.h"
#include "spaces/space.h"

namespace clustersweep::engine {

// One line of the table: the designs whose best plans are equal in every figure the table
// shows, represented by the one on the fewest GPUs, then with the least memory per GPU, then the
// first.
struct BestRow {
  std::uint64_t row = 0;  // the representative's
  double objective = 0;
  std::array<double, 5> figures{};       // time to train, step time, MFU, energy, cost
  double gpus = 0, memory = 0;           // the representative's GPUs and memory per GPU
  std::vector<std::uint64_t> tied_rows;  // the other designs' best rows
};

// The `top` lines with the lowest objective among the feasible rows, one design counted once (its
// best plan, the first of equal ones), best first. A design's rows are contiguous: point ids run
// design by design. Objective "cost" is priced with the store's attributes.
std::vector<BestRow> best_designs(const StoreReader& store, spaces::Objective objective,
                                  std::size_t top);

// Counts feasible rows.
std::uint64_t count_feasible(const StoreReader& store);

// Prints the table of best designs: time to train, step time, MFU, energy, cost, the axes that
// vary in `space`, and for tied designs how many and the settings they differ in.
void print_best_designs(const StoreReader& store, const spaces::Space& space, std::size_t top,
                        std::ostream& out);

}  // namespace clustersweep::engine
