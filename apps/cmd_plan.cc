// clustersweep plan: validate a sweep spec, show its axes and size, forecast run time and store
// size.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "apps/commands.h"
#include "base/error.h"
#include "base/format.h"
#include "engine/schema.h"
#include "spaces/forecast.h"
#include "spaces/space.h"

namespace clustersweep::cli {

namespace {

std::optional<po::variables_map> parse_plan(const Args& args) {
  po::options_description options("Options");
  options.add_options()("spec", po::value<std::string>(),
                        "the sweep spec (TOML, docs/spec-format.md)")(
      "ranks,n",
      whole_value<unsigned>(1)->default_value(std::max(1u, std::thread::hardware_concurrency())),
      "forecast the run time on this many MPI ranks (default: this machine's cores)")(
      "sample-seconds", real_value(RealDomain::at_least(0))->default_value(0.5),
      "time spent sampling the estimator for the forecast (0 = one pass)")(
      "json", "print JSON instead of text");
  po::positional_options_description positional;
  positional.add("spec", 1);
  return parse(args, options, positional, "plan SPEC.toml [options]",
               "Validates a sweep spec and prints its axes, the number of points (total and\n"
               "structurally valid, with what removed the others), and a forecast of the run\n"
               "time and store size from a short timed sample of the estimator. Runs nothing.\n"
               "Exit code 2 and one line naming file:line:column and the key on a bad spec.");
}

// A count as an integer, any other number as itself.
nlohmann::ordered_json json_value(double v) {
  if (v == std::floor(v) && std::fabs(v) < 9.007199254740992e15)
    return static_cast<std::int64_t>(v);
  return v;
}

// Everything `plan` reports, as data: the text is printed from it.
nlohmann::ordered_json plan_report(const po::variables_map& vm) {
  if (!vm.count("spec")) throw InputError("missing SPEC.toml; usage: clustersweep plan SPEC.toml");
  const unsigned ranks = vm["ranks"].as<unsigned>();
  const double sample_s = vm["sample-seconds"].as<double>();
  const auto space = spaces::Space::load(vm["spec"].as<std::string>());
  // The store's row exactly as the engine lays it out (docs/store-format.md); checks the names
  // of `[output] columns`.
  const engine::Schema schema = engine::make_schema(space);
  nlohmann::ordered_json out;
  out["spec"] = space.filename();
  out["family"] = estimator::to_string(space.family());
  nlohmann::ordered_json axes = nlohmann::ordered_json::array();
  for (const auto& axis : space.axes()) {
    nlohmann::ordered_json values = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < axis.size(); ++i) {
      if (axis.is_label)
        values.push_back(axis.labels[i]);
      else if (axis.zero_means_default && axis.numbers[i] == 0)
        values.push_back("default");
      else
        values.push_back(json_value(axis.numbers[i]));
    }
    axes.push_back({{"name", axis.name},
                    {"kind", axis.is_plan ? "plan" : "design"},
                    {"unit", axis.unit},
                    {"values", std::move(values)}});
  }
  out["axes"] = std::move(axes);
  const auto counts = space.count_by_rule();
  out["points"] = space.size();
  out["designs"] = space.designs();
  out["plans"] = space.plan_points();
  out["valid"] = counts[0];
  nlohmann::ordered_json removed = nlohmann::ordered_json::array();
  for (int v = 1; v < spaces::kNumRules; ++v) {
    if (counts[v] == 0) continue;
    const auto rule = static_cast<spaces::Rule>(v);
    removed.push_back({{"rule", spaces::to_string(rule)},
                       {"points", counts[v]},
                       {"description", spaces::describe(rule)}});
  }
  out["removed"] = std::move(removed);
  const auto f = spaces::forecast(space, counts[0], sample_s);
  const double rows = spaces::forecast_rows(space, counts[0], f);
  const double row_bytes = static_cast<double>(schema.row_bytes());
  out["forecast"] = {{"sampled_designs", f.sampled_designs},
                     {"sampled_plans", f.sampled_plans},
                     {"sampled_estimates", f.sampled_estimates},
                     {"evaluations_per_second", f.evaluations_per_second},
                     {"feasible_fraction", f.feasible_fraction},
                     {"core_seconds", f.core_seconds},
                     {"ranks", ranks},
                     {"seconds_on_ranks", f.core_seconds / ranks},
                     {"keep", spaces::to_string(space.keep())},
                     {"columns", space.output_columns().text()},
                     {"column_count", schema.columns.size()},
                     {"compression", spaces::to_string(space.compression())},
                     {"rows", rows},
                     {"row_bytes", row_bytes},
                     {"store_bytes", rows * row_bytes}};
  return out;
}

void print_text(const nlohmann::ordered_json& r) {
  using J = nlohmann::ordered_json;
  const auto& axes = r["axes"];
  const auto plan_axes =
      std::count_if(axes.begin(), axes.end(), [](const J& a) { return a["kind"] == "plan"; });
  std::cout << fmt::format("spec: {} (valid)\n\n", r["spec"].get<std::string>());
  std::cout << fmt::format("{} axes ({} design, {} plan; design axes are the most significant):\n",
                           r["family"].get<std::string>(), axes.size() - plan_axes, plan_axes);
  std::cout << fmt::format("  {:<24} {:<6} {:>6}  {:<9} {}\n", "axis", "kind", "count", "unit",
                           "values");
  for (const auto& axis : axes) {
    // At most 10 values: the first and last five with a count of the rest between.
    const auto& values = axis["values"];
    const std::size_t n = values.size(), max = 10;
    std::vector<std::string> shown;
    for (std::size_t i = 0; i < n; ++i) {
      if (n > max && i == max / 2) {
        shown.push_back(fmt::format("... ({} more)", n - max));
        i = n - max / 2;
      }
      shown.push_back(values[i].is_string() ? values[i].get<std::string>()
                                            : format_number(values[i].get<double>()));
    }
    const std::string unit = axis["unit"];
    std::cout << fmt::format("  {:<24} {:<6} {:>6}  {:<9} {}\n", axis["name"].get<std::string>(),
                             axis["kind"].get<std::string>(), n, unit.empty() ? "-" : unit,
                             fmt::join(shown, ", "));
  }
  std::cout << '\n';
  const auto points = r["points"].get<std::uint64_t>();
  const auto valid = r["valid"].get<std::uint64_t>();
  std::cout << fmt::format("points: {} = {} designs x {} plans\n", with_commas(points),
                           with_commas(r["designs"].get<std::uint64_t>()),
                           with_commas(r["plans"].get<std::uint64_t>()));
  std::cout << fmt::format("valid:  {} ({:.3g}%) after the structural constraints\n",
                           with_commas(valid),
                           100.0 * static_cast<double>(valid) / static_cast<double>(points));
  if (!r["removed"].empty()) {
    std::cout << "removed before evaluation:\n";
    for (const auto& rm : r["removed"])
      std::cout << fmt::format("  {:>16}  {:<26} {}\n",
                               with_commas(rm["points"].get<std::uint64_t>()),
                               rm["rule"].get<std::string>(), rm["description"].get<std::string>());
  }
  std::cout << '\n';

  const auto& f = r["forecast"];
  std::cout << fmt::format("forecast (timed sample: {} designs, {} checks, {} estimates):\n",
                           f["sampled_designs"].get<std::uint64_t>(),
                           with_commas(f["sampled_plans"].get<std::uint64_t>()),
                           with_commas(f["sampled_estimates"].get<std::uint64_t>()));
  if (f["sampled_estimates"].get<std::uint64_t>() > 0) {
    std::cout << fmt::format(
        "  estimator:  {:.3g} evaluations/s per core; {:.3g}% of valid points fit in memory\n",
        f["evaluations_per_second"].get<double>(), 100 * f["feasible_fraction"].get<double>());
  } else {
    std::cout << "  estimator:  no valid point in the sample\n";
  }
  std::cout << fmt::format("  run time:   {} on 1 core, {} on {} ranks (compute only)\n",
                           format_duration(f["core_seconds"].get<double>()),
                           format_duration(f["seconds_on_ranks"].get<double>()),
                           f["ranks"].get<unsigned>());
  std::cout << fmt::format("  store:      keep = {}, columns = {} ({} columns), compression = {}\n",
                           f["keep"].get<std::string>(), f["columns"].get<std::string>(),
                           f["column_count"].get<std::size_t>(),
                           f["compression"].get<std::string>());
  const double rows = f["rows"].get<double>();
  std::cout << fmt::format("              {}{} rows x {:.0f} B = {}{}\n",
                           f["keep"] == "pareto-per-design" ? "about " : "",
                           with_commas(static_cast<std::uint64_t>(rows + 0.5)),
                           f["row_bytes"].get<double>(),
                           format_bytes(f["store_bytes"].get<double>()),
                           f["compression"] == "none" ? "" : " before compression");
}

}  // namespace

nlohmann::ordered_json plan_json(const Args& args) {
  const auto vm = parse_plan(args);
  return vm ? plan_report(*vm) : nlohmann::ordered_json();
}

int plan(const Args& args) {
  const auto vm = parse_plan(args);
  if (!vm) return kExitOk;
  const auto report = plan_report(*vm);
  if (vm->count("json"))
    std::cout << report.dump(2) << '\n';
  else
    print_text(report);
  return kExitOk;
}

}  // namespace clustersweep::cli
