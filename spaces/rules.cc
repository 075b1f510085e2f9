#include "spaces/rules.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/format.h"
#include "spaces/frameworks.h"
#include "spaces/resolve.h"

namespace clustersweep::spaces {

namespace {

namespace est = estimator;

struct RuleInfo {
  const char* name;
  const char* text;
  // The settings a user changes to mend a violation, in order of blame: the first one the user
  // gave (a derived value is the fault of what it was derived from), else the first.
  std::initializer_list<const char*> blamed;
  est::Infeasible infeasible;
};

constexpr RuleInfo kRules[kNumRules] = {
    {"none", "valid", {""}, est::Infeasible::none},
    {"precision_unsupported",
     "the accelerator has no peak FLOP/s for the precision",
     {"precision"},
     est::Infeasible::precision_unsupported},
    {"cluster_shape",
     "num_gpus must fill whole nodes, and the NVLink domain must divide or be a multiple of "
     "gpus_per_node",
     {"nvlink_domain", "gpus_per_node", "gpus", "dp", "nodes"},
     est::Infeasible::invalid_plan},
    {"expansion_duplicate",
     "expansion_gb = 0 makes every expansion bandwidth the same design; only the first is kept",
     {"expansion_gbytes_per_s"},
     est::Infeasible::invalid_plan},
    {"user_constraint",
     "a constraints expression is false",
     {"constraints"},
     est::Infeasible::invalid_plan},
    {"tp_heads",
     "tp must divide heads, and kv_heads must divide tp or tp divide kv_heads",
     {"tp"},
     est::Infeasible::tp_not_dividing_heads},
    {"tp_nvlink_domain",
     "tp must divide the NVLink domain size (plan.allow_tp_across_nodes lifts this)",
     {"tp"},
     est::Infeasible::invalid_plan},
    {"degrees",
     "tp*pp*cp*dp must equal num_gpus",
     {"dp", "tp", "pp", "cp"},
     est::Infeasible::degrees_mismatch},
    {"pp_vp_layers",
     "pp*vp must divide the layers (the layers + 2 with pipeline_split = \"embedding_loss\")",
     {"pp", "vp", "pipeline_split"},
     est::Infeasible::pp_vp_not_dividing_layers},
    {"pipeline_split",
     "embedding_loss and uneven splits need pp > 1; uneven needs pp*vp not dividing the layers "
     "(else it is the even split)",
     {"pipeline_split"},
     est::Infeasible::invalid_plan},
    {"vp_needs_pp", "vp > 1 needs pp > 1", {"vp"}, est::Infeasible::invalid_plan},
    {"cp_seq", "seq_len must be divisible by 2*cp", {"cp"}, est::Infeasible::cp_not_dividing_seq},
    {"batch",
     "global_batch must be divisible by dp*micro_batch",
     {"global_batch", "micro_batch", "dp"},
     est::Infeasible::batch_not_divisible},
    {"interleave_microbatches",
     "with vp > 1 the number of micro-batches must be divisible by pp",
     {"vp"},
     est::Infeasible::invalid_plan},
    {"sequence_parallel_needs_tp",
     "sequence_parallel needs tp > 1 and seq_len divisible by tp*cp",
     {"sequence_parallel"},
     est::Infeasible::invalid_plan},
    {"zero_needs_dp",
     "zero > 0 needs dp*cp > 1 (with one rank in the ZeRO group it is the plan with zero = 0)",
     {"zero"},
     est::Infeasible::invalid_plan},
    {"offload_needs_expansion",
     "offload needs an expansion tier (expansion_gb > 0) and its bandwidth",
     {"offload"},
     est::Infeasible::invalid_plan},
    {"ep_experts",
     "ep must divide num_experts; ep > 1 and etp > 1 need a Mixture-of-Experts model",
     {"ep", "etp", "num_experts"},
     est::Infeasible::invalid_plan},
    {"ep_group",
     "ep*etp must divide tp*cp*dp, the GPUs of a pipeline stage (Megatron-Core's MoE parallel "
     "folding)",
     {"ep", "etp", "dp"},
     est::Infeasible::invalid_plan},
    {"token_routing",
     "token_routing = capacity goes with a capacity_factor > 0 and the others without one; "
     "routing other than dropless needs a Mixture-of-Experts model; the einsum dispatcher needs "
     "token_routing = capacity (its masks have a capacity per expert)",
     {"token_routing", "capacity_factor", "dispatcher"},
     est::Infeasible::invalid_plan},
    {"dispatcher_needs_ep",
     "the allgather, deepep and hybridep dispatchers and a2a_overlap need ep > 1 (with ep = 1 no "
     "token leaves its GPU)",
     {"dispatcher", "a2a_overlap", "ep"},
     est::Infeasible::invalid_plan},
    {"fp8_settings",
     "fp8_attention and fp8_recipe other than delayed need fp8 or fp4 training; mxfp8 needs an "
     "accelerator with MX formats (Blackwell)",
     {"fp8_attention", "fp8_recipe", "precision"},
     est::Infeasible::invalid_plan},
    {"framework_parallelism",
     "the plan's framework must have its kinds of parallelism (tp, sp, pp, vp, cp, ep, etp) and "
     "pipeline split (spaces/data/frameworks.toml)",
     {"framework"},
     est::Infeasible::invalid_plan},
    {"framework_memory",
     "the plan's framework must run its ZeRO stage (with a pipeline when pp > 1), offload and "
     "recompute",
     {"framework"},
     est::Infeasible::invalid_plan},
    {"framework_stack",
     "the plan's framework must run its runtime settings (dispatcher, CUDA graphs, overlaps, fp8 "
     "recipe, attention kernel), and those its token routing fixes (MaxText's capacity routing: "
     "the einsum dispatcher)",
     {"framework"},
     est::Infeasible::invalid_plan},
    {"torus_mapping",
     "on a torus fabric every parallel group inside the domain (tp, cp, dp, pp in Megatron's "
     "rank order, ep and etp) must be a box of the torus: its size and stride split its "
     "dimensions",
     {"tp", "cp", "ep", "etp", "pp", "dp", "torus"},
     est::Infeasible::invalid_plan},
    {"framework_vendor",
     "the plan's framework must run on the accelerator's vendor (its profile's vendors in "
     "spaces/data/frameworks.toml: NeuronX on AWS Trainium, Primus on AMD)",
     {"framework", "gpu"},
     est::Infeasible::invalid_plan},
    {"rank_order",
     "rank_order tp-pp-dp runs without cp and ep (Megatron-Core's --use-tp-pp-dp-mapping), and on "
     "a Mixture-of-Experts model with etp = tp, so the experts' replicas are the weights'; with "
     "pp = 1 or dp = 1 it is the plan in Megatron's order",
     {"rank_order", "cp", "ep", "etp", "pp", "dp"},
     est::Infeasible::invalid_plan},
};

Violation broken(Rule rule, std::int64_t a = 0, std::int64_t b = 0, std::int64_t c = 0,
                 std::int64_t d = 0, std::int64_t e = 0) noexcept {
  return Violation{rule, {a, b, c, d, e}};
}

}  // namespace

const char* to_string(Rule rule) noexcept { return kRules[static_cast<int>(rule)].name; }
const char* describe(Rule rule) noexcept { return kRules[static_cast<int>(rule)].text; }
est::Infeasible to_infeasible(Rule rule) noexcept {
  return kRules[static_cast<int>(rule)].infeasible;
}
std::initializer_list<const char*> blamed_settings(Rule rule) noexcept {
  return kRules[static_cast<int>(rule)].blamed;
}

Rule split_rule(const est::Model& m, int pp, int vp, est::PipelineSplit split) noexcept {
  const std::int64_t chunks = std::int64_t{pp} * vp;
  switch (split) {
    case est::PipelineSplit::even:
      return m.layers % chunks == 0 ? Rule::none : Rule::pp_vp_layers;
    case est::PipelineSplit::embedding_loss:
      if (pp == 1) return Rule::pipeline_split;
      return (m.layers + 2) % chunks == 0 ? Rule::none : Rule::pp_vp_layers;
    case est::PipelineSplit::uneven:
      // Where pp*vp divides the layers the uneven split is the even one.
      return pp > 1 && m.layers % chunks != 0 && chunks <= m.layers ? Rule::none
                                                                    : Rule::pipeline_split;
  }
  return Rule::pipeline_split;
}

bool degrees_fit(const est::Plan& p, const est::Cluster& c) noexcept {
  // In double: four degrees of up to 2^31 overflow any integer, and a product past 2^53 cannot
  // equal the GPU count anyway.
  return static_cast<double>(p.tp) * p.pp * p.cp * p.dp == c.num_gpus;
}

bool ep_group_fits(const est::Plan& p) noexcept {
  return (std::int64_t{p.tp} * p.cp * p.dp) % (std::int64_t{p.ep} * p.etp) == 0;
}

bool sequence_parallel_fits(const est::Plan& p, const est::Workload& w) noexcept {
  return !p.sequence_parallel || (p.tp > 1 && w.seq_len % (std::int64_t{p.tp} * p.cp) == 0);
}

bool can_offload(const est::Cluster& c) noexcept {
  return c.expansion_bytes > 0 && c.expansion_bytes_per_s > 0;
}

bool tp_fits_heads(int tp, const est::Model& m) noexcept {
  return m.heads % tp == 0 && (m.kv_heads % tp == 0 || tp % m.kv_heads == 0);
}

Violation check_design(const est::Workload& w, const est::Cluster& c) noexcept {
  return check_design(w.precision, c);
}

Violation check_design(est::Precision precision, const est::Cluster& c) noexcept {
  if (c.gpu.peak_flops[static_cast<int>(precision)] <= 0) {
    std::int64_t supported = 0;
    for (int i = 0; i < est::kNumPrecisions; ++i)
      if (c.gpu.peak_flops[i] > 0) supported |= std::int64_t{1} << i;
    return broken(Rule::precision_unsupported, static_cast<int>(precision), supported);
  }
  const bool whole_nodes = c.num_gpus % c.gpus_per_node == 0 || c.num_gpus < c.gpus_per_node;
  const bool domain_fits =
      c.nvlink_domain % c.gpus_per_node == 0 || c.gpus_per_node % c.nvlink_domain == 0;
  if (!whole_nodes || !domain_fits)
    return broken(Rule::cluster_shape, c.num_gpus, c.gpus_per_node, c.nvlink_domain);
  return {};
}

Violation check_plan(const est::Workload& w, const est::Cluster& c, const est::Plan& p,
                     const RuleOptions& options) noexcept {
  const est::Model& m = w.model;
  // The order matters: the sweep's counting skips every plan sharing the tp of a tp rule's
  // violation, and the tp, pp and cp of a `degrees` violation (Space::count_by_rule).
  if (!tp_fits_heads(p.tp, m)) return broken(Rule::tp_heads, p.tp, m.heads, m.kv_heads);
  if (!options.allow_tp_across_nodes && c.nvlink_domain % p.tp != 0)
    return broken(Rule::tp_nvlink_domain, p.tp, c.nvlink_domain);
  if (!degrees_fit(p, c)) return broken(Rule::degrees, p.tp, p.pp, p.cp, p.dp, c.num_gpus);
  switch (split_rule(m, p.pp, p.vp, p.pipeline_split)) {
    case Rule::none:
      break;
    case Rule::pp_vp_layers:
      return broken(Rule::pp_vp_layers, p.pp, p.vp,
                    m.layers + (p.pipeline_split == est::PipelineSplit::embedding_loss ? 2 : 0));
    default:
      return broken(Rule::pipeline_split, p.pp, p.vp, m.layers);
  }
  if (p.vp > 1 && p.pp == 1) return broken(Rule::vp_needs_pp, p.vp);
  if (p.cp > 1 && w.seq_len % (2 * p.cp) != 0) return broken(Rule::cp_seq, p.cp, w.seq_len);
  const std::int64_t per_step = std::int64_t{p.dp} * p.micro_batch;
  if (w.global_batch % per_step != 0)
    return broken(Rule::batch, w.global_batch, p.dp, p.micro_batch);
  if (p.vp > 1 && (w.global_batch / per_step) % p.pp != 0)
    return broken(Rule::interleave_microbatches, w.global_batch / per_step, p.pp, p.vp);
  if (!sequence_parallel_fits(p, w))
    return broken(Rule::sequence_parallel_needs_tp, p.tp, p.cp, w.seq_len);
  if (p.zero > 0 && std::int64_t{p.dp} * p.cp == 1) return broken(Rule::zero_needs_dp, p.zero);
  if (p.offload != est::Offload::none && !can_offload(c))
    return broken(Rule::offload_needs_expansion, static_cast<int>(p.offload));
  if (m.num_experts == 0 ? p.ep > 1 || p.etp > 1 : m.num_experts % p.ep != 0)
    return broken(Rule::ep_experts, p.ep, m.num_experts, p.etp);
  if (!ep_group_fits(p))
    return broken(Rule::ep_group, p.ep, p.etp, std::int64_t{p.tp} * p.cp * p.dp);
  if (const Violation v = check_stack(w, c, p)) return v;
  if (const Violation v = check_framework(p)) return v;
  return check_torus(c, p);
}

namespace {
constexpr const char* kTorusGroups[] = {"tp", "cp", "dp", "pp", "etp", "ep"};
}  // namespace

Violation check_framework_vendor(const est::Plan& p, std::string_view vendor) noexcept {
  if (framework_runs_on(p.stack.framework, vendor)) return {};
  return broken(Rule::framework_vendor, static_cast<int>(p.stack.framework));
}

Violation check_torus(const est::Cluster& c, const est::Plan& p) noexcept {
  if (c.fabric != est::Fabric::torus) return {};
  // In the plan's rank order; the experts fold etp, then ep, over the same ranks.
  const est::RankStrides r = est::rank_strides(p);
  const int degree[] = {p.tp, p.cp, p.dp, p.pp, p.etp, p.ep};
  const int stride[] = {1, r.cp, r.dp, r.pp, 1, p.etp};
  for (int g = 0; g < 6; ++g)
    if (degree[g] > 1 && !est::torus_box(c.torus, stride[g], degree[g]))
      return broken(
          Rule::torus_mapping, g, degree[g], stride[g],
          c.torus[0] + (std::int64_t{c.torus[1]} << 20) + (std::int64_t{c.torus[2]} << 40));
  return {};
}

namespace {
// What a framework rule's violation names (Violation::values[1]); the stack's settings follow as
// kItemFrameworkStack + their stack_settings() index, then the settings a token routing fixes
// ([framework.routing_stack]) as kItemRoutingStack + theirs.
enum FrameworkItem : int {
  kItemTp,
  kItemSp,
  kItemPp,
  kItemVp,
  kItemCp,
  kItemEp,
  kItemEtp,
  kItemSplit,
  kItemZero,
  kItemZeroWithPipeline,
  kItemOffload,
  kItemRecompute,
  kItemFrameworkStack,
  kItemRoutingStack = kItemFrameworkStack + kNumStackSettings
};
constexpr const char* kParallelismNames[] = {
    "tensor parallelism",       "sequence parallelism",
    "pipeline parallelism",     "interleaved pipelines (vp > 1)",
    "context parallelism",      "expert parallelism",
    "expert tensor parallelism"};
bool has_bit(std::uint32_t mask, int bit) noexcept { return (mask >> bit) & 1u; }
}  // namespace

Violation check_framework(const est::Plan& p) noexcept {
  if (p.stack.framework == est::Framework::any) return {};
  const FrameworkProfile& f = *framework_profile(p.stack.framework);
  const int fw = static_cast<int>(p.stack.framework);
  const std::pair<bool, int> kinds[] = {{p.tp > 1 && !f.tensor_parallel, p.tp},
                                        {p.sequence_parallel && !f.sequence_parallel, 1},
                                        {p.pp > 1 && !f.pipeline_parallel, p.pp},
                                        {p.vp > 1 && !f.interleaved_pipeline, p.vp},
                                        {p.cp > 1 && !f.context_parallel, p.cp},
                                        {p.ep > 1 && !f.expert_parallel, p.ep},
                                        {p.etp > 1 && !f.expert_tensor_parallel, p.etp}};
  for (int i = 0; i < static_cast<int>(std::size(kinds)); ++i)
    if (kinds[i].first) return broken(Rule::framework_parallelism, fw, i, kinds[i].second);
  if (!has_bit(f.pipeline_split, static_cast<int>(p.pipeline_split)))
    return broken(Rule::framework_parallelism, fw, kItemSplit, static_cast<int>(p.pipeline_split));
  if (!has_bit(p.pp > 1 ? f.zero_with_pipeline : f.zero, p.zero))
    return broken(Rule::framework_memory, fw, p.pp > 1 ? kItemZeroWithPipeline : kItemZero, p.zero);
  if (!has_bit(f.offload, static_cast<int>(p.offload)))
    return broken(Rule::framework_memory, fw, kItemOffload, static_cast<int>(p.offload));
  if (!has_bit(f.recompute, static_cast<int>(p.recompute)))
    return broken(Rule::framework_memory, fw, kItemRecompute, static_cast<int>(p.recompute));
  const auto settings = stack_settings();
  for (int i = 0; i < kNumStackSettings; ++i)
    if (!has_bit(f.stack[static_cast<std::size_t>(i)], settings[i].get(p.stack)))
      return broken(Rule::framework_stack, fw, kItemFrameworkStack + i, settings[i].get(p.stack));
  const int routing = static_cast<int>(p.stack.token_routing);
  for (const auto& [i, v] : f.routing_stack[static_cast<std::size_t>(routing)])
    if (settings[i].get(p.stack) != v)
      return broken(Rule::framework_stack, fw, kItemRoutingStack + static_cast<int>(i),
                    settings[i].get(p.stack), routing, v);
  return {};
}

namespace {
// "0 or 1", "none or full": the values of a mask, named by `name`.
template <class Name>
std::string values_of(std::uint32_t mask, int count, Name name) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i)
    if (has_bit(mask, i)) names.emplace_back(name(i));
  return names.empty() ? "none" : join_or(names);
}

