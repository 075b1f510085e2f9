#pragma once
// Host overhead and CUDA graphs (docs/estimator.md, "The software stack"). Each kernel a layer
// launches outside a CUDA graph costs launch_s of host time (PyTorch dispatch, CUDA launch); the
// host runs ahead of the GPU, so a layer exposes
//   max(0, launches x launch_s - the layer's GPU time)
// per micro-batch. An MoE layer whose shapes depend on the routing copies its tokens per expert to
// the host before the dispatch (layer_overhead_s, whose latency nothing hides) and so loses the
// host's slack there: the launches from the dispatch on hide only behind the experts' kernels. CUDA
// graphs replay their captured kernels without the host: per-module graphs capture a dense layer
// and an MoE layer's attention and router scopes; whole-layer graphs also the experts and their
// dispatch, and remove the syncs, when the shapes are static (balanced or capacity routing).
// Defined inline: estimate() calls them per plan. Not part of the estimator's API.
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

// The seconds of `host_s` of kernel launches a step (or layer) waits for when its kernels run
// `gpu_s`: none when a CUDA graph replays them; all of them when the host waits for the GPU
// before it launches on (a sync: it cannot run ahead); else what the GPU's work does not cover.
// The transformer and recommendation-model steps share it.
inline double exposed_host_s(double host_s, double gpu_s, bool graphed, bool synced) noexcept {
  if (graphed) return 0;
  return synced ? host_s : std::max(0.0, host_s - gpu_s);
}

}  // namespace detail

// The launches of the mean layer before an MoE layer's dispatch (attention, router, a dense
// layer) and from it on (dispatch, experts, combine), in host seconds.
inline Estimator::LayerLaunches Estimator::layer_launches(const Plan& plan) const noexcept {
  using namespace detail;
  const Model& m = workload_.model;
  const Stack& st = plan.stack;
  LayerLaunches out;
  if (calibration_.launch_s <= 0) return out;
  const bool graphed = st.cuda_graph != CudaGraph::none;
  const double dense = graphed ? 0.0 : kAttentionLaunches + kMlpLaunches;
  double before = 0, after = 0;
  if (is_moe(m)) {
    const double local_experts = static_cast<double>(m.num_experts) / std::max(plan.ep, 1);
    after = (fused_dispatch(st.dispatcher) ? kFusedDispatchLaunches : kDispatchLaunches) +
            kLaunchesPerLocalExpert * local_experts +
            (m.shared_ffn_hidden > 0 ? kMlpLaunches : 0.0);
    before = graphed ? 0.0 : kAttentionLaunches + kRouterLaunches;
    if (!syncs_before_experts(plan)) after = 0;  // inside a whole-layer graph
  }
  out.before_dispatch_s =
      calibration_.launch_s * ((1.0 - moe_fraction_) * dense + moe_fraction_ * before);
  out.from_dispatch_s = calibration_.launch_s * moe_fraction_ * after;
  return out;
}

// Without a sync the host's slack carries over the whole layer; with one, the launches from the
// dispatch on hide only behind the experts' kernels.
inline double Estimator::exposed_launch_s(const Plan& plan, double layer_s,
                                          double experts_s) const noexcept {
  const LayerLaunches l = layer_launches(plan);
  if (!syncs_before_experts(plan))
    return detail::exposed_host_s(l.before_dispatch_s + l.from_dispatch_s, layer_s, false, false);
  return detail::exposed_host_s(l.before_dispatch_s, layer_s - experts_s, false, false) +
         detail::exposed_host_s(l.from_dispatch_s, experts_s, false, false);
}

inline bool Estimator::syncs_before_experts(const Plan& plan) const noexcept {
  const Stack& st = plan.stack;
  return is_moe(workload_.model) &&
         !(st.cuda_graph == CudaGraph::full && st.token_routing != TokenRouting::dropless);
}

inline double Estimator::moe_sync_s(const Plan& plan) const noexcept {
  return syncs_before_experts(plan) ? moe_fraction_ * calibration_.moe_layer_overhead_s : 0.0;
}

}  // namespace clustersweep::estimator
