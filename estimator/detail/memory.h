#pragma once
// Memory per GPU and the expansion tier (docs/estimator.md, "Memory per GPU", "Optimizer",
// "Expansion tier"; Korthikanti et al. 2022, Rajbhandari et al. 2020, COMET). With G the critical
// stage's parameters on this GPU (everything but the routed experts split by t, the routed experts
// by etp x ep):
//   weights G x 2, gradients G x 4 (fp32; fp16 training 2), optimizer G x 12 (fp32 master +
//   Adam m, v; fp32 training 4, 4, 8), divided by the data-parallel group with ZeRO-3, >= 2, >= 1;
//   activations = per layer x the first stage's layers per chunk x chunks in flight;
//   workspace = workspace_bytes + 16-bit logits and their gradient (+ two gathered layers, ZeRO-3).
// Activations per layer (Korthikanti et al., Table 2, generalised to GQA, MLA and SwiGLU):
//   s b h (replicated/t' + split/t) + 5 a s^2 b / t without fused attention or recompute,
// t' = t with sequence parallelism; full recompute keeps the layer input only. Adam reads master,
// m, v and the fp32 gradient and writes master, m, v and the 16-bit weight (30 bytes mixed) of the
// local parameters. With offload the state streams through the GPU at the tier's bandwidth
// (exposed beyond the HBM-bound step); offloaded activations go out after the forward and come
// back for the backward, offloaded weights come in for the forward and the backward. Defined
// inline: estimate() calls them per plan. Not part of the estimator's API.
#include <algorithm>
#include <cstdint>

#include "estimator/detail/model_counts.h"
#include "estimator/detail/pipeline.h"
#include "estimator/detail/step.h"
#include "estimator/estimator.h"

