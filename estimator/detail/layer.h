#pragma once
// One transformer layer and the logit layer, one micro-batch on one GPU (docs/estimator.md,
// "Memory-bound work", "Tensor/sequence parallelism", "Layer, logit layer and stage"):
//   compute = 3 GEMMs + (1 + backward factor) attention,  memory-bound = 3 x forward + casts,
//   TP = 2 x forward, CP = forward + backward exchange, EP = 2 x dispatch + combine
// (the backward's two GEMMs and its mirrored collectives). The forward moves 11 h elements of
// norm, residual and dropout traffic per token (split by sequence parallelism) and 2 f (gelu) or
// 3 f (SwiGLU) of activation traffic (split by tensor parallelism); two all-reduces per layer
// forward (Shoeybi et al. 2019; sequence parallelism swaps each for an all-gather + reduce-scatter
// of the same volume, Korthikanti et al. 2022). Full recompute repeats the forward, selective
// recompute the unfused attention core. The mean layer weights the dense MLP and the MoE layer by
// the fraction of layers that have each. The logit layer: 3 vocabulary-parallel GEMMs and the fp32
// cross entropy (24 bytes a logit), with the MTP modules on the last stage. Defined inline:
// estimate() calls them per plan. Not part of the estimator's API.
#include <algorithm>

#include "estimator/detail/attention.h"
#include "estimator/detail/experts.h"
#include "estimator/detail/host.h"
#include "estimator/detail/quantize.h"
#include "estimator/detail/step.h"
#include "estimator/estimator.h"

