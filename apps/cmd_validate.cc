// clustersweep validate: predict published training runs and report the error; --fit refits the
// calibration on them (docs/calibration.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <iostream>
#include <optional>

#include "apps/commands.h"
#include "base/error.h"
#include "base/files.h"
#include "calibration/energy_validation.h"
#include "calibration/fit.h"
#include "calibration/runs.h"
#include "calibration/site.h"
#include "calibration/validation.h"
#include "estimator/estimator.h"
#include "spaces/catalog.h"
#include "spaces/support.h"

namespace clustersweep::cli {
namespace {

namespace est = estimator;

// Each pass narrows the fit's brackets: far fewer than this already converge.
constexpr int kMaxFitSweeps = 1000;

// Sets the [power] parameters of `to` to those of `from`.
void copy_power(const est::Calibration& from, est::Calibration& to) {
  for (auto* f = est::power_calibration_fields_begin(); f != est::power_calibration_fields_end();
       ++f)
    to.*(f->member) = from.*(f->member);
}

// Writes the fitted calibration and its support tables with a header saying how it was made.
void write_fit(const std::string& runs_path, const std::string& out_path, std::size_t samples,
               int sweeps, const est::FitResult& fit, const spaces::CalibrationSupport& support,
               ValidateResult& out) {
  const std::string header = fmt::format(
      "clustersweep estimator calibration, format version 1.\n"
      "Fitted by `clustersweep validate {} --fit {}` (deterministic coordinate descent on the\n"
      "mean |log(predicted/measured)| over {} runs, {} sweeps):\n"
      "objective {:.4f} -> {:.4f} in {} evaluations. See docs/calibration.md.",
      runs_path, std::filesystem::path(out_path).filename().string(), samples, sweeps,
      fit.objective_before, fit.objective_after, fit.evaluations);
  write_file_atomically(out_path, spaces::format_calibration(fit.calibration, header, support),
                        "--fit");
  out.report += fmt::format("fit: objective {:.4f} -> {:.4f} ({} evaluations); wrote {}\n",
                            fit.objective_before, fit.objective_after, fit.evaluations, out_path);
}

// --fit OUT.toml: fits `samples` (of either family) from `calibration`, writes the file with
// `support` and returns the fitted calibration.
// `derive` sets what the fit does not move but derives (the prediction intervals) before writing.
template <class Sample, class Derive>
est::Calibration fit_and_write(const po::variables_map& vm, const std::string& runs_path,
                               const std::vector<Sample>& samples,
                               const est::Calibration& calibration,
                               const spaces::CalibrationSupport& support, Derive derive,
                               ValidateResult& out) {
  const int sweeps = vm["fit-sweeps"].as<int>();
  if (samples.empty())
    throw InputError(fmt::format("{}: no predictable rows to fit on", runs_path));
  est::FitOptions fit_options;
  fit_options.sweeps = sweeps;
  auto fit = est::fit_calibration(samples, calibration, fit_options);
  derive(fit.calibration);
  write_fit(runs_path, vm["fit"].as<std::string>(), samples.size(), sweeps, fit, support, out);
  return fit.calibration;
}

spaces::ShotsOptions shots_options(const po::variables_map& vm) {
  spaces::ShotsOptions options;
  options.shots = vm["shots"].as<int>();
  options.sweeps = vm["fit-sweeps"].as<int>();
  return options;
}

void add_report(const spaces::ValidationReport& report, ValidateResult& out) {
  out.predictions_csv = spaces::format_predictions_csv(report);
  out.report += spaces::format_report(report);
}

// Recommendation-model runs: throughput (samples/s) predicted with the planner's placement of the
// run's sharding; --fit moves the [dlrm] parameters.
void validate_dlrm(const po::variables_map& vm, const std::string& runs_path,
                   est::Calibration calibration, const est::Calibration& fit_start,
                   const spaces::CalibrationSupport& base_support, ValidateResult& out) {
  auto rows = spaces::read_dlrm_runs(runs_path, calibration);
  const auto runs = spaces::fit_runs(rows);
  std::optional<spaces::HeldOut> held;
  if (vm.count("fit") || vm.count("held-out"))
    held = spaces::held_out(runs, fit_start, vm["fit-sweeps"].as<int>());
  if (vm.count("fit")) {
    spaces::CalibrationSupport support = base_support;
    support.of(spaces::SupportFamily::dlrm) =
        spaces::count_runs(runs.support).of(spaces::SupportFamily::dlrm);
    calibration = fit_and_write(
        vm, runs_path, runs.samples, calibration, support,
        [&](est::Calibration& c) { spaces::derive_dlrm_interval(*held, c); }, out);
    rows = spaces::read_dlrm_runs(runs_path, calibration);
  }
  add_report(spaces::validate_runs(rows, calibration), out);
  if (held && vm.count("held-out"))
    out.report += spaces::format_held_out(spaces::held_out_report(*held));
  if (vm.count("shots"))
    out.report += spaces::format_shots(spaces::site_shots(rows, fit_start, shots_options(vm)));
}

// Training-energy runs: each metered row's average power per GPU and energy at its own scope;
// --fit moves the [power] parameters only, from their prior.
void validate_energy(const po::variables_map& vm, const std::string& runs_path,
                     est::Calibration calibration, const spaces::CalibrationSupport& support,
                     ValidateResult& out) {
  for (const char* flag : {"best", "held-out", "shots"})
    if (vm.count(flag))
      throw InputError(
          fmt::format("--{}: applies to step-time runs, not to the training-energy runs of {}",
                      flag, runs_path));
  auto rows = spaces::read_energy_runs(runs_path, calibration);
  if (vm.count("fit")) {
    // From the prior, as every family's fit, unless --calibration gives the start.
    if (!vm.count("calibration")) copy_power(est::Calibration{}, calibration);
    const int sweeps = vm["fit-sweeps"].as<int>();
    const auto fit = spaces::fit_power(rows, calibration, sweeps);
    std::size_t predicted = 0;
    for (const auto& row : rows) predicted += row.reason.empty();
    if (predicted == 0)
      throw InputError(fmt::format("{}: no predictable rows to fit on", runs_path));
    write_fit(runs_path, vm["fit"].as<std::string>(), predicted, sweeps, fit, support, out);
    calibration = fit.calibration;
  }
  const auto report = spaces::validate_energy(rows, calibration);
  out.predictions_csv = spaces::format_energy_csv(report);
  out.report += spaces::format_energy_report(report);
}

std::optional<po::variables_map> parse_validate(const Args& args) {
  po::options_description options("Options");
  options.add_options()(
      "runs", po::value<std::vector<std::string>>(),
      "CSVs of measured runs (format of validation/transformer_runs.csv, moe_runs.csv, "
      "dlrm_runs.csv or energy_runs.csv)")("output,o", po::value<std::string>(),
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
      "does) within the run's framework (its software column) and stack, and compare the best "
      "plan's predicted step time with the measured run's")(
      "robust", "with --best: rank each run's plans as `best --robust` does")(
      "shots", whole_value<int>(0, 1000),
      "with --held-out: also site-calibrate each (source, accelerator) group of at least 6 runs "
      "on K of its runs (5 seeded draws) with a fit without its source, and report the error of "
      "its other runs next to the fit's alone, the site intervals' coverage and half-width, and "
      "the error of all its runs site-calibrated on all of them, the floor of any K (calibrate; "
      "docs/calibration.md)");
  po::positional_options_description positional;
  positional.add("runs", -1);
  return parse(
      args, options, positional,
      "validate RUNS.csv [MORE.csv...] [-o predictions.csv] [--fit OUT.toml]",
      "Predicts the step time of every run in the RUNS files (dense transformer runs as\n"
      "transformer_runs.csv, Mixture-of-Experts runs as moe_runs.csv, in any mix), writes\n"
      "id,source,measured_step_time_s,predicted_step_time_s,predicted_step_time_s_lo,\n"
      "predicted_step_time_s_hi,rel_error,framework,mem_per_gpu_gb,fits_hbm,reason\n"
      "(lo, hi: the 90% prediction interval; the framework each run's software is; the\n"
      "predicted memory per GPU and whether it fits the accelerator's HBM)\n"
      "and prints the MAPE, median and geometric mean of the absolute relative error,\n"
      "overall and per source. --fit refits the calibration ([calibration] and [moe]) on\n"
      "all the runs together first.\n"
      "A file of recommendation-model runs (a num_tables column, as dlrm_runs.csv) is\n"
      "predicted in samples/s with the planner's placement of each run's sharding, against\n"
      "train_only_samples_per_s where a row has it, with the error on the step (global\n"
      "batch / throughput); optional columns nvlink_domain and framework (any, hugectr,\n"
      "torchrec; without it, the one the model's label names, HugeCTR for a hybrid run):\n"
      "id,source,measured_samples_per_s,predicted_samples_per_s,predicted_samples_per_s_lo,\n"
      "predicted_samples_per_s_hi,rel_error,sharding,published_sharding,planner_matches,\n"
      "sharding_ranking,reason (the planner's placement, whether it is of the published\n"
      "kind, every sharding fastest first, and the column compared with);\n"
      "its --fit moves the [dlrm] parameters only.\n"
      "A file of training-energy runs (an energy_scope column, as energy_runs.csv) is\n"
      "predicted in average power per GPU and energy at each row's own scope (gpu_only,\n"
      "node, node_plus_network, facility; a TDP estimate is never a measurement):\n"
      "id,source,family,energy_scope,measured_energy_kwh,predicted_energy_kwh,\n"
      "measured_avg_power_w,predicted_avg_power_w,energy_rel_error,power_rel_error,reason;\n"
      "its --fit moves the [power] parameters only.\n"
      "--best adds best_step_time_s,best_plan to each row and prints, per source and per\n"
      "framework, how the best plan's predicted step compares with the measured (tuned) run.");
}

ValidateResult validate_runs(const po::variables_map& vm) {
  ValidateResult out;
  // Before anything is read or written.
  if (vm.count("robust") && !vm.count("best"))
    throw InputError("--robust: ranks the plans of --best; add --best");
  if (vm.count("shots") && !vm.count("held-out"))
    throw InputError("--shots: site-calibrates the groups --held-out holds out; add --held-out");
  if (!vm.count("runs")) throw InputError("RUNS.csv: missing; give one or more runs files");
  const auto runs_paths = vm["runs"].as<std::vector<std::string>>();
  {
    std::vector<CommandFile> inputs;
    for (const auto& path : runs_paths) inputs.push_back({path, "a runs file being read"});
    const auto given = [&](const char* name) {
      return vm.count(name) ? vm[name].as<std::string>() : std::string();
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
  const bool energy = spaces::is_energy_runs(runs_paths.front());
  for (const auto& path : runs_paths)
    if (spaces::is_energy_runs(path) != energy)
      throw InputError(fmt::format(
          "{}: a {} runs file cannot be validated with {}; give training-energy runs alone", path,
          energy ? "step-time" : "training-energy", runs_paths.front()));
  if (energy && runs_paths.size() > 1)
    throw InputError(
        fmt::format("{}: give one training-energy runs file at a time", runs_paths[1]));
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
      vm.count("calibration")
          ? spaces::load_calibration_file(vm["calibration"].as<std::string>())
          : spaces::CalibrationFile{spaces::builtin_calibration(), spaces::builtin_support()};
  est::Calibration calibration = file.calibration;
  const spaces::CalibrationSupport& base_support = file.support;
  est::Calibration fit_start = calibration;
  if (!vm.count("calibration")) {
    if (dlrm) {
      fit_start.dlrm = est::DlrmCalibration{};
    } else {
      fit_start = est::Calibration{};
      fit_start.dlrm = calibration.dlrm;
      copy_power(calibration, fit_start);
    }
  }
  if (energy) {
    validate_energy(vm, runs_paths.front(), calibration, base_support, out);
    return out;
  }
  if (vm.count("fit")) calibration = fit_start;
  if (dlrm) {
    validate_dlrm(vm, runs_paths.front(), calibration, fit_start, base_support, out);
    return out;
  }
  // Dense and Mixture-of-Experts runs files, read in turn: one table, one fit.
  auto rows = spaces::read_weighted_runs(runs_paths, calibration);
  const auto runs = spaces::fit_runs(rows);
  std::optional<spaces::HeldOut> held;
  if (vm.count("fit") || vm.count("held-out"))
    held = spaces::held_out(runs, fit_start, vm["fit-sweeps"].as<int>());
  if (vm.count("fit")) {
    spaces::CalibrationSupport support = spaces::count_runs(runs.support);
    support.of(spaces::SupportFamily::dlrm) = base_support.of(spaces::SupportFamily::dlrm);
    calibration = fit_and_write(
        vm, runs_path, runs.samples, calibration, support,
        [&](est::Calibration& c) { spaces::derive_transformer_intervals(*held, c); }, out);
    // Re-derive the rows with the fitted defaults (e.g. the default scale-out bandwidth).
    rows = spaces::read_weighted_runs(runs_paths, calibration);
  }
  const bool best = vm.count("best") > 0;
  const spaces::ValidationReport validation =
      spaces::validate_runs(rows, calibration, best, vm.count("robust") > 0);
  add_report(validation, out);
  if (best) out.report += spaces::format_best_ratios(spaces::best_ratios(validation));
  if (held && vm.count("held-out"))
    out.report += spaces::format_held_out(spaces::held_out_report(*held));
  if (vm.count("shots"))
    out.report += spaces::format_shots(spaces::site_shots(rows, fit_start, shots_options(vm)));
  return out;
}

}  // namespace

ValidateResult validate_result(const Args& args) {
  const auto vm = parse_validate(args);
  return vm ? validate_runs(*vm) : ValidateResult{};
}

int validate(const Args& args) {
  const auto vm = parse_validate(args);
  if (!vm) return kExitOk;
  const ValidateResult result = validate_runs(*vm);
  if (vm->count("output"))
    write_file_atomically((*vm)["output"].as<std::string>(), result.predictions_csv, "-o");
  std::cout << result.report;
  return kExitOk;
}

}  // namespace clustersweep::cli
