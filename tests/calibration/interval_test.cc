// Prediction intervals: the split-conformal quantile of held-out absolute residuals, each group
// predicted by a fit that never saw it, and the coverage check on groups left out.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>

#include "calibration/fit.h"

namespace clustersweep::estimator {
namespace {

std::vector<double> one_to(int n) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

TEST(Interval, ConformalIntervalIsPlusMinusTheQuantileOfTheAbsoluteResiduals) {
  // n = 99: the 90th smallest |residual|, ceil(100 x 0.9).
  LogInterval i = conformal_interval(one_to(99), 0.9);
  EXPECT_EQ(i.lo, -90);
  EXPECT_EQ(i.hi, 90);
  // The sign and the order do not matter, and what is not a number is not a residual.
  std::vector<double> mixed = {7, -3, std::nan(""), 19, 1,   -12, 5,  18, -2, 4, 6,
                               8, 9,  -10,          11, -13, 14,  15, 16, 17};
  i = conformal_interval(mixed, 0.9);
  EXPECT_EQ(i.lo, -18);  // n = 19: ceil(20 x 0.9) = 18
  EXPECT_EQ(i.hi, 18);
  // Below 9 residuals a 90% interval is unbounded.
  i = conformal_interval(one_to(8), 0.9);
  EXPECT_EQ(i.lo, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(i.hi, std::numeric_limits<double>::infinity());
  EXPECT_EQ(conformal_interval(one_to(9), 0.9).hi, 9);
}

TEST(Interval, GroupCoverageUsesOnlyTheOtherGroupsResiduals) {
  // Group 0 holds 1..19, group 1 a single residual of 100: group 1's interval is +-18 and misses
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
  EXPECT_EQ(c[1].interval.lo, -18);
  EXPECT_EQ(c[1].interval.hi, 18);
}

TEST(Interval, WideningIsTheRatioOfTheFlaggedRunsQuantile) {
  // Nine runs of |residual| 1..9 unflagged, nine of 2..18 flagged: the 90% quantiles are the 9th
  // (ceil(10 x 0.9)) of each, 9 and 18.
  std::vector<double> residuals;
  std::vector<bool> few;
  for (double r : one_to(9)) {
    residuals.push_back(r);
    few.push_back(false);
    residuals.push_back(-2 * r);  // the sign does not matter
    few.push_back(true);
  }
  EXPECT_EQ(interval_widening(residuals, few, 0.9), 2);
  // Eight flagged runs are too few for a finite 90% quantile.
  residuals.pop_back();
  few.pop_back();
  EXPECT_TRUE(std::isnan(interval_widening(residuals, few, 0.9)));
}

TEST(Interval, GroupCoverageWidensTheFlaggedRunsByTheOtherGroupsWidening) {
  // Groups 0 and 1 each hold unflagged runs 1..19 and flagged runs twice their size: their
  // residuals' interval is +-32 (the 70th of 76, ceil(77 x 0.9)), and the flagged runs' 90%
  // quantile is twice the others'. A flagged run of 50 in group 3 falls outside +-32 but inside
  // +-64.
  std::vector<double> residuals;
  std::vector<int> group;
  std::vector<bool> few;
  for (int g = 0; g < 2; ++g)
    for (double r : one_to(19)) {
      residuals.push_back(r);
      group.push_back(g);
      few.push_back(false);
      residuals.push_back(2 * r);
      group.push_back(g);
      few.push_back(true);
    }
  residuals.push_back(50);
  group.push_back(3);
  few.push_back(true);
  const auto with = group_coverage(residuals, group, 0.9, few);
  const auto without = group_coverage(residuals, group, 0.9);
  ASSERT_EQ(with.size(), 3u);
  EXPECT_EQ(with[2].few, 1u);
  EXPECT_EQ(with[2].widening, 2);
  EXPECT_EQ(with[2].interval.lo, -32);
  EXPECT_EQ(with[2].interval.hi, 32);
  EXPECT_EQ(with[2].covered, 1u);
  EXPECT_EQ(without[2].covered, 0u);
  EXPECT_EQ(without[2].widening, 1);
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
