#include "calibration/fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace clustersweep::estimator {

namespace {

// The weighted mean |log(predicted / measured)| of samples of any family; a prediction that is
// not a positive number counts as an error of 10.
template <class Sample, class Predict>
double mean_log_error(const std::vector<Sample>& samples, Predict predict) {
  double sum = 0, weights = 0;
  for (const Sample& s : samples) {
    const double predicted = predict(s);
    const double error = predicted > 0 && std::isfinite(predicted)
                             ? std::fabs(std::log(predicted / s.measured_step_s))
                             : 10.0;
    sum += s.weight * error;
    weights += s.weight;
  }
  return weights > 0 ? sum / weights : 0.0;
}

// Coordinate descent over the fields [begin, end) of `target` (a Calibration or its DlrmCalibration
// part) on objective(calibration), from `start`: for each field a grid over its bracket, then
// golden-section refinement; the bracket shrinks each sweep.
template <class Field, class Part, class Objective>
FitResult coordinate_descent(const Field* begin, const Field* end, Part part,
                             const Calibration& start, const FitOptions& options,
                             Objective objective) {
  FitResult result;
  Calibration best = start;
  int evaluations = 1;
  auto member = [&](Calibration& c, const Field* f) -> double& { return part(c).*(f->member); };
  auto value = [&](const Calibration& c, const Field* f) {
    Calibration copy = c;
    return part(copy).*(f->member);
  };

  std::vector<const Field*> fields;
  for (auto* f = begin; f != end; ++f) {
    if (!(f->lo < f->hi)) continue;
    if (!options.only.empty() &&
        std::find(options.only.begin(), options.only.end(), f->name) == options.only.end())
      continue;
    fields.push_back(f);
  }

  auto penalty = [&](const Calibration& c) {
    double sum = 0;
    for (const Field* f : fields) {
      const double d = (value(c, f) - value(start, f)) / (f->hi - f->lo);
      sum += d * d;
    }
    return options.prior_weight * sum;
  };
  auto value_at = [&](const Field* f, double x) {
    Calibration c = best;
    member(c, f) = x;
    ++evaluations;
    return objective(c) + penalty(c);
  };
  double best_value = objective(best);
  result.objective_before = best_value;
  best_value += penalty(best);

  double fraction = 0.5;  // half-width of the bracket as a fraction of the parameter's range
  for (int sweep = 0; sweep < options.sweeps; ++sweep) {
    for (const Field* f : fields) {
      const double current = std::clamp(value(best, f), f->lo, f->hi);
      const double half_width = fraction * (f->hi - f->lo);
      double lo = std::max(f->lo, current - half_width);
      double hi = std::min(f->hi, current + half_width);
      // Grid: robust to the kinks max() puts into the objective.
      const int n = std::max(options.grid_points, 3);
      double arg = current;
      double arg_value = best_value;
      for (int i = 0; i < n; ++i) {
        const double x = lo + (hi - lo) * i / (n - 1);
        const double y = value_at(f, x);
        if (y < arg_value) {
          arg = x;
          arg_value = y;
        }
      }
      // Golden-section refinement around the best grid point.
      const double step = (hi - lo) / (n - 1);
      double a = std::max(lo, arg - step), b = std::min(hi, arg + step);
      const double g = (std::sqrt(5.0) - 1.0) / 2.0;
      double x1 = b - g * (b - a), x2 = a + g * (b - a);
      double y1 = value_at(f, x1), y2 = value_at(f, x2);
      for (int i = 0; i < 16; ++i) {
        if (y1 < y2) {
          b = x2;
          x2 = x1;
          y2 = y1;
          x1 = b - g * (b - a);
          y1 = value_at(f, x1);
        } else {
          a = x1;
          x1 = x2;
          y1 = y2;
          x2 = a + g * (b - a);
          y2 = value_at(f, x2);
        }
      }
      if (y1 < arg_value) {
        arg = x1;
        arg_value = y1;
      }
      if (y2 < arg_value) {
        arg = x2;
        arg_value = y2;
      }
      if (arg_value < best_value) {
        member(best, f) = arg;
        best_value = arg_value;
      }
    }
    fraction *= 0.6;
  }
  result.calibration = best;
  result.objective_after = objective(best);
  result.evaluations = evaluations;
  return result;
}

// Held-out residuals of samples of any family: one fit per group, on the other groups.
template <class Sample>
std::vector<double> held_out(const std::vector<Sample>& samples, const std::vector<int>& group,
                             const Calibration& start, const FitOptions& options) {
  std::vector<double> residuals(samples.size(), std::numeric_limits<double>::quiet_NaN());
  for (const int held : std::set<int>(group.begin(), group.end())) {
    std::vector<Sample> others;
    for (std::size_t i = 0; i < samples.size(); ++i)
      if (group[i] != held) others.push_back(samples[i]);
    if (others.empty()) continue;
    const Calibration fitted = fit_calibration(others, start, options).calibration;
    for (std::size_t i = 0; i < samples.size(); ++i)
      if (group[i] == held)
        residuals[i] = std::log(samples[i].measured_step_s / predict_step_s(samples[i], fitted));
  }
  return residuals;
}

}  // namespace

double predict_step_s(const Sample& s, const Calibration& calibration) {
  return Estimator(s.workload, s.cluster, calibration).estimate(s.plan).time.total_s;
}

