// Parameter and FLOP counts of a model (docs/estimator.md, "Model FLOPs", "Mixture-of-Experts
// transformers"). A layer has its attention projections (QKV and output, or DeepSeek-V2's MLA
// down and up projections with their LoRA norms), two norms, and a dense MLP of mlp_matrices x h x
// f or an MoE MLP (router h x E, shared experts, E routed experts); a model's count is the mean
// layer over its dense and MoE layers. Model FLOPs follow Narayanan et al. (SC'21, eq. 3):
//   3 x (L (2 N_layer + 2 s a (d_qk + d_v)) + 2 h V + MTP) per token
// with N_layer the parameters a token passes through and the attention over the full s x s
// matrix; megatron_flops_per_token is Megatron-LM's own count (training.py), term by term.
#include "estimator/detail/model_counts.h"

#include <algorithm>

#include "estimator/detail/memory.h"
#include "estimator/estimator.h"

namespace clustersweep::estimator {
namespace detail {
namespace {

// Attention projection parameters of one layer (no norms): QKV and output, or MLA's down and up
// projections with their two LoRA norms (DeepSeek-V2 sec. 2.1).
double attention_params(const Model& m) {
  const double h = m.hidden, a = m.heads, qk = qk_dim(m), v = v_dim(m);
  if (!is_mla(m)) return h * qkv_width(m) + a * v * h;
  const double q =
      m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank * a * qk + m.q_lora_rank : h * a * qk;
  const double nope = qk - m.qk_rope_head_dim;
  const double kv = h * (m.kv_lora_rank + m.qk_rope_head_dim) +
                    static_cast<double>(m.kv_lora_rank) * a * (nope + v) + m.kv_lora_rank;
  return q + kv + a * v * h;
}
// MLP parameters of a dense layer, and of an MoE layer without its routed experts.
double dense_mlp_params(const Model& m) { return mlp_matrices(m) * m.hidden * m.ffn_hidden; }
double moe_shared_params(const Model& m) {
  const double router = m.num_experts > 1 ? static_cast<double>(m.hidden) * m.num_experts : 0.0;
  return mlp_matrices(m) * m.hidden * m.shared_ffn_hidden + router;
}
// Forward GEMM FLOPs per token of one layer, mean over layers, for the parameters a token uses.
double layer_gemm_flops_per_token(const Model& m) {
  const double f = moe_fraction(m);
  const double mlp = (1.0 - f) * dense_mlp_params(m) +
                     f * mlp_matrices(m) * m.hidden *
                         (static_cast<double>(m.top_k) * m.moe_ffn_hidden + m.shared_ffn_hidden);
  return 2.0 * (attention_params(m) + mlp);
}
// Forward attention matmul FLOPs per token of one layer over the full s x s matrix (scores and
// context; Narayanan et al. count 4 s h for qk = v = h/heads).
double layer_attention_flops_per_token(const Model& m, double seq_len) {
  return 2.0 * seq_len * m.heads * (qk_dim(m) + v_dim(m));
}

}  // namespace

double non_expert_params_per_layer(const Model& m) {
  const double f = moe_fraction(m);
  return attention_params(m) + 2.0 * m.hidden + (1.0 - f) * dense_mlp_params(m) +
         f * moe_shared_params(m);
}
double expert_params_per_layer(const Model& m) { return moe_fraction(m) * routed_expert_params(m); }
// An MTP module: its layer (an MoE layer when the model has experts), the projection of
// [h; embedding] to h and two norms (DeepSeek-V3 sec. 2.2); embedding and output head shared.
double mtp_params(const Model& m) {
  const double mlp =
      is_moe(m) ? moe_shared_params(m) + routed_expert_params(m) : dense_mlp_params(m);
  return m.mtp_layers *
         (attention_params(m) + 2.0 * m.hidden + mlp + 2.0 * m.hidden * m.hidden + 2.0 * m.hidden);
}

}  // namespace detail

using detail::layer_attention_flops_per_token;
using detail::layer_gemm_flops_per_token;
using detail::qk_dim;
using detail::v_dim;

double params_per_layer(const Model& m) noexcept {
  return detail::non_expert_params_per_layer(m) + detail::expert_params_per_layer(m);
}

double total_params(const Model& m) noexcept {
  return m.layers * params_per_layer(m) + detail::mtp_params(m) + 2.0 * m.vocab * m.hidden +
         m.hidden;
}

double active_params(const Model& m) noexcept {
  return m.layers * layer_gemm_flops_per_token(m) / 2.0 + 2.0 * m.vocab * m.hidden;
}

double megatron_flops_per_token(const Model& m, int seq_len) noexcept {
  // Term by term as Megatron-LM's transformer_flops(): 12 = 3 (fwd, wgrad, dgrad) x 2 (FMA) x 2
  // (GEMMs per block), the attention core counted over half the causal score matrix.
  const double h = m.hidden, s = seq_len, a = m.heads, L = m.layers, mtp = m.mtp_layers;
  const double gated = m.mlp == Mlp::swiglu ? 1.5 : 1.0;
  const double expansion = 12.0;
  const double n_moe = moe_layers(m) + (is_moe(m) ? mtp : 0.0);
  const double n_dense = (L - moe_layers(m)) + (is_moe(m) ? 0.0 : mtp);
  const double layers = L + mtp;
  // Keys per query: half the sequence (causal), the window in sliding-window layers (as
  // Megatron-LM counts GPT-OSS's window_size and window_attn_skip_freq).
  const double windowed = L > 0 ? std::min(1.0, m.sliding_window_layers / L) : 0.0;
  const double keys =
      (1.0 - windowed) * s / 2.0 +
      windowed * (m.sliding_window > 0 ? std::min(s / 2.0, 1.0 * m.sliding_window) : s / 2.0);
  double attention = 0;
  if (is_mla(m)) {
    const double rope = m.qk_rope_head_dim, nope = qk_dim(m) - rope, v = v_dim(m);
    const double q_term =
        m.q_lora_rank > 0 ? m.q_lora_rank * (h + a * (nope + rope) + 1) : h * a * (nope + rope);
    attention = 6.0 * layers *
                (q_term + m.kv_lora_rank * (h + a * (nope + v) + 1) + h * rope + a * v * h +
                 keys * a * (nope + rope) + keys * a * v);
  } else {
    const double query = a * qk_dim(m);
    attention = expansion * layers * h * h *
                ((1.0 + static_cast<double>(m.kv_heads) / a + keys / h) * query / h);
  }
  const double mlp =
      expansion * layers * h *
      (m.ffn_hidden * gated * (n_dense / layers) +
       (static_cast<double>(m.moe_ffn_hidden) * m.top_k * gated + m.shared_ffn_hidden * gated) *
           (n_moe / layers));
  const double mtp_extra = 6.0 * mtp * (3.0 * h + 2.0 * h * h);
  const double logits = 6.0 * h * m.vocab * (mtp + 1.0);
  return mlp + attention + mtp_extra + logits;
}

double training_flops_per_step(const Workload& w, Recompute recompute) noexcept {
  const Model& m = w.model;
  const double s = w.seq_len;
  const double gemm = layer_gemm_flops_per_token(m);
  const double attention = layer_attention_flops_per_token(m, s);
  const double logit_fwd = 2.0 * m.hidden * m.vocab;
  // An MTP module runs a layer, its projection and the shared output head once more.
  const double mtp_fwd = m.mtp_layers * (gemm + attention + 4.0 * m.hidden * m.hidden + logit_fwd);
  double per_token = 3.0 * (m.layers * (gemm + attention) + logit_fwd + mtp_fwd);
  if (recompute == Recompute::full) per_token += m.layers * (gemm + attention);
  if (recompute == Recompute::selective) per_token += m.layers * attention;
  return per_token * s * static_cast<double>(w.global_batch);
}

double activation_bytes_per_layer(const Model& m, double s, double b, int tp,
                                  bool sequence_parallel, Recompute recompute, bool flash_attention,
                                  bool dropout_masks, bool fp8_gemm_inputs,
                                  std::uint8_t recompute_modules) noexcept {
  return detail::activation_bytes(m, s, b, tp, sequence_parallel, recompute, recompute_modules,
                                  flash_attention, dropout_masks, fp8_gemm_inputs);
}

}  // namespace clustersweep::estimator
