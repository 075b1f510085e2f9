#pragma once
// Evaluates the points of one chunk through the estimator of the space's family and reduces them
// by the keep mode into rows of the store's schema, in point-id order (docs/engine.md, "Keep
// modes"). Pure computation: no MPI, no HDF5.
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/chunks.h"
#include "engine/schema.h"
#include "spaces/point_table.h"
#include "spaces/search.h"
#include "spaces/space.h"

namespace clustersweep::engine {

// One family's evaluation of a chunk's points into rows (engine/evaluate_<family>.h).
class FamilyEvaluator {
 public:
  virtual ~FamilyEvaluator() = default;
  virtual void start(const Chunk& chunk) = 0;
  virtual bool advance(std::uint64_t points) = 0;
  virtual const RowBlock& rows() const noexcept = 0;
  // Trades the chunk's rows for `other`, a block of the same schema to fill from the next start().
  virtual void swap_rows(RowBlock& other) noexcept = 0;
  virtual std::uint64_t points_evaluated() const noexcept = 0;
  // Plans the estimator evaluated since construction, over every chunk: one per valid point,
  // or what the plan search evaluated.
  virtual std::uint64_t estimates() const noexcept = 0;
  // The rows of a table of points (spaces/point_table.h) of a keep = "all" space: one row a point,
  // evaluated and appended in the order of `order` (n row indices of the table; the rows of one
  // design together build its estimator once). rows() holds them afterwards.
  virtual void evaluate_table(const spaces::TableDigits& table, const std::size_t* order,
                              std::size_t n) = 0;
};

// What the scheduler drives, whatever the space's family: the family's own evaluator behind it.
class ChunkEvaluator {
 public:
  // `schema` must be make_schema(space).
  // `exhaustive`: per-design keep modes evaluate every plan instead of the exact plan search.
  ChunkEvaluator(const spaces::Space& space, const Schema& schema, bool exhaustive = false);

  void start(const Chunk& chunk) { family_->start(chunk); }
  // Evaluates up to `points` more points; true once the whole chunk is evaluated and reduced.
  bool advance(std::uint64_t points) { return family_->advance(points); }
  // The chunk's kept rows, in point-id order (complete once advance() returned true).
  const RowBlock& rows() const noexcept { return family_->rows(); }
  // Trades the chunk's rows for `other` (of the same schema), which the next chunk fills: so that
  // the rows of one chunk are written while the next is evaluated.
  void swap_rows(RowBlock& other) noexcept { family_->swap_rows(other); }
  std::uint64_t points_evaluated() const noexcept { return family_->points_evaluated(); }
  std::uint64_t estimates() const noexcept { return family_->estimates(); }
  void evaluate_table(const spaces::TableDigits& table, const std::size_t* order, std::size_t n) {
    family_->evaluate_table(table, order, n);
  }

 private:
  std::unique_ptr<FamilyEvaluator> family_;
};

using spaces::objective_value;
using spaces::pareto_front;

}  // namespace clustersweep::engine