std::vector<double> held_out_log_residuals(const std::vector<Sample>& samples,
                                           const std::vector<int>& group, const Calibration& start,
                                           const FitOptions& options) {
  return held_out(samples, group, start, options);
}

std::vector<double> held_out_log_residuals(const std::vector<DlrmSample>& samples,
                                           const std::vector<int>& group, const Calibration& start,
                                           const FitOptions& options) {
  return held_out(samples, group, start, options);
}

namespace {

// The finite values of `r`, ascending.
std::vector<double> sorted_finite(std::vector<double> r) {
  std::erase_if(r, [](double x) { return !std::isfinite(x); });
  std::sort(r.begin(), r.end());
  return r;
}

// The conformal `coverage` quantile of |values|: the ceil((n+1) coverage)-th smallest of the n
// finite ones, infinite when that rank is beyond them. 0.9 is not exact in binary: a rank that is
// a whole number must not gain one from rounding.
double abs_quantile(std::vector<double> values, double coverage) {
  constexpr double kRankSlack = 1e-9;
  for (double& v : values) v = std::fabs(v);
  const std::vector<double> r = sorted_finite(std::move(values));
  const auto rank = static_cast<std::size_t>(
      std::ceil((static_cast<double>(r.size()) + 1) * coverage - kRankSlack));
  return rank >= 1 && rank <= r.size() ? r[rank - 1] : std::numeric_limits<double>::infinity();
}

}  // namespace

LogInterval conformal_interval(std::vector<double> residuals, double coverage) {
  const double q = abs_quantile(std::move(residuals), coverage);
  return {-q, q};
}

double interval_widening(const std::vector<double>& residuals, const std::vector<bool>& few,
                         double coverage) {
  std::vector<double> flagged, others;
  for (std::size_t i = 0; i < residuals.size(); ++i)
    (few[i] ? flagged : others).push_back(residuals[i]);
  const double q_flagged = abs_quantile(std::move(flagged), coverage);
  const double q_others = abs_quantile(std::move(others), coverage);
  if (!std::isfinite(q_flagged) || !std::isfinite(q_others))
    return std::numeric_limits<double>::quiet_NaN();
  return q_flagged / q_others;
}

std::vector<GroupCoverage> group_coverage(const std::vector<double>& residuals,
                                          const std::vector<int>& group, double coverage,
                                          const std::vector<bool>& few) {
  std::vector<GroupCoverage> out;
  for (const int g : std::set<int>(group.begin(), group.end())) {
    std::vector<double> others;
    std::vector<bool> others_few;
    for (std::size_t i = 0; i < residuals.size(); ++i)
      if (group[i] != g) {
        others.push_back(residuals[i]);
        if (!few.empty()) others_few.push_back(few[i]);
      }
    GroupCoverage c;
    c.group = g;
    if (!few.empty()) {
      const double w = interval_widening(others, others_few, coverage);
      if (w > 1) c.widening = w;
    }
    c.interval = conformal_interval(std::move(others), coverage);
    for (std::size_t i = 0; i < residuals.size(); ++i) {
      if (group[i] != g || !std::isfinite(residuals[i])) continue;
      const bool wide = !few.empty() && few[i];
      const double scale = wide ? c.widening : 1;
      ++c.samples;
      c.few += wide;
      c.covered += residuals[i] >= scale * c.interval.lo && residuals[i] <= scale * c.interval.hi;
    }
    out.push_back(c);
  }
  return out;
}

FitResult fit_calibration(const std::vector<Sample>& samples, const Calibration& start,
                          const FitOptions& options) {
  // The transformer's fields, dense and [moe], are members of Calibration itself.
  return coordinate_descent(
      calibration_fields_begin(), moe_calibration_fields_end(),
      [](Calibration& c) -> Calibration& { return c; }, start, options,
      [&](const Calibration& c) { return fit_objective(samples, c); });
}

double fit_objective(const std::vector<Sample>& samples, const Calibration& calibration) {
  return mean_log_error(samples, [&](const Sample& s) { return predict_step_s(s, calibration); });
}

double fit_objective(const std::vector<DlrmSample>& samples, const Calibration& calibration) {
  return mean_log_error(samples,
                        [&](const DlrmSample& s) { return predict_step_s(s, calibration); });
}

double predict_step_s(const DlrmSample& sample, const Calibration& calibration) {
  const DlrmEstimator estimator(sample.workload, sample.cluster, calibration);
  const DlrmPlan plan = sample.best_sharding  ? plan_best_sharding(estimator)
                        : sample.any_row_wise ? plan_row_wise(estimator)
                                              : plan_sharding(estimator, sample.sharding);
  return estimator.estimate(plan).time.total_s;
}

FitResult fit_power_calibration(const Calibration& start,
                                const std::function<double(const Calibration&)>& objective,
                                const FitOptions& options) {
  return coordinate_descent(
      power_calibration_fields_begin(), power_calibration_fields_end(),
      [](Calibration& c) -> Calibration& { return c; }, start, options, objective);
}

FitResult fit_calibration(const std::vector<DlrmSample>& samples, const Calibration& start,
                          const FitOptions& options) {
  return coordinate_descent(
      dlrm_calibration_fields_begin(), dlrm_calibration_fields_end(),
      [](Calibration& c) -> DlrmCalibration& { return c.dlrm; }, start, options,
      [&](const Calibration& c) { return fit_objective(samples, c); });
}

}  // namespace clustersweep::estimator
