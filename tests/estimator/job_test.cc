// The job model (estimator/job.h): failures, checkpoints, restarts and the goodput they leave.
#include "estimator/job.h"

#include <gtest/gtest.h>

#include <cmath>

namespace clustersweep::estimator {
namespace {

// Llama 3.1 405B's training state: bf16 weights, fp32 master weights and Adam moments.
constexpr double kState405b = 405e9 * 14;

TEST(JobModel, DefaultsReproduceLlama3sFailureRate) {
  const Reliability r;
  const auto d = job_design(r, 16384, 2048, kState405b);
  // 419 unexpected interruptions in 54 days.
  EXPECT_NEAR(d.failures_per_s * 86400 * 54, 419, 1e-9);
  // 5.67 TB at 2 TB/s (the storage system's limit, below 2048 nodes x 2 GB/s).
  EXPECT_NEAR(d.checkpoint_write_s, kState405b / 2e12, 1e-9);
  EXPECT_DOUBLE_EQ(d.checkpoint_stall_s, d.checkpoint_write_s);
  const auto job = job_outcome(d, 6.0, 1e6);
  EXPECT_GT(job.goodput, 0.85);
  EXPECT_LT(job.goodput, 0.97);
  EXPECT_DOUBLE_EQ(job.wall_s, 6.0 * 1e6 / job.goodput);
}

TEST(JobModel, TheIntervalIsTheBestOneAndDalysApproximationIsClose) {
  for (const double gpus : {64.0, 1024.0, 16384.0, 131072.0}) {
    const auto d = job_design(Reliability{}, gpus, gpus / 8, kState405b);
    const double best = job_outcome(d, 1e-3, 1).goodput;
    for (const double f : {0.5, 0.9, 0.99, 1.01, 1.1, 2.0}) {
      auto other = d;
      other.best_interval_s *= f;
      EXPECT_LE(job_outcome(other, 1e-3, 1).goodput, best) << gpus << " " << f;
    }
    // Daly's higher-order approximation (2006, eq. 37).
    const double m = 1 / d.failures_per_s, delta = d.checkpoint_stall_s;
    const double x = std::sqrt(delta / (2 * m));
    const double daly = std::sqrt(2 * delta * m) * (1 + x / 3 + x * x / 9) - delta;
    EXPECT_NEAR(d.best_interval_s / daly, 1, 0.02) << gpus;
  }
}

TEST(JobModel, GoodputFallsWithTheClusterAndRisesWithTheStorage) {
  const Reliability r;
  double previous = 1;
  for (const double gpus : {1024.0, 4096.0, 16384.0, 65536.0}) {
    const double goodput = job_outcome(job_design(r, gpus, gpus / 8, kState405b), 5, 1e5).goodput;
    EXPECT_LT(goodput, previous) << gpus;
    previous = goodput;
  }
  previous = 0;
  for (const double per_node : {0.25, 1.0, 4.0}) {
    Reliability faster = r;
    faster.storage_gbytes_per_s_per_node = per_node;
    faster.storage_gbytes_per_s = 1e9;
    const double goodput = job_outcome(job_design(faster, 16384, 2048, kState405b), 5, 1e5).goodput;
    EXPECT_GT(goodput, previous) << per_node;
    previous = goodput;
  }
  // An asynchronous save stalls for the snapshot only.
  Reliability async = r;
  async.async_snapshot_gbytes_per_s = 20;
  const auto sync_job = job_outcome(job_design(r, 16384, 2048, kState405b), 5, 1e5);
  const auto d = job_design(async, 16384, 2048, kState405b);
  EXPECT_NEAR(d.checkpoint_stall_s, kState405b / 16384 / 20e9, 1e-12);
  EXPECT_GT(job_outcome(d, 5, 1e5).goodput, sync_job.goodput);
}

// The plan search bounds a box by its least step time: the wall time must grow with the step
// and the goodput must not.
TEST(JobModel, WallTimeGrowsAndGoodputDoesNotWithTheStep) {
  for (const double gpus : {8.0, 16384.0, 1e6}) {
    const auto d = job_design(Reliability{}, gpus, gpus / 8, kState405b);
    double wall = 0, goodput = 1;
    for (double step = 1e-3; step < 1e5; step *= 1.07) {
      const auto job = job_outcome(d, step, 1000);
      EXPECT_GT(job.wall_s, wall) << gpus << " " << step;
      EXPECT_LE(job.goodput, goodput) << gpus << " " << step;
      EXPECT_GE(job.checkpoint_interval_s, step);
      wall = job.wall_s;
      goodput = job.goodput;
    }
  }
}

TEST(JobModel, NoFailuresMeansNoCheckpointsAndNoLoss) {
  Reliability r;
  r.gpu_mtbf_hours = std::numeric_limits<double>::infinity();
  const auto job = job_outcome(job_design(r, 16384, 2048, kState405b), 6, 1000);
  EXPECT_EQ(job.goodput, 1);
  EXPECT_EQ(job.wall_s, 6000);
  EXPECT_TRUE(std::isinf(job.checkpoint_interval_s));
}

}  // namespace
}  // namespace clustersweep::estimator