namespace clustersweep::estimator {
namespace detail {

// activation_bytes_per_layer (estimator/estimator.h), inline for estimate() and bound().
inline double activation_bytes(const Model& m, double s, double b, int tp, bool sequence_parallel,
                               Recompute recompute, std::uint8_t modules, bool flash_attention,
                               bool dropout_masks, bool fp8_gemm_inputs) {
  const double h = m.hidden;
  const double t = std::max(tp, 1);
  const double sbh = s * b * h;
  const double replicated_div = sequence_parallel ? t : 1.0;
  if (recompute == Recompute::full) return 2.0 * sbh / replicated_div;  // the layer input only
  // Korthikanti et al. 2022 sec. 4.1, per sbh with 16-bit values and 1-byte dropout masks:
  // replicated across TP ranks: 2 layer-norm inputs (4), QKV input (2), MLP input (2), two
  // dropout masks (2); split by TP: Q (2), K and V (4 kv/a), projection input (2), MLP
  // activations (gelu: its input and output, 4 f/h; SwiGLU: gate+up output and product, 6 f/h).
  const double gemm_input = fp8_gemm_inputs ? 1.0 : 2.0;  // QKV, projection, fc1, fc2 inputs
  // The MLP a layer keeps inside the tensor-parallel group: the dense one, or an MoE layer's
  // shared experts (the routed experts' activations are counted per expert-parallel rank by
  // the estimator); the mean over layers.
  const double moe = moe_fraction(m);
  // The recompute modules drop what their module keeps (Megatron-Core's --recompute-modules).
  const std::uint8_t r = recomputed_modules(recompute, modules);
  const double dense_f = (r & kRecomputeMlp) ? 0.0 : (1.0 - moe) * m.ffn_hidden;
  const double shared_f =
      (r & (kRecomputeSharedExperts | kRecomputeMoe)) ? 0.0 : moe * double(m.shared_ffn_hidden);
  const double f_ratio = (dense_f + shared_f) / h;
  // The norms' outputs are the QKV and MLP GEMM inputs; their inputs stay (the residual).
  double replicated =
      4.0 + ((r & kRecomputeLayernorm) ? 0.0 : 2.0 * gemm_input) + (dropout_masks ? 2.0 : 0.0);
  // Q, K and V per head (MLA up-projects K and V for every head, and keeps its two latents).
  const double kv_heads = is_mla(m) ? m.heads : m.kv_heads;
  const double qkv = (is_mla(m) && (r & kRecomputeMlaUpProj))
                         ? 0.0
                         : 2.0 * (m.heads * qk_dim(m) + kv_heads * (qk_dim(m) + v_dim(m))) / h;
  if (is_mla(m)) replicated += gemm_input * (m.q_lora_rank + m.kv_lora_rank) / h;
  const double mlp = (m.mlp == Mlp::swiglu ? 4.0 : 2.0) * f_ratio + gemm_input * f_ratio;
  const double split = qkv + gemm_input * m.heads * v_dim(m) / h + mlp;
  double per_sbh = replicated / replicated_div + split / t;
  // Scores, softmax output, its dropout mask and output: 5 a s / h, unless the attention core is
  // recomputed or never materialised (fused attention).
  if (!(r & kRecomputeCoreAttn) && !flash_attention) per_sbh += 5.0 * m.heads * s / h / t;
  return per_sbh * sbh;
}

// What the offload setting moves to the expansion tier; the rest stays in HBM.
inline void place_in_tiers(Offload offload, Memory& mem) {
  const double total_bytes = mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes +
                             mem.activations_bytes + mem.workspace_bytes +
                             mem.expert_weights_bytes + mem.expert_gradients_bytes +
                             mem.expert_optimizer_bytes + mem.expert_activations_bytes;
  const double all_optimizer = mem.optimizer_bytes + mem.expert_optimizer_bytes;
  const double all_activations = mem.activations_bytes + mem.expert_activations_bytes;
  const double all_weights = mem.weights_bytes + mem.expert_weights_bytes;
  switch (offload) {
    case Offload::none:
      mem.expansion_bytes = 0;
      break;
    case Offload::optimizer:
      mem.expansion_bytes = all_optimizer;
      break;
    case Offload::optimizer_activations:
      mem.expansion_bytes = all_optimizer + all_activations;
      break;
    case Offload::all:
      mem.expansion_bytes = all_optimizer + all_activations + all_weights;
      break;
  }
  mem.hbm_bytes = total_bytes - mem.expansion_bytes;
}

}  // namespace detail

// Parameters per GPU, by what reduces their gradients: the dp*cp ranks that hold the same weights
// (stride tp), and for the routed experts the edp ranks that hold the same experts (stride
// etp*ep).
struct Estimator::GpuParams {
  double dense = 0;                                      // everything but the routed experts
  double expert = 0;                                     // the routed experts
  int dp_group = 1;                                      // ranks holding the same dense weights
  int edp_group = 1;                                     // ranks holding the same experts
  double grad_total = 0, param_total = 0;                // dense, bytes
  double expert_grad_total = 0, expert_param_total = 0;  // experts, bytes
};

// Stashed activation bytes per layer and micro-batch, and the layers of the first stage.
struct Estimator::Activations {
  double layer = 0;
  double expert_layer = 0;
  double first_stage_layers = 0;
};

struct Estimator::TierTraffic {
  double optimizer_s = 0;
  double offload_step_s = 0;  // exposed optimizer-state streaming
  double offload_mb_s = 0;    // tier traffic per micro-batch, overlapped with its compute
};

// The last stage holds the MTP modules, their routed experts with the others.
inline Estimator::GpuParams Estimator::gpu_params(const StepShape& s) const noexcept {
  const Model& m = workload_.model;
  const Plan& plan = s.plan;
  const int etp = plan.etp, ep = plan.ep;
  const double expert_share = mtp_params_ > 0 && m.num_experts > 0
                                  ? detail::routed_expert_params(m) * m.mtp_layers / mtp_params_
                                  : 0.0;
  GpuParams p;
  p.dense = stage_params(s, dense_params_per_layer_, embedding_params_,
                         mtp_params_ * (1 - expert_share)) /
            s.t;
  p.expert = stage_params(s, expert_params_per_layer_, 0.0, mtp_params_ * expert_share) /
             (static_cast<double>(etp) * ep);
  p.dp_group = plan.dp * plan.cp;
  p.edp_group = static_cast<int>(static_cast<std::int64_t>(plan.tp) * plan.cp * plan.dp /
                                 (static_cast<std::int64_t>(etp) * ep));
  p.grad_total = p.dense * grad_bytes(plan.stack);
  p.param_total = p.dense * weight_bytes_;
  p.expert_grad_total = p.expert * grad_bytes(plan.stack);
  p.expert_param_total = p.expert * weight_bytes_;
  return p;
}

// `routed_rows`: of an MoE layer's expert GEMMs on this GPU (MoeForward::routed_rows).
inline Estimator::Activations Estimator::activations(const StepShape& s,
                                                     double routed_rows) const noexcept {
  const Model& m = workload_.model;
  const Plan& plan = s.plan;
  const bool fp8_inputs = detail::is_low_precision(workload_.precision);
  const double act_scale = act_bytes_ / 2.0;
  Activations a;
  a.layer =
      act_scale * detail::activation_bytes(m, s.s_local, plan.micro_batch, plan.tp, s.sp,
                                           plan.recompute, plan.recompute_modules, s.kernel.fused,
                                           calibration_.dropout_masks > 0, fp8_inputs);
  // Routed tokens of an MoE layer: the permuted input (gemm input), fc1's output and the
  // activation's (fc2's input, as the dense MLP's), per routed row; kept unless the layer is
  // recomputed (the activation's alone with the moe_act module).
  const double gemm_input = fp8_inputs ? 1.0 : 2.0;
  const std::uint8_t r = recomputed_modules(plan.recompute, plan.recompute_modules);
  a.expert_layer = plan.recompute == Recompute::full || (r & kRecomputeMoe)
                       ? 0.0
                       : act_scale * moe_fraction_ * routed_rows *
                             ((m.num_experts > 1 ? gemm_input * m.hidden : 0.0) +
                              ((m.mlp == Mlp::swiglu ? 4.0 : 2.0) +
                               ((r & kRecomputeMoeAct) ? 0.0 : gemm_input)) *
                                  m.moe_ffn_hidden / plan.etp);
  a.first_stage_layers = plan.pp > 1 ? s.slots - s.embedding_slots : m.layers;
  return a;
}

inline Memory Estimator::memory(const StepShape& s, const GpuParams& p,
                                const Activations& a) const noexcept {
  const Model& m = workload_.model;
  const Calibration& c = calibration_;
  const Plan& plan = s.plan;
  Memory mem;
  mem.weights_bytes = p.param_total / (plan.zero >= 3 ? p.dp_group : 1);
  mem.gradients_bytes = p.grad_total / (plan.zero >= 2 ? p.dp_group : 1);
  mem.optimizer_bytes = p.dense * optimizer_bytes_ / (plan.zero >= 1 ? p.dp_group : 1);
  mem.expert_weights_bytes = p.expert_param_total / (plan.zero >= 3 ? p.edp_group : 1);
  mem.expert_gradients_bytes = p.expert_grad_total / (plan.zero >= 2 ? p.edp_group : 1);
  mem.expert_optimizer_bytes = p.expert * optimizer_bytes_ / (plan.zero >= 1 ? p.edp_group : 1);
  // Micro-batch chunks in flight on the first stage: 1F1B warm-up (pp) and, interleaved,
  // Megatron's 2(pp-1) + (vp-1)pp + 1 chunk forwards (Narayanan et al. 2021).
  const double chunk_layers = a.first_stage_layers / plan.vp;
  double chunks_in_flight = plan.vp;
  if (plan.pp > 1) {
    chunks_in_flight =
        plan.vp == 1 ? plan.pp : 2.0 * (plan.pp - 1) + (plan.vp - 1.0) * plan.pp + 1.0;
    chunks_in_flight = std::min(chunks_in_flight, s.micro_batches * plan.vp);
  }
  mem.activations_bytes = a.layer * chunk_layers * chunks_in_flight;
  mem.expert_activations_bytes = a.expert_layer * chunk_layers * chunks_in_flight;
  if (plan.recompute == Recompute::full)  // the layer being recomputed holds its full activations
    mem.activations_bytes +=
        act_bytes_ / 2.0 *
        detail::activation_bytes(m, s.s_local, plan.micro_batch, plan.tp, s.sp, Recompute::none, 0,
                                 s.kernel.fused, c.dropout_masks > 0,
                                 detail::is_low_precision(workload_.precision));
  // Logits and their gradient (16-bit; the fused cross entropy works in place) on the last stage,
  // gathered parameters of two layers (ZeRO-3 prefetch), and a fixed workspace.
  mem.workspace_bytes = c.workspace_bytes + 2.0 * act_bytes_ * s.tokens * m.vocab / s.t;
  if (plan.zero >= 3)
    mem.workspace_bytes +=
        2.0 * (dense_params_per_layer_ / s.t + expert_params_per_layer_ / (plan.etp * plan.ep)) *
        weight_bytes_;
  detail::place_in_tiers(plan.offload, mem);
  return mem;
}

inline Estimator::TierTraffic Estimator::tier_traffic(const Plan& plan, const GpuParams& p,
                                                      const Activations& a,
                                                      const Memory& mem) const noexcept {
  const double local_params =
      p.dense / (plan.zero >= 1 ? p.dp_group : 1) + p.expert / (plan.zero >= 1 ? p.edp_group : 1);
  TierTraffic tier;
  tier.optimizer_s = local_params * update_bytes(plan.stack) / hbm_bytes_per_s_;
  if (plan.offload == Offload::none) return tier;
  const double opt_traffic = local_params * update_bytes(plan.stack) / expansion_bytes_per_s_;
  tier.offload_step_s = std::max(0.0, opt_traffic - tier.optimizer_s);
  if (plan.offload == Offload::optimizer_activations || plan.offload == Offload::all)
    tier.offload_mb_s +=
        2.0 * (a.layer + a.expert_layer) * a.first_stage_layers / expansion_bytes_per_s_;
  const double all_weights = mem.weights_bytes + mem.expert_weights_bytes;
  if (plan.offload == Offload::all) tier.offload_mb_s += 2.0 * all_weights / expansion_bytes_per_s_;
  return tier;
}

}  // namespace clustersweep::estimator
