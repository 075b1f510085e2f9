#pragma once
// Data parallelism and ZeRO (Rajbhandari et al. 2020; docs/estimator.md, "Data parallelism and
// ZeRO", "The software stack"). Gradients are reduced over the d c ranks holding the same weights
// (stride t), expert gradients over the edp ranks holding the same experts (stride etp ep), one
// reduction when the two groups coincide. Each transfer may hide behind a window
// w = dp_overlap x T of a micro-batch's backward (none with dp_overlap off); m micro-batches a
// step; gradients as the stack keeps them (grad_bytes: fp32 with grad_reduce_fp32), parameters
// 16-bit:
//   ZeRO 0     an all-reduce of the gradients a step:  max(0, AR - w)
//   ZeRO 1     a reduce-scatter of the gradients and an all-gather of the parameters a step:
//              max(0, RS + AG - w)
//   ZeRO 2     a reduce-scatter a micro-batch and an all-gather a step:
//              (m-1) max(0, RS - w) + max(0, RS + AG - w)
//   ZeRO 3     2 all-gathers and a reduce-scatter a micro-batch:  m max(0, 2 AG + RS - w3), the
//              prefetched gathers behind the rest of the micro-batch T (the forward) as well as
//              the backward does, w3 = w + c (T - w) with c = dp_overlap: below T, so a shorter
//              micro-batch never shortens the step by exposing more
// With param_gather_overlap off, the all-gather of the updated parameters (ZeRO 1, 2) waits for
// the optimizer, outside any window. Defined inline: estimate() calls them per plan. Not part of
// the estimator's API.
#include <algorithm>

#include "estimator/detail/collectives.h"
#include "estimator/detail/memory.h"
#include "estimator/detail/step.h"
#include "estimator/estimator.h"

namespace clustersweep::estimator {

struct Estimator::DataParallel {
  DpCost dense;
  DpCost expert;
};

inline Estimator::DpCost Estimator::dp_cost_s(int zero, double grads, double params, int group,
                                              int stride, double window, double micro_batches,
                                              bool gather_overlap) const noexcept {
  using detail::all_gather_s;
  using detail::all_reduce_s;
  DpCost cost;
  if (group <= 1) return cost;
  double bw = 0, alpha = 0;
  link(stride, group, bw, alpha);
  switch (zero) {
    case 0:  // one all-reduce after the last micro-batch's backward
      cost.per_window = all_reduce_s(grads, group, bw, alpha);
      cost.exposed = std::max(0.0, cost.per_window - window);
      break;
    case 1:  // reduce-scatter of the (fp32) gradients + all-gather of the updated 16-bit
             // parameters (Rajbhandari et al. 2020); the all-gather waits for the optimizer
             // unless it is overlapped with the next forward (Megatron's overlap_param_gather)
      if (gather_overlap) {
        cost.per_window =
            all_gather_s(grads, group, bw, alpha) + all_gather_s(params, group, bw, alpha);
        cost.exposed = std::max(0.0, cost.per_window - window);
      } else {
        cost.per_window = all_gather_s(grads, group, bw, alpha);
        cost.exposed =
            std::max(0.0, cost.per_window - window) + all_gather_s(params, group, bw, alpha);
      }
      break;
    case 2: {  // gradients sharded: reduce-scatter every micro-batch, gather params once;
               // the gather shares the last micro-batch's window with its reduce-scatter
      const double rs = all_gather_s(grads, group, bw, alpha);
      const double ag = all_gather_s(params, group, bw, alpha);
      cost.per_window = rs;
      cost.exposed =
          (micro_batches - 1.0) * std::max(0.0, rs - window) +
          (gather_overlap ? std::max(0.0, rs + ag - window) : std::max(0.0, rs - window) + ag);
      break;
    }
    default: {  // parameters sharded: gather forward and backward, reduce-scatter, per
                // micro-batch (the window: zero3_window)
      cost.per_window =
          2.0 * all_gather_s(params, group, bw, alpha) + all_gather_s(grads, group, bw, alpha);
      cost.exposed = micro_batches * std::max(0.0, cost.per_window - window);
      break;
    }
  }
  return cost;
}

// The window of ZeRO-3's transfers: the backward's `window` = c T and c of the rest of the
// micro-batch of time `micro_batch_s` = T.
inline double zero3_window(double window, double micro_batch_s) noexcept {
  const double c = micro_batch_s > 0 ? std::min(window / micro_batch_s, 1.0) : 0.0;
  return window + c * std::max(0.0, micro_batch_s - window);
}

// `effective_mb_s`: a micro-batch's time, the slower of its compute and its tier traffic.
inline Estimator::DataParallel Estimator::data_parallel(const StepShape& s, const GpuParams& p,
                                                        double effective_mb_s) const noexcept {
  const Plan& plan = s.plan;
  const int etp = plan.etp, ep = plan.ep;
  const RankStrides strides = rank_strides(plan);
  const bool gather_overlap = plan.stack.param_gather_overlap;
  double window = (plan.stack.dp_overlap ? calibration_.dp_overlap : 0.0) * effective_mb_s;
  if (plan.zero >= 3) window = zero3_window(window, effective_mb_s);
  DataParallel dp;
  if (p.edp_group == p.dp_group && etp * ep == plan.tp) {
    // The experts are replicated over the same ranks as the rest: one reduction of both.
    dp.dense = dp_cost_s(plan.zero, p.grad_total + p.expert_grad_total,
                         p.param_total + p.expert_param_total, p.dp_group, strides.weights, window,
                         s.micro_batches, gather_overlap);
  } else {
    // Expert gradients share the backward window with the others.
    dp.dense = dp_cost_s(plan.zero, p.grad_total, p.param_total, p.dp_group, strides.weights,
                         window, s.micro_batches, gather_overlap);
    dp.expert = dp_cost_s(plan.zero, p.expert_grad_total, p.expert_param_total, p.edp_group,
                          strides.expert_dp, std::max(0.0, window - dp.dense.per_window),
                          s.micro_batches, gather_overlap);
  }
  return dp;
}

}  // namespace clustersweep::estimator
