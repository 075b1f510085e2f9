// clustersweep validate: predict published training runs and report the error; --fit refits the
// calibration on them (docs/calibration.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "apps/commands.h"
#include "base/csv.h"
#include "base/error.h"
#include "base/files.h"
#include "estimator/estimator.h"
#include "estimator/fit.h"
#include "spaces/catalog.h"
#include "spaces/design_spec.h"
#include "spaces/runs.h"
#include "spaces/support.h"

namespace clustersweep::cli {
namespace {

namespace est = estimator;

// Each pass narrows the fit's brackets: far fewer than this already converge.
constexpr int kMaxFitSweeps = 1000;

// The error table: per source, then all rows.
void print_errors(const std::map<std::string, std::vector<double>>& errors_by_source,
                  const std::vector<double>& all_errors) {
  std::cout << fmt::format("{:<24} {:>5} {:>8} {:>8} {:>8} {:>8}\n", "source", "rows", "MAPE",
                           "median", "geomean", "max");
  auto print = [](const std::string& name, const spaces::ErrorStats& s) {
    std::cout << fmt::format("{:<24} {:>5} {:>7.2f}% {:>7.2f}% {:>7.2f}% {:>7.2f}%\n", name, s.n,
                             100 * s.mape, 100 * s.median, 100 * s.geomean, 100 * s.max);
  };
  for (const auto& [source, errors] : errors_by_source) print(source, spaces::error_stats(errors));
  print("all", spaces::error_stats(all_errors));
}

// Writes the fitted calibration and its support tables with a header saying how it was made.
void write_fit(const std::string& runs_path, const std::string& out_path, std::size_t samples,
               int sweeps, const est::FitResult& fit, const spaces::CalibrationSupport& support) {
  const std::string header = fmt::format(
      "clustersweep estimator calibration, format version 1.\n"
      "Fitted by `clustersweep validate {} --fit {}` (deterministic coordinate descent on the\n"
      "mean |log(predicted/measured)| over {} runs, {} sweeps):\n"
      "objective {:.4f} -> {:.4f} in {} evaluations. See docs/calibration.md.",
      runs_path, std::filesystem::path(out_path).filename().string(), samples, sweeps,
      fit.objective_before, fit.objective_after, fit.evaluations);
  write_file_atomically(out_path, spaces::format_calibration(fit.calibration, header, support),
                        "--fit");
  std::cout << fmt::format("fit: objective {:.4f} -> {:.4f} ({} evaluations); wrote {}\n",
                           fit.objective_before, fit.objective_after, fit.evaluations, out_path);
}

// --fit OUT.toml: fits `samples` (of either family) from `calibration`, writes the file with
// `support` and returns the fitted calibration.
// `derive` sets what the fit does not move but derives (the prediction intervals) before writing.
template <class Sample, class Derive>
est::Calibration fit_and_write(const po::variables_map& vm, const std::string& runs_path,
                               const std::vector<Sample>& samples,
                               const est::Calibration& calibration,
                               const spaces::CalibrationSupport& support, Derive derive) {
  const int sweeps = vm["fit-sweeps"].as<int>();
  if (samples.empty())
    throw InputError(fmt::format("{}: no predictable rows to fit on", runs_path));
  est::FitOptions fit_options;
  fit_options.sweeps = sweeps;
  auto fit = est::fit_calibration(samples, calibration, fit_options);
  derive(fit.calibration);
  write_fit(runs_path, vm["fit"].as<std::string>(), samples.size(), sweeps, fit, support);
  return fit.calibration;
}

// "predicted N of M rows; ..." after the table.
void print_summary(std::size_t predicted, std::size_t rows, std::size_t unpredicted,
                   std::size_t out_of_memory, std::size_t repaired = 0) {
  std::cout << fmt::format("predicted {} of {} rows", predicted, rows);
  if (unpredicted)
    std::cout << fmt::format("; {} could not be predicted (see the reason column)", unpredicted);
  if (repaired)
    std::cout << fmt::format("; {} with a misreported plan repaired (see the reason column)",
                             repaired);
  if (out_of_memory)
    std::cout << fmt::format("; the memory model puts {} measured runs over HBM capacity",
                             out_of_memory);
  std::cout << '\n';
}

// The best plan of a run's design, searched over every plan with the run's model, cluster, batch
// and precision: its predicted step and the plan as "tp 8 pp 8 ...".
struct Found {
  est::StepTime time;
  std::string plan;
};
std::optional<Found> best_plan(const spaces::MeasuredRun& run,
                               const est::Calibration& calibration) {
  spaces::Settings settings = run.settings;
  // A run with a capacity factor routes by capacity (resolve()); the search keeps its routing,
  // with the one balanced share a sweep gives capacity routing, as it keeps the rest of its stack.
  if (settings.has("capacity_factor") && !settings.has("token_routing"))
    settings.set("token_routing", "capacity", settings.where("capacity_factor"));
  for (const std::string& name : spaces::plan_setting_names()) settings.erase(name);
  const spaces::Point point = spaces::resolve(settings, calibration);
  const auto search = spaces::search_design(settings, point, {}, 1, false);
  if (search.plans.empty()) return std::nullopt;
  const est::Plan& p = search.plans.front().plan;
  return Found{search.plans.front().estimate.time,
               fmt::format("tp {} pp {} dp {} cp {} vp {} ep {} etp {} mb {} zero {} sp {} "
                           "recompute {} offload {} split {}",
                           p.tp, p.pp, p.dp, p.cp, p.vp, p.ep, p.etp, p.micro_batch, p.zero,
                           p.sequence_parallel ? "on" : "off", est::to_string(p.recompute),
                           est::to_string(p.offload), est::to_string(p.pipeline_split))};
}

// Per source: the best plan's predicted step over the measured run's. Below 1 the search finds a
// plan the model calls faster than what was run; far below, a blind spot of the model it exploits.
void print_best_ratios(const std::map<std::string, std::vector<double>>& ratios_by_source) {
  std::size_t width = 3;
  for (const auto& [source, ratios] : ratios_by_source) width = std::max(width, source.size());
  std::cout << fmt::format(
      "\nbest plan's predicted step / measured step\n{:<{}} {:>5} {:>7} {:>7} "
      "{:>7} {:>13}\n",
      "source", width, "rows", "median", "min", "max", "in 0.85-1.10");
  std::vector<double> all;
  auto print = [width](const std::string& name, std::vector<double> r) {
    std::sort(r.begin(), r.end());
    const auto in =
        std::count_if(r.begin(), r.end(), [](double x) { return x >= 0.85 && x <= 1.10; });
    std::cout << fmt::format("{:<{}} {:>5} {:>7.3f} {:>7.3f} {:>7.3f} {:>13}\n", name, width,
                             r.size(), spaces::sorted_median(r), r.front(), r.back(),
                             fmt::format("{} of {}", in, r.size()));
  };
  for (const auto& [source, ratios] : ratios_by_source) {
    print(source, ratios);
    all.insert(all.end(), ratios.begin(), ratios.end());
  }
  if (!all.empty()) print("all", all);
}

// Every group of runs (a source; a run for recommendation models, whose runs come nearly all from
// one source) predicted by a fit on the others: the held-out residuals the prediction
// intervals come from (docs/calibration.md, "Prediction intervals"). Intervals are per family.
struct HeldOut {
  std::vector<std::string> family, source;  // of each sample
  std::vector<int> group;
  std::vector<double> residuals;
  std::vector<bool> few;  // the calibration support of the run was few when it was held out
  // The residuals, groups and few flags of one family.
  struct Family {
    std::vector<double> residuals;
    std::vector<int> group;
    std::vector<bool> few;
  };
  Family of(const std::string& f) const {
    Family out;
    for (std::size_t i = 0; i < family.size(); ++i)
      if (family[i] == f) {
        out.residuals.push_back(residuals[i]);
        out.group.push_back(group[i]);
        out.few.push_back(few[i]);
      }
    return out;
  }
  std::vector<std::string> families() const {
    std::vector<std::string> out = family;
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
};

// `runs[i]` is sample i as the support tables count it.
template <class Sample>
HeldOut held_out(const std::vector<Sample>& samples, const std::vector<spaces::SupportRun>& runs,
                 std::vector<std::string> source, const est::Calibration& start, int sweeps) {
  HeldOut h;
  h.source = std::move(source);
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    h.family.emplace_back(spaces::to_string(runs[i].family));
    const std::string key = h.family[i] + '\t' + h.source[i];
    auto at = std::find(keys.begin(), keys.end(), key);
    h.group.push_back(static_cast<int>(at - keys.begin()));
    if (at == keys.end()) keys.push_back(key);
  }
  for (int support : spaces::held_out_support(runs, h.group))
    h.few.push_back(support < spaces::kFewCalibrationRuns);
  est::FitOptions options;
  options.sweeps = sweeps;
  h.residuals = est::held_out_log_residuals(samples, h.group, start, options);
  return h;
}

// The 90% interval of `family` from all its held-out residuals, as measured / predicted ratios
// into `lo` and `hi`; kept when the residuals are too few for a finite one.
void set_interval(const HeldOut& h, const std::string& family, double& lo, double& hi) {
  const est::LogInterval i = est::conformal_interval(h.of(family).residuals, 0.9);
  if (!std::isfinite(i.lo) || !std::isfinite(i.hi)) return;
  lo = std::exp(i.lo);
  hi = std::exp(i.hi);
}

// The widening of the interval of a point with few calibration runs like it: the largest any
// family's held-out runs show, never below 1; kept when no family has enough runs of both kinds.
// One factor serves every family, the recommendation models' too, whose 23 runs are too few to
// tell their own.
void set_widening(const HeldOut& h, double& widening) {
  double w = std::numeric_limits<double>::quiet_NaN();
  for (const std::string& f : h.families()) {
    const HeldOut::Family runs = h.of(f);
    const double wf = est::interval_widening(runs.residuals, runs.few, 0.9);
    if (std::isfinite(wf)) w = std::isfinite(w) ? std::max(w, wf) : wf;
  }
  if (std::isfinite(w)) widening = std::max(1.0, w);
}

// --held-out: per group, how often its runs fall in the 90% interval the other groups' held-out
// residuals give it (widened for its runs with few like them in the other groups), and how wide
// that interval is.
void print_held_out(const HeldOut& h) {
  std::size_t width = 6;
  for (const auto& s : h.source) width = std::max(width, s.size());
  std::cout << fmt::format(
      "\nheld out: each source (or run) predicted by a fit on the others, in the 90% interval\n"
      "of the others' held-out residuals (measured / predicted); `few`: its runs with fewer than\n"
      "{} like them in the others, whose interval is widened (the exponent `widen`)\n"
      "{:<{}} {:<6} {:>5} {:>8} {:>11} {:>7} {:>7} {:>5} {:>6}\n",
      spaces::kFewCalibrationRuns, "source", width, "family", "rows", "covered", "half-width", "lo",
      "hi", "few", "widen");
  std::size_t all_samples = 0, all_covered = 0;
  std::vector<double> half_widths;  // one per run
  for (const std::string& f : h.families()) {
    const HeldOut::Family runs = h.of(f);
    std::size_t samples = 0, covered = 0;
    for (const est::GroupCoverage& c :
         est::group_coverage(runs.residuals, runs.group, 0.9, runs.few)) {
      const std::size_t first = static_cast<std::size_t>(
          std::find(h.group.begin(), h.group.end(), c.group) - h.group.begin());
      auto half_width = [&c](double scale) {
        return (std::exp(scale * c.interval.hi) - std::exp(scale * c.interval.lo)) / 2;
      };
      half_widths.insert(half_widths.end(), c.samples - c.few, half_width(1));
      half_widths.insert(half_widths.end(), c.few, half_width(c.widening));
      samples += c.samples;
      covered += c.covered;
      std::cout << fmt::format(
          "{:<{}} {:<6} {:>5} {:>7.1f}% {:>10.1f}% {:>7.3f} {:>7.3f} {:>5} {:>6.2f}\n",
          h.source[first], width, f, c.samples, 100.0 * c.covered / c.samples, 100 * half_width(1),
          std::exp(c.interval.lo), std::exp(c.interval.hi), c.few, c.widening);
    }
    std::cout << fmt::format("{:<{}} {:<6} {:>5} {:>7.1f}%\n", "all", width, f, samples,
                             100.0 * covered / samples);
    all_samples += samples;
    all_covered += covered;
  }
  std::sort(half_widths.begin(), half_widths.end());
  std::cout << fmt::format("held-out coverage {:.1f}% of {} runs, median half-width {:.1f}%\n",
                           100.0 * all_covered / all_samples, all_samples,
                           100 * spaces::sorted_median(half_widths));
}

// Recommendation-model runs: throughput (samples/s) predicted with the planner's placement of the
// run's sharding; --fit moves the [dlrm] parameters.
int validate_dlrm(const po::variables_map& vm, const std::string& runs_path,
                  est::Calibration calibration, const est::Calibration& fit_start,
                  const spaces::CalibrationSupport& base_support) {
  auto rows = spaces::read_dlrm_runs(runs_path, calibration);
  // 22 of the 23 published runs come from one source: each run is held out on its own (the
  // leave-one-out residuals; with fewer than 9 residuals a 90% conformal interval is infinite).
  std::vector<est::DlrmSample> samples;
  std::vector<spaces::SupportRun> support_runs;
  std::vector<std::string> ids;
  for (const auto& r : rows) {
    if (!r.reason.empty()) continue;
    ids.push_back("run " + r.id);
    support_runs.push_back({spaces::SupportFamily::dlrm, r.gpu, r.point.workload.precision,
                            spaces::regime_of(r.point.best_sharding, r.point.sharding), 1});
    samples.push_back(
        {r.point.workload, r.point.cluster, r.point.best_sharding, r.point.sharding,
         static_cast<double>(r.point.workload.global_batch) / r.measured_samples_per_s});
  }
  std::optional<HeldOut> held;
  if (vm.count("fit") || vm.count("held-out"))
    held = held_out(samples, support_runs, ids, fit_start, vm["fit-sweeps"].as<int>());
  if (vm.count("fit")) {
    spaces::CalibrationSupport support = base_support;
    support.of(spaces::SupportFamily::dlrm) =
        spaces::count_runs(support_runs).of(spaces::SupportFamily::dlrm);
    calibration =
        fit_and_write(vm, runs_path, samples, calibration, support, [&](est::Calibration& c) {
          set_interval(*held, "dlrm", c.dlrm.interval_lo, c.dlrm.interval_hi);
        });
    rows = spaces::read_dlrm_runs(runs_path, calibration);
  }

  std::string csv =
      "id,source,measured_samples_per_s,predicted_samples_per_s,predicted_samples_per_s_lo,"
      "predicted_samples_per_s_hi,rel_error,sharding,reason\n";
  std::map<std::string, std::vector<double>> errors_by_source;
  std::vector<double> all_errors;
  std::size_t unpredicted = 0, out_of_memory = 0;
  for (const auto& r : rows) {
    if (!r.reason.empty()) {
      ++unpredicted;
      csv += fmt::format(
          "{},{},{},,,,,,{}\n", csv_quote(r.id), csv_quote(r.source),
          r.measured_samples_per_s > 0 ? fmt::format("{:g}", r.measured_samples_per_s) : "",
          csv_quote(r.reason));
      continue;
    }
    const est::DlrmEstimator estimator(r.point.workload, r.point.cluster, calibration);
    const est::DlrmPlan plan = spaces::place_tables(r.point, estimator);
    const est::DlrmEstimate e = estimator.estimate(plan);
    if (e.reason == est::Infeasible::out_of_memory) ++out_of_memory;
    const double error = e.samples_per_s / r.measured_samples_per_s - 1;
    all_errors.push_back(std::fabs(error));
    errors_by_source[r.source].push_back(std::fabs(error));
    // Throughput is the inverse of the step: its interval's ends swap.
    csv += fmt::format("{},{},{:g},{:.6g},{:.6g},{:.6g},{:.6f},{},\n", csv_quote(r.id),
                       csv_quote(r.source), r.measured_samples_per_s, e.samples_per_s,
                       e.samples_per_s / est::step_interval(calibration.dlrm).hi,
                       e.samples_per_s / est::step_interval(calibration.dlrm).lo, error,
                       csv_quote(spaces::describe_placement(r.point, plan)));
  }
  if (vm.count("output")) write_file_atomically(vm["output"].as<std::string>(), csv, "-o");
  print_errors(errors_by_source, all_errors);
  print_summary(all_errors.size(), rows.size(), unpredicted, out_of_memory);
  const spaces::ErrorStats overall = spaces::error_stats(all_errors);
  std::cout << fmt::format("throughput MAPE: {:.2f}%  median: {:.2f}%  geomean: {:.2f}%\n",
                           100 * overall.mape, 100 * overall.median, 100 * overall.geomean);
  if (held && vm.count("held-out")) print_held_out(*held);
  return kExitOk;
}

}  // namespace

int validate(const Args& args) {
  po::options_description options("Options");
  options.add_options()(
      "runs", po::value<std::vector<std::string>>(),
      "CSVs of measured runs (format of validation/transformer_runs.csv, moe_runs.csv or "
      "dlrm_runs.csv)")("output,o", po::value<std::string>(),
                        "write per-row predictions to this CSV")(
      "calibration", po::value<std::string>(), "calibration TOML overriding the built-in one")(
      "fit", po::value<std::string>(),
      "fit the calibration on the runs and write it to this TOML file")(
      "fit-sweeps", whole_value<int>(1, kMaxFitSweeps)->default_value(12),
      "coordinate-descent passes of --fit")(
      "held-out",
      "also predict every source by a fit on the other sources and report how often its runs "
      "fall in the 90% prediction interval (docs/calibration.md)")(
      "best",
      "also search every plan of each run's model, cluster, batch and precision (as `best` "
      "does) and compare the best plan's predicted step time with the measured run's");
  po::positional_options_description positional;
  positional.add("runs", -1);
  const auto vm =
      parse(args, options, positional,
            "validate RUNS.csv [MORE.csv...] [-o predictions.csv] [--fit OUT.toml]",
            "Predicts the step time of every run in the RUNS files (dense transformer runs as\n"
            "transformer_runs.csv, Mixture-of-Experts runs as moe_runs.csv, in any mix), writes\n"
            "id,source,measured_step_time_s,predicted_step_time_s,predicted_step_time_s_lo,\n"
            "predicted_step_time_s_hi,rel_error,reason (lo, hi: the 90% prediction interval)\n"
            "and prints the MAPE, median and geometric mean of the absolute relative error,\n"
            "overall and per source. --fit refits the calibration ([calibration] and [moe]) on\n"
            "all the runs together first.\n"
            "A file of recommendation-model runs (a num_tables column, as dlrm_runs.csv) is\n"
            "predicted in samples/s with the planner's placement of each run's sharding:\n"
            "id,source,measured_samples_per_s,predicted_samples_per_s,predicted_samples_per_s_lo,\n"
            "predicted_samples_per_s_hi,rel_error,sharding,reason;\n"
            "its --fit moves the [dlrm] parameters only.\n"
            "--best adds best_step_time_s,best_plan to each row and prints, per source, how the\n"
            "best plan's predicted step compares with the measured (tuned) run.");
  if (!vm) return kExitOk;
  if (!vm->count("runs")) throw InputError("RUNS.csv: missing; give one or more runs files");
  const auto runs_paths = (*vm)["runs"].as<std::vector<std::string>>();
  {
    std::vector<CommandFile> inputs;
    for (const auto& path : runs_paths) inputs.push_back({path, "a runs file being read"});
    const auto given = [&](const char* name) {
      return vm->count(name) ? (*vm)[name].as<std::string>() : std::string();
    };
    inputs.push_back({given("calibration"), "the calibration file being read"});
    refuse_clobbering(inputs, {{given("output"), "-o"}, {given("fit"), "--fit"}});
  }
  // The file names as the fit's header gives them.
  std::vector<std::string> names;
  for (const auto& path : runs_paths) names.push_back(std::filesystem::path(path).filename());
  const std::string runs_path = fmt::format("{}", fmt::join(names, " "));
  // --fit starts from the fixed prior (the Calibration defaults) so that the shipped calibration
  // is reproducible; --calibration FILE starts it (or the plain validation) from FILE instead.
  // A fit starts its family's section from the prior and keeps the other families' sections, so
  // fitting each family's runs in turn reproduces the shipped file.
  const bool dlrm = spaces::is_dlrm_runs(runs_paths.front());
  for (const auto& path : runs_paths)
    if (spaces::is_dlrm_runs(path) != dlrm)
      throw InputError(fmt::format(
          "{}: a {} runs file cannot be validated with {}; give recommendation-model runs alone",
          path, dlrm ? "transformer" : "recommendation-model", runs_paths.front()));
  if (dlrm && runs_paths.size() > 1)
    throw InputError(
        fmt::format("{}: give one recommendation-model runs file at a time", runs_paths[1]));
  // A fit replaces the support tables of the families it fits and keeps the others.
  const spaces::CalibrationFile file =
      vm->count("calibration")
          ? spaces::load_calibration_file((*vm)["calibration"].as<std::string>())
          : spaces::CalibrationFile{spaces::builtin_calibration(), spaces::builtin_support()};
  est::Calibration calibration = file.calibration;
  const spaces::CalibrationSupport& base_support = file.support;
  est::Calibration fit_start = calibration;
  if (!vm->count("calibration")) {
    if (dlrm) {
      fit_start.dlrm = est::DlrmCalibration{};
    } else {
      fit_start = est::Calibration{};
      fit_start.dlrm = calibration.dlrm;
    }
  }
  if (vm->count("fit")) calibration = fit_start;
  if (dlrm) return validate_dlrm(*vm, runs_paths.front(), calibration, fit_start, base_support);
  // Dense and Mixture-of-Experts runs files, read in turn: one table, one fit.
  // Each file's predictable runs weigh 1 in total in the fit, so that the 91 MoE runs are not
  // outvoted by the dense ones on the parameters both families share.
  auto read_all = [&runs_paths](const est::Calibration& with) {
    std::vector<spaces::MeasuredRun> all;
    for (const auto& path : runs_paths) {
      auto rows = spaces::read_runs(path, with);
      const double predictable = static_cast<double>(
          std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.reason.empty(); }));
      for (auto& r : rows) r.sample.weight = 1.0 / std::max(1.0, predictable);
      all.insert(all.end(), std::make_move_iterator(rows.begin()),
                 std::make_move_iterator(rows.end()));
    }
    return all;
  };
  auto rows = read_all(calibration);
  // Within a file every run counts the same: the objective is the error a user sees on a
  // published run.
  std::vector<est::Sample> samples;
  std::vector<spaces::SupportRun> support_runs;
  std::vector<std::string> sources;
  for (const auto& r : rows) {
    if (!r.reason.empty()) continue;
    samples.push_back(r.sample);
    const est::Workload& w = r.sample.workload;
    support_runs.push_back({spaces::support_family(w.model), r.gpu, w.precision,
                            spaces::regime_of(r.sample.plan), r.sample.plan.cp});
    sources.push_back(r.source);
  }
  std::optional<HeldOut> held;
  if (vm->count("fit") || vm->count("held-out"))
    held = held_out(samples, support_runs, sources, fit_start, (*vm)["fit-sweeps"].as<int>());

  if (vm->count("fit")) {
    spaces::CalibrationSupport support = spaces::count_runs(support_runs);
    support.of(spaces::SupportFamily::dlrm) = base_support.of(spaces::SupportFamily::dlrm);
    calibration =
        fit_and_write(*vm, runs_path, samples, calibration, support, [&](est::Calibration& c) {
          set_interval(*held, "dense", c.interval_lo, c.interval_hi);
          set_interval(*held, "moe", c.moe_interval_lo, c.moe_interval_hi);
          set_widening(*held, c.interval_widening);
        });
    // Re-derive the rows with the fitted defaults (e.g. the default scale-out bandwidth).
    rows = read_all(calibration);
  }

  const bool best = vm->count("best") > 0;
  std::string csv = fmt::format(
      "id,source,measured_step_time_s,predicted_step_time_s,predicted_step_time_s_lo,"
      "predicted_step_time_s_hi,rel_error,reason{}\n",
      best ? ",best_step_time_s,best_plan" : "");
  std::map<std::string, std::vector<double>> best_ratios_by_source;
  std::map<std::string, std::vector<double>> errors_by_source;
  std::vector<double> all_errors;
  std::size_t unpredicted = 0, out_of_memory = 0, repaired = 0;
  for (const auto& r : rows) {
    if (!r.reason.empty()) {
      ++unpredicted;
      csv += fmt::format("{},{},{},,,,,{}{}\n", csv_quote(r.id), csv_quote(r.source),
                         r.measured_s > 0 ? fmt::format("{:g}", r.measured_s) : "",
                         csv_quote(r.reason), best ? ",," : "");
      continue;
    }
    const est::Estimate e =
        est::estimate(r.sample.workload, r.sample.cluster, r.sample.plan, calibration);
    if (e.reason == est::Infeasible::out_of_memory) ++out_of_memory;
    const double error = est::relative_error(e.time.total_s, r.measured_s);
    all_errors.push_back(std::fabs(error));
    errors_by_source[r.source].push_back(std::fabs(error));
    const est::StepInterval interval = est::step_interval(calibration, r.sample.workload.model);
    csv +=
        fmt::format("{},{},{:g},{:.6g},{:.6g},{:.6g},{:.6f},{}", csv_quote(r.id),
                    csv_quote(r.source), r.measured_s, e.time.total_s, e.time.total_s * interval.lo,
                    e.time.total_s * interval.hi, error, csv_quote(r.repair));
    if (best) {
      const auto found = best_plan(r, calibration);
      if (found) best_ratios_by_source[r.source].push_back(found->time.total_s / r.measured_s);
      csv += found ? fmt::format(",{:.6g},{}", found->time.total_s, csv_quote(found->plan)) : ",,";
    }
    csv += '\n';
    repaired += !r.repair.empty();
  }
  if (vm->count("output")) write_file_atomically((*vm)["output"].as<std::string>(), csv, "-o");

  print_errors(errors_by_source, all_errors);
  const spaces::ErrorStats overall = spaces::error_stats(all_errors);
  print_summary(all_errors.size(), rows.size(), unpredicted, out_of_memory, repaired);
  std::cout << fmt::format("step-time MAPE: {:.2f}%  median: {:.2f}%  geomean: {:.2f}%\n",
                           100 * overall.mape, 100 * overall.median, 100 * overall.geomean);
  if (best) print_best_ratios(best_ratios_by_source);
  if (held && vm->count("held-out")) print_held_out(*held);
  return kExitOk;
}

}  // namespace clustersweep::cli