std::string framework_message(const Violation& v) {
  const auto& x = v.values;
  const auto framework = static_cast<est::Framework>(x[0]);
  const FrameworkProfile& f = *framework_profile(framework);
  const char* name = est::to_string(framework);
  const int value = static_cast<int>(x[2]);
  const auto zero_name = [](int i) { return fmt::format("{}", i); };
  switch (x[1]) {
    case kItemSplit:
      return fmt::format("{} has no {} pipeline split (it runs {})", name,
                         est::to_string(static_cast<est::PipelineSplit>(value)),
                         values_of(f.pipeline_split, est::kNumPipelineSplits, [](int i) {
                           return est::to_string(static_cast<est::PipelineSplit>(i));
                         }));
    case kItemZero:
      return fmt::format("{} does not run ZeRO stage {} (it runs zero {})", name, value,
                         values_of(f.zero, 4, zero_name));
    case kItemZeroWithPipeline:
      return fmt::format(
          "{} does not run ZeRO stage {} with pp > 1 (with a pipeline it runs zero {})", name,
          value, values_of(f.zero_with_pipeline, 4, zero_name));
    case kItemOffload:
      return fmt::format("{} does not offload {} (it offloads {})", name,
                         est::to_string(static_cast<est::Offload>(value)),
                         values_of(f.offload, 4, [](int i) {
                           return est::to_string(static_cast<est::Offload>(i));
                         }));
    case kItemRecompute:
      return fmt::format("{} has no {} recompute (it runs {})", name,
                         est::to_string(static_cast<est::Recompute>(value)),
                         values_of(f.recompute, 3, [](int i) {
                           return est::to_string(static_cast<est::Recompute>(i));
                         }));
    default:
      break;
  }
  if (x[1] >= kItemRoutingStack) {
    const StackSetting& st = stack_settings()[static_cast<std::size_t>(x[1] - kItemRoutingStack)];
    return fmt::format("{} runs {} {} with {} routing, not {}", name, st.name,
                       st.value_name(static_cast<int>(x[4])),
                       est::to_string(static_cast<est::TokenRouting>(x[3])), st.value_name(value));
  }
  if (x[1] >= kItemFrameworkStack) {
    const StackSetting& st = stack_settings()[static_cast<std::size_t>(x[1] - kItemFrameworkStack)];
    return fmt::format("{} does not run {} {} (it runs {})", name, st.name, st.value_name(value),
                       values_of(f.stack[static_cast<std::size_t>(x[1] - kItemFrameworkStack)],
                                 st.count, [&](int i) { return st.value_name(i); }));
  }
  if (x[1] == kItemSp) return fmt::format("{} has no {}", name, kParallelismNames[kItemSp]);
  return fmt::format("{} has no {} ({} {})", name, kParallelismNames[x[1]],
                     x[1] == kItemVp ? "vp" : "degree", value);
}
}  // namespace

