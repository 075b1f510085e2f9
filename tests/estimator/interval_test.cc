// Prediction intervals: the split-conformal quantiles of held-out residuals, each group predicted
// by a fit that never saw it, and the coverage check on groups left out.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>

#include "estimator/fit.h"

namespace clustersweep::estimator {
namespace {

std::vector<double> one_to(int n) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

TEST(Interval, ConformalQuantilesAreTheOrderStatisticsOfTheirRanks) {
  // n = 99: the 5th and the 95th smallest.
  LogInterval i = conformal_interval(one_to(99), 0.9);
  EXPECT_EQ(i.lo, 5);
  EXPECT_EQ(i.hi, 95);
  // The order does not matter, and what is not a number is not a residual.
  std::vector<double> shuffled = {7, 3, std::nan(""), 19, 1,  12, 5,  18, 2, 4, 6,
                                  8, 9, 10,           11, 13, 14, 15, 16, 17};
  i = conformal_interval(shuffled, 0.9);
  EXPECT_EQ(i.lo, 1);  // n = 19: floor(20 x 0.05) = 1, ceil(20 x 0.95) = 19
  EXPECT_EQ(i.hi, 19);
  // Below 19 residuals a 90% interval is unbounded.
  i = conformal_interval(one_to(18), 0.9);
  EXPECT_EQ(i.lo, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(i.hi, std::numeric_limits<double>::infinity());
}

TEST(Interval, GroupCoverageUsesOnlyTheOtherGroupsResiduals) {
  // Group 0 holds 1..19, group 1 a single residual of 100: group 1's interval is 1..19 and misses
  // it; group 0's comes from one residual and is unbounded.
  std::vector<double> residuals = one_to(19);
  std::vector<int> group(19, 0);
  residuals.push_back(100);
  group.push_back(1);
  const auto c = group_coverage(residuals, group, 0.9);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].samples, 19u);
  EXPECT_EQ(c[0].covered, 19u);
  EXPECT_TRUE(std::isinf(c[0].interval.hi));
  EXPECT_EQ(c[1].samples, 1u);
  EXPECT_EQ(c[1].covered, 0u);
  EXPECT_EQ(c[1].interval.lo, 1);
  EXPECT_EQ(c[1].interval.hi, 19);
}

// Two "sources" whose measured steps are 10% slower and 10% faster than a calibration predicts:
// each group's residual comes from the fit on the other group alone.
TEST(Interval, EachGroupIsPredictedByTheFitOnTheOthers) {
  std::vector<Sample> samples;
  std::vector<int> group;
  const Calibration truth;
  for (int hidden : {2048, 4096, 8192})
    for (int g : {0, 1}) {
      Sample s;
      s.workload.model = {16, hidden, hidden / 128, hidden / 128, 4 * hidden, Mlp::gelu, 50000};
      s.workload.seq_len = 2048;
      s.workload.global_batch = 64;
      s.cluster.gpu.peak_flops[static_cast<int>(Precision::bf16)] = 312e12;
      s.cluster.gpu.hbm_bytes = s.cluster.hbm_bytes = 80e9;
      s.cluster.gpu.hbm_bytes_per_s = 2e12;
      s.cluster.num_gpus = s.cluster.gpus_per_node = s.cluster.nvlink_domain = 8;
      s.cluster.nvlink_bytes_per_s = 300e9;
      s.cluster.inter_node_bytes_per_s = 25e9;
      s.plan.dp = 8;
      s.measured_step_s = predict_step_s(s, truth) * (g == 0 ? 1.1 : 0.9);
      samples.push_back(s);
      group.push_back(g);
    }
  FitOptions options;
  options.sweeps = 2;
  options.only = {"per_step_overhead_s", "gemm_eff_max"};
  const std::vector<double> r = held_out_log_residuals(samples, group, truth, options);
  for (int g : {0, 1}) {
    std::vector<Sample> others;
    for (std::size_t i = 0; i < samples.size(); ++i)
      if (group[i] != g) others.push_back(samples[i]);
    const Calibration fitted = fit_calibration(others, truth, options).calibration;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      if (group[i] != g) continue;
      EXPECT_EQ(r[i], std::log(samples[i].measured_step_s / predict_step_s(samples[i], fitted)));
    }
  }
  // A fit on the faster source predicts the slower one too fast: its residuals are positive.
  EXPECT_GT(r[0], 0.1);
  EXPECT_LT(r[1], -0.1);
}

}  // namespace
}  // namespace clustersweep::estimator
