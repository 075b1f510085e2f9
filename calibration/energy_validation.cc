#include "calibration/energy_validation.h"

#include <fmt/format.h>

#include <cmath>

#include "base/csv.h"
#include "estimator/dlrm.h"
#include "spaces/space.h"

namespace clustersweep::spaces {

namespace est = estimator;

double scope_energy_j(const est::StepPower& p, EnergyScope scope, double pue) noexcept {
  switch (scope) {
    case EnergyScope::gpu_only:
      return p.gpu_j;
    case EnergyScope::node:
      return p.node_j;
    case EnergyScope::node_plus_network:
    case EnergyScope::tdp_estimate:
      return p.it_j;
    case EnergyScope::facility:
      return p.it_j * (pue > 0 ? pue : Pricing{}.pue);
  }
  return p.it_j;
}

namespace {

// The step and its power of a row that can be predicted.
struct RowStep {
  double step_s = 0;
  est::StepPower power;
  double gpus = 0;
};
RowStep predict_row(const MeasuredEnergyRun& run, const est::Calibration& c) {
  if (run.dlrm) {
    const est::DlrmEstimator estimator(run.dlrm_point.workload, run.dlrm_point.cluster, c);
    const est::DlrmEstimate e = estimator.estimate(place_tables(run.dlrm_point, estimator));
    return {e.time.total_s, e.power, static_cast<double>(run.dlrm_point.cluster.num_gpus)};
  }
  const est::Estimate e =
      est::Estimator(run.point.workload, run.point.cluster, c).estimate(run.point.plan);
  return {e.time.total_s, e.power, static_cast<double>(run.point.cluster.num_gpus)};
}

EnergyPrediction predict(const MeasuredEnergyRun& run, const est::Calibration& c) {
  EnergyPrediction out{run.id, run.source,     run.family, run.scope,  run.measured_kwh,
                       0,      run.measured_w, 0,          run.reason, false};
  if (!run.reason.empty()) return out;
  const RowStep row = predict_row(run, c);
  const double step_j = scope_energy_j(row.power, run.scope, run.pue);
  const double before_pue = run.scope == EnergyScope::facility ? row.power.it_j : step_j;
  out.predicted_kwh = run.steps * step_j / 3.6e6;
  out.predicted_w = before_pue / (row.gpus * row.step_s);
  out.predicted = std::isfinite(out.predicted_kwh) && out.predicted_kwh > 0;
  out.reason = fmt::format("{:.0f} steps from {}", run.steps, run.steps_from);
  return out;
}

}  // namespace

EnergyReport validate_energy(const std::vector<MeasuredEnergyRun>& runs,
                             const est::Calibration& calibration) {
  EnergyReport report;
  std::vector<double> power, energy;
  for (const MeasuredEnergyRun& run : runs) {
    EnergyPrediction p = predict(run, calibration);
    if (p.predicted) {
      energy.push_back(std::fabs(p.predicted_kwh / p.measured_kwh - 1));
      if (p.measured_w > 0) power.push_back(std::fabs(p.predicted_w / p.measured_w - 1));
    } else {
      ++report.unpredicted;
    }
    report.rows.push_back(std::move(p));
  }
  report.power = error_stats(power);
  report.energy = error_stats(energy);
  return report;
}

double energy_fit_objective(const std::vector<MeasuredEnergyRun>& runs,
                            const est::Calibration& calibration) {
  double sum = 0;
  int n = 0;
  for (const MeasuredEnergyRun& run : runs) {
    const EnergyPrediction p = predict(run, calibration);
    if (!p.predicted) continue;
    sum += p.measured_w > 0 ? std::fabs(std::log(p.predicted_w / p.measured_w))
                            : std::fabs(std::log(p.predicted_kwh / p.measured_kwh));
    ++n;
  }
  return n > 0 ? sum / n : 0;
}

est::FitResult fit_power(const std::vector<MeasuredEnergyRun>& runs, const est::Calibration& start,
                         int sweeps) {
  est::FitOptions options;
  options.sweeps = sweeps;
  return est::fit_power_calibration(
      start, [&](const est::Calibration& c) { return energy_fit_objective(runs, c); }, options);
}

namespace {
std::string number_or_empty(double x, const char* format) {
  return x > 0 && std::isfinite(x) ? fmt::format(fmt::runtime(format), x) : std::string();
}
}  // namespace

std::string format_energy_csv(const EnergyReport& report) {
  std::string out =
      "id,source,family,energy_scope,measured_energy_kwh,predicted_energy_kwh,"
      "measured_avg_power_w,predicted_avg_power_w,energy_rel_error,power_rel_error,reason\n";
  for (const EnergyPrediction& p : report.rows) {
    const bool power = p.predicted && p.measured_w > 0;
    out += fmt::format(
        "{},{},{},{},{:.6g},{},{},{},{},{},{}\n", csv_quote(p.id), csv_quote(p.source),
        csv_quote(p.family), to_string(p.scope), p.measured_kwh,
        number_or_empty(p.predicted_kwh, "{:.6g}"), number_or_empty(p.measured_w, "{:.4g}"),
        number_or_empty(p.predicted_w, "{:.4g}"),
        p.predicted ? fmt::format("{:.4f}", p.predicted_kwh / p.measured_kwh - 1) : "",
        power ? fmt::format("{:.4f}", p.predicted_w / p.measured_w - 1) : "", csv_quote(p.reason));
  }
  return out;
}

std::string format_energy_report(const EnergyReport& report) {
  std::string out = fmt::format("{:<44} {:<17} {:>10} {:>10} {:>7} {:>7} {:>7} {:>7}\n", "run",
                                "scope", "kWh", "predicted", "error", "W/GPU", "pred.", "error");
  for (const EnergyPrediction& p : report.rows) {
    if (!p.predicted) continue;
    const bool power = p.measured_w > 0;
    out += fmt::format(
        "{:<44} {:<17} {:>10.4g} {:>10.4g} {:>+6.1f}% {:>7} {:>7.0f} {:>7}\n", p.id,
        to_string(p.scope), p.measured_kwh, p.predicted_kwh,
        100 * (p.predicted_kwh / p.measured_kwh - 1),
        power ? fmt::format("{:.0f}", p.measured_w) : "-", p.predicted_w,
        power ? fmt::format("{:+.1f}%", 100 * (p.predicted_w / p.measured_w - 1)) : "-");
  }
  out += fmt::format("predicted {} of {} rows; the others say why in the reason column (-o)\n",
                     report.rows.size() - report.unpredicted, report.rows.size());
  out += fmt::format(
      "average power per GPU: median |error| {:.1f}%, mean {:.1f}%, max {:.1f}% over {} rows\n",
      100 * report.power.median, 100 * report.power.mape, 100 * report.power.max, report.power.n);
  out += fmt::format(
      "energy at each row's scope: median |error| {:.1f}%, mean {:.1f}%, max {:.1f}% over {} "
      "rows\n",
      100 * report.energy.median, 100 * report.energy.mape, 100 * report.energy.max,
      report.energy.n);
  return out;
}

}  // namespace clustersweep::spaces
