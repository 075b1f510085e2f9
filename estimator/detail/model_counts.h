#pragma once
// Parameter counts of the parts of a Model and the precision's byte sizes, shared by the files of
// the estimator (docs/estimator.md, "Model FLOPs", "Mixture-of-Experts transformers"); the public
// counts of estimator/estimator.h are built from them in model_counts.cc. The small ones are
// inline because estimate() uses them per plan. Not part of the estimator's API.
#include <algorithm>

#include "estimator/estimator.h"

namespace clustersweep::estimator::detail {

// The 8- and 4-bit formats: 1-byte GEMM inputs, quantize/cast passes, low_precision_gemm_eff.
inline bool is_low_precision(Precision p) {
  return p == Precision::fp8 || p == Precision::fp4 || p == Precision::int8;
}
inline bool is_fp32(Precision p) { return p == Precision::fp32 || p == Precision::tf32; }

// Query/key and value dimensions per head.
inline double qk_dim(const Model& m) {
  return m.qk_head_dim > 0 ? m.qk_head_dim : static_cast<double>(m.hidden) / std::max(m.heads, 1);
}
inline double v_dim(const Model& m) {
  return m.v_head_dim > 0 ? m.v_head_dim : static_cast<double>(m.hidden) / std::max(m.heads, 1);
}
// Q, K and V output width of a standard (MHA/GQA) attention.
inline double qkv_width(const Model& m) {
  return m.heads * qk_dim(m) + static_cast<double>(m.kv_heads) * (qk_dim(m) + v_dim(m));
}
inline double mlp_matrices(const Model& m) { return m.mlp == Mlp::swiglu ? 3.0 : 2.0; }
inline double moe_fraction(const Model& m) {
  return m.layers > 0 ? static_cast<double>(moe_layers(m)) / m.layers : 0.0;
}
// The routed experts of one MoE layer.
inline double routed_expert_params(const Model& m) {
  return static_cast<double>(m.num_experts) * mlp_matrices(m) * m.hidden * m.moe_ffn_hidden;
}

// Mean over layers of the parameters outside the routed experts, and of the routed experts.
double non_expert_params_per_layer(const Model& m);
double expert_params_per_layer(const Model& m);
// The MTP modules' parameters.
double mtp_params(const Model& m);

}  // namespace clustersweep::estimator::detail
