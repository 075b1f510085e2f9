#pragma once
// Fitting Calibration parameters to measured step times (`clustersweep validate --fit`).
// Pure and deterministic: the same samples and start give the same result on every machine.
#include <string>
#include <vector>

#include "estimator/dlrm.h"
#include "estimator/estimator.h"

namespace clustersweep::estimator {

// One measured run: what was run and the measured seconds per optimizer step.
struct Sample {
  Workload workload;
  Cluster cluster;
  Plan plan;
  double measured_step_s = 0;
  double weight = 1;  // relative weight in the objective
};

// The error of a prediction: predicted / measured - 1.
inline double relative_error(double predicted_s, double measured_s) {
  return predicted_s / measured_s - 1.0;
}

struct FitOptions {
  int sweeps = 12;                // coordinate-descent passes over all parameters
  int grid_points = 9;            // points per line search, then golden-section refinement
  std::vector<std::string> only;  // fit only these parameters (empty: all with lo < hi)
  // Weight of a weak prior that pulls each fitted parameter towards its value in `start`:
  // prior_weight * sum(((x - start) / (hi - lo))^2) is added to the objective. It only decides
  // between calibrations the data cannot tell apart (a MAP estimate with a wide Gaussian prior).
  double prior_weight = 0.02;
};

struct FitResult {
  Calibration calibration;
  double objective_before = 0;  // weighted mean |log(predicted/measured)| (without the prior)
  double objective_after = 0;
  int evaluations = 0;
};

// The weighted mean of |log(predicted / measured)| over the samples; feasibility is ignored (a
// measured run ran), structurally invalid samples must be filtered out by the caller.
double fit_objective(const std::vector<Sample>& samples, const Calibration& calibration);

// Coordinate descent on the objective: for each parameter in calibration_fields() order, a grid
// over its bracket followed by golden-section refinement; the bracket shrinks each sweep.
FitResult fit_calibration(const std::vector<Sample>& samples, const Calibration& start,
                          const FitOptions& options = {});

// One measured recommendation-model run: its sharding (placed by the planner, or the planner's
// best) and the measured seconds per step.
struct DlrmSample {
  DlrmWorkload workload;
  Cluster cluster;
  bool best_sharding = false;
  Sharding sharding = Sharding::table_wise;
  double measured_step_s = 0;
  double weight = 1;
};
// The predicted step of a sample with its plan placed under `calibration`.
double predict_step_s(const DlrmSample& sample, const Calibration& calibration);
// As above for the DLRM family: the fit moves only the [dlrm] parameters.
double fit_objective(const std::vector<DlrmSample>& samples, const Calibration& calibration);
FitResult fit_calibration(const std::vector<DlrmSample>& samples, const Calibration& start,
                          const FitOptions& options = {});

}  // namespace clustersweep::estimator
