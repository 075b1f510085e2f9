#pragma once
// The MLP of one layer and micro-batch (docs/estimator.md, "Mixture-of-Experts transformers", "The
// software stack"): the dense MLP (fc1 column- and fc2 row-parallel; Shoeybi et al. 2019), or an
// MoE layer's router, shared experts and routed experts with their dispatch (Megatron-Core MoE
// parallel folding, Liu et al. 2025). The busiest expert-parallel rank runs
//   R = b s_c k etp / t x load   routed rows,
// with load the token routing's: capacity routing pads every expert to capacity_factor times its
// balanced share (moe_pad_expert_input_to_capacity; GShard, Switch), forced balance gives the
// share, learned dropless routing leaves the ep rank loads spread by load_cv and the step waits
// for the largest, about 1 + load_cv sqrt(2 ln ep) (the expected maximum of ep normal loads). The
// routed experts run as grouped GEMMs over the E/ep local experts of R ep/E rows each, at the GEMM
// efficiency of that size times grouped_gemm_eff r/(r + expert_half_rows); the permutation moves
// the routed tokens permute_passes times through HBM unless the dispatcher fuses it (DeepEP,
// HybridEP). Dispatch and combine are all-to-alls over the ep group: copies to peers inside the
// GPU's NVLink domain over NVLink, the others over its NIC, concurrently,
//   max(bytes k_local / (B_nvl eff), bytes k_remote / (B_net eff)) + alpha
// with k_remote = k (D-1)/D for NCCL's all-to-all over D domains, (D-1)(1 - (1-1/D)^k) when the
// dispatcher sends a token once per distinct remote domain and forwards it there over NVLink
// (DeepSeek-V3 report sec. 3.2.2), every token to every rank with the all-gather dispatcher.
// Defined inline: estimate() calls them per plan. Not part of the estimator's API.
#include <algorithm>
#include <cmath>

#include "estimator/detail/collectives.h"
#include "estimator/detail/model_counts.h"
#include "estimator/detail/step.h"
#include "estimator/estimator.h"

