#pragma once
// Evaluates the points of one chunk through the estimator of the space's family and reduces them
// by the keep mode into rows of the store's schema, in point-id order (docs/engine.md, "Keep
// modes"). Pure computation: no MPI, no HDF5.
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/chunks.h"
#include "engine/schema.h"
#include "spaces/space.h"

namespace clustersweep::engine {

// One family's evaluation of a chunk's points into rows (engine/evaluate_<family>.h).
class FamilyEvaluator {
 public:
  virtual ~FamilyEvaluator() = default;
  virtual void start(const Chunk& chunk) = 0;
  virtual bool advance(std::uint64_t points) = 0;
  virtual const RowBlock& rows() const noexcept = 0;
  virtual std::uint64_t points_evaluated() const noexcept = 0;
};

// What the scheduler drives, whatever the space's family: the family's own evaluator behind it.
class ChunkEvaluator {
 public:
  // `schema` must be make_schema(space).
  ChunkEvaluator(const spaces::Space& space, const Schema& schema);

  void start(const Chunk& chunk) { family_->start(chunk); }
  // Evaluates up to `points` more points; true once the whole chunk is evaluated and reduced.
  bool advance(std::uint64_t points) { return family_->advance(points); }
  // The chunk's kept rows, in point-id order (complete once advance() returned true).
  const RowBlock& rows() const noexcept { return family_->rows(); }
  std::uint64_t points_evaluated() const noexcept { return family_->points_evaluated(); }

 private:
  std::unique_ptr<FamilyEvaluator> family_;
};

// The value of a point the keep modes best-per-design minimize: its step, its time or energy to
// train over `steps` steps, or the cost of that time and energy under `pricing`.
double objective_value(spaces::Objective objective, const spaces::Pricing& pricing, double step_s,
                       double energy_per_step_j, double steps, double num_gpus) noexcept;

// The Pareto-optimal candidates (minimizing step time and energy per step) of one design, as
// indices into `time`/`energy`, ascending. A point is dropped only when another is no worse in both
// and better in one; exact ties are all kept.
std::vector<std::size_t> pareto_front(const std::vector<double>& time,
                                      const std::vector<double>& energy);

}  // namespace clustersweep::engine
