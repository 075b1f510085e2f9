// clustersweep best: the best parallel plans of one model on one cluster (docs/search.md). The
// settings are estimate's; they become a one-design spec (spaces/design_spec.h) whose plan axes
// the settings do not fix are "all", and the exact plan search of that design answers, so `best`
// keeps the plan a best-per-design sweep of the same spec keeps. A recommendation model has no
// parallel plan: its answer is every sharding of its tables ranked (spaces::rank_shardings).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "analysis/rank.h"
#include "apps/analysis_args.h"
#include "apps/commands.h"
#include "apps/estimate_output.h"
#include "apps/setting_flags.h"
#include "base/error.h"
#include "base/format.h"
#include "spaces/catalog.h"
#include "spaces/design_spec.h"
#include "spaces/frameworks.h"
#include "spaces/resolve.h"
#include "spaces/search.h"

namespace clustersweep::cli {
namespace {

namespace est = estimator;

// The objective's value as a user reads it, and its unit in JSON.
std::string format_objective(spaces::Objective objective, double value) {
  switch (objective) {
    case spaces::Objective::step_time:
      return fmt::format("{:.4g} s", value);
    case spaces::Objective::time_to_train:
      return format_duration(value);
    case spaces::Objective::energy:
      return fmt::format("{:.4g} MWh", value / 3.6e9);
    case spaces::Objective::cost:
      return fmt::format("${}", with_commas(static_cast<std::uint64_t>(std::llround(value))));
  }
  return format_number(value);
}

const char* objective_unit(spaces::Objective objective) {
  switch (objective) {
    case spaces::Objective::step_time:
    case spaces::Objective::time_to_train:
      return "s";
    case spaces::Objective::energy:
      return "J";
    case spaces::Objective::cost:
      return "USD";
  }
  return "";
}

// The vendor of the point's accelerator: the frameworks listed for a plan are those that run on it.
std::string vendor_of(const spaces::Point& pt) {
  const spaces::AcceleratorEntry* gpu = spaces::Catalog::builtin().find_accelerator(pt.gpu_name);
  return gpu ? gpu->vendor : std::string();
}

// "megatron-core, fsdp2"; "none" when no framework runs the plan.
std::string frameworks_text(const std::vector<std::string>& names) {
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

nlohmann::ordered_json make_json(const spaces::Point& pt, const est::Estimator& estimator,
                                 const spaces::DesignSearch& s, double seconds,
                                 spaces::Objective objective, bool robust,
                                 const std::array<bool, spaces::kNumStackSettings>& given) {
  nlohmann::ordered_json out;
  out["model"] = pt.model_name;
  out["gpu"] = pt.gpu_name;
  out["num_gpus"] = s.design.cluster.num_gpus;
  out["nodes"] = pt.nodes;
  out["objective"] = spaces::to_string(objective);
  out["objective_unit"] = objective_unit(objective);
  out["robust"] = robust;
  nlohmann::ordered_json plans = nlohmann::ordered_json::array();
  for (const auto& r : s.plans) {
    nlohmann::ordered_json plan = plan_json(r.plan);
    // Not one of the plan's settings here: a sweep's capacity routing takes one balanced share.
    plan.erase("capacity_factor");
    plan["objective"] = json_number(r.objective);
    plan["step_time_s"] = step_time_json(r.estimate.time);
    const spaces::PointInterval interval = spaces::point_interval(pt, r.plan);
    add_interval_json(plan, r.estimate.time.total_s, interval);
    plan["low_support"] = interval.support.runs < spaces::kFewCalibrationRuns;
    plan["frameworks"] = spaces::frameworks_running(r.plan, given, vendor_of(pt));
    plan["memory_bytes"] = memory_json(r.estimate.memory, s.design.cluster);
    plan["tokens_per_s"] = json_number(r.estimate.tokens_per_s);
    plan["mfu"] = json_number(r.estimate.mfu);
    plan["energy_per_step_j"] = json_number(r.estimate.energy_per_step_j);
    plan["job"] = job_json(training_job(pt, r.plan, estimator, r.estimate));
    plans.push_back(std::move(plan));
  }
  out["plans"] = std::move(plans);
  out["stats"] = {{"plans", s.space.plan_points()}, {"plans_evaluated", s.stats.evaluated},
                  {"plans_pruned", s.stats.pruned}, {"plans_invalid", s.stats.invalid},
                  {"boxes_bounded", s.stats.boxes}, {"seconds", seconds}};
  return out;
}

void print_text(const spaces::Point& pt, const est::Estimator& estimator,
                const spaces::DesignSearch& s, double seconds, spaces::Objective objective,
                bool stats, bool robust, const std::array<bool, spaces::kNumStackSettings>& given) {
  const est::Cluster& c = s.design.cluster;
  const bool moe = est::is_moe(s.design.workload.model);
  std::cout << fmt::format("best plans of {} on {} x {} ({} nodes), by {}{}\n", pt.model_name,
                           c.num_gpus, pt.gpu_name, pt.nodes, spaces::to_string(objective),
                           robust ? " at the upper end of its 90% interval (--robust)" : "");
  if (stats)
    std::cout << fmt::format(
        "searched {} plans in {:.3g} s: {} evaluated, {} pruned by bounds ({} boxes bounded), {} "
        "removed by rules\n",
        with_commas(s.space.plan_points()), seconds, with_commas(s.stats.evaluated),
        with_commas(s.stats.pruned), with_commas(s.stats.boxes), with_commas(s.stats.invalid));
  std::cout << '\n';
  if (s.plans.empty()) {
    std::cout << "no plan fits: every valid plan needs more memory per GPU than the cluster has\n";
    return;
  }
  // The stack is the one the flags give (design_spec() fixes it): the same for every plan. The rank
  // order is searched unless given, so it is each plan's column.
  const bool order_given = !pt.origin.count("rank_order");
  std::cout << fmt::format("stack {}\n", stack_text(s.plans.front().plan.stack, order_given));
  if (const std::string assumed = assumed_stack_text(pt.origin, false); !assumed.empty())
    std::cout << fmt::format("      {}\n", assumed);
  std::cout << '\n';
  std::cout << fmt::format("{:>3} {:>4}{:>4}{:>6}{:>4}{:>4}", "#", "tp", "pp", "dp", "cp", "vp");
  if (moe) std::cout << fmt::format("{:>5}{:>5}", "ep", "etp");
  std::cout << fmt::format(
      " {:>4} {:>4} {:<9} {:<3} {:<7} {:<14} {:<14} {:>10} {:>12} {:>9} {:>6}\n", "mb", "zero",
      "recompute", "sp", "offload", "split", "rank order", "step", "objective", "HBM", "MFU");
  for (std::size_t i = 0; i < s.plans.size(); ++i) {
    const est::Plan& p = s.plans[i].plan;
    const est::Estimate& e = s.plans[i].estimate;
    std::cout << fmt::format("{:>3} {:>4}{:>4}{:>6}{:>4}{:>4}", i + 1, p.tp, p.pp, p.dp, p.cp,
                             p.vp);
    if (moe) std::cout << fmt::format("{:>5}{:>5}", p.ep, p.etp);
    std::cout << fmt::format(
        " {:>4} {:>4} {:<9} {:<3} {:<7} {:<14} {:<14} {:>10} {:>12} {:>9} {:>5.1f}%\n",
        p.micro_batch, p.zero, est::recompute_label(p.recompute, p.recompute_modules),
        p.sequence_parallel ? "on" : "off", est::to_string(p.offload),
        est::to_string(p.pipeline_split), est::to_string(p.stack.rank_order),
        fmt::format("{:.4g} s", e.time.total_s), format_objective(objective, s.plans[i].objective),
        fmt::format("{:.1f} GB", e.memory.hbm_bytes / 1e9), 100 * e.mfu);
  }
  // How far each answer can be trusted: the calibration runs like it, its interval, and the
  // frameworks that run it.
  std::cout << fmt::format("\n{:>3}  {:<17} {:<9} {}\n", "#", "90% interval", "support",
                           "frameworks");
  std::string few;  // the first weakly supported plan's reason
  for (std::size_t i = 0; i < s.plans.size(); ++i) {
    const spaces::PointInterval pi = spaces::point_interval(pt, s.plans[i].plan);
    const double step = s.plans[i].estimate.time.total_s;
    const bool low = pi.support.runs < spaces::kFewCalibrationRuns;
    if (low && few.empty()) few = fmt::format("#{}: {}", i + 1, pi.support.weakest);
    std::cout << fmt::format(
        "{:>3}  {:<17} {:<9} {}\n", i + 1,
        fmt::format("{:.4g}-{:.4g} s", step * pi.interval.lo, step * pi.interval.hi),
        fmt::format("{} runs{}", pi.support.runs, low ? " !" : ""),
        frameworks_text(spaces::frameworks_running(s.plans[i].plan, given, vendor_of(pt))));
  }
  if (!few.empty())
    std::cout << fmt::format(
        "! few calibration runs are like the plan ({}): its estimate is unchecked there and its "
        "interval widened; --robust ranks by the interval's upper end\n",
        few);
  // The parts of the first plans side by side: where the best plans spend their step.
  const std::size_t shown = std::min<std::size_t>(s.plans.size(), 5);
  auto header = [&](const char* title) {
    std::cout << fmt::format("\n{:<30}", title);
    for (std::size_t i = 0; i < shown; ++i)
      std::cout << fmt::format("{:>11}", fmt::format("#{}", i + 1));
    std::cout << '\n';
  };
  auto rows = [&](auto rows_of, auto format) {
    const Rows first = rows_of(s.plans[0].estimate);
    for (std::size_t row = 0; row < first.size(); ++row) {
      std::cout << fmt::format("  {:<28}", first[row].first);
      for (std::size_t i = 0; i < shown; ++i)
        std::cout << fmt::format("{:>11}", format(rows_of(s.plans[i].estimate)[row].second));
      std::cout << '\n';
    }
  };
  header("step time (s)");
  rows([&](const est::Estimate& e) { return step_time_rows(e.time, moe); },
       [](double v) { return fmt::format("{:.4g}", v); });
  std::cout << fmt::format("  {:<28}", "total");
  for (std::size_t i = 0; i < shown; ++i)
    std::cout << fmt::format("{:>11.4g}", s.plans[i].estimate.time.total_s);
  std::cout << '\n';
  header("memory per GPU (GB)");
  rows([&](const est::Estimate& e) { return memory_rows(e.memory, moe); },
       [](double v) { return fmt::format("{:.2f}", v / 1e9); });
  std::cout << fmt::format("  {:<28}", fmt::format("in HBM (of {:.0f})", c.hbm_bytes / 1e9));
  for (std::size_t i = 0; i < shown; ++i)
    std::cout << fmt::format("{:>11.2f}", s.plans[i].estimate.memory.hbm_bytes / 1e9);
  std::cout << '\n';
  if (c.expansion_bytes > 0) {
    std::cout << fmt::format("  {:<28}",
                             fmt::format("in expansion (of {:.0f})", c.expansion_bytes / 1e9));
    for (std::size_t i = 0; i < shown; ++i)
      std::cout << fmt::format("{:>11.2f}", s.plans[i].estimate.memory.expansion_bytes / 1e9);
    std::cout << '\n';
  }
  print_job(training_job(pt, s.plans[0].plan, estimator, s.plans[0].estimate),
            "training job of #1");
}

// ---- Recommendation models: the planner's best placement and every sharding, ranked

// One row of the ranking: its facts, computed once, for the table and the JSON alike.
struct ShardingRow {
  std::size_t rank = 0;   // 1 = the first
  std::string sharding;   // "best", or a sharding's name
  std::string placement;  // spaces::describe_placement(): "column:20 data:6", "row"
  double step_time_s = 0;
  double samples_per_s = 0;
  double memory_bytes = 0;  // on the busiest GPU: in HBM and in the expansion tier
  bool fits = false;
  est::Infeasible reason = est::Infeasible::none;
};

// The first `top` of the ranking, in its order.
std::vector<ShardingRow> sharding_rows(const spaces::DlrmPoint& pt,
                                       const std::vector<spaces::RankedSharding>& ranked,
                                       std::size_t top) {
  std::vector<ShardingRow> rows;
  for (std::size_t i = 0; i < ranked.size() && i < top; ++i) {
    const est::DlrmEstimate& e = ranked[i].estimate;
    rows.push_back({i + 1, ranked[i].name, spaces::describe_placement(pt, ranked[i].plan),
                    e.time.total_s, e.samples_per_s, e.memory.hbm_bytes + e.memory.expansion_bytes,
                    e.feasible, e.reason});
  }
  return rows;
}

nlohmann::ordered_json make_dlrm_json(const spaces::DlrmPoint& pt,
                                      const std::vector<ShardingRow>& rows) {
  nlohmann::ordered_json out;
  out["model"] = pt.model_name;
  out["gpu"] = pt.gpu_name;
  out["num_gpus"] = pt.cluster.num_gpus;
  out["global_batch"] = pt.workload.global_batch;
  out["framework"] = est::to_string(pt.workload.framework);
  nlohmann::ordered_json shardings = nlohmann::ordered_json::array();
  for (const ShardingRow& r : rows)
    shardings.push_back({{"rank", r.rank},
                         {"sharding", r.sharding},
                         {"placement", r.placement},
                         {"step_time_s", json_number(r.step_time_s)},
                         {"samples_per_s", json_number(r.samples_per_s)},
                         {"hbm_gb", json_number(r.memory_bytes / 1e9)},
                         {"fits", r.fits}});
  out["shardings"] = std::move(shardings);
  return out;
}

void print_dlrm_text(const spaces::DlrmPoint& pt, const std::vector<ShardingRow>& rows,
                     std::size_t ranked) {
  const est::Cluster& c = pt.cluster;
  std::cout << fmt::format(
      "best shardings of {} on {} x {} ({} nodes), global batch {}, framework {}, by step_time\n",
      pt.model_name, c.num_gpus, pt.gpu_name, pt.nodes, pt.workload.global_batch,
      dlrm_framework_text(pt));
  if (rows.size() < ranked)
    std::cout << fmt::format("the first {} of {} (--top)\n", rows.size(), ranked);
  std::cout << '\n';
  // The sharding, with its placement where the name does not say it: the planner's mix for
  // "best", a table sliced by columns where table_wise cannot hold it whole.
  std::vector<std::string> names;
  std::size_t width = std::string_view("sharding").size();
  for (const ShardingRow& r : rows) {
    names.push_back(r.placement == r.sharding ? r.sharding
                                              : fmt::format("{} ({})", r.sharding, r.placement));
    width = std::max(width, names.back().size());
  }
  std::cout << fmt::format("{:>3}  {:<{}} {:>11} {:>11} {:>11}  {}\n", "#", "sharding", width,
                           "step", "samples/s", "memory/GPU", "fits");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ShardingRow& r = rows[i];
    const std::string fits = r.fits ? "yes"
                             : r.reason == est::Infeasible::out_of_memory
                                 ? "out of memory"
                                 : est::to_string(r.reason);
    std::cout << fmt::format("{:>3}  {:<{}} {:>11} {:>11.4g} {:>11}  {}\n", r.rank, names[i], width,
                             fmt::format("{:.4g} s", r.step_time_s), r.samples_per_s,
                             fmt::format("{:.1f} GB", r.memory_bytes / 1e9), fits);
  }
  std::cout << fmt::format("\nmemory/GPU is the busiest GPU's (HBM {:g} GB", c.hbm_bytes / 1e9);
  if (c.expansion_bytes > 0)
    std::cout << fmt::format(", expansion tier {:g} GB", c.expansion_bytes / 1e9);
  std::cout << "); estimate --sharding NAME breaks a row down\n";
}

// A recommendation model's shardings ranked: the JSON, or (json = false) the table on stdout.
nlohmann::ordered_json best_shardings(const po::variables_map& vm, const spaces::Settings& settings,
                                      bool json) {
  if (settings.has("sharding"))
    throw InputError(
        fmt::format("{}: best ranks every sharding; leave it out", settings.where("sharding")));
  const std::string objective = vm["objective"].as<std::string>();
  if (objective != spaces::to_string(spaces::Objective::step_time))
    throw InputError(fmt::format(
        "--objective: must be step_time for a recommendation model (best ranks its shardings by "
        "step time), got '{}'",
        objective));
  for (const char* flag : {"robust", "exhaustive", "stats", "print-spec"})
    if (vm.count(flag))
      throw InputError(fmt::format(
          "--{}: for a transformer's plan search; best ranks a recommendation model's every "
          "sharding, leave it out",
          flag));
  const spaces::DlrmPoint pt = spaces::resolve_dlrm(settings);
  const est::DlrmEstimator estimator(pt.workload, pt.cluster, pt.calibration);
  const std::vector<spaces::RankedSharding> ranked = spaces::rank_shardings(estimator);
  const std::vector<ShardingRow> rows = sharding_rows(pt, ranked, vm["top"].as<std::size_t>());
  if (json) return make_dlrm_json(pt, rows);
  print_dlrm_text(pt, rows, ranked.size());
  return {};
}

std::optional<po::variables_map> parse_best(const Args& args) {
  po::options_description options("Options");
  po::positional_options_description positional;
  add_setting_options(options, positional);
  options.add_options()(
      "objective", po::value<std::string>()->default_value("step_time"),
      "what the best plan minimizes: step_time, time_to_train, energy or cost (of training "
      "--training-tokens); step_time for a recommendation model")(
      "top", whole_value<std::size_t>(1)->default_value(5), "how many plans to print, best first")(
      "stats", "print the plans searched, evaluated and pruned, and the time taken")(
      "exhaustive", "evaluate every plan instead of searching (the same answer, slower)")(
      "robust",
      "rank by the upper end of each plan's 90% interval (wider where few calibration runs are "
      "like the plan): a plan wins only by more than the estimator's own error")(
      "print-spec", "print the one-design sweep spec that is searched, and exit")(
      "json", "print JSON instead of tables");
  add_pricing_options(options, "");
  return parse(
      args, options, positional, "best [FILE.toml] [options]",
      "The best parallel plans of one model on one cluster: every plan a sweep can hold\n"
      "(tp, pp, cp, vp, micro-batch, ZeRO, recompute, sequence parallel, offload, pipeline\n"
      "split, rank order; ep and etp for Mixture-of-Experts models) is considered, by an\n"
      "exact search that prunes plans bounds prove cannot win (docs/search.md). A plan flag\n"
      "(--tp 8, --rank-order tp-pp-dp) fixes that setting; the workload and cluster flags\n"
      "are estimate's.\n"
      "\n"
      "A recommendation model (DLRM, DCNv2) has no parallel plan: best ranks the planner's\n"
      "best placement (\"best\", with its mix of shardings) and each sharding of every table\n"
      "(table, row, column, table_row with 2+ nodes, data, hybrid, fused_row) by step time,\n"
      "those that fit first, with samples/s, memory per GPU and whether it fits. --sharding,\n"
      "--robust, --exhaustive, --stats and --print-spec do not apply to it.");
}

// The search of the flags' design: its JSON, or (json = false) its tables on stdout.
nlohmann::ordered_json best_plans(const po::variables_map& vm, bool json) {
  const std::string objective_name = vm["objective"].as<std::string>();
  const std::size_t top = vm["top"].as<std::size_t>();
  spaces::Objective objective{};
  {
    bool found = false;
    for (int i = 0; i < 4 && !found; ++i) {
      objective = static_cast<spaces::Objective>(i);
      found = objective_name == spaces::to_string(objective);
    }
    if (!found)
      throw InputError(
          fmt::format("--objective: must be step_time, time_to_train, energy or cost, got '{}'",
                      objective_name));
  }
  spaces::DesignSpecOptions spec_options;
  spec_options.objective = objective;
  spec_options.robust = vm.count("robust") > 0;
  spec_options.pricing = analysis::override_pricing({}, read_pricing_overrides(vm));

  const spaces::Settings settings = read_settings(vm);
  // A recommendation model of the catalog, or one described by its tables, is the DLRM family's.
  if ((settings.has("model") && spaces::is_dlrm_model(settings.at("model").text)) ||
      settings.has("num_tables"))
    return best_shardings(vm, settings, json);
  const spaces::Point pt = spaces::resolve(settings);
  spec_options.training_tokens = pt.training_tokens;
  spec_options.reliability = pt.reliability;
  if (vm.count("print-spec")) {
    std::cout << spaces::design_spec(settings, pt, spec_options);
    return {};
  }
  const auto start = std::chrono::steady_clock::now();
  const spaces::DesignSearch s =
      spaces::search_design(settings, pt, spec_options, top, vm.count("exhaustive") > 0);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const est::Estimator estimator(pt.workload, pt.cluster, pt.calibration);
  const auto given = spaces::given_stack(settings);
  if (json) return make_json(pt, estimator, s, seconds, objective, spec_options.robust, given);
  print_text(pt, estimator, s, seconds, objective, vm.count("stats") > 0, spec_options.robust,
             given);
  return {};
}

}  // namespace

nlohmann::ordered_json best_json(const Args& args) {
  const auto vm = parse_best(args);
  return vm ? best_plans(*vm, true) : nlohmann::ordered_json();
}

int best(const Args& args) {
  const auto vm = parse_best(args);
  if (!vm) return kExitOk;
  if (vm->count("json") && !vm->count("print-spec"))
    std::cout << best_plans(*vm, true).dump(2) << '\n';
  else
    best_plans(*vm, false);
  return kExitOk;
}

}  // namespace clustersweep::cli
