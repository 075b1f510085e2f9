#pragma once
// Host overhead and CUDA graphs (docs/estimator.md, "The software stack"). Each kernel a layer
// launches outside a CUDA graph costs launch_s of host time (PyTorch dispatch, CUDA launch); the
// host runs ahead of the GPU, so a layer exposes
//   max(0, launches x launch_s - the layer's GPU time)
// per micro-batch, plus the host syncs of dropless MoE layers (layer_overhead_s each), whose
// latency nothing hides. CUDA graphs replay their captured kernels without the host: per-module
// graphs capture a dense layer and an MoE layer's attention and router scopes; whole-layer graphs
// also the experts and their dispatch, and remove the syncs, when the shapes are static (balanced
// or capacity routing). Defined inline: estimate() calls them per plan. Not part of the
// estimator's API.
#include <algorithm>

#include "estimator/detail/experts.h"
#include "estimator/estimator.h"

namespace clustersweep::estimator {
namespace detail {

// Kernels one layer launches per micro-batch, forward and backward (counted from Megatron-Core's
// transformer layer with Transformer Engine modules): the attention block (norm, QKV, rotary,
// attention, projection, residual), a dense MLP, an MoE layer's router (GEMM, top-k, auxiliary
// loss, token counts), its dispatch and combine (permutations and the collectives; one fused
// kernel each way with DeepEP/HybridEP), and its grouped GEMM, which Transformer Engine launches
// expert by expert (fc1, activation, fc2 and their backward).
inline constexpr double kAttentionLaunches = 24;
inline constexpr double kMlpLaunches = 18;
inline constexpr double kRouterLaunches = 24;
inline constexpr double kDispatchLaunches = 24;
inline constexpr double kFusedDispatchLaunches = 8;
inline constexpr double kLaunchesPerLocalExpert = 8;

}  // namespace detail

inline double Estimator::layer_launch_s(const Plan& plan) const noexcept {
  using namespace detail;
  const Model& m = workload_.model;
  const Stack& st = plan.stack;
  if (calibration_.launch_s <= 0) return 0;
  const bool static_moe = st.token_routing != TokenRouting::dropless;
  double dense = kAttentionLaunches + kMlpLaunches;
  double moe_layer = 0;
  if (is_moe(m)) {
    const double local_experts = static_cast<double>(m.num_experts) / std::max(plan.ep, 1);
    const double experts =
        (fused_dispatch(st.dispatcher) ? kFusedDispatchLaunches : kDispatchLaunches) +
        kLaunchesPerLocalExpert * local_experts + (m.shared_ffn_hidden > 0 ? kMlpLaunches : 0.0);
    moe_layer = kAttentionLaunches + kRouterLaunches + experts;
    if (st.cuda_graph != CudaGraph::none) moe_layer = experts;
    if (st.cuda_graph == CudaGraph::full && static_moe) moe_layer = 0;
  }
  if (st.cuda_graph != CudaGraph::none) dense = 0;
  return calibration_.launch_s * ((1.0 - moe_fraction_) * dense + moe_fraction_ * moe_layer);
}

inline double Estimator::moe_sync_s(const Plan& plan) const noexcept {
  const Stack& st = plan.stack;
  if (st.cuda_graph == CudaGraph::full && st.token_routing != TokenRouting::dropless) return 0;
  return moe_fraction_ * calibration_.moe_layer_overhead_s;
}

}  // namespace clustersweep::estimator
