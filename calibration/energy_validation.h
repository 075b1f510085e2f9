#pragma once
// Validation of the power model against published, metered training energy
// (../shared/validation/energy_runs.csv): each predicted row's average power per GPU and energy at
// the row's own scope (GPU boards, servers, servers and network, facility), never a TDP estimate
// counted as a measurement (docs/calibration.md, "Energy").
#include <string>
#include <vector>

#include "calibration/fit.h"
#include "calibration/runs.h"
#include "estimator/estimator.h"

namespace clustersweep::spaces {

struct EnergyPrediction {
  std::string id;
  std::string source;
  std::string family;
  EnergyScope scope = EnergyScope::gpu_only;
  double measured_kwh = 0;
  double predicted_kwh = 0;  // 0 when not predicted
  double measured_w = 0;     // per GPU at the scope, before PUE; 0 when the row does not give it
  double predicted_w = 0;
  std::string reason;  // why the row is not predicted; else how its steps were counted
  bool predicted = false;
};

struct EnergyReport {
  std::vector<EnergyPrediction> rows;
  ErrorStats power;   // of |predicted / measured - 1| average power, rows that give it
  ErrorStats energy;  // of |predicted / measured - 1| energy
  std::size_t unpredicted = 0;
};

// The energy of one step at `scope` (facility: with `pue`, or the default [pricing] PUE when 0).
double scope_energy_j(const estimator::StepPower& power, EnergyScope scope, double pue) noexcept;

EnergyReport validate_energy(const std::vector<MeasuredEnergyRun>& runs,
                             const estimator::Calibration& calibration);
// The mean |log(predicted / measured)| over the predicted rows: of the average power where a row
// gives it (what the power model alone decides), else of the energy.
double energy_fit_objective(const std::vector<MeasuredEnergyRun>& runs,
                            const estimator::Calibration& calibration);
// Fits the [power] parameters on the predicted rows from `start`.
estimator::FitResult fit_power(const std::vector<MeasuredEnergyRun>& runs,
                               const estimator::Calibration& start, int sweeps);

// id,source,family,energy_scope,measured_energy_kwh,predicted_energy_kwh,measured_avg_power_w,
// predicted_avg_power_w,energy_rel_error,power_rel_error,reason
std::string format_energy_csv(const EnergyReport& report);
// Per row, then the median and mean absolute errors of power and energy.
std::string format_energy_report(const EnergyReport& report);

}  // namespace clustersweep::spaces
