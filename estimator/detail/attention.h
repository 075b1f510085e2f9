#pragma once
// Attention of one layer and micro-batch (docs/estimator.md, "Attention", "Context parallelism",
// "The software stack"). Projections: QKV and output as column- and row-parallel GEMMs (Shoeybi et
// al. 2019); MLA's down projections are not split by tensor parallelism (DeepSeek-V2 sec. 2.1).
// Scores and context:
//   2 b s_c keys a (d_qk + d_v) / t FLOPs forward,  keys = s/2 when causal kernels skip the masked
//   half (at most the window in sliding-window layers),
// at attention_eff of the 16-bit peak (cuDNN's fused attention, FlashAttention-3), of the fp8 peak
// with fp8_attention, at a fitted share of it for FlashAttention-2 and Triton's kernel. Fused
// kernels recompute the scores backward: 5 matmuls against 2 forward (Dao et al. 2022), 2.5x; the
// unfused path keeps the s x s scores (2x) and passes over them with scale, mask, softmax and
// dropout: 4 b (a/t) s_c s elements. Ring attention exchanges K and V cp-1 times forward, K, V and
// their gradients backward, each behind the previous chunk's attention; only the excess is
// exposed. Defined inline: estimate() calls them per plan. Not part of the estimator's API.
#include <algorithm>

#include "estimator/detail/collectives.h"
#include "estimator/detail/model_counts.h"
#include "estimator/detail/step.h"
#include "estimator/estimator.h"

namespace clustersweep::estimator {

inline Estimator::AttentionKernelCost Estimator::attention_kernel(const Stack& st) const noexcept {
  const Calibration& c = calibration_;
  AttentionKernelCost k;
  k.fused = c.flash_attention > 0 && st.attention_kernel != AttentionKernel::unfused;
  k.bwd_factor = k.fused ? 2.5 : 2.0;
  double rate = attention_peak_ * c.attention_eff;
  if (st.fp8_attention && detail::is_low_precision(workload_.precision))
    rate = cluster_.gpu.peak_flops[static_cast<int>(Precision::fp8)] * c.attention_eff *
           c.low_precision_gemm_eff;
  if (st.attention_kernel == AttentionKernel::flash2)
    rate *= c.flash2_attention_eff * cluster_.gpu.legacy_attention_share;
  if (st.attention_kernel == AttentionKernel::triton)
    rate *= c.triton_attention_eff * cluster_.gpu.legacy_attention_share;
  k.flops_per_s = rate;
  return k;
}

// Every layer's attention projections, forward.
inline double Estimator::attention_gemm_fwd_s(const StepShape& s) const noexcept {
  const Model& m = workload_.model;
  const double h = m.hidden, t = s.t, tokens = s.tokens;
  double fwd = gemm_s(tokens, attn_out_in_ / t, h);
  if (is_mla(m)) {
    const double nope = qk_dim_ - m.qk_rope_head_dim;
    fwd += gemm_s(tokens, h, m.kv_lora_rank + m.qk_rope_head_dim) +
           gemm_s(tokens, m.kv_lora_rank, m.heads * (nope + v_dim_) / t) +
           (m.q_lora_rank > 0 ? gemm_s(tokens, h, m.q_lora_rank) +
                                    gemm_s(tokens, m.q_lora_rank, m.heads * qk_dim_ / t)
                              : gemm_s(tokens, h, m.heads * qk_dim_ / t));
  } else {
    fwd += gemm_s(tokens, h, qkv_out_ / t);
  }
  return fwd;
}

inline double Estimator::attention_fwd_s(double tokens, int tp,
                                         const AttentionKernelCost& kernel) const noexcept {
  return 2.0 * tokens * attention_keys_ * workload_.model.heads * (qk_dim_ + v_dim_) / tp /
         kernel.flops_per_s;
}

// The unfused kernel's passes over the score matrix: scale+mask+softmax and dropout.
inline double Estimator::attention_elementwise_bytes(const StepShape& s) const noexcept {
  if (s.kernel.fused) return 0;
  return 4.0 * act_bytes_ * s.plan.micro_batch * (workload_.model.heads / s.t) * s.s_local * s.seq *
         calibration_.memory_bound_scale;
}

// The elements per token a low-precision attention casts: its GEMMs' inputs and output widths.
inline double Estimator::attention_operands(double t) const noexcept {
  const Model& m = workload_.model;
  const double h = m.hidden;
  double operands = h + attn_out_in_ / t + h + qkv_out_ / t;
  if (is_mla(m))
    operands +=
        m.kv_lora_rank + m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim + m.q_lora_rank;
  return operands;
}

inline Estimator::CpExchange Estimator::cp_exchange_s(
    double tokens, int tp, int cp, const AttentionKernelCost& kernel) const noexcept {
  if (cp <= 1) return {};
  const Model& m = workload_.model;
  double bw = 0, alpha = 0;
  link(tp, cp, bw, alpha, Traffic::p2p);  // each step passes K and V to the ring's next rank
  const double kv_heads = is_mla(m) ? m.heads : m.kv_heads;
  const double kv_bytes = tokens * kv_heads * (qk_dim_ + v_dim_) / tp * act_bytes_;
  const double step = (cp - 1.0) * (kv_bytes / bw + alpha);
  const double attention = attention_fwd_s(tokens, tp, kernel);
  return {std::max(0.0, step - attention),
          std::max(0.0, 2.0 * step - kernel.bwd_factor * attention)};
}

}  // namespace clustersweep::estimator
