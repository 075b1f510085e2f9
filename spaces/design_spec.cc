#include "spaces/design_spec.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "base/error.h"
#include "spaces/architecture.h"
#include "spaces/stack_settings.h"

namespace clustersweep::spaces {
namespace {

namespace est = estimator;

// The settings a spec's [cluster] and [plan] take as they are, by the TOML type they need.
constexpr const char* kClusterIntegers[] = {"nodes", "gpus", "gpus_per_node", "nvlink_domain"};
constexpr const char* kClusterNumbers[] = {
    "nvlink_gbytes_per_s",   "inter_node_gbps_per_gpu", "hbm_gb",
    "expansion_gb",          "expansion_gbytes_per_s",  "nvlink_latency_us",
    "inter_node_latency_us", "node_overhead_w",         "power_cap_w"};
constexpr const char* kPlanIntegers[] = {"tp",          "pp",   "cp", "vp",
                                         "micro_batch", "zero", "ep", "etp"};
constexpr const char* kPlanLabels[] = {"recompute", "offload", "pipeline_split"};

bool changes_architecture(const Settings& s) {
  for (const char* name : {"layers", "hidden", "heads", "kv_heads", "ffn_hidden", "mlp", "vocab"})
    if (s.has(name)) return true;
  for (const ArchitectureField& f : architecture_fields())
    if (s.has(f.name)) return true;
  return false;
}

toml::table inline_model(const est::Model& m) {
  toml::table t;
  t.insert("layers", m.layers);
  t.insert("hidden", m.hidden);
  t.insert("heads", m.heads);
  t.insert("kv_heads", m.kv_heads);
  if (m.ffn_hidden > 0) t.insert("ffn_hidden", m.ffn_hidden);
  t.insert("mlp", est::to_string(m.mlp));
  t.insert("vocab", m.vocab);
  for (const ArchitectureField& f : architecture_fields())
    if (m.*(f.member) != 0) t.insert(f.name, m.*(f.member));
  return t;
}

}  // namespace

std::string design_spec(const Settings& s, const Point& pt, const DesignSpecOptions& options) {
  if (s.has("capacity_factor"))
    throw InputError(fmt::format(
        "{}: not a plan axis of a sweep (sweeps route dropless); estimate takes it for one plan",
        s.where("capacity_factor")));
  toml::table root;
  if (s.has("calibration"))
    root.insert("calibration", std::filesystem::absolute(s.at("calibration").text).string());
  if (s.has("dp")) root.insert("constraints", toml::array{fmt::format("dp == {}", pt.plan.dp)});

  toml::table workload;
  const bool custom = !s.has("model") || changes_architecture(s);
  workload.insert("model", custom ? "custom" : pt.model_name);
  workload.insert("seq_len", pt.workload.seq_len);
  workload.insert("global_batch", pt.workload.global_batch);
  workload.insert("precision", est::to_string(pt.workload.precision));
  if (options.training_tokens > 0) workload.insert("training_tokens", options.training_tokens);
  root.insert("workload", std::move(workload));
  if (custom) root.insert("models", toml::table{{"custom", inline_model(pt.workload.model)}});

  toml::table cluster;
  cluster.insert("gpu", pt.gpu_name);
  for (const char* name : kClusterIntegers)
    if (s.has(name)) cluster.insert(name, static_cast<std::int64_t>(s.integer(name, 0)));
  // GPUs derived from a given dp: the cluster the point resolved to.
  if (!s.has("nodes") && !s.has("gpus")) cluster.insert("gpus", pt.cluster.num_gpus);
  for (const char* name : kClusterNumbers)
    if (s.has(name)) cluster.insert(name, s.number(name, 0, true));
  for (const char* name : {"fabric", "torus"})
    if (s.has(name)) cluster.insert(name, s.at(name).text);
  // The scale-out network as the point resolved it.
  const est::ScaleOut& net = pt.cluster.scale_out;
  if (s.has("network")) cluster.insert("network", est::to_string(net.network));
  if (s.has("oversubscription")) cluster.insert("oversubscription", net.oversubscription);
  if (s.has("pod_gpus")) cluster.insert("pod_gpus", net.pod_gpus);
  if (s.has("planes")) cluster.insert("planes", net.planes);
  if (s.has("group_gpus")) cluster.insert("group_gpus", net.group_gpus);
  if (s.has("global_taper")) cluster.insert("global_taper", net.global_taper);
  root.insert("cluster", std::move(cluster));

  toml::table plan;
  for (const char* name : kPlanIntegers) {
    if (s.has(name))
      plan.insert(name, static_cast<std::int64_t>(s.integer(name, 0, 0)));
    else
      plan.insert(name, "all");
  }
  for (const char* name : kPlanLabels) plan.insert(name, s.has(name) ? s.at(name).text : "all");
  if (!s.has("recompute") && !options.more_recomputes.empty()) {
    toml::array recomputes{"none", "selective", "full"};
    for (const std::string& r : options.more_recomputes)
      if (r != "none" && r != "selective" && r != "full") recomputes.push_back(r);
    plan.insert_or_assign("recompute", std::move(recomputes));
  }
  if (s.has("sequence_parallel"))
    plan.insert("sequence_parallel", s.boolean("sequence_parallel"));
  else
    plan.insert("sequence_parallel", "all");
  // The stack is the point's, fixed: the best plan is the best under the software the run has
  // (a setting given, or one a rule derived from another, such as capacity routing).
  const est::Stack defaults;
  for (const StackSetting& st : stack_settings()) {
    const int v = st.get(pt.plan.stack);
    if (!s.has(st.name) && v == st.get(defaults)) continue;
    if (st.boolean)
      plan.insert(st.name, v != 0);
    else
      plan.insert(st.name, st.value_name(v));
  }
  // The rank order is where the plan's groups sit, not what software runs them: searched as the
  // degrees are unless given (a framework that runs one order keeps to it by rule).
  if (!s.has("rank_order")) plan.insert_or_assign("rank_order", "all");
  if (s.has("allow_tp_across_nodes"))
    plan.insert("allow_tp_across_nodes", s.boolean("allow_tp_across_nodes"));
  root.insert("plan", std::move(plan));

  // Only the prices that differ from "not given": the spec takes one way to price GPUs.
  toml::table pricing;
  Pricing::for_each(options.pricing, [&](const char* name, const auto& value) {
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, GpuPrice>) {
      // Named by its flag (the key with dashes), as the one accelerator is by --gpu.
      const std::string problem = gpu_price_problem(value, {pt.gpu_name}, "--gpu");
      if (!problem.empty()) {
        std::string flag = name;
        std::replace(flag.begin(), flag.end(), '_', '-');
        throw InputError(fmt::format("--{}: {}", flag, problem));
      }
      if (!value.by_gpu.empty()) {
        toml::table by_gpu;
        for (const auto& [gpu, price] : value.by_gpu) by_gpu.insert(gpu, price);
        pricing.insert(name, std::move(by_gpu));
      } else if (value.all > 0) {
        pricing.insert(name, value.all);
      }
    } else {
      pricing.insert(name, value);
    }
  });
  root.insert("pricing", std::move(pricing));
  toml::table reliability;
  estimator::Reliability::for_each(options.reliability, [&](const char* name, double value) {
    reliability.insert(name, value);
  });
  root.insert("reliability", std::move(reliability));
  root.insert("output", toml::table{{"keep", "best-per-design"},
                                    {"objective", to_string(options.objective)}});
  std::ostringstream text;
  text << root << '\n';
  return text.str();
}

