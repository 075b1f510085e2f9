#pragma once
// Data parallelism and ZeRO (Rajbhandari et al. 2020; docs/estimator.md, "Data parallelism and
// ZeRO", "The software stack"). Gradients are reduced over the d c ranks holding the same weights
// (stride t), expert gradients over the edp ranks holding the same experts (stride etp ep), one
// reduction when the two groups coincide. Each transfer may hide behind a window
// w = dp_overlap x T of a micro-batch's backward (none with dp_overlap off); m micro-batches a
// step:
//   ZeRO 0, 1  an all-reduce (or reduce-scatter + all-gather) a step:  max(0, AR - w)
//   ZeRO 2     a reduce-scatter a micro-batch and an all-gather a step:
//              (m-1) max(0, RS - w) + max(0, RS + AG - w)
//   ZeRO 3     2 all-gathers and a reduce-scatter a micro-batch:  m max(0, 2 AG + RS - w)
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
    case 1:  // reduce-scatter + all-gather (Rajbhandari et al. 2020): the all-reduce's volume;
             // the all-gather of the updated parameters waits for the optimizer unless it is
             // overlapped with the next forward (Megatron's overlap_param_gather)
      if (gather_overlap) {
        cost.per_window = all_reduce_s(grads, group, bw, alpha);
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
                // micro-batch
      cost.per_window =
          2.0 * all_gather_s(params, group, bw, alpha) + all_gather_s(grads, group, bw, alpha);
      cost.exposed = micro_batches * std::max(0.0, cost.per_window - window);
      break;
    }
  }
  return cost;
}

// `effective_mb_s`: a micro-batch's time, the slower of its compute and its tier traffic.
inline Estimator::DataParallel Estimator::data_parallel(const StepShape& s, const GpuParams& p,
                                                        double effective_mb_s) const noexcept {
  const Plan& plan = s.plan;
  const int etp = plan.etp, ep = plan.ep;
  const RankStrides strides = rank_strides(plan);
  const bool gather_overlap = plan.stack.param_gather_overlap;
  const double window = (plan.stack.dp_overlap ? calibration_.dp_overlap : 0.0) * effective_mb_s;
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
