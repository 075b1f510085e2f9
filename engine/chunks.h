#pragma once
// How a run cuts its point-id range into chunks, the unit of scheduling, of writing and of resume.
// A chunk is either a run of whole designs or, when one design has more plans than a chunk holds
// (keep = all | feasible only), an equal part of one design. The layout is a pure function of the
// range, the plan count, the keep mode and the target size; it is stored with the run, so a resumed
// run uses the same chunks whatever its rank count.
#include <cstdint>
#include <string_view>

#include "spaces/space.h"

namespace clustersweep::engine {

struct Chunk {
  std::uint64_t index = 0;
  std::uint64_t design_begin = 0;  // designs [design_begin, design_end)
  std::uint64_t design_end = 0;
  std::uint64_t point_begin = 0;  // point ids [point_begin, point_end)
  std::uint64_t point_end = 0;
  std::uint64_t points() const noexcept { return point_end - point_begin; }
};

class ChunkLayout {
 public:
  ChunkLayout() = default;
  // Chunks of about `target_points` points over designs [design_begin, design_end).
  // Per-design keep modes always get whole designs.
  static ChunkLayout make(std::uint64_t design_begin, std::uint64_t design_end,
                          std::uint64_t plan_points, spaces::Keep keep,
                          std::uint64_t target_points);
  // The layout a store recorded.
  static ChunkLayout stored(std::uint64_t design_begin, std::uint64_t design_end,
                            std::uint64_t plan_points, spaces::Keep keep,
                            std::uint64_t designs_per_chunk, std::uint64_t splits_per_design);

  std::uint64_t chunks() const noexcept;
  Chunk chunk(std::uint64_t index) const noexcept;

  // Where a chunk's output rows go in the run's row array and how many it may write. keep = all:
  // one row per point, which is already the final layout. Filtered modes: a staging slot of at
  // most one row per point (feasible, pareto) or per design (best), compacted at the end.
  std::uint64_t slot_offset(std::uint64_t index) const noexcept;
  std::uint64_t slot_capacity(std::uint64_t index) const noexcept;
  std::uint64_t slots() const noexcept;  // rows of the whole row array

  std::uint64_t design_begin() const noexcept { return design_begin_; }
  std::uint64_t design_end() const noexcept { return design_end_; }
  std::uint64_t plan_points() const noexcept { return plan_points_; }
  std::uint64_t point_begin() const noexcept { return design_begin_ * plan_points_; }
  std::uint64_t point_end() const noexcept { return design_end_ * plan_points_; }
  std::uint64_t designs_per_chunk() const noexcept { return designs_per_chunk_; }
  std::uint64_t splits_per_design() const noexcept { return splits_per_design_; }
  spaces::Keep keep() const noexcept { return keep_; }

 private:
  std::uint64_t design_begin_ = 0;
  std::uint64_t design_end_ = 0;
  std::uint64_t plan_points_ = 1;
  std::uint64_t designs_per_chunk_ = 1;
  std::uint64_t splits_per_design_ = 1;
  spaces::Keep keep_ = spaces::Keep::all;
};

// The keep mode named by spaces::to_string(Keep) ("all", "best-per-design", ...); false if none.
bool parse_keep(std::string_view text, spaces::Keep& keep) noexcept;

// Designs [begin, end) of shard `index` of `count`: contiguous, in order, sizes within one.
std::uint64_t shard_design_begin(std::uint64_t designs, std::uint32_t index,
                                 std::uint32_t count) noexcept;

}  // namespace clustersweep::engine
