#pragma once
// The one structural rule check: which workloads, clusters and plans can run at all, before any
// estimate. Every command takes its points through it (estimate, validate, plan, run): the sweep
// from its odometer, the others from spaces::resolve(). Pure and allocation-free. The rules and
// their reasons are in docs/spec-format.md ("Structural rules").
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "estimator/estimator.h"

namespace clustersweep::spaces {

// Stable order: `clustersweep plan` prints counts in it and tests pin the names.
enum class Rule : std::uint8_t {
  none = 0,
  precision_unsupported,       // design: the accelerator has no peak for the precision
  cluster_shape,               // design: num_gpus vs gpus_per_node vs nvlink_domain
  expansion_duplicate,         // sweep: a swept expansion bandwidth with expansion_gb = 0 repeats
                               //   the design with the first bandwidth
  user_constraint,             // sweep: a `constraints` expression is false
  tp_heads,                    // tp must divide heads, and kv_heads divide tp or tp divide kv_heads
  tp_nvlink_domain,            // tp must divide the NVLink domain (unless allow_tp_across_nodes)
  degrees,                     // tp*pp*cp*dp must equal num_gpus
  pp_vp_layers,                // pp*vp must divide the layer slots of the pipeline split
  pipeline_split,              // the split does not apply to this pipeline
  vp_needs_pp,                 // vp > 1 needs pp > 1
  cp_seq,                      // seq_len must be divisible by 2*cp (cp > 1)
  batch,                       // global_batch must be divisible by dp*micro_batch
  interleave_microbatches,     // vp > 1: the number of micro-batches must be divisible by pp
  sequence_parallel_needs_tp,  // sequence_parallel needs tp > 1 and seq_len divisible by tp*cp
  zero_needs_dp,               // zero > 0 needs a ZeRO group (dp*cp) of more than one rank
  offload_needs_expansion,     // offload needs an expansion tier with a bandwidth
  ep_experts,                  // ep must divide num_experts; ep, etp > 1 need experts
  ep_group,                    // ep*etp must divide tp*cp*dp (the GPUs of a pipeline stage)
  token_routing,               // capacity routing exactly with a capacity factor; MoE models only
  dispatcher_needs_ep,         // a dispatcher but alltoall, and a2a_overlap, need ep > 1
  fp8_settings,                // fp8_attention and fp8 recipes need fp8 training; mxfp8 Blackwell
  framework_parallelism,       // the plan's framework has its kinds of parallelism and split
  framework_memory,            // ... runs its ZeRO stage (with its pipeline), offload, recompute
  framework_stack,             // ... runs its runtime settings (spaces/data/frameworks.toml)
  torus_mapping,               // on a torus each parallel group in the domain is a box of it
  framework_vendor,            // the plan's framework runs on the accelerator's vendor
  rank_order,                  // rank_order tp-pp-dp needs cp = 1, ep = 1 (and etp = tp on MoE);
                               //   with pp = 1 or dp = 1 it is the plan in Megatron's order
};
inline constexpr int kNumRules = 28;

const char* to_string(Rule rule) noexcept;  // e.g. "tp_heads"
const char* describe(Rule rule) noexcept;   // the rule, one line
// The reason code the store records for a point the rule removes.
estimator::Infeasible to_infeasible(Rule rule) noexcept;

// A broken rule with the values it read, in the order message() words them.
struct Violation {
  Rule rule = Rule::none;
  std::array<std::int64_t, 5> values{};
  explicit operator bool() const noexcept { return rule != Rule::none; }
};

// The violation in words with its values, e.g. "5 does not divide the 96 attention heads".
std::string message(const Violation& violation);
// The settings (spec keys and flag names, snake_case: "tp", "global_batch") a user changes to mend
// a violation of `rule`, in order of blame: the commands name where the first one given came from
// (a derived value is the fault of what it was derived from), else the first.
std::initializer_list<const char*> blamed_settings(Rule rule) noexcept;

// The pipeline-split rules alone (they read nothing but the layers and the pipeline): none when
// `split` places the model's layers on pp*vp chunks, else pp_vp_layers or pipeline_split.
Rule split_rule(const estimator::Model& model, int pp, int vp,
                estimator::PipelineSplit split) noexcept;

// tp_heads: tp divides the heads, and tp and the key/value heads divide one another.
bool tp_fits_heads(int tp, const estimator::Model& model) noexcept;

// degrees: tp * pp * cp * dp is the GPU count.
bool degrees_fit(const estimator::Plan& plan, const estimator::Cluster& cluster) noexcept;
// ep_group: ep * etp divides the GPUs of a pipeline stage (tp * cp * dp).
bool ep_group_fits(const estimator::Plan& plan) noexcept;

// sequence_parallel_needs_tp: sequence parallelism splits the sequence over tp > 1 ranks, tp * cp
// of them dividing it.
bool sequence_parallel_fits(const estimator::Plan& plan,
                            const estimator::Workload& workload) noexcept;

// offload_needs_expansion: a plan may offload only to an expansion tier with a capacity and a
// bandwidth.
bool can_offload(const estimator::Cluster& cluster) noexcept;

struct RuleOptions {
  bool allow_tp_across_nodes = false;  // plan.allow_tp_across_nodes
};

// The design rules: can this workload run on this cluster at all.
Violation check_design(const estimator::Workload& workload,
                       const estimator::Cluster& cluster) noexcept;
// The same for any family's workload: the precision runs on the accelerator, and the cluster is
// whole nodes with NVLink domains that tile them.
Violation check_design(estimator::Precision precision, const estimator::Cluster& cluster) noexcept;
// The plan rules, for a design check_design() accepted; the first broken rule in Rule order.
Violation check_plan(const estimator::Workload& workload, const estimator::Cluster& cluster,
                     const estimator::Plan& plan, const RuleOptions& options) noexcept;
// The software-stack rules alone (token_routing .. fp8_settings), which check_plan() ends with.
Violation check_stack(const estimator::Workload& workload, const estimator::Cluster& cluster,
                      const estimator::Plan& plan) noexcept;
// The framework rules alone (framework_parallelism .. framework_stack): the plan keeps to the
// profile of its framework (spaces/frameworks.h); every plan does without one.
Violation check_framework(const estimator::Plan& plan) noexcept;
// On a torus fabric, each parallel group inside the domain as a box of the torus
// (estimator::torus_box); check_plan() ends with it.
Violation check_torus(const estimator::Cluster& cluster, const estimator::Plan& plan) noexcept;
// The plan's framework on an accelerator of `vendor` (its profile's vendors; a sweep's designs
// know their accelerator, the estimator's cluster does not).
Violation check_framework_vendor(const estimator::Plan& plan, std::string_view vendor) noexcept;

}  // namespace clustersweep::spaces
