#include "engine/chunks.h"

#include <algorithm>

namespace clustersweep::engine {

namespace {

bool per_design(spaces::Keep keep) {
  return keep == spaces::Keep::best_per_design || keep == spaces::Keep::pareto_per_design;
}

// Start of part `j` of `n` balanced parts of `total` (no overflow for any 64-bit sizes).
std::uint64_t part_begin(std::uint64_t total, std::uint64_t n, std::uint64_t j) {
  return j * (total / n) + std::min(j, total % n);
}

}  // namespace

ChunkLayout ChunkLayout::make(std::uint64_t design_begin, std::uint64_t design_end,
                              std::uint64_t plan_points, spaces::Keep keep,
                              std::uint64_t target_points) {
  target_points = std::max<std::uint64_t>(target_points, 1);
  plan_points = std::max<std::uint64_t>(plan_points, 1);
  std::uint64_t designs_per_chunk = 1;
  std::uint64_t splits = 1;
  if (plan_points <= target_points || per_design(keep)) {
    designs_per_chunk = std::max<std::uint64_t>(1, target_points / plan_points);
  } else {
    splits = (plan_points + target_points - 1) / target_points;
  }
  return stored(design_begin, design_end, plan_points, keep, designs_per_chunk, splits);
}

ChunkLayout ChunkLayout::stored(std::uint64_t design_begin, std::uint64_t design_end,
                                std::uint64_t plan_points, spaces::Keep keep,
                                std::uint64_t designs_per_chunk, std::uint64_t splits_per_design) {
  ChunkLayout l;
  l.design_begin_ = design_begin;
  l.design_end_ = std::max(design_begin, design_end);
  l.plan_points_ = std::max<std::uint64_t>(plan_points, 1);
  l.keep_ = keep;
  l.designs_per_chunk_ = std::max<std::uint64_t>(designs_per_chunk, 1);
  l.splits_per_design_ = std::clamp<std::uint64_t>(splits_per_design, 1, l.plan_points_);
  if (l.splits_per_design_ > 1) l.designs_per_chunk_ = 1;
  return l;
}

std::uint64_t ChunkLayout::chunks() const noexcept {
  const std::uint64_t designs = design_end_ - design_begin_;
  if (splits_per_design_ > 1) return designs * splits_per_design_;
  return (designs + designs_per_chunk_ - 1) / designs_per_chunk_;
}

Chunk ChunkLayout::chunk(std::uint64_t index) const noexcept {
  Chunk c;
  c.index = index;
  if (splits_per_design_ > 1) {
    const std::uint64_t design = design_begin_ + index / splits_per_design_;
    const std::uint64_t part = index % splits_per_design_;
    c.design_begin = design;
    c.design_end = design + 1;
    c.point_begin = design * plan_points_ + part_begin(plan_points_, splits_per_design_, part);
    c.point_end = design * plan_points_ + part_begin(plan_points_, splits_per_design_, part + 1);
    return c;
  }
  c.design_begin = design_begin_ + index * designs_per_chunk_;
  c.design_end = std::min(design_end_, c.design_begin + designs_per_chunk_);
  c.point_begin = c.design_begin * plan_points_;
  c.point_end = c.design_end * plan_points_;
  return c;
}

std::uint64_t ChunkLayout::slot_offset(std::uint64_t index) const noexcept {
  const Chunk c = chunk(index);
  if (keep_ == spaces::Keep::best_per_design) return c.design_begin - design_begin_;
  return c.point_begin - point_begin();
}

std::uint64_t ChunkLayout::slot_capacity(std::uint64_t index) const noexcept {
  const Chunk c = chunk(index);
  if (keep_ == spaces::Keep::best_per_design) return c.design_end - c.design_begin;
  return c.points();
}

std::uint64_t ChunkLayout::slots() const noexcept {
  if (keep_ == spaces::Keep::best_per_design) return design_end_ - design_begin_;
  return point_end() - point_begin();
}

bool parse_keep(std::string_view text, spaces::Keep& keep) noexcept {
  for (auto k : {spaces::Keep::all, spaces::Keep::feasible, spaces::Keep::best_per_design,
                 spaces::Keep::pareto_per_design})
    if (text == spaces::to_string(k)) {
      keep = k;
      return true;
    }
  return false;
}

std::uint64_t shard_design_begin(std::uint64_t designs, std::uint32_t index,
                                 std::uint32_t count) noexcept {
  if (count == 0) return 0;
  return part_begin(designs, count, std::min(index, count));
}

}  // namespace clustersweep::engine
