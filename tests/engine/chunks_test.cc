#include "engine/chunks.h"

#include <gtest/gtest.h>

namespace clustersweep::engine {
namespace {

using spaces::Keep;

// Chunks tile [point_begin, point_end) in order, and slots tile [0, slots()) in order.
void expect_tiling(const ChunkLayout& l) {
  std::uint64_t point = l.point_begin();
  std::uint64_t slot = 0;
  for (std::uint64_t k = 0; k < l.chunks(); ++k) {
    const Chunk c = l.chunk(k);
    EXPECT_EQ(c.index, k);
    EXPECT_EQ(c.point_begin, point) << k;
    EXPECT_GT(c.point_end, c.point_begin) << k;
    EXPECT_EQ(l.slot_offset(k), slot) << k;
    point = c.point_end;
    slot += l.slot_capacity(k);
  }
  EXPECT_EQ(point, l.point_end());
  EXPECT_EQ(slot, l.slots());
}

TEST(ChunkLayout, WholeDesignsWhenAChunkHoldsSeveral) {
  const ChunkLayout l = ChunkLayout::make(0, 10, 100, Keep::all, 350);
  EXPECT_EQ(l.designs_per_chunk(), 3u);
  EXPECT_EQ(l.splits_per_design(), 1u);
  EXPECT_EQ(l.chunks(), 4u);
  EXPECT_EQ(l.chunk(3).design_begin, 9u);
  EXPECT_EQ(l.chunk(3).design_end, 10u);
  EXPECT_EQ(l.chunk(3).point_begin, 900u);
  EXPECT_EQ(l.chunk(3).point_end, 1000u);
  expect_tiling(l);
}

TEST(ChunkLayout, BalancedPartsOfADesignWhenItIsTooBig) {
  const ChunkLayout l = ChunkLayout::make(2, 5, 1000, Keep::feasible, 300);
  EXPECT_EQ(l.splits_per_design(), 4u);
  EXPECT_EQ(l.chunks(), 12u);
  EXPECT_EQ(l.chunk(0).point_begin, 2000u);
  EXPECT_EQ(l.chunk(0).point_end, 2250u);
  EXPECT_EQ(l.chunk(5).design_begin, 3u);
  expect_tiling(l);
}

TEST(ChunkLayout, PerDesignModesNeverSplitADesign) {
  for (Keep keep : {Keep::best_per_design, Keep::pareto_per_design}) {
    const ChunkLayout l = ChunkLayout::make(0, 7, 1000, keep, 300);
    EXPECT_EQ(l.splits_per_design(), 1u);
    EXPECT_EQ(l.designs_per_chunk(), 1u);
    EXPECT_EQ(l.chunks(), 7u);
    expect_tiling(l);
  }
}

TEST(ChunkLayout, BestPerDesignHasOneSlotPerDesign) {
  const ChunkLayout l = ChunkLayout::make(4, 11, 10, Keep::best_per_design, 25);
  EXPECT_EQ(l.slots(), 7u);
  EXPECT_EQ(l.slot_capacity(0), 2u);
  EXPECT_EQ(l.slot_offset(1), 2u);
  expect_tiling(l);
}

TEST(ChunkLayout, TilesForManySizes) {
  for (std::uint64_t plans : {1, 7, 64, 1000})
    for (std::uint64_t target : {1, 3, 64, 5000})
      for (Keep keep : {Keep::all, Keep::feasible, Keep::best_per_design, Keep::pareto_per_design})
        expect_tiling(ChunkLayout::make(3, 20, plans, keep, target));
}

TEST(ChunkLayout, StoredLayoutIsTheSame) {
  const ChunkLayout a = ChunkLayout::make(0, 50, 333, Keep::all, 100);
  const ChunkLayout b =
      ChunkLayout::stored(0, 50, 333, Keep::all, a.designs_per_chunk(), a.splits_per_design());
  ASSERT_EQ(a.chunks(), b.chunks());
  for (std::uint64_t k = 0; k < a.chunks(); ++k)
    EXPECT_EQ(a.chunk(k).point_end, b.chunk(k).point_end);
}

TEST(Shards, ContiguousInOrderAndBalanced) {
  EXPECT_EQ(shard_design_begin(10, 0, 3), 0u);
  EXPECT_EQ(shard_design_begin(10, 1, 3), 4u);
  EXPECT_EQ(shard_design_begin(10, 2, 3), 7u);
  EXPECT_EQ(shard_design_begin(10, 3, 3), 10u);
  EXPECT_EQ(shard_design_begin(2, 5, 8), 2u);
  EXPECT_EQ(shard_design_begin(2, 8, 8), 2u);
}

TEST(Keep, ParsesTheSpecNames) {
  Keep k = Keep::all;
  EXPECT_TRUE(parse_keep("pareto-per-design", k));
  EXPECT_EQ(k, Keep::pareto_per_design);
  EXPECT_TRUE(parse_keep("best-per-design", k));
  EXPECT_EQ(k, Keep::best_per_design);
  EXPECT_FALSE(parse_keep("best", k));
}

}  // namespace
}  // namespace clustersweep::engine
