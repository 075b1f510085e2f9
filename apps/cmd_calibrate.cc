// clustersweep calibrate: a site calibration from a few measured runs of one's own stack
// (docs/calibration.md, "Your own cluster").
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <filesystem>
#include <iostream>

#include "apps/commands.h"
#include "base/error.h"
#include "base/files.h"
#include "calibration/site.h"
#include "spaces/catalog.h"

namespace clustersweep::cli {
namespace {

std::optional<po::variables_map> parse_calibrate(const Args& args) {
  po::options_description options("Options");
  options.add_options()("runs", po::value<std::vector<std::string>>(),
                        "CSVs of measured runs of your cluster (format of "
                        "validation/transformer_runs.csv, moe_runs.csv or dlrm_runs.csv)")(
      "output,o", po::value<std::string>(), "write the site calibration to this TOML file")(
      "calibration", po::value<std::string>(),
      "the base calibration TOML the site factors scale (default: the built-in one)")(
      "json", "print the report as JSON")(
      "fit-prior", po::value<std::string>(),
      "instead: measure the factors' prior widths on the runs, source by source (empirical "
      "Bayes), and write them to this TOML file (how spaces/data/site_priors.toml is made)");
  po::positional_options_description positional;
  positional.add("runs", -1);
  return parse(
      args, options, positional,
      "calibrate RUNS.csv [MORE.csv...] -o SITE.toml [--calibration BASE.toml] [--json]",
      "Moves a few site factors of the base calibration towards what measured runs of your\n"
      "own cluster show: compute (GEMM, attention), memory-bound, scale-up and scale-out\n"
      "collectives, host overhead, MoE dispatcher, DLRM embedding exchange. Each starts at\n"
      "the base (x1) with the spread between the sources of the published runs as its\n"
      "prior: one run moves the factors a little, ten almost all the way, and a factor your\n"
      "runs do not show stays at 1. Writes a complete calibration file (every parameter,\n"
      "its support tables with your runs counted, and a [site] table with each factor's\n"
      "value and 90% range) that --calibration accepts everywhere, with prediction\n"
      "intervals from your runs: narrower when they agree, wider when they do not.");
}

CalibrateResult calibrate_runs(const po::variables_map& vm) {
  if (!vm.count("runs")) throw InputError("RUNS.csv: missing; give one or more runs files");
  const auto paths = vm["runs"].as<std::vector<std::string>>();
  const auto given = [&](const char* name) {
    return vm.count(name) ? vm[name].as<std::string>() : std::string();
  };
  if (!vm.count("output") && !vm.count("fit-prior"))
    throw InputError("-o: missing; name the site calibration file to write");
  {
    std::vector<CommandFile> inputs;
    for (const auto& path : paths) inputs.push_back({path, "a runs file being read"});
    inputs.push_back({given("calibration"), "the calibration file being read"});
    refuse_clobbering(inputs, {{given("output"), "-o"}, {given("fit-prior"), "--fit-prior"}});
  }
  const spaces::CalibrationFile base =
      vm.count("calibration")
          ? spaces::load_calibration_file(given("calibration"))
          : spaces::CalibrationFile{spaces::builtin_calibration(), spaces::builtin_support()};
  spaces::SiteRunsRead read = spaces::read_site_runs(paths, base.calibration);
  std::vector<std::string> names;
  for (const auto& path : paths) names.push_back(std::filesystem::path(path).filename());
  CalibrateResult out;
  if (vm.count("fit-prior")) {
    const spaces::SitePrior prior = spaces::fit_site_prior(read.runs, base.calibration);
    out.output = given("fit-prior");
    out.toml = spaces::format_site_prior(
        prior,
        fmt::format("The site factors' prior (docs/calibration.md, \"Your own cluster\"), "
                    "format version 1.\nMeasured by `clustersweep calibrate {} "
                    "--fit-prior {}` on {} runs of {} sources.",
                    fmt::join(names, " "), std::filesystem::path(out.output).filename().string(),
                    prior.runs, prior.sources));
    out.report = fmt::format("site prior from {} runs of {} sources: within-source sd {:.3f}\n",
                             prior.runs, prior.sources, prior.within_sd);
    out.json = {{"runs", prior.runs}, {"sources", prior.sources}, {"within_sd", prior.within_sd}};
    for (int k = 0; k < spaces::kNumSiteFactors; ++k) {
      out.report +=
          fmt::format("  {:<20} sd {:.3f} ({} sources)\n", spaces::site_factor_info(k).name,
                      prior.sd[k], prior.informed_sources[k]);
      out.json["sd"][spaces::site_factor_info(k).name] = prior.sd[k];
    }
    return out;
  }
  spaces::SiteCalibration site = spaces::calibrate_site(read.runs, base.calibration, base.support);
  site.skipped = std::move(read.skipped);
  out.output = given("output");
  out.toml = spaces::format_site_calibration(
      site,
      fmt::format(
          "clustersweep estimator calibration, format version 1.\n"
          "Site-calibrated by `clustersweep calibrate {} -o {}{}` on {} runs: the\n"
          "base calibration with its site factors moved ([site]). See "
          "docs/calibration.md.",
          fmt::join(names, " "), std::filesystem::path(out.output).filename().string(),
          vm.count("calibration")
              ? " --calibration " + std::filesystem::path(given("calibration")).filename().string()
              : std::string(),
          site.runs));
  out.report = spaces::format_site_report(site);
  auto& j = out.json;
  j["runs"] = site.runs;
  j["ids"] = site.ids;
  j["sources"] = site.sources;
  j["accelerators"] = site.accelerators;
  j["families"] = site.families;
  for (int k = 0; k < spaces::kNumSiteFactors; ++k) {
    const double theta = site.fit.log_factor[k];
    const double sd = site.fit.sd[k];
    j["factors"][spaces::site_factor_info(k).name] = {
        {"value", std::exp(theta)},
        {"lo", std::exp(theta - spaces::kSiteZ90 * sd)},
        {"hi", std::exp(theta + spaces::kSiteZ90 * sd)},
        {"informed", site.fit.informed[k]}};
  }
  j["loo_mape"] = std::isfinite(site.loo_mape) ? nlohmann::ordered_json(site.loo_mape)
                                               : nlohmann::ordered_json();
  j["disagreeing_run"] = site.disagreeing_run.empty()
                             ? nlohmann::ordered_json()
                             : nlohmann::ordered_json(site.disagreeing_run);
  j["interval_family"] = spaces::to_string(site.main_family);
  j["base_interval"] = {site.base_interval.lo, site.base_interval.hi};
  j["interval"] = {site.interval.lo, site.interval.hi};
  j["skipped"] = site.skipped;
  j["output"] = out.output;
  return out;
}

}  // namespace

CalibrateResult calibrate_result(const Args& args) {
  const auto vm = parse_calibrate(args);
  return vm ? calibrate_runs(*vm) : CalibrateResult{};
}

int calibrate(const Args& args) {
  const auto vm = parse_calibrate(args);
  if (!vm) return kExitOk;
  const CalibrateResult result = calibrate_runs(*vm);
  write_file_atomically(result.output, result.toml, vm->count("fit-prior") ? "--fit-prior" : "-o");
  if (vm->count("json"))
    std::cout << result.json.dump(2) << "\n";
  else
    std::cout << result.report << fmt::format("wrote {}\n", result.output);
  return kExitOk;
}

}  // namespace clustersweep::cli
