#pragma once
// The efficiency parameters of the DLRM model (estimator/dlrm.h): the [dlrm] section of
// calibration.toml, held by estimator::Calibration so one file calibrates every family.

namespace clustersweep::estimator {

// Fitted on ../shared/validation/dlrm_runs.csv (the [dlrm] section of data/calibration.toml).
struct DlrmCalibration {
  double mlp_eff_max = 0.7;            // GEMM efficiency: mlp_eff_max * m / (m + mlp_half_dim)
  double mlp_half_dim = 256;           // on the smallest GEMM dimension m
  double embedding_eff = 0.5;          // achieved fraction of HBM bandwidth for random row gathers
  double cache_speedup = 3;            // hot rows (L2-resident) served this much faster than HBM
  double cache_bytes = 40e6;           // per GPU: L2 that holds hot rows of HBM-resident tables
  double memory_passes = 6;            // elementwise passes over the dense activations per step
  double hbm_eff = 0.8;                // achieved fraction of HBM bandwidth for streaming traffic
  double a2a_eff = 0.6;                // achieved fraction of link bandwidth in all-to-all
  double a2a_overlap = 0.3;            // fraction of the all-to-all hidden (bottom MLP, pipelining)
  double dense_overlap = 0.8;          // fraction of the dense all-reduce hidden behind backward
  double per_table_overhead_s = 2e-6;  // per table and step: kernel work that does not fuse
  double per_step_overhead_s = 1e-3;   // framework overhead per step
  double launch_s = 1e-5;              // host seconds per kernel launch outside a CUDA graph
  double expansion_eff = 0.8;          // achieved fraction of expansion-tier bandwidth
  double workspace_bytes = 1e9;        // CUDA context, library workspaces, per GPU
  // The 90% prediction interval of a step, as Calibration's (docs/calibration.md).
  double interval_lo = 0.660;
  double interval_hi = 1.515;
};

struct DlrmCalibrationField {
  const char* name;
  double DlrmCalibration::*member;
  double lo;
  double hi;
  const char* doc;
};
const DlrmCalibrationField* dlrm_calibration_fields_begin() noexcept;
const DlrmCalibrationField* dlrm_calibration_fields_end() noexcept;

}  // namespace clustersweep::estimator
