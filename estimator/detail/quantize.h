#pragma once
// Low-precision operands (docs/estimator.md, "Low-precision operands", "The software stack"):
// fp8/fp4 GEMMs quantize their activation operands forward and their output gradients backward
// (Transformer Engine), so one layer and micro-batch moves
//   bytes per element x tokens x (the inputs and output widths of every GEMM of the layer)
// through HBM, scaled by memory_bound_scale like the other counted traffic. Delayed scaling reads
// 16 bits and writes 8 (3 bytes), current and blockwise scaling read the tensor once more for its
// amax (5), MXFP8 writes the row- and column-wise copies its backward needs (4); tensor cores that
// take only the TN layout (Hopper) need a transposed 8-bit copy of every operand (+1, the
// cast-transpose). Weights are quantized once per step and cached across micro-batches. Defined
// inline: estimate() calls them per plan. Not part of the estimator's API.
#include "estimator/detail/attention.h"
#include "estimator/detail/experts.h"
#include "estimator/detail/model_counts.h"
#include "estimator/detail/step.h"
#include "estimator/estimator.h"

namespace clustersweep::estimator {
namespace detail {

inline double quantize_bytes_per_element(Fp8Recipe recipe, bool tn_only) {
  switch (recipe) {
    case Fp8Recipe::delayed:
      return tn_only ? 4.0 : 3.0;
    case Fp8Recipe::current:
    case Fp8Recipe::blockwise:
      return tn_only ? 6.0 : 5.0;
    case Fp8Recipe::mxfp8:
      return 4.0;
  }
  return 3.0;
}

}  // namespace detail

// `moe_operands`: the elements per token an MoE layer casts (MoeForward::operands).
inline double Estimator::quantize_s(const StepShape& s, double moe_operands) const noexcept {
  if (!detail::is_low_precision(workload_.precision)) return 0;
  const double moe = moe_fraction_;
  const double operands =
      attention_operands(s.t) + (1.0 - moe) * dense_mlp_operands(s.t) + moe * moe_operands;
  return detail::quantize_bytes_per_element(s.plan.stack.fp8_recipe, cluster_.gpu.fp8_tn_only) *
         s.tokens * operands * calibration_.memory_bound_scale / hbm_bytes_per_s_;
}

}  // namespace clustersweep::estimator
