// The lower bound of the step over a box of plans for the plan search (docs/search.md). Each term
// is at most the matching term of estimate() for every plan of the box the rules accept (gb
// divisible by dp * micro_batch, so micro-batches * tokens = gb * s/cp / dp exactly), with the
// settings the box leaves open at their most favourable values:
//   time >= steady + tier + exposed DP + p2p + bubble + optimizer + per-step overhead,
//   steady = layers/pp x (a T + (b + overhead) n + CP) + max(0, logits - spared layers)
// per layer a T + b over the step's T tokens in n micro-batches (GEMMs at their peak efficiency,
// attention, elementwise traffic, the bandwidth and latency terms of the collectives), the fewest
// micro-batches n and the least state and activations any choice of the box leaves. Parts
// estimate() adds that are hard to bound (the logits beyond the spared slots, the expert
// data-parallel exposure) are bounded by 0. The energy bound is the step energy at these times.
#include <algorithm>
#include <cmath>
#include <limits>

#include "estimator/detail/attention.h"
#include "estimator/detail/collectives.h"
#include "estimator/detail/data_parallel.h"
#include "estimator/detail/experts.h"
#include "estimator/detail/host.h"
#include "estimator/detail/memory.h"
#include "estimator/detail/model_counts.h"
#include "estimator/estimator.h"

