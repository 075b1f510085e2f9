#include "calibration/validation.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>

#include "base/csv.h"
#include "estimator/dlrm.h"
#include "spaces/design_spec.h"

namespace clustersweep::spaces {
namespace {

namespace est = estimator;

// The best plan of a run's design, searched over every plan with the run's model, cluster, batch
// and precision: its predicted step and the plan as "tp 8 pp 8 ...".
void search_best_plan(const MeasuredRun& run, const est::Calibration& calibration, bool robust,
                      Prediction& out) {
  Settings settings = run.settings;
  // A run with a capacity factor routes by capacity (resolve()); the search keeps its routing,
  // with the one balanced share a sweep gives capacity routing, as it keeps the rest of its stack.
  if (settings.has("capacity_factor") && !settings.has("token_routing"))
    settings.set("token_routing", "capacity", settings.where("capacity_factor"));
  for (const std::string& name : plan_setting_names()) settings.erase(name);
  const Point point = resolve(settings, calibration);
  DesignSpecOptions options;
  options.robust = robust;
  options.more_recomputes = {
      est::recompute_label(run.sample.plan.recompute, run.sample.plan.recompute_modules)};
  const auto search = search_design(settings, point, options, 1, false);
  if (search.plans.empty()) return;
  const est::Plan& p = search.plans.front().plan;
  out.best_step_s = search.plans.front().estimate.time.total_s;
  out.best_plan = fmt::format(
      "tp {} pp {} dp {} cp {} vp {} ep {} etp {} mb {} zero {} sp {} recompute {} offload {} "
      "split {}",
      p.tp, p.pp, p.dp, p.cp, p.vp, p.ep, p.etp, p.micro_batch, p.zero,
      p.sequence_parallel ? "on" : "off", est::recompute_label(p.recompute, p.recompute_modules),
      est::to_string(p.offload), est::to_string(p.pipeline_split));
}

// A row before its prediction: what the runs file gives.
Prediction row_of(const std::string& id, const std::string& source, double measured,
                  const std::string& reason) {
  Prediction out;
  out.id = id;
  out.source = source;
  out.measured = measured;
  out.reason = reason;
  return out;
}

Prediction predict(const MeasuredRun& r, const est::Calibration& calibration, bool best,
                   bool robust) {
  Prediction out = row_of(r.id, r.source, r.measured_s, r.reason);
  out.refused_by_rule = r.refused_by_rule;
  if (!r.reason.empty()) return out;
  out.moe = est::is_moe(r.sample.workload.model);
  out.framework = est::to_string(r.sample.plan.stack.framework);
  const est::Estimate e =
      est::estimate(r.sample.workload, r.sample.cluster, r.sample.plan, calibration);
  const est::StepInterval interval = est::step_interval(calibration, r.sample.workload.model);
  out.predicted = e.time.total_s;
  out.lo = e.time.total_s * interval.lo;
  out.hi = e.time.total_s * interval.hi;
  out.error = est::relative_error(e.time.total_s, r.measured_s);
  out.out_of_memory = e.reason == est::Infeasible::out_of_memory;
  out.memory_bytes = e.memory.hbm_bytes;
  out.repair = r.repair;
  out.defaults = r.defaults;
  if (best) search_best_plan(r, calibration, robust, out);
  return out;
}

// Whether the planner's placement is of the kind a run published: a hybrid placement mixes
// replicated (data-parallel) rows with model-parallel ones; a row-wise one splits rows, per
// table or as one vocabulary; on one GPU every placement is the same.
bool same_kind(const DlrmPoint& point, const est::DlrmPlan& plan, std::string_view published) {
  if (point.cluster.num_gpus <= 1) return true;
  bool replicated = false, split = false, only[est::kNumShardings] = {};
  int kinds = 0;
  for (int t = 0; t < point.workload.model.num_tables; ++t) {
    const est::Sharding s = plan.sharding[t];
    replicated |= s == est::Sharding::data || s == est::Sharding::hybrid;
    split |= s != est::Sharding::data;
    kinds += !only[static_cast<int>(s)];
    only[static_cast<int>(s)] = true;
  }
  using S = est::Sharding;
  auto all = [&](S s) { return kinds == 1 && only[static_cast<int>(s)]; };
  if (published == "hybrid") return only[static_cast<int>(S::hybrid)] || (replicated && split);
  if (published == "row")
    return kinds == 1 && (all(S::row_wise) || all(S::fused_row) || all(S::table_row_wise));
  est::Sharding s{};
  return est::parse_sharding(published, s) && all(s);
}

Prediction predict(const MeasuredDlrmRun& r, const est::Calibration& calibration) {
  Prediction out = row_of(r.id, r.source, r.measured_samples_per_s, r.reason);
  if (!r.reason.empty()) return out;
  const est::DlrmEstimator estimator(r.point.workload, r.point.cluster, calibration);
  const est::DlrmPlan plan = place_tables(r.point, estimator);
  const est::DlrmEstimate e = estimator.estimate(plan);
  out.predicted = e.samples_per_s;
  // Throughput is the inverse of the step: its interval's ends swap.
  out.lo = e.samples_per_s / est::step_interval(calibration.dlrm).hi;
  out.hi = e.samples_per_s / est::step_interval(calibration.dlrm).lo;
  // The error of the step (global batch / throughput), as the transformer runs'.
  out.error = r.measured_samples_per_s / e.samples_per_s - 1;
  out.out_of_memory = e.reason == est::Infeasible::out_of_memory;
  out.sharding = describe_placement(r.point, plan);
  out.target = r.target;
  out.published_sharding = r.published_sharding;
  const auto ranked = rank_shardings(estimator);
  for (const RankedSharding& s : ranked)
    out.ranking += fmt::format("{}{}{}", out.ranking.empty() ? "" : " < ", s.name,
                               s.estimate.feasible ? "" : " (out of memory)");
  if (!r.published_sharding.empty())
    for (const RankedSharding& s : ranked)
      if (s.name == "best") out.planner_matches = same_kind(r.point, s.plan, r.published_sharding);
  return out;
}

// Counts the report's rows and takes the statistics of their errors.
void summarize(ValidationReport& report) {
  std::map<std::string, std::vector<double>> by_source;
  std::vector<double> all;
  for (const Prediction& p : report.rows) {
    if (!p.reason.empty()) {
      ++report.unpredicted;
      report.refused_by_rule += p.refused_by_rule;
      continue;
    }
    all.push_back(std::fabs(p.error));
    by_source[p.source].push_back(std::fabs(p.error));
    report.out_of_memory += p.out_of_memory;
    report.out_of_memory_moe += p.out_of_memory && p.moe;
    report.repaired += !p.repair.empty();
    report.planner_compared += p.planner_matches.has_value();
    report.planner_matched += p.planner_matches.value_or(false);
  }
  for (const auto& [source, errors] : by_source)
    report.errors_by_source[source] = error_stats(errors);
  report.errors = error_stats(std::move(all));
}

std::string measured_text(const Prediction& p) {
  return p.measured > 0 ? fmt::format("{:g}", p.measured) : "";
}

std::string step_time_csv_line(const Prediction& p, bool best) {
  if (!p.reason.empty())
    return fmt::format("{},{},{},,,,,{},,,{}{}\n", csv_quote(p.id), csv_quote(p.source),
                       measured_text(p), p.framework, csv_quote(p.reason), best ? ",," : "");
  std::string line =
      fmt::format("{},{},{:g},{:.6g},{:.6g},{:.6g},{:.6f},{},{:.4g},{},{}", csv_quote(p.id),
                  csv_quote(p.source), p.measured, p.predicted, p.lo, p.hi, p.error, p.framework,
                  p.memory_bytes / 1e9, p.out_of_memory ? "no" : "yes",
                  csv_quote(p.repair.empty() || p.defaults.empty() ? p.repair + p.defaults
                                                                   : p.repair + "; " + p.defaults));
  if (best)
    line +=
        p.best_step_s ? fmt::format(",{:.6g},{}", *p.best_step_s, csv_quote(p.best_plan)) : ",,";
  return line + '\n';
}

std::string throughput_csv_line(const Prediction& p) {
  if (!p.reason.empty())
    return fmt::format("{},{},{},,,,,,,,,{}\n", csv_quote(p.id), csv_quote(p.source),
                       measured_text(p), csv_quote(p.reason));
  const char* matches = !p.planner_matches ? "" : *p.planner_matches ? "yes" : "no";
  return fmt::format("{},{},{:g},{:.6g},{:.6g},{:.6g},{:.6f},{},{},{},{},{}\n", csv_quote(p.id),
                     csv_quote(p.source), p.measured, p.predicted, p.lo, p.hi, p.error,
                     csv_quote(p.sharding), csv_quote(p.published_sharding), matches,
                     csv_quote(p.ranking), csv_quote("compared with " + p.target));
}

RatioStats ratio_stats(const std::string& source, std::vector<double> r) {
  std::sort(r.begin(), r.end());
  RatioStats s;
  s.source = source;
  s.n = r.size();
  s.median = sorted_median(r);
  if (r.empty()) return s;
  s.min = r.front();
  s.max = r.back();
  s.in_band = static_cast<std::size_t>(std::count_if(
      r.begin(), r.end(), [](double x) { return x >= kBestRatioLo && x <= kBestRatioHi; }));
  return s;
}

// A sample's held-out group: one per (family, group name) pair, numbered in order of appearance.
std::vector<int> number_groups(const std::vector<std::string>& family,
                               const std::vector<std::string>& name) {
  std::vector<std::string> keys;
  std::vector<int> group;
  for (std::size_t i = 0; i < family.size(); ++i) {
    const std::string key = family[i] + '\t' + name[i];
    auto at = std::find(keys.begin(), keys.end(), key);
    group.push_back(static_cast<int>(at - keys.begin()));
    if (at == keys.end()) keys.push_back(key);
  }
  return group;
}

template <class Sample>
HeldOut held_out_of(const FitRuns<Sample>& runs, const est::Calibration& start, int sweeps) {
  HeldOut h;
  h.source = runs.groups;
  for (const SupportRun& run : runs.support) h.family.emplace_back(to_string(run.family));
  h.group = number_groups(h.family, h.source);
  for (int support : held_out_support(runs.support, h.group))
    h.few.push_back(support < kFewCalibrationRuns);
  est::FitOptions options;
  options.sweeps = sweeps;
  h.residuals = est::held_out_log_residuals(runs.samples, h.group, start, options);
  return h;
}

// The group's row of the held-out table; appends the half-width of each of its runs' intervals.
HeldOutGroup held_out_group(const HeldOut& h, const est::GroupCoverage& c,
                            std::vector<double>& half_widths) {
  const auto first = static_cast<std::size_t>(std::find(h.group.begin(), h.group.end(), c.group) -
                                              h.group.begin());
  auto half_width = [&c](double scale) {
    return (std::exp(scale * c.interval.hi) - std::exp(scale * c.interval.lo)) / 2;
  };
  half_widths.insert(half_widths.end(), c.samples - c.few, half_width(1));
  half_widths.insert(half_widths.end(), c.few, half_width(c.widening));
  double error_sum = 0;
  std::size_t errors = 0;
  for (std::size_t i = 0; i < h.group.size(); ++i)
    if (h.group[i] == c.group && std::isfinite(h.residuals[i])) {
      error_sum += std::fabs(std::exp(-h.residuals[i]) - 1.0);
      ++errors;
    }
  return {.source = h.source[first],
          .samples = c.samples,
          .covered = c.covered,
          .few = c.few,
          .half_width = half_width(1),
          .lo = std::exp(c.interval.lo),
          .hi = std::exp(c.interval.hi),
          .widening = c.widening,
          .mape = errors > 0 ? error_sum / static_cast<double>(errors) : 0.0};
}

}  // namespace

std::vector<MeasuredRun> read_weighted_runs(const std::vector<std::string>& paths,
                                            const est::Calibration& calibration) {
  std::vector<MeasuredRun> all;
  for (const auto& path : paths) {
    auto rows = read_runs(path, calibration);
    all.insert(all.end(), std::make_move_iterator(rows.begin()),
               std::make_move_iterator(rows.end()));
  }
  std::array<double, 2> predictable{};  // by family: dense, MoE
  for (const auto& r : all)
    if (r.reason.empty()) ++predictable[est::is_moe(r.sample.workload.model)];
  for (auto& r : all)
    r.sample.weight = 1.0 / std::max(1.0, predictable[est::is_moe(r.sample.workload.model)]);
  return all;
}

FitRuns<est::Sample> fit_runs(const std::vector<MeasuredRun>& rows) {
  FitRuns<est::Sample> out;
  for (const auto& r : rows) {
    if (!r.reason.empty()) continue;
    out.samples.push_back(r.sample);
    const est::Workload& w = r.sample.workload;
    out.support.push_back({support_family(w.model), r.gpu, w.precision,
                           regime_of(r.sample.plan, w.model), r.sample.plan.cp});
    out.groups.push_back(r.source);
  }
  return out;
}

// Each source is held out as a whole, as the transformer runs' sources are.
FitRuns<est::DlrmSample> fit_runs(const std::vector<MeasuredDlrmRun>& rows) {
  FitRuns<est::DlrmSample> out;
  for (const auto& r : rows) {
    if (!r.reason.empty()) continue;
    out.groups.push_back(r.source);
    out.support.push_back({SupportFamily::dlrm, r.gpu, r.point.workload.precision,
                           regime_of(r.point.best_sharding, r.point.sharding), 1});
    out.samples.push_back(
        {r.point.workload, r.point.cluster, r.point.best_sharding, r.point.sharding,
         static_cast<double>(r.point.workload.global_batch) / r.measured_samples_per_s, 1,
         r.point.any_row_wise});
  }
  return out;
}

ValidationReport validate_runs(const std::vector<MeasuredRun>& rows,
                               const est::Calibration& calibration, bool best, bool robust) {
  ValidationReport report;
  report.best = best;
  for (const auto& r : rows) report.rows.push_back(predict(r, calibration, best, robust));
  summarize(report);
  return report;
}

ValidationReport validate_runs(const std::vector<MeasuredDlrmRun>& rows,
                               const est::Calibration& calibration) {
  ValidationReport report;
  report.measure = Measure::throughput;
  for (const auto& r : rows) report.rows.push_back(predict(r, calibration));
  summarize(report);
  return report;
}

std::string format_predictions_csv(const ValidationReport& report) {
  const bool step = report.measure == Measure::step_time;
  std::string csv =
      step ? fmt::format(
                 "id,source,measured_step_time_s,predicted_step_time_s,predicted_step_time_s_lo,"
                 "predicted_step_time_s_hi,rel_error,framework,mem_per_gpu_gb,fits_hbm,reason{}\n",
                 report.best ? ",best_step_time_s,best_plan" : "")
           : "id,source,measured_samples_per_s,predicted_samples_per_s,predicted_samples_per_s_lo,"
             "predicted_samples_per_s_hi,rel_error,sharding,published_sharding,planner_matches,"
             "sharding_ranking,reason\n";
  for (const Prediction& p : report.rows)
    csv += step ? step_time_csv_line(p, report.best) : throughput_csv_line(p);
  return csv;
}

std::string format_error_table(const ValidationReport& report) {
  std::string out = fmt::format("{:<24} {:>5} {:>8} {:>8} {:>8} {:>8}\n", "source", "rows", "MAPE",
                                "median", "geomean", "max");
  auto line = [&out](const std::string& name, const ErrorStats& s) {
    out += fmt::format("{:<24} {:>5} {:>7.2f}% {:>7.2f}% {:>7.2f}% {:>7.2f}%\n", name, s.n,
                       100 * s.mape, 100 * s.median, 100 * s.geomean, 100 * s.max);
  };
  for (const auto& [source, stats] : report.errors_by_source) line(source, stats);
  line("all", report.errors);
  return out;
}

std::string format_summary(const ValidationReport& report) {
  std::string out = fmt::format("predicted {} of {} rows", report.errors.n, report.rows.size());
  // A published run did run: a rule that refuses one is named apart, never folded into the rest.
  if (report.unpredicted)
    out += fmt::format(
        "; {} could not be predicted, {} of them refused by a rule (see the reason "
        "column)",
        report.unpredicted, report.refused_by_rule);
  if (report.repaired)
    out += fmt::format("; {} with a misreported plan repaired (see the reason column)",
                       report.repaired);
  if (report.planner_compared)
    out += fmt::format("; the planner picks the published sharding on {} of {} runs",
                       report.planner_matched, report.planner_compared);
  if (report.out_of_memory)
    out += fmt::format(
        "; the memory model puts {} measured runs over HBM capacity ({} dense, {} MoE; "
        "fits_hbm)",
        report.out_of_memory, report.out_of_memory - report.out_of_memory_moe,
        report.out_of_memory_moe);
  return out + '\n';
}

std::string format_report(const ValidationReport& report) {
  const ErrorStats& all = report.errors;
  return format_error_table(report) + format_summary(report) +
         fmt::format("step-time MAPE: {:.2f}%  median: {:.2f}%  geomean: {:.2f}%\n", 100 * all.mape,
                     100 * all.median, 100 * all.geomean);
}

BestRatios best_ratios(const ValidationReport& report) {
  std::map<std::string, std::vector<double>> by_source, by_framework;
  std::vector<double> all;
  for (const Prediction& p : report.rows) {
    if (!p.reason.empty() || !p.best_step_s) continue;
    by_source[p.source].push_back(*p.best_step_s / p.measured);
    by_framework[fmt::format("{} {}", p.framework.empty() ? "any" : p.framework,
                             p.moe ? "moe" : "dense")]
        .push_back(*p.best_step_s / p.measured);
    all.push_back(*p.best_step_s / p.measured);
  }
  BestRatios out;
  for (const auto& [source, ratios] : by_source) out.sources.push_back(ratio_stats(source, ratios));
  for (const auto& [name, ratios] : by_framework)
    out.frameworks.push_back(ratio_stats(name, ratios));
  out.all = ratio_stats("all", std::move(all));
  return out;
}

std::string format_best_ratios(const BestRatios& ratios) {
  std::size_t width = 3;
  for (const RatioStats& s : ratios.sources) width = std::max(width, s.source.size());
  for (const RatioStats& s : ratios.frameworks) width = std::max(width, s.source.size());
  std::string out = fmt::format(
      "\nbest plan's predicted step / measured step\n{:<{}} {:>5} {:>7} {:>7} {:>7} {:>13}\n",
      "source", width, "rows", "median", "min", "max",
      fmt::format("in {:.2f}-{:.2f}", kBestRatioLo, kBestRatioHi));
  auto line = [&out, width](const RatioStats& s) {
    out += fmt::format("{:<{}} {:>5} {:>7.3f} {:>7.3f} {:>7.3f} {:>13}\n", s.source, width, s.n,
                       s.median, s.min, s.max, fmt::format("{} of {}", s.in_band, s.n));
  };
  for (const RatioStats& s : ratios.sources) line(s);
  if (ratios.all.n) line(ratios.all);
  if (!ratios.frameworks.empty())
    out += "by framework (each run's best plan searched within its own)\n";
  for (const RatioStats& s : ratios.frameworks) line(s);
  return out;
}

HeldOut::Family HeldOut::of(const std::string& f) const {
  Family out;
  for (std::size_t i = 0; i < family.size(); ++i)
    if (family[i] == f) {
      out.residuals.push_back(residuals[i]);
      out.group.push_back(group[i]);
      out.few.push_back(few[i]);
    }
  return out;
}

std::vector<std::string> HeldOut::families() const {
  std::vector<std::string> out = family;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

HeldOut held_out(const FitRuns<est::Sample>& runs, const est::Calibration& start, int sweeps) {
  return held_out_of(runs, start, sweeps);
}

HeldOut held_out(const FitRuns<est::DlrmSample>& runs, const est::Calibration& start, int sweeps) {
  return held_out_of(runs, start, sweeps);
}

std::optional<est::StepInterval> held_out_interval(const HeldOut& h, const std::string& family) {
  const est::LogInterval i = est::conformal_interval(h.of(family).residuals, 0.9);
  if (!std::isfinite(i.lo) || !std::isfinite(i.hi)) return std::nullopt;
  return est::StepInterval{std::exp(i.lo), std::exp(i.hi)};
}

std::optional<double> held_out_widening(const HeldOut& h) {
  double w = std::numeric_limits<double>::quiet_NaN();
  for (const std::string& f : h.families()) {
    const HeldOut::Family runs = h.of(f);
    const double wf = est::interval_widening(runs.residuals, runs.few, 0.9);
    if (std::isfinite(wf)) w = std::isfinite(w) ? std::max(w, wf) : wf;
  }
  if (!std::isfinite(w)) return std::nullopt;
  return std::max(1.0, w);
}

void derive_transformer_intervals(const HeldOut& h, est::Calibration& calibration) {
  if (const auto i = held_out_interval(h, "dense"))
    set_family_interval(calibration, SupportFamily::dense, *i);
  if (const auto i = held_out_interval(h, "moe"))
    set_family_interval(calibration, SupportFamily::moe, *i);
  if (const auto w = held_out_widening(h)) calibration.interval_widening = *w;
}

void derive_dlrm_interval(const HeldOut& h, est::Calibration& calibration) {
  if (const auto i = held_out_interval(h, "dlrm"))
    set_family_interval(calibration, SupportFamily::dlrm, *i);
}

HeldOutReport held_out_report(const HeldOut& h) {
  HeldOutReport report;
  std::vector<double> half_widths;  // one per run
  for (const std::string& f : h.families()) {
    const HeldOut::Family runs = h.of(f);
    HeldOutFamily family;
    family.family = f;
    for (const est::GroupCoverage& c :
         est::group_coverage(runs.residuals, runs.group, 0.9, runs.few)) {
      family.groups.push_back(held_out_group(h, c, half_widths));
      family.samples += c.samples;
      family.covered += c.covered;
    }
    std::vector<double> errors;
    for (const double r : runs.residuals)
      if (std::isfinite(r)) errors.push_back(std::fabs(std::exp(-r) - 1.0));
    family.errors = error_stats(std::move(errors));
    report.samples += family.samples;
    report.covered += family.covered;
    report.families.push_back(std::move(family));
  }
  std::sort(half_widths.begin(), half_widths.end());
  report.coverage = static_cast<double>(report.covered) / static_cast<double>(report.samples);
  report.median_half_width = sorted_median(half_widths);
  return report;
}

std::string format_held_out(const HeldOutReport& report) {
  std::size_t width = 6;
  for (const HeldOutFamily& f : report.families)
    for (const HeldOutGroup& g : f.groups) width = std::max(width, g.source.size());
  std::string out = fmt::format(
      "\nheld out: each source (or run) predicted by a fit on the others, in the 90% interval\n"
      "of the others' held-out residuals (measured / predicted); `few`: its runs with fewer than\n"
      "{} like them in the others, whose interval is widened (the exponent `widen`)\n"
      "{:<{}} {:<6} {:>5} {:>7} {:>8} {:>11} {:>7} {:>7} {:>5} {:>6}\n",
      kFewCalibrationRuns, "source", width, "family", "rows", "MAPE", "covered", "half-width", "lo",
      "hi", "few", "widen");
  for (const HeldOutFamily& f : report.families) {
    for (const HeldOutGroup& g : f.groups)
      out += fmt::format(
          "{:<{}} {:<6} {:>5} {:>6.1f}% {:>7.1f}% {:>10.1f}% {:>7.3f} {:>7.3f} {:>5} "
          "{:>6.2f}\n",
          g.source, width, f.family, g.samples, 100 * g.mape, 100.0 * g.covered / g.samples,
          100 * g.half_width, g.lo, g.hi, g.few, g.widening);
    out += fmt::format("{:<{}} {:<6} {:>5} {:>6.1f}% {:>7.1f}%\n", "all", width, f.family,
                       f.samples, 100 * f.errors.mape, 100.0 * f.covered / f.samples);
  }
  for (const HeldOutFamily& f : report.families)
    out += fmt::format("held-out {} MAPE {:.2f}%  median {:.2f}%\n", f.family, 100 * f.errors.mape,
                       100 * f.errors.median);
  return out + fmt::format("held-out coverage {:.1f}% of {} runs, median half-width {:.1f}%\n",
                           100.0 * report.covered / report.samples, report.samples,
                           100 * report.median_half_width);
}

}  // namespace clustersweep::spaces