namespace clustersweep::estimator {
namespace detail {

// The busiest expert-parallel rank's routed rows as a multiple of the balanced share.
inline double routed_load(const Plan& p, double load_cv) {
  switch (p.stack.token_routing) {
    case TokenRouting::capacity:
      return p.capacity_factor;
    case TokenRouting::balanced:
      return 1.0;
    case TokenRouting::dropless:
      break;
  }
  return p.ep > 1 ? 1.0 + load_cv * std::sqrt(2.0 * std::log(static_cast<double>(p.ep))) : 1.0;
}

// DeepEP's and HybridEP's kernels permute the tokens as they send them.
inline bool fused_dispatch(Dispatcher d) {
  return d == Dispatcher::deepep || d == Dispatcher::hybridep;
}
// The dispatchers with separate permute and unpermute passes over the routed tokens; the einsums
// place the tokens by their one-hot masks instead.
inline bool permutes_tokens(Dispatcher d) {
  return d == Dispatcher::alltoall || d == Dispatcher::allgather;
}

}  // namespace detail

// The forward of an MoE layer's MLP part, one micro-batch on the busiest expert-parallel rank.
struct Estimator::MoeForward {
  double routed_rows = 0;  // rows of this GPU's expert GEMMs
  double gemm = 0;         // routed and shared experts, router
  double memory = 0;       // routed activations and the permutation
  double tp = 0;           // expert-tensor-parallel and shared experts' collectives, exposed
  double a2a = 0;          // dispatch + combine, exposed
  double operands = 0;     // GEMM inputs and output gradients per token (low-precision casts)
};

inline double Estimator::dense_mlp_fwd_s(const StepShape& s) const noexcept {
  const double h = workload_.model.hidden, f = workload_.model.ffn_hidden;
  return gemm_s(s.tokens, h, mlp_in_out_ / s.t) + gemm_s(s.tokens, f / s.t, h);
}

// The elements per token a low-precision dense MLP casts: its GEMMs' inputs and output widths.
inline double Estimator::dense_mlp_operands(double t) const noexcept {
  const double h = workload_.model.hidden, f = workload_.model.ffn_hidden;
  return 2.0 * h + (f + mlp_in_out_) / t;
}

inline Estimator::MoeForward Estimator::moe_forward(const StepShape& s) const noexcept {
  const Model& m = workload_.model;
  const Calibration& c = calibration_;
  const Plan& plan = s.plan;
  const double h = m.hidden, t = s.t, tokens = s.tokens;
  const int ep = plan.ep, etp = plan.etp;
  const double sf = m.shared_ffn_hidden, fm = m.moe_ffn_hidden;
  const double in_out = m.mlp == Mlp::swiglu ? 2.0 : 1.0;  // first GEMM: gate and up
  const double imbalance = detail::routed_load(plan, c.moe_load_cv);
  MoeForward fwd;
  fwd.routed_rows = tokens * m.top_k * etp / t * imbalance;
  const double local_experts = static_cast<double>(m.num_experts) / ep;
  const double expert_rows = fwd.routed_rows / local_experts;
  // A grouped GEMM over several local experts loses efficiency with fewer rows per expert (tiles
  // of different experts do not share waves).
  const double grouped = local_experts > 1 ? c.moe_grouped_gemm_eff * expert_rows /
                                                 (expert_rows + c.moe_expert_half_rows)
                                           : 1.0;
  fwd.gemm = (gemm_s(expert_rows, h, in_out * fm / etp) + gemm_s(expert_rows, fm / etp, h)) *
             local_experts / grouped /
             // fp8/fp4 expert GEMMs lose more to per-expert scaling than the dense GEMMs.
             (detail::is_low_precision(workload_.precision) ? c.moe_low_precision_expert_eff : 1.0);
  if (sf > 0) fwd.gemm += gemm_s(tokens, h, in_out * sf / t) + gemm_s(tokens, sf / t, h);
  fwd.operands = fwd.routed_rows / tokens * (2.0 * h + (1.0 + in_out) * fm / etp) +
                 (sf > 0 ? 2.0 * h + (1.0 + in_out) * sf / t : 0.0);
  if (m.num_experts > 1) fwd.gemm += gemm_s(tokens / t, h, m.num_experts);  // router
  // Routed activations, and the permutation of the routed tokens to and from expert order, at
  // the routed kernels' bandwidth; the shared experts stream as a dense MLP does.
  fwd.memory = act_bytes_ *
               ((elementwise_f_ * fwd.routed_rows * fm / etp +
                 (m.num_experts > 1 && detail::permutes_tokens(plan.stack.dispatcher)
                      ? c.moe_permute_passes * fwd.routed_rows * h
                      : 0.0)) /
                    c.moe_routed_hbm_eff +
                elementwise_f_ * tokens * sf / t) /
               hbm_bytes_per_s_;
  // The expert-tensor-parallel collective over the routed tokens (with ep = 1 and etp = tp the
  // dense MLP's all-reduce), and the shared experts' tensor-parallel one.
  double etp_bw = 0, etp_alpha = 0;
  link(1, etp, etp_bw, etp_alpha);
  const double routed_bytes = tokens * m.top_k * h * act_bytes_;
  fwd.tp = (1.0 - s.tp_hidden) * detail::all_reduce_s(routed_bytes, etp, etp_bw, etp_alpha);
  if (sf > 0) fwd.tp += s.tp_one;
  // Token dispatch and combine of this rank's routed tokens.
  fwd.a2a = a2a_fwd_s(tokens / t * h * act_bytes_ * imbalance, ep, etp, plan.stack.dispatcher);
  if (plan.stack.dispatcher == Dispatcher::einsum) add_dispatch_einsums(s, fwd);
  return fwd;
}

// GShard's dispatch and combine (MaxText's generate_masks and its einsums "BSM,BSEC -> EBCM" and
// "EBCM,BSEC -> BSM"): each sequence's S local tokens fill C = ceil(S k / E) x capacity_factor
// slots per expert through a one-hot mask of S x E C elements, and each einsum is a matmul over the
// sequence of 2 S (E C) h FLOPs: quadratic in the sequence, against the experts' linear work.
// Forward, as a layer's GEMMs are counted (backward twice that), less the gradient the dispatch
// mask does not take: five of those six passes. The two masks are written like any activation.
inline void Estimator::add_dispatch_einsums(const StepShape& s, MoeForward& fwd) const noexcept {
  const Model& m = workload_.model;
  const double seq = s.s_local, h = m.hidden;
  const double slots = std::ceil(seq * m.top_k / std::max(m.num_experts, 1)) *
                       s.plan.capacity_factor * m.num_experts;
  const double sequences = s.tokens / s.t / seq;
  fwd.gemm += 5.0 / 6.0 * sequences * (gemm_s(slots, seq, h) + gemm_s(seq, slots, h));
  fwd.memory += act_bytes_ * 2.0 * sequences * seq * slots / hbm_bytes_per_s_;
}

// Each of dispatch and combine is one exchange over the ep group (stride etp), with one latency.
inline double Estimator::a2a_fwd_s(double token_bytes, int ep, int etp,
                                   Dispatcher dispatcher) const noexcept {
  if (ep <= 1) return 0;
  const Calibration& c = calibration_;
  const int domain = std::max(cluster_.nvlink_domain, 1);
  const double k = workload_.model.top_k;
  const double in_domain =
      std::clamp(static_cast<double>(domain / etp), 1.0, static_cast<double>(ep));
  const double domains = std::ceil(ep / in_domain);
  double local_copies = k * (in_domain - 1.0) / ep;
  double remote_copies = k * (domains - 1.0) / domains;
  double eff = c.moe_a2a_eff;
  switch (dispatcher) {
    case Dispatcher::alltoall:
    case Dispatcher::einsum:  // XLA's all-to-all of the einsum's expert-major buffer
      break;
    case Dispatcher::allgather:  // every rank receives every token of the group
      local_copies = in_domain - 1.0;
      remote_copies = ep - in_domain;
      break;
    case Dispatcher::deepep:
    case Dispatcher::hybridep:  // once per distinct remote domain, forwarded there over NVLink
      remote_copies = (domains - 1.0) * (1.0 - std::pow(1.0 - 1.0 / domains, k));
      eff = dispatcher == Dispatcher::deepep ? c.moe_deepep_eff : c.moe_hybridep_eff;
      break;
  }
  const bool crosses = domains > 1;
  const double scale_up =
      detail::scale_up_bytes_per_s(cluster_, nvlink_bytes_per_s_, etp, ep, Traffic::all_to_all);
  // DeepEP and HybridEP send a token to the GPU of its own rail in the remote domain and forward
  // it there over NVLink: their traffic stays on its rail.
  const double scale_out =
      scale_out_.non_blocking || !crosses
          ? inter_node_bytes_per_s_
          : detail::placed_scale_out_bytes_per_s(scale_out_, etp, ep, Traffic::all_to_all,
                                                 inter_node_bytes_per_s_, scale_up,
                                                 detail::fused_dispatch(dispatcher));
  const double one = std::max(token_bytes * local_copies / (scale_up * eff),
                              crosses ? token_bytes * remote_copies / (scale_out * eff) : 0.0) +
                     (crosses ? inter_node_latency_s_ : nvlink_latency_s_);
  return 2.0 * (1.0 - c.moe_a2a_overlap) * one;
}

}  // namespace clustersweep::estimator
