// The calibration fit recovers parameters from data generated with them, deterministically.
#include "calibration/fit.h"

#include <gtest/gtest.h>

namespace clustersweep::estimator {
namespace {

std::vector<Sample> synthetic_samples(const Calibration& truth) {
  std::vector<Sample> samples;
  for (int hidden : {2048, 4096, 8192}) {
    for (int tp : {1, 2, 8}) {
      for (int seq : {2048, 8192}) {
        Sample s;
        s.workload.model = {32, hidden, hidden / 128, hidden / 128, 4 * hidden, Mlp::gelu, 50000};
        s.workload.seq_len = seq;
        s.workload.global_batch = 256;
        s.workload.precision = Precision::bf16;
        s.cluster.gpu.peak_flops[static_cast<int>(Precision::bf16)] = 312e12;
        s.cluster.gpu.hbm_bytes = 80e9;
        s.cluster.gpu.hbm_bytes_per_s = 2.0e12;
        s.cluster.num_gpus = 64;
        s.cluster.gpus_per_node = 8;
        s.cluster.nvlink_domain = 8;
        s.cluster.nvlink_bytes_per_s = 300e9;
        s.cluster.inter_node_bytes_per_s = 25e9;
        s.cluster.hbm_bytes = 80e9;
        s.plan.tp = tp;
        s.plan.dp = 64 / tp;
        s.plan.zero = 1;
        s.measured_step_s = Estimator(s.workload, s.cluster, truth).estimate(s.plan).time.total_s;
        samples.push_back(s);
      }
    }
  }
  return samples;
}

TEST(Fit, RecoversKnownParameters) {
  Calibration truth;
  truth.gemm_eff_max = 0.62;
  truth.hbm_eff = 0.55;
  const auto samples = synthetic_samples(truth);
  EXPECT_DOUBLE_EQ(fit_objective(samples, truth), 0.0);
  FitOptions options;
  options.only = {"gemm_eff_max", "hbm_eff"};
  const FitResult fit = fit_calibration(samples, Calibration{}, options);
  EXPECT_GT(fit.objective_before, 0.05);
  EXPECT_LT(fit.objective_after, 1e-3);
  EXPECT_NEAR(fit.calibration.gemm_eff_max, 0.62, 0.01);
  EXPECT_NEAR(fit.calibration.hbm_eff, 0.55, 0.02);
  // Parameters outside `only` keep their start values.
  EXPECT_EQ(fit.calibration.attention_eff, Calibration{}.attention_eff);
}

TEST(Fit, IsDeterministicAndStaysInBounds) {
  Calibration truth;
  truth.attention_eff = 0.35;
  truth.tp_overlap = 0.4;
  const auto samples = synthetic_samples(truth);
  FitOptions options;
  options.sweeps = 3;
  const FitResult a = fit_calibration(samples, Calibration{}, options);
  const FitResult b = fit_calibration(samples, Calibration{}, options);
  EXPECT_EQ(a.objective_after, b.objective_after);
  EXPECT_EQ(a.evaluations, b.evaluations);
  for (auto* f = calibration_fields_begin(); f != calibration_fields_end(); ++f) {
    EXPECT_EQ(a.calibration.*(f->member), b.calibration.*(f->member)) << f->name;
    if (f->lo < f->hi) {
      EXPECT_GE(a.calibration.*(f->member), f->lo) << f->name;
      EXPECT_LE(a.calibration.*(f->member), f->hi) << f->name;
    }
  }
  EXPECT_LE(a.objective_after, a.objective_before);
}

}  // namespace
}  // namespace clustersweep::estimator
