#pragma once
// Fitting Calibration parameters to measured step times (`clustersweep validate --fit`).
// Pure and deterministic: the same samples and start give the same result on every machine.
#include <functional>
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
  bool any_row_wise = false;  // the faster row-wise placement (plan_row_wise)
};
// The predicted step of a sample with its plan placed under `calibration`.
double predict_step_s(const DlrmSample& sample, const Calibration& calibration);
// As above for the DLRM family: the fit moves only the [dlrm] parameters.
double fit_objective(const std::vector<DlrmSample>& samples, const Calibration& calibration);
FitResult fit_calibration(const std::vector<DlrmSample>& samples, const Calibration& start,
                          const FitOptions& options = {});

// The [power] parameters fitted on `objective` (the error of the energy validation's metered
// runs, calibration/energy_validation.h), by the same coordinate descent with its prior.
FitResult fit_power_calibration(const Calibration& start,
                                const std::function<double(const Calibration&)>& objective,
                                const FitOptions& options = {});

// ---- Prediction intervals (docs/calibration.md, "Prediction intervals")

// The predicted step of a transformer sample under `calibration`.
double predict_step_s(const Sample& sample, const Calibration& calibration);

// Held-out residuals log(measured / predicted), in sample order: the samples of each group
// (`group[i]`, e.g. a source: one software stack) predicted by the calibration fitted from `start`
// on the samples of the other groups. Runs of one source share their stack's errors, so only a
// residual from a fit that never saw its source tells how far off a new stack's run may be.
std::vector<double> held_out_log_residuals(const std::vector<Sample>& samples,
                                           const std::vector<int>& group, const Calibration& start,
                                           const FitOptions& options = {});
std::vector<double> held_out_log_residuals(const std::vector<DlrmSample>& samples,
                                           const std::vector<int>& group, const Calibration& start,
                                           const FitOptions& options = {});

// The split-conformal interval of log residuals with the given coverage (0.9), on the score
// |residual| (Vovk et al. 2005; Lei et al. 2018): +-q with q the ceil((n+1)coverage)-th
// smallest of the n |residuals|, infinite where that rank falls outside them. The score is the
// one interval_widening() scales, so a point with little support gets +-w q. A prediction p then
// has the interval [p e^lo, p e^hi].
struct LogInterval {
  double lo = 0;
  double hi = 0;
};
LogInterval conformal_interval(std::vector<double> residuals, double coverage);

// How much wider the interval of a point unlike the calibration's runs is (normalized conformal
// with two levels of difficulty, Papadopoulos et al. 2008): the conformal `coverage` quantile of
// |residual| over the runs that were `few` (little support when held out) divided by the same
// quantile over the others. NaN when either set is too small for a finite quantile.
double interval_widening(const std::vector<double>& residuals, const std::vector<bool>& few,
                         double coverage);

// How such intervals do on groups never seen: each group's held-out residuals against the
// conformal interval of the other groups' residuals (the interval its runs would have had). With
// `few` (a run's support was little when held out), such runs get that interval widened by the
// other groups' interval_widening (at least 1).
struct GroupCoverage {
  int group = 0;
  LogInterval interval;
  double widening = 1;  // of the interval of the group's `few` runs
  std::size_t samples = 0;
  std::size_t few = 0;      // of the samples, those with little support
  std::size_t covered = 0;  // residuals inside their interval
};
std::vector<GroupCoverage> group_coverage(const std::vector<double>& residuals,
                                          const std::vector<int>& group, double coverage,
                                          const std::vector<bool>& few = {});

}  // namespace clustersweep::estimator