namespace clustersweep::estimator {

// The forward of one transformer layer, one micro-batch, the mean over dense and MoE layers.
struct Estimator::LayerForward {
  double gemm = 0;
  double attention = 0;        // score and context matmuls
  double memory = 0;           // memory-bound kernels
  double attention_bytes = 0;  // of which the unfused attention's passes over the scores
  double quantize = 0;         // low-precision casts, forward and backward
  double tp = 0;               // tensor-parallel collectives, exposed
  double a2a = 0;              // an MoE layer's dispatch + combine, exposed
  CpExchange cp;               // forward and backward
  double routed_rows = 0;      // of an MoE layer
  double experts = 0;          // of which the MoE layers' expert GEMMs and memory passes
  double attention_gemm = 0;   // of gemm: the attention's projections
  double dense_mlp = 0;        // of gemm: the dense MLP (weighted by its layers)
  double experts_gemm = 0;     // of gemm: the MoE layers' experts (weighted by their layers)
};

namespace detail {
// Of an MLA attention's projection FLOPs, the up-projections' (queries, keys and values from
// their latents): what the mla_up_proj recompute module repeats.
inline double mla_up_proj_share(const Model& m) {
  if (!is_mla(m)) return 0;
  const double h = m.hidden, a = m.heads, qk = qk_dim(m), v = v_dim(m);
  const double rope = m.qk_rope_head_dim;
  const double q_in = m.q_lora_rank > 0 ? m.q_lora_rank : h;
  const double up =
      (m.q_lora_rank > 0 ? q_in * a * qk : 0.0) + m.kv_lora_rank * a * (qk - rope + v);
  const double all = (m.q_lora_rank > 0 ? h * q_in : 0.0) + q_in * a * qk +
                     h * (m.kv_lora_rank + rope) + m.kv_lora_rank * a * (qk - rope + v) + a * v * h;
  return up / all;
}
// Of the experts' GEMM FLOPs, the shared experts'.
inline double shared_expert_share(const Model& m) {
  const double shared = static_cast<double>(m.shared_ffn_hidden);
  const double routed = static_cast<double>(m.top_k) * m.moe_ffn_hidden;
  return shared + routed > 0 ? shared / (shared + routed) : 0.0;
}
}  // namespace detail

inline Estimator::LayerForward Estimator::layer_forward(const StepShape& s) const noexcept {
  const Model& m = workload_.model;
  const double h = m.hidden, f = m.ffn_hidden, t = s.t;
  const double moe = moe_fraction_;
  const double attention_gemm_fwd = attention_gemm_fwd_s(s);
  LayerForward fwd;
  fwd.attention = attention_fwd_s(s.tokens, s.plan.tp, s.kernel);
  const double dense_mlp_fwd = moe < 1 ? dense_mlp_fwd_s(s) : 0.0;
  const MoeForward experts = moe > 0 ? moe_forward(s) : MoeForward{};
  fwd.gemm = attention_gemm_fwd + (1.0 - moe) * dense_mlp_fwd + moe * experts.gemm;
  fwd.attention_gemm = attention_gemm_fwd;
  fwd.dense_mlp = (1.0 - moe) * dense_mlp_fwd;
  fwd.experts_gemm = moe * experts.gemm;
  const double dense_f = (1.0 - moe) * f;
  const double elementwise_bytes =
      act_bytes_ * s.tokens * (elementwise_h_ * h / s.sp_div + elementwise_f_ * dense_f / t);
  fwd.attention_bytes = attention_elementwise_bytes(s);
  fwd.memory = (elementwise_bytes + fwd.attention_bytes) / hbm_bytes_per_s_ + moe * experts.memory;
  fwd.quantize = quantize_s(s, experts.operands);
  // One attention all-reduce and the dense MLP's, or the MoE layer's collectives.
  fwd.tp = s.tp_one + (1.0 - moe) * s.tp_one + moe * experts.tp;
  fwd.cp = cp_exchange_s(s.tokens, s.plan.tp, s.plan.cp, s.kernel);
  fwd.a2a = experts.a2a;
  fwd.routed_rows = experts.routed_rows;
  fwd.experts = moe * (experts.gemm + experts.memory);
  return fwd;
}

inline Estimator::Parts Estimator::layer_parts(const StepShape& s,
                                               const LayerForward& fwd) const noexcept {
  const Plan& plan = s.plan;
  const double moe = moe_fraction_;
  Parts layer;
  layer.compute = gemm_passes_ * fwd.gemm + (1.0 + s.kernel.bwd_factor) * fwd.attention;
  layer.memory = 3.0 * fwd.memory + fwd.quantize;
  layer.tp = 2.0 * fwd.tp;
  layer.cp = fwd.cp.forward_s + fwd.cp.backward_s;
  layer.ep = 2.0 * moe * fwd.a2a;
  if (plan.recompute == Recompute::full) {
    layer.compute += fwd.gemm + fwd.attention;
    layer.memory += fwd.memory;
    layer.tp += fwd.tp;
    layer.cp += fwd.cp.forward_s;
    layer.ep += moe * fwd.a2a;
  } else if (plan.recompute == Recompute::selective) {
    const std::uint8_t r = recomputed_modules(plan.recompute, plan.recompute_modules);
    // Recompute the attention core (fused attention recomputes it anyway).
    if ((r & kRecomputeCoreAttn) && !s.kernel.fused) {
      layer.compute += fwd.attention;
      layer.memory += fwd.attention_bytes / hbm_bytes_per_s_;
    }
    // The other modules repeat their forward GEMMs (the norms and the activation function
    // only a memory pass, left out); the whole MoE layer its dispatch and combine too.
    const Model& m = workload_.model;
    if (r & kRecomputeMlaUpProj) layer.compute += detail::mla_up_proj_share(m) * fwd.attention_gemm;
    if (r & kRecomputeMlp) layer.compute += fwd.dense_mlp;
    if (r & kRecomputeMoe) {
      layer.compute += fwd.experts_gemm;
      layer.ep += moe * fwd.a2a;
    } else if (r & kRecomputeSharedExperts) {
      layer.compute += detail::shared_expert_share(m) * fwd.experts_gemm;
    }
  }
  // With a2a_overlap the all-to-all of one micro-batch runs under another's compute, up to what
  // that compute lasts (Megatron-Core's overlap_moe_expert_parallel_comm, DeepSeek's DualPipe).
  if (plan.stack.a2a_overlap) layer.ep = std::max(0.0, layer.ep - layer.compute);
  // The host launches the layer's kernels while the GPU runs earlier ones (detail/host.h); the
  // experts' kernels are their GEMMs and memory passes and the all-to-all.
  const bool experts_again =
      plan.recompute == Recompute::full ||
      (recomputed_modules(plan.recompute, plan.recompute_modules) & kRecomputeMoe);
  const double experts_s = (experts_again ? 4.0 : 3.0) * fwd.experts + layer.ep;
  layer.host = moe_sync_s(plan) + exposed_launch_s(plan, layer.sum(), experts_s);
  layer.overhead = calibration_.per_layer_overhead_s;
  return layer;
}

// The logit layer and loss of the last stage, with the MTP modules.
inline Estimator::Parts Estimator::logit_parts(const StepShape& s,
                                               const Parts& layer) const noexcept {
  const Model& m = workload_.model;
  const double h = m.hidden, v = m.vocab, t = s.t;
  Parts logit;
  logit.compute = gemm_passes_ * gemm_s(s.tokens, h, v / t);
  // Cross entropy in fp32 over the vocabulary shard: ~12 bytes per logit forward and backward.
  logit.memory = 24.0 * s.tokens * v / t / hbm_bytes_per_s_;
  logit.tp = s.sp ? s.tp_one : 0.0;  // gather the sequence-parallel input, reduce-scatter its grad
  // An MTP module: one more layer, its projection, and the shared output head again.
  if (m.mtp_layers > 0) {
    Parts mtp = layer;
    mtp.compute += gemm_passes_ * gemm_s(s.tokens, 2.0 * h, h / t);
    logit = logit + static_cast<double>(m.mtp_layers) * (mtp + logit);
  }
  return logit;
}

}  // namespace clustersweep::estimator