Violation check_stack(const est::Workload& w, const est::Cluster& c, const est::Plan& p) noexcept {
  const est::Stack& st = p.stack;
  const bool capacity = st.token_routing == est::TokenRouting::capacity;
  if (capacity != (p.capacity_factor > 0) ||
      (!est::is_moe(w.model) && st.token_routing != est::TokenRouting::dropless))
    return broken(Rule::token_routing, static_cast<int>(st.token_routing), p.capacity_factor > 0,
                  est::is_moe(w.model));
  if (st.dispatcher == est::Dispatcher::einsum && !capacity)
    return broken(Rule::token_routing, static_cast<int>(st.token_routing), p.capacity_factor > 0,
                  est::is_moe(w.model), static_cast<int>(st.dispatcher));
  if (p.ep == 1 &&
      ((st.dispatcher != est::Dispatcher::alltoall && st.dispatcher != est::Dispatcher::einsum) ||
       st.a2a_overlap))
    return broken(Rule::dispatcher_needs_ep, static_cast<int>(st.dispatcher), st.a2a_overlap);
  if (st.rank_order == est::RankOrder::tp_pp_dp) {
    // What it is refused for first: {0, cp, ep}, {1, etp, tp}, {2, pp, dp}.
    if (p.cp > 1 || p.ep > 1) return broken(Rule::rank_order, 0, p.cp, p.ep);
    if (est::is_moe(w.model) && p.etp != p.tp) return broken(Rule::rank_order, 1, p.etp, p.tp);
    if (p.pp == 1 || p.dp == 1) return broken(Rule::rank_order, 2, p.pp, p.dp);
  }
  const bool low_precision =
      w.precision == est::Precision::fp8 || w.precision == est::Precision::fp4;
  const bool mx = c.gpu.peak_flops[static_cast<int>(est::Precision::fp4)] > 0;
  if ((!low_precision && (st.fp8_attention || st.fp8_recipe != est::Fp8Recipe::delayed)) ||
      (st.fp8_recipe == est::Fp8Recipe::mxfp8 && !mx))
    return broken(Rule::fp8_settings, st.fp8_attention, static_cast<int>(st.fp8_recipe),
                  static_cast<int>(w.precision), mx);
  return {};
}

