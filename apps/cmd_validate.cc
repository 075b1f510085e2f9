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

namespace clustersweep::cli {
namespace {

namespace est = estimator;

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

// Writes the fitted calibration with a header saying how it was made.
void write_fit(const std::string& runs_path, const std::string& out_path, std::size_t samples,
               int sweeps, const est::FitResult& fit) {
  const std::string header = fmt::format(
      "clustersweep estimator calibration, format version 1.\n"
      "Fitted by `clustersweep validate {} --fit {}` (deterministic coordinate descent on the\n"
      "mean |log(predicted/measured)| over {} runs, {} sweeps):\n"
      "objective {:.4f} -> {:.4f} in {} evaluations. See docs/calibration.md.",
      runs_path, std::filesystem::path(out_path).filename().string(), samples, sweeps,
      fit.objective_before, fit.objective_after, fit.evaluations);
  write_file_atomically(out_path, spaces::format_calibration(fit.calibration, header), "--fit");
  std::cout << fmt::format("fit: objective {:.4f} -> {:.4f} ({} evaluations); wrote {}\n",
                           fit.objective_before, fit.objective_after, fit.evaluations, out_path);
}

// --fit OUT.toml: fits `samples` (of either family) from `calibration`, writes the file and
// returns the fitted calibration.
template <class Sample>
est::Calibration fit_and_write(const po::variables_map& vm, const std::string& runs_path,
                               const std::vector<Sample>& samples,
                               const est::Calibration& calibration) {
  const int sweeps = vm["fit-sweeps"].as<int>();
  if (sweeps < 1) throw InputError("--fit-sweeps: must be a positive integer");
  if (samples.empty())
    throw InputError(fmt::format("{}: no predictable rows to fit on", runs_path));
  est::FitOptions fit_options;
  fit_options.sweeps = sweeps;
  const auto fit = est::fit_calibration(samples, calibration, fit_options);
  write_fit(runs_path, vm["fit"].as<std::string>(), samples.size(), sweeps, fit);
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

// Recommendation-model runs: throughput (samples/s) predicted with the planner's placement of the
// run's sharding; --fit moves the [dlrm] parameters.
int validate_dlrm(const po::variables_map& vm, const std::string& runs_path,
                  est::Calibration calibration) {
  auto rows = spaces::read_dlrm_runs(runs_path, calibration);
  if (vm.count("fit")) {
    std::vector<est::DlrmSample> samples;
    for (const auto& r : rows)
      if (r.reason.empty())
        samples.push_back(
            {r.point.workload, r.point.cluster, r.point.best_sharding, r.point.sharding,
             static_cast<double>(r.point.workload.global_batch) / r.measured_samples_per_s});
    calibration = fit_and_write(vm, runs_path, samples, calibration);
    rows = spaces::read_dlrm_runs(runs_path, calibration);
  }

  std::string csv =
      "id,source,measured_samples_per_s,predicted_samples_per_s,rel_error,sharding,reason\n";
  std::map<std::string, std::vector<double>> errors_by_source;
  std::vector<double> all_errors;
  std::size_t unpredicted = 0, out_of_memory = 0;
  for (const auto& r : rows) {
    if (!r.reason.empty()) {
      ++unpredicted;
      csv += fmt::format(
          "{},{},{},,,,{}\n", csv_quote(r.id), csv_quote(r.source),
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
    csv += fmt::format("{},{},{:g},{:.6g},{:.6f},{},\n", csv_quote(r.id), csv_quote(r.source),
                       r.measured_samples_per_s, e.samples_per_s, error,
                       csv_quote(spaces::describe_placement(r.point, plan)));
  }
  if (vm.count("output")) write_file_atomically(vm["output"].as<std::string>(), csv, "-o");
  print_errors(errors_by_source, all_errors);
  print_summary(all_errors.size(), rows.size(), unpredicted, out_of_memory);
  const spaces::ErrorStats overall = spaces::error_stats(all_errors);
  std::cout << fmt::format("throughput MAPE: {:.2f}%  median: {:.2f}%  geomean: {:.2f}%\n",
                           100 * overall.mape, 100 * overall.median, 100 * overall.geomean);
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
      "fit-sweeps", po::value<int>()->default_value(12), "coordinate-descent passes of --fit")(
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
            "id,source,measured_step_time_s,predicted_step_time_s,rel_error,reason\n"
            "and prints the MAPE, median and geometric mean of the absolute relative error,\n"
            "overall and per source. --fit refits the calibration ([calibration] and [moe]) on\n"
            "all the runs together first.\n"
            "A file of recommendation-model runs (a num_tables column, as dlrm_runs.csv) is\n"
            "predicted in samples/s with the planner's placement of each run's sharding:\n"
            "id,source,measured_samples_per_s,predicted_samples_per_s,rel_error,sharding,reason;\n"
            "its --fit moves the [dlrm] parameters only.\n"
            "--best adds best_step_time_s,best_plan to each row and prints, per source, how the\n"
            "best plan's predicted step compares with the measured (tuned) run.");
  if (!vm) return kExitOk;
  if (!vm->count("runs")) throw InputError("RUNS.csv: missing; give one or more runs files");
  const auto runs_paths = (*vm)["runs"].as<std::vector<std::string>>();
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
  est::Calibration calibration =
      vm->count("calibration") ? spaces::load_calibration((*vm)["calibration"].as<std::string>())
                               : spaces::builtin_calibration();
  if (vm->count("fit") && !vm->count("calibration")) {
    if (dlrm) {
      calibration.dlrm = est::DlrmCalibration{};
    } else {
      const est::DlrmCalibration keep = calibration.dlrm;
      calibration = est::Calibration{};
      calibration.dlrm = keep;
    }
  }
  if (dlrm) return validate_dlrm(*vm, runs_paths.front(), calibration);
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

  if (vm->count("fit")) {
    // Within a file every run counts the same: the objective is the error a user sees on a
    // published run.
    std::vector<est::Sample> samples;
    for (const auto& r : rows)
      if (r.reason.empty()) samples.push_back(r.sample);
    calibration = fit_and_write(*vm, runs_path, samples, calibration);
    // Re-derive the rows with the fitted defaults (e.g. the default scale-out bandwidth).
    rows = read_all(calibration);
  }

  const bool best = vm->count("best") > 0;
  std::string csv =
      fmt::format("id,source,measured_step_time_s,predicted_step_time_s,rel_error,reason{}\n",
                  best ? ",best_step_time_s,best_plan" : "");
  std::map<std::string, std::vector<double>> best_ratios_by_source;
  std::map<std::string, std::vector<double>> errors_by_source;
  std::vector<double> all_errors;
  std::size_t unpredicted = 0, out_of_memory = 0, repaired = 0;
  for (const auto& r : rows) {
    if (!r.reason.empty()) {
      ++unpredicted;
      csv += fmt::format("{},{},{},,,{}{}\n", csv_quote(r.id), csv_quote(r.source),
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
    csv += fmt::format("{},{},{:g},{:.6g},{:.6f},{}", csv_quote(r.id), csv_quote(r.source),
                       r.measured_s, e.time.total_s, error, csv_quote(r.repair));
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
  return kExitOk;
}

}  // namespace clustersweep::cli
