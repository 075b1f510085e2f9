// clustersweep plan: validate a sweep spec, show its axes and size, forecast run time and store
// size.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <thread>

#include "apps/commands.h"
#include "base/error.h"
#include "base/format.h"
#include "engine/schema.h"
#include "spaces/forecast.h"
#include "spaces/space.h"

namespace clustersweep::cli {

namespace {

// At most `max` values: the first and last few with a count of the rest between.
std::string value_list(const spaces::Axis& axis, std::size_t max = 10) {
  std::vector<std::string> shown;
  const std::size_t n = axis.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (n > max && i == max / 2) {
      shown.push_back(fmt::format("... ({} more)", n - max));
      i = n - max / 2;
    }
    shown.push_back(axis.value_text(i));
  }
  return fmt::format("{}", fmt::join(shown, ", "));
}

}  // namespace

int plan(const Args& args) {
  po::options_description options("Options");
  options.add_options()("spec", po::value<std::string>(),
                        "the sweep spec (TOML, docs/spec-format.md)")(
      "ranks,n",
      whole_value<unsigned>(1)->default_value(std::max(1u, std::thread::hardware_concurrency())),
      "forecast the run time on this many MPI ranks (default: this machine's cores)")(
      "sample-seconds", real_value(RealDomain::at_least(0))->default_value(0.5),
      "time spent sampling the estimator for the forecast (0 = one pass)");
  po::positional_options_description positional;
  positional.add("spec", 1);
  const auto vm =
      parse(args, options, positional, "plan SPEC.toml [options]",
            "Validates a sweep spec and prints its axes, the number of points (total and\n"
            "structurally valid, with what removed the others), and a forecast of the run\n"
            "time and store size from a short timed sample of the estimator. Runs nothing.\n"
            "Exit code 2 and one line naming file:line:column and the key on a bad spec.");
  if (!vm) return kExitOk;
  if (!vm->count("spec")) throw InputError("missing SPEC.toml; usage: clustersweep plan SPEC.toml");
  const unsigned ranks = (*vm)["ranks"].as<unsigned>();
  const double sample_s = (*vm)["sample-seconds"].as<double>();

  const auto space = spaces::Space::load((*vm)["spec"].as<std::string>());
  // The store's row exactly as the engine lays it out (docs/store-format.md); checks the names
  // of `[output] columns`.
  const engine::Schema schema = engine::make_schema(space);
  std::cout << fmt::format("spec: {} (valid)\n\n", space.filename());
  const auto plan_axes = std::count_if(space.axes().begin(), space.axes().end(),
                                       [](const spaces::Axis& a) { return a.is_plan; });
  std::cout << fmt::format("{} axes ({} design, {} plan; design axes are the most significant):\n",
                           estimator::to_string(space.family()), space.axes().size() - plan_axes,
                           plan_axes);
  std::cout << fmt::format("  {:<24} {:<6} {:>6}  {:<9} {}\n", "axis", "kind", "count", "unit",
                           "values");
  for (const auto& axis : space.axes()) {
    std::cout << fmt::format("  {:<24} {:<6} {:>6}  {:<9} {}\n", axis.name,
                             axis.is_plan ? "plan" : "design", axis.size(),
                             axis.unit.empty() ? "-" : axis.unit, value_list(axis));
  }
  std::cout << '\n';

  const auto counts = space.count_by_rule();
  const std::uint64_t valid = counts[0];
  std::cout << fmt::format("points: {} = {} designs x {} plans\n", with_commas(space.size()),
                           with_commas(space.designs()), with_commas(space.plan_points()));
  std::cout << fmt::format("valid:  {} ({:.3g}%) after the structural constraints\n",
                           with_commas(valid),
                           100.0 * static_cast<double>(valid) / static_cast<double>(space.size()));
  if (valid < space.size()) {
    std::cout << "removed before evaluation:\n";
    for (int v = 1; v < spaces::kNumRules; ++v) {
      if (counts[v] == 0) continue;
      const auto rule = static_cast<spaces::Rule>(v);
      std::cout << fmt::format("  {:>16}  {:<26} {}\n", with_commas(counts[v]),
                               spaces::to_string(rule), spaces::describe(rule));
    }
  }
  std::cout << '\n';

  const auto f = spaces::forecast(space, valid, sample_s);
  const double rows = spaces::forecast_rows(space, valid, f);
  std::cout << fmt::format("forecast (timed sample: {} designs, {} checks, {} estimates):\n",
                           f.sampled_designs, with_commas(f.sampled_plans),
                           with_commas(f.sampled_estimates));
  if (f.sampled_estimates > 0) {
    std::cout << fmt::format(
        "  estimator:  {:.3g} evaluations/s per core; {:.3g}% of valid points fit in memory\n",
        f.evaluations_per_second, 100 * f.feasible_fraction);
  } else {
    std::cout << "  estimator:  no valid point in the sample\n";
  }
  std::cout << fmt::format("  run time:   {} on 1 core, {} on {} ranks (compute only)\n",
                           format_duration(f.core_seconds), format_duration(f.core_seconds / ranks),
                           ranks);
  const double row_bytes = static_cast<double>(schema.row_bytes());
  std::cout << fmt::format("  store:      keep = {}, columns = {} ({} columns), compression = {}\n",
                           spaces::to_string(space.keep()), space.output_columns().text(),
                           schema.columns.size(), spaces::to_string(space.compression()));
  std::cout << fmt::format(
      "              {}{} rows x {:.0f} B = {}{}\n",
      space.keep() == spaces::Keep::pareto_per_design ? "about " : "",
      with_commas(static_cast<std::uint64_t>(rows + 0.5)), row_bytes,
      format_bytes(rows * row_bytes),
      space.compression() == spaces::Compression::none ? "" : " before compression");
  return kExitOk;
}

}  // namespace clustersweep::cli