namespace clustersweep::estimator {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

// The sizes of a plan box every bound term uses, at the box's most favourable values.
struct Estimator::BoundShape {
  const PlanBox& box;
  double t = 1, pp = 1;
  double s_local = 0;
  double step_tokens = 0;  // of all micro-batches of a step on one pipeline rank
  double mb_min = 1;       // micro-batch size
  double micro_batches_min = 1;
  double stage_layers = 0;  // the least layers of each part on the critical stage
  double sp_div = 1;
  double imbalance = 1;  // the token routing's load
  AttentionKernelCost kernel{};
  double tp_hidden = 0;
};

// A layer and micro-batch as a * tokens + b.
struct Estimator::LayerBound {
  double busy_a = 0;  // compute and memory-bound kernels
  double a = 0;
  double b = 0;
  double overhead = 0;
};

// The training state on a GPU of the critical stage, sharded by the box's largest ZeRO stage.
struct Estimator::StateBound {
  int dp_group = 1;
  double edp_group = 1;
  double params = 0, expert_params = 0;
  double local_params = 0;  // the optimizer's
  double optimizer_s = 0;
  double weights = 0, grads = 0, optimizer_state = 0;  // bytes
};

Estimator::BoundShape Estimator::bound_shape(const PlanBox& box) const noexcept {
  const Calibration& c = calibration_;
  const Plan& p = box.plan;
  BoundShape s{.box = box};
  s.t = p.tp;
  s.pp = p.pp;
  s.s_local = static_cast<double>(workload_.seq_len) / p.cp;
  const double gb = static_cast<double>(workload_.global_batch);
  // Tokens of all micro-batches of one step on one pipeline rank; the fewest micro-batches.
  s.step_tokens = gb * s.s_local / p.dp;
  s.mb_min = box.micro_batch_min;
  const double mb_max = box.micro_batch_max;
  s.micro_batches_min = std::max(1.0, std::floor(gb / (p.dp * mb_max)));
  // Every pipeline split gives the critical stage at least layers/pp layers of each part.
  s.stage_layers = static_cast<double>(workload_.model.layers) / s.pp;
  const bool sp_possible = box.sequence_parallel[1] && p.tp > 1;
  s.sp_div = sp_possible ? s.t : 1.0;
  s.imbalance = detail::routed_load(p, c.moe_load_cv);
  s.kernel = attention_kernel(p.stack);
  s.tp_hidden = p.stack.tp_comm_overlap ? c.tp_overlap : std::min(c.tp_overlap_off, c.tp_overlap);
  return s;
}

// GEMM FLOPs per token of a layer forward at their peak efficiency: the size factor
// d/(d + gemm_half_dim), the grouped-GEMM factor and the router only add time.
double Estimator::gemm_flops_bound(const BoundShape& s) const noexcept {
  const Model& m = workload_.model;
  const double t = s.t, h = m.hidden;
  const double moe = moe_fraction_;
  const double in_out = m.mlp == Mlp::swiglu ? 2.0 : 1.0;
  double attention_gemm = 2.0 * attn_out_in_ * h / t;
  if (is_mla(m)) {
    const double nope = qk_dim_ - m.qk_rope_head_dim;
    attention_gemm +=
        2.0 * (h * (m.kv_lora_rank + m.qk_rope_head_dim) +
               m.kv_lora_rank * m.heads * (nope + v_dim_) / t +
               (m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank * m.heads * qk_dim_ / t
                                  : h * m.heads * qk_dim_ / t));
  } else {
    attention_gemm += 2.0 * h * qkv_out_ / t;
  }
  const double dense_mlp = 2.0 * (h * mlp_in_out_ + m.ffn_hidden * h) / t;
  double moe_gemm = 0;
  if (moe > 0)
    moe_gemm = 2.0 * m.top_k * s.imbalance * h * m.moe_ffn_hidden * (1.0 + in_out) / t +
               2.0 * h * m.shared_ffn_hidden * (1.0 + in_out) / t;
  return attention_gemm + (1.0 - moe) * dense_mlp + moe * moe_gemm;
}

// GEMMs, the attention matmuls, elementwise traffic, tensor-parallel and expert all-to-all
// bandwidth terms (a), and their latencies (b).
Estimator::LayerBound Estimator::layer_bound(const BoundShape& s) const noexcept {
  const Model& m = workload_.model;
  const Calibration& c = calibration_;
  const Plan& p = s.box.plan;
  const Stack& stack = p.stack;
  const double t = s.t, h = m.hidden;
  const double moe = moe_fraction_;
  const double attention_per_token =
      2.0 * attention_keys_ * m.heads * (qk_dim_ + v_dim_) / t / s.kernel.flops_per_s;
  const double compute_a = gemm_passes_ * gemm_flops_bound(s) / (peak_flops_ * gemm_eff_scale_) +
                           (1.0 + s.kernel.bwd_factor) * attention_per_token;
  const double memory_a =
      3.0 * act_bytes_ *
      (elementwise_h_ * h / s.sp_div + elementwise_f_ * (1.0 - moe) * m.ffn_hidden / t) /
      hbm_bytes_per_s_;
  double tp_bw = 0, tp_alpha = 0;
  link(1, p.tp, tp_bw, tp_alpha);
  // all_reduce_s >= its bandwidth term plus the smaller of its two latency terms.
  double tp_a = 0, tp_b = 0;
  if (p.tp > 1) {
    const double n = p.tp;
    tp_a = 2.0 * (2.0 - moe) * (1.0 - s.tp_hidden) * 2.0 * (n - 1) / n * h * act_bytes_ / tp_bw;
    tp_b = 2.0 * (2.0 - moe) * (1.0 - s.tp_hidden) *
           std::min(2.0 * (n - 1), 2.0 * detail::tree_depth(p.tp)) * tp_alpha;
  }
  double ep_a = 0, ep_b = 0;
  // With a2a_overlap the exposed all-to-all may be anything down to 0.
  if (moe > 0 && p.ep > 1 && !stack.a2a_overlap) {
    // a2a_fwd_s is an affine function of its bytes: its value at 0 is the latency.
    ep_b = 2.0 * moe * a2a_fwd_s(0.0, p.ep, p.etp, stack.dispatcher);
    ep_a = 2.0 * moe *
           (a2a_fwd_s(h * act_bytes_ * s.imbalance / t, p.ep, p.etp, stack.dispatcher) -
            ep_b / (2.0 * moe));
  }
  LayerBound layer;
  layer.busy_a = compute_a + memory_a;
  layer.a = layer.busy_a + tp_a + ep_a;
  layer.b = tp_b + ep_b;
  layer.overhead = c.per_layer_overhead_s + moe_sync_s(p);
  return layer;
}

// The critical stage over all micro-batches of the step. It is at least the last, which holds the
// logit layer and loss (and the MTP modules) besides at least layers/pp - spared layers: spared =
// 1 - 2/pp when the embedding and loss take a layer's slot each, else 0. So it is layers/pp layers
// plus max(0, logits - spared layers).
double Estimator::steady_bound(const BoundShape& s, const LayerBound& layer) const noexcept {
  const Model& m = workload_.model;
  const PlanBox& box = s.box;
  const Plan& p = box.plan;
  const double t = s.t, h = m.hidden;
  // One layer over all micro-batches of the step. The exposed context-parallel exchange
  // n max(0, a T/n + b) = max(0, a T + b n) of T tokens in n micro-batches grows with n.
  const CpExchange cp = cp_exchange_s(s.step_tokens / s.micro_batches_min, p.tp, p.cp, s.kernel);
  const bool full_only = !box.recompute[static_cast<int>(Recompute::none)] &&
                         !box.recompute[static_cast<int>(Recompute::selective)];
  const double layer_step =
      layer.a * s.step_tokens + (layer.b + layer.overhead) * s.micro_batches_min +
      s.micro_batches_min * (cp.forward_s + cp.backward_s + (full_only ? cp.forward_s : 0.0));
  const double logit_a = 2.0 * gemm_passes_ * h * m.vocab / t / (peak_flops_ * gemm_eff_scale_) +
                         24.0 * m.vocab / t / hbm_bytes_per_s_;
  const double logits_step =
      (1.0 + m.mtp_layers) * logit_a * s.step_tokens + m.mtp_layers * layer_step;
  const double spared =
      p.pp > 1 && box.pipeline_split[static_cast<int>(PipelineSplit::embedding_loss)]
          ? 1.0 - 2.0 / s.pp
          : 0.0;
  return s.stage_layers * layer_step + std::max(0.0, logits_step - spared * layer_step);
}

// Pipeline sends: 2 vp per micro-batch of tokens * h / sp_div.
double Estimator::p2p_bound(const BoundShape& s) const noexcept {
  const Plan& p = s.box.plan;
  if (p.pp <= 1) return 0;
  double pp_bw = 0, pp_alpha = 0;
  link(rank_strides(p).pp, p.pp, pp_bw, pp_alpha, Traffic::p2p);
  return (p.stack.pp_comm_overlap ? 1.0 - calibration_.pp_overlap : 1.0) * 2.0 * s.box.vp_min *
         (s.step_tokens * workload_.model.hidden * act_bytes_ / s.sp_div / pp_bw +
          s.micro_batches_min * pp_alpha);
}

// The bubble: (pp - 1)/vp micro-batches of the critical stage.
double Estimator::bubble_bound(const BoundShape& s, const LayerBound& layer) const noexcept {
  if (s.box.plan.pp <= 1) return 0;
  return (s.pp - 1.0) / s.box.vp_max * s.stage_layers *
         (layer.a * s.mb_min * s.s_local + layer.b + layer.overhead);
}

// The optimizer over this rank's parameters, and the weights, gradients and optimizer state, all
// sharded as the box's largest ZeRO stage shards them.
Estimator::StateBound Estimator::state_bound(const BoundShape& s) const noexcept {
  const PlanBox& box = s.box;
  const Plan& p = box.plan;
  StateBound st;
  st.dp_group = p.dp * p.cp;
  st.edp_group = static_cast<double>(p.tp) * p.cp * p.dp / (p.etp * p.ep);
  st.params = s.stage_layers * dense_params_per_layer_ / s.t;
  st.expert_params = s.stage_layers * expert_params_per_layer_ / (p.etp * p.ep);
  const int zero_max = box.zero[3] ? 3 : box.zero[2] ? 2 : box.zero[1] ? 1 : 0;
  const int dp = st.dp_group;
  const double edp = st.edp_group;
  st.local_params =
      st.params / (zero_max >= 1 ? dp : 1) + st.expert_params / (zero_max >= 1 ? edp : 1);
  st.optimizer_s = st.local_params * update_bytes(p.stack) / hbm_bytes_per_s_;
  st.weights = st.params * weight_bytes_ / (zero_max >= 3 ? dp : 1) +
               st.expert_params * weight_bytes_ / (zero_max >= 3 ? edp : 1);
  const double grad_bytes = this->grad_bytes(p.stack);
  st.grads = st.params * grad_bytes / (zero_max >= 2 ? dp : 1) +
             st.expert_params * grad_bytes / (zero_max >= 2 ? edp : 1);
  st.optimizer_state = st.params * optimizer_bytes_ / (zero_max >= 1 ? dp : 1) +
                       st.expert_params * optimizer_bytes_ / (zero_max >= 1 ? edp : 1);
  return st;
}

// The fewest layers the first stage holds under the box's pipeline splits.
double Estimator::first_stage_layers_bound(const BoundShape& s) const noexcept {
  const PlanBox& box = s.box;
  const double L = workload_.model.layers;
  if (box.plan.pp <= 1) return L;
  double layers = kInf;
  if (box.pipeline_split[static_cast<int>(PipelineSplit::even)] ||
      box.pipeline_split[static_cast<int>(PipelineSplit::uneven)])
    layers = L / s.pp;
  if (box.pipeline_split[static_cast<int>(PipelineSplit::embedding_loss)])
    layers = std::min(layers, (L + 2.0) / s.pp - 1.0);
  return std::max(0.0, layers);
}

// The least activation bytes of a layer and micro-batch over the box's recompute and
// sequence-parallel choices (infinite when it leaves none).
double Estimator::activations_bound(const BoundShape& s) const noexcept {
  const PlanBox& box = s.box;
  const Plan& p = box.plan;
  double act_layer = kInf;
  for (int r = 0; r < 3; ++r)
    for (int sp = 0; sp < 2; ++sp)
      if (box.recompute[r] && box.sequence_parallel[sp])
        act_layer = std::min(
            act_layer, act_bytes_ / 2.0 *
                           detail::activation_bytes(workload_.model, s.s_local, s.mb_min, p.tp,
                                                    sp == 1 && p.tp > 1, static_cast<Recompute>(r),
                                                    box.recompute_modules, s.kernel.fused,
                                                    calibration_.dropout_masks > 0,
                                                    detail::is_low_precision(workload_.precision)));
  return act_layer;
}

// HBM: the least over the box's offload choices.
double Estimator::hbm_bound(const BoundShape& s, const StateBound& st,
                            double activations) const noexcept {
  const PlanBox& box = s.box;
  const double workspace = calibration_.workspace_bytes +
                           2.0 * act_bytes_ * s.mb_min * s.s_local * workload_.model.vocab / s.t;
  double hbm = kInf;
  if (box.offload[static_cast<int>(Offload::none)])
    hbm = st.weights + st.grads + st.optimizer_state + activations + workspace;
  if (box.offload[static_cast<int>(Offload::optimizer)])
    hbm = std::min(hbm, st.weights + st.grads + activations + workspace);
  if (box.offload[static_cast<int>(Offload::optimizer_activations)])
    hbm = std::min(hbm, st.weights + st.grads + workspace);
  if (box.offload[static_cast<int>(Offload::all)]) hbm = std::min(hbm, st.grads + workspace);
  return hbm;
}

// The exposed data-parallel traffic given the least steady time: a step of n micro-batches of
// x seconds (the slower of compute and tier traffic) takes n x + exposed(x) with exposed(x)
// falling at most n x dp_overlap as x grows (dp_overlap <= 1), and exposed grows with n; so the
// fewest micro-batches, the least x and the least bytes bound it. The expert part of split groups
// is bounded by 0.
double Estimator::dp_exposed_bound(const BoundShape& s, const StateBound& st,
                                   double effective) const noexcept {
  const Calibration& c = calibration_;
  const PlanBox& box = s.box;
  const Plan& p = box.plan;
  if (!(c.dp_overlap >= 0 && c.dp_overlap <= 1)) return 0;
  const double micro_batch = effective / s.micro_batches_min;
  const double window = (p.stack.dp_overlap ? c.dp_overlap : 0.0) * micro_batch;
  const bool merged = st.edp_group == st.dp_group && p.etp * p.ep == p.tp;
  const double params = st.params + (merged ? st.expert_params : 0.0);
  double dp_exposed = kInf;
  for (int zero = 0; zero < 4; ++zero)
    if (box.zero[zero])
      dp_exposed =
          std::min(dp_exposed, dp_cost_s(zero, params * grad_bytes(p.stack), params * weight_bytes_,
                                         st.dp_group, rank_strides(p).weights,
                                         zero >= 3 ? zero3_window(window, micro_batch) : window,
                                         s.micro_batches_min, p.stack.param_gather_overlap)
                                   .exposed);
  return dp_exposed == kInf ? 0.0 : dp_exposed;
}

StepBound Estimator::bound(const PlanBox& box) const noexcept {
  const Plan& p = box.plan;
  const bool tier_only = !box.offload[static_cast<int>(Offload::none)];
  if (peak_flops_ <= 0 || p.tp < 1 || p.pp < 1 || p.dp < 1 || p.cp < 1 || p.ep < 1 || p.etp < 1)
    return {kInf, kInf, kInf};
  // Every offload choice left uses the expansion tier: without one no plan of the box runs.
  if (tier_only && expansion_bytes_per_s_ <= 0) return {kInf, kInf, kInf};
  const BoundShape s = bound_shape(box);
  const LayerBound layer = layer_bound(s);
  const double steady = steady_bound(s, layer);
  const StateBound state = state_bound(s);
  // Activations: chunk layers x chunks in flight >= first-stage layers x min(pp, micro-batches).
  const double first_stage_layers = first_stage_layers_bound(s);
  const double in_flight =
      first_stage_layers * (p.pp > 1 ? std::min(s.pp, s.micro_batches_min) : 1.0);
  const double act_layer = activations_bound(s);
  StepBound b;
  b.hbm_bytes = hbm_bound(s, state, act_layer == kInf ? 0.0 : act_layer * in_flight);
  // The optimizer state streams through the GPU at the tier's bandwidth instead of HBM's; with
  // activations offloaded, a micro-batch takes at least its activations' two crossings.
  double tier_step = 0, effective = steady;
  if (tier_only) {
    tier_step = std::max(0.0, state.local_params * update_bytes(box.plan.stack) *
                                  (1.0 / expansion_bytes_per_s_ - 1.0 / hbm_bytes_per_s_));
    if (!box.offload[static_cast<int>(Offload::optimizer)] && act_layer != kInf)
      effective = std::max(effective, s.micro_batches_min * 2.0 * act_layer * first_stage_layers /
                                          expansion_bytes_per_s_);
  }
  const double dp_exposed = dp_exposed_bound(s, state, effective);
  const double p2p = p2p_bound(s);
  const double bubble = bubble_bound(s, layer);
  b.time_s = effective + tier_step + dp_exposed + p2p + bubble + state.optimizer_s +
             calibration_.per_step_overhead_s;
  b.busy_s = s.stage_layers * layer.busy_a * s.step_tokens + state.optimizer_s;
  // The terms are summed in another order than estimate() sums them, which may round a few ulps
  // above it; a margin far above rounding and far below any real difference keeps them below.
  constexpr double kMargin = 1.0 - 1e-9;
  b.time_s *= kMargin;
  b.busy_s *= kMargin;
  b.hbm_bytes *= kMargin;
  return b;
}

double Estimator::energy_bound_j(double time_s, double busy_s) const noexcept {
  return power_.energy_bound_j(time_s, busy_s);
}

}  // namespace clustersweep::estimator
