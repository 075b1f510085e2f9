// The request of a submission against the forecast of what its sweep needs.
#include "slurm/sizing.h"

#include <gtest/gtest.h>

namespace clustersweep::slurm {
namespace {

SubmitRequest request(std::uint32_t nodes, std::uint32_t ranks_per_node, std::uint64_t limit_s) {
  SubmitRequest r;
  r.job.nodes = nodes;
  r.job.ntasks_per_node = ranks_per_node;
  r.job.time_limit_s = limit_s;
  r.job.signal_margin_s = default_signal_margin(limit_s);
  return r;
}

TEST(AllocationWarning, SaysWhenTheRequestIsOverTenTimesTheNeed) {
  // The issue's own example: 4 nodes x 64 ranks x 4 hours for 0.6 s of compute.
  EXPECT_EQ(allocation_warning(request(4, 64, 4 * 3600), {0.6, 0}),
            "warning: the forecast puts this sweep at 0.6 s of compute on one core (0.00234 s on "
            "256 ranks): 4 nodes x 64 ranks x 04:00:00 is over 10x that; --time 00:01:00 on 1 "
            "rank would do (--quiet silences this)");
  // Enough ranks, too long a limit: only the limit is named.
  EXPECT_EQ(
      allocation_warning(request(1, 64, 24 * 3600), {64 * 1800, 0}),
      "warning: the forecast puts this sweep at 1.33 days of compute on one core (30 min on 64 "
      "ranks): 1 node x 64 ranks x 1-00:00:00 is over 10x that; --time 01:00:00 would do "
      "(--quiet silences this)");
  // An array task sweeps its shard only.
  auto array = request(1, 4, 3600);
  array.job.array.tasks = 100;
  EXPECT_NE(allocation_warning(array, {4 * 3600, 0})
                .find("each array task's shard at 2.4 min of compute"),
            std::string::npos);
}

TEST(AllocationWarning, KeepsQuietWithinTheForecastsPrecision) {
  EXPECT_EQ(allocation_warning(request(1, 64, 2 * 3600), {64 * 1800, 0}), "");  // 4x
  EXPECT_EQ(allocation_warning(request(1, 1, 600), {60, 0}), "");  // the shortest job Slurm runs
  EXPECT_EQ(allocation_warning(request(1, 8, 60), {1, 0}), "");    // a minute on one node's ranks
}

TEST(AllocationWarning, SaysWhenEveryTurnTogetherIsTooShort) {
  auto chain = request(1, 4, 3600);
  chain.job.continuation = Continuation::segments;
  chain.segments = 3;
  // 4 ranks x 3 segments x (60 - 6) min = 648 rank-minutes of room for 1000.
  EXPECT_EQ(allocation_warning(chain, {1000 * 60, 0}),
            "warning: the forecast puts this sweep at 4.17 h on 4 ranks, more than the 3 x 54 min "
            "before the checkpoint signal that the segments allow: it would stop unfinished; ask "
            "for a longer --time, more ranks or more --segments (--quiet silences this)");
  chain.segments = 5;
  EXPECT_EQ(allocation_warning(chain, {1000 * 60, 0}), "");
  // A requeueing job gets max_requeues + 1 turns.
  auto requeue = request(1, 4, 3600);
  requeue.job.max_requeues = 2;
  EXPECT_NE(allocation_warning(requeue, {1000 * 60, 0}).find("more --max-requeues"),
            std::string::npos);
  requeue.job.max_requeues = 50;
  EXPECT_EQ(allocation_warning(requeue, {1000 * 60, 0}), "");
}

TEST(ThenTimeLimit, IsMinutesForTheStoreItReadsAndNeverLongerThanTheSweeps) {
  EXPECT_EQ(default_then_time_limit({1, 1e6}, 4 * 3600), 300u);
  // 100 GB at 100 MB/s, ten times over: 10,000 s, in whole minutes.
  EXPECT_EQ(default_then_time_limit({1, 100e9}, 4 * 3600), 10020u);
  EXPECT_EQ(default_then_time_limit({1, 1e15}, 4 * 3600), 4u * 3600);
  EXPECT_EQ(default_then_time_limit({1, 1e6}, 120), 120u);
}

}  // namespace
}  // namespace clustersweep::slurm
