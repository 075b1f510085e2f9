#pragma once
// What every part of a step is built from (docs/estimator.md, "Step time"): the sizes of one
// micro-batch of a plan on the critical pipeline stage, the time parts a layer, the logit layer
// and a stage add up to, and the time of a GEMM of M x K by K x N,
//   2 M K N / (peak x e),   e = gemm_eff_max x D / (D + gemm_half_dim) [x low_precision_gemm_eff]
// with D the smallest of the three dimensions: small GEMMs fill the GPU poorly (wave quantisation,
// memory-bound small tiles). Defined inline: every part of a layer calls it, per plan.
// Not part of the estimator's API.
#include <algorithm>

#include "estimator/estimator.h"

namespace clustersweep::estimator {

struct Estimator::StepShape {
  const Plan& plan;
  double t = 1;                  // tensor-parallel degree
  bool sp = false;               // sequence parallelism (only with tp > 1)
  double sp_div = 1;             // what sequence parallelism splits the replicated tensors by
  double seq = 0;                // the full sequence
  double s_local = 0;            // this rank's part of it (context parallelism)
  double tokens = 0;             // of one micro-batch, local
  double micro_batches = 0;      // per step and pipeline
  int embedding_slots = 0;       // layer slots the embedding and the loss take on their stages
  double slots = 0;              // layer slots of the critical stage (docs/estimator.md)
  double last_stage_layers = 0;  // transformer layers of the last stage
  double tp_hidden = 0;          // the fraction of the tensor-parallel collectives hidden
  double tp_one = 0;             // one exposed tensor-parallel all-reduce of the activations
  AttentionKernelCost kernel{};  // the plan's attention kernel
};

// Time parts of one transformer layer (or the logit layer, or a stage) for one micro-batch,
// forward + backward (+ recompute), on one GPU.
struct Estimator::Parts {
  double compute = 0;
  double memory = 0;
  double tp = 0;
  double cp = 0;
  double ep = 0;    // expert all-to-all, exposed
  double host = 0;  // kernel launches and syncs the GPU waits for
  double overhead = 0;
  double sum() const { return compute + memory + tp + cp + ep + host + overhead; }
  friend Parts operator*(double k, const Parts& p) {
    return {k * p.compute, k * p.memory, k * p.tp, k * p.cp, k * p.ep, k * p.host, k * p.overhead};
  }
  friend Parts operator+(const Parts& a, const Parts& b) {
    return {a.compute + b.compute, a.memory + b.memory,    a.tp + b.tp, a.cp + b.cp, a.ep + b.ep,
            a.host + b.host,       a.overhead + b.overhead};
  }
};

inline double Estimator::gemm_s(double rows, double k, double n) const noexcept {
  const double d = std::min(rows, std::min(k, n));
  const double eff = gemm_eff_scale_ * d / (d + calibration_.gemm_half_dim);
  return 2.0 * rows * k * n / (peak_flops_ * eff);
}

}  // namespace clustersweep::estimator