std::string message(const Violation& v) {
  const auto& x = v.values;
  switch (v.rule) {
    case Rule::none:
      return "valid";
    case Rule::precision_unsupported: {
      std::string supported;
      for (int i = 0; i < est::kNumPrecisions; ++i)
        if (x[1] & (std::int64_t{1} << i))
          supported += fmt::format("{}{}", supported.empty() ? "" : ", ",
                                   est::to_string(static_cast<est::Precision>(i)));
      return fmt::format("has no {} peak; it supports {}",
                         est::to_string(static_cast<est::Precision>(x[0])), supported);
    }
    case Rule::cluster_shape:
      return fmt::format(
          "{} GPUs in nodes of {} with an NVLink domain of {}: the GPUs must fill whole nodes, and "
          "the domain must divide or be a multiple of the node",
          x[0], x[1], x[2]);
    case Rule::tp_heads:
      if (x[1] % x[0] != 0)
        return fmt::format("{} does not divide the {} attention heads", x[0], x[1]);
      return fmt::format("{} and the {} key/value heads do not divide one another", x[0], x[2]);
    case Rule::tp_nvlink_domain:
      return fmt::format(
          "{} does not divide the NVLink domain of {} GPUs (a spec's plan.allow_tp_across_nodes "
          "lifts this)",
          x[0], x[1]);
    case Rule::degrees: {
      const double model_parallel = static_cast<double>(x[0]) * x[1] * x[2];
      if (model_parallel > x[4] || x[4] % static_cast<std::int64_t>(model_parallel) != 0)
        return fmt::format("tp*pp*cp = {}*{}*{} = {} does not divide the {} GPUs", x[0], x[1], x[2],
                           format_number(model_parallel), x[4]);
      return fmt::format("tp*pp*cp*dp = {}*{}*{}*{} = {} does not equal the {} GPUs", x[0], x[1],
                         x[2], x[3], format_number(model_parallel * x[3]), x[4]);
    }
    case Rule::pp_vp_layers:
      return fmt::format("pp*vp = {}*{} = {} does not divide the {} layer slots", x[0], x[1],
                         x[0] * x[1], x[2]);
    case Rule::pipeline_split:
      if (x[0] == 1) return "needs pp > 1";
      return fmt::format("pp*vp = {} divides the {} layers (use \"even\") or exceeds them",
                         x[0] * x[1], x[2]);
    case Rule::vp_needs_pp:
      return fmt::format("interleaving (vp {}) needs pp > 1", x[0]);
    case Rule::cp_seq:
      return fmt::format("2*cp = {} does not divide the sequence length {}", 2 * x[0], x[1]);
    case Rule::batch:
      return fmt::format("{} is not a multiple of dp*micro_batch = {}*{}", x[0], x[1], x[2]);
    case Rule::interleave_microbatches:
      return fmt::format(
          "interleaving (vp {}) needs the {} micro-batches to be a multiple of pp = {}", x[2], x[0],
          x[1]);
    case Rule::sequence_parallel_needs_tp:
      if (x[0] == 1) return "needs tp > 1";
      return fmt::format("tp*cp = {} does not divide the sequence length {}", x[0] * x[1], x[2]);
    case Rule::zero_needs_dp:
      return fmt::format(
          "ZeRO stage {} with dp*cp = 1 shards over one rank: it is the plan with zero = 0", x[0]);
    case Rule::offload_needs_expansion:
      return "needs an expansion tier (expansion_gb and expansion_gbytes_per_s)";
    case Rule::ep_experts:
      if (x[1] == 0)
        return fmt::format("expert parallelism (ep {}, etp {}) needs a Mixture-of-Experts model",
                           x[0], x[2]);
      return fmt::format("{} does not divide the {} experts", x[0], x[1]);
    case Rule::ep_group:
      return fmt::format("ep*etp = {}*{} = {} does not divide tp*cp*dp = {}", x[0], x[1],
                         x[0] * x[1], x[2]);
    case Rule::token_routing:
      if (x[3] == static_cast<int>(est::Dispatcher::einsum))
        return fmt::format(
            "the einsum dispatcher needs token_routing = capacity (its one-hot masks have a "
            "capacity per expert), not {}",
            est::to_string(static_cast<est::TokenRouting>(x[0])));
      if (x[2] == 0) return "a dense model routes no tokens: token_routing must be dropless";
      if (x[0] == static_cast<int>(est::TokenRouting::capacity))
        return "token_routing = capacity needs a capacity_factor > 0";
      return fmt::format("a capacity_factor needs token_routing = capacity, not {}",
                         est::to_string(static_cast<est::TokenRouting>(x[0])));
    case Rule::dispatcher_needs_ep:
      if (x[0] != static_cast<int>(est::Dispatcher::alltoall) &&
          x[0] != static_cast<int>(est::Dispatcher::einsum))
        return fmt::format("the {} dispatcher needs ep > 1",
                           est::to_string(static_cast<est::Dispatcher>(x[0])));
      return "a2a_overlap needs ep > 1 (there is no all-to-all to hide)";
    case Rule::fp8_settings:
      if (x[1] == static_cast<int>(est::Fp8Recipe::mxfp8) && x[3] == 0)
        return "mxfp8 needs an accelerator with MX formats (Blackwell: B200, GB200, GB300)";
      return fmt::format("{} needs fp8 or fp4 training, not {}",
                         x[0] ? "fp8_attention" : "an fp8_recipe other than delayed",
                         est::to_string(static_cast<est::Precision>(x[2])));
    case Rule::framework_parallelism:
    case Rule::framework_memory:
    case Rule::framework_stack:
      return framework_message(v);
    case Rule::rank_order:
      if (x[0] == 0)
        return fmt::format("tp-pp-dp needs cp = 1 and ep = 1, not cp {} and ep {}", x[1], x[2]);
      if (x[0] == 1)
        return fmt::format(
            "tp-pp-dp on a Mixture-of-Experts model needs etp = tp, not etp {} with tp {}", x[1],
            x[2]);
      return fmt::format(
          "with pp {} and dp {} tp-pp-dp numbers the ranks as tp-cp-ep-dp-pp does: it is the "
          "plan with that order",
          x[1], x[2]);
    case Rule::framework_vendor: {
      const auto f = static_cast<est::Framework>(x[0]);
      return fmt::format("{} runs on {} accelerators", est::to_string(f),
                         fmt::join(framework_profile(f)->vendors, " and "));
    }
    case Rule::torus_mapping: {
      const std::array<int, est::kMaxTorusDims> torus{static_cast<int>(x[3] & 0xfffff),
                                                      static_cast<int>((x[3] >> 20) & 0xfffff),
                                                      static_cast<int>(x[3] >> 40)};
      return fmt::format(
          "{} {} at stride {} is not a box of the {} torus: a group's size and stride must fill "
          "whole dimensions or split one evenly",
          kTorusGroups[x[0]], x[1], x[2], torus_text(torus));
    }
    case Rule::expansion_duplicate:
    case Rule::user_constraint:
      break;
  }
  return describe(v.rule);
}

}  // namespace clustersweep::spaces