// Not the stack's settings: they are the software a plan runs on, not a choice of the plan, and
// `validate --best` looks for a run's best plan under the run's own stack (a setting that the
// search left open would compare plans of other software with the measured run).
const std::vector<std::string>& plan_setting_names() {
  static const std::vector<std::string> kNames = {"tp",          "pp",
                                                  "dp",          "cp",
                                                  "vp",          "pipeline_split",
                                                  "micro_batch", "zero",
                                                  "recompute",   "sequence_parallel",
                                                  "offload",     "ep",
                                                  "etp",         "capacity_factor"};
  return kNames;
}

DesignSearch search_design(const Settings& settings, const Point& point,
                           const DesignSpecOptions& options, std::size_t k, bool exhaustive) {
  if (const Violation v = check_design(point.workload, point.cluster))
    throw InputError(explain(v, settings));
  DesignSearch out{
      Space::parse(design_spec(settings, point, options), "(one-design spec)"), {}, {}, {}};
  Violation why;
  if (!out.space.design(0, out.design, why)) throw InputError(explain(why, settings));
  // The point as resolved, with its calibration (a fitted one need not be in a file): the spec's
  // single design holds the same workload and cluster.
  out.design.workload = point.workload;
  out.design.cluster = point.cluster;
  const estimator::Estimator estimator(point.workload, point.cluster, point.calibration);
  SearchOptions search;
  search.objective = options.objective;
  search.steps = estimator::steps_to_train(point.workload, out.space.training_tokens());
  search.job = out.space.job(point.cluster, estimator.checkpoint_bytes());
  search.exhaustive = exhaustive;
  RobustRanking robust;
  if (options.robust) {
    robust.support = design_support(point.support, support_family(point.workload.model),
                                    point.gpu_name, point.workload.precision);
    robust.model = point.workload.model;
    robust.interval = estimator::step_interval(point.calibration, point.workload.model);
    robust.widening = point.calibration.interval_widening;
    search.robust = &robust;
  }
  out.plans = best_plans(out.space, out.design, estimator, search, k, &out.stats);
  // No plan passes the rules: name the rule the given plan settings break, where one does.
  if (out.plans.empty() && out.space.valid_plans(0) == 0) {
    if (const Violation v = check(point)) throw InputError(explain(v, settings));
    throw InputError("no plan passes the structural rules with the plan settings given");
  }
  return out;
}

}  // namespace clustersweep::spaces
