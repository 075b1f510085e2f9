#pragma once
// The pipeline (Narayanan et al. 2021; docs/estimator.md, "Pipeline splits", "Pipeline"): with T
// the critical stage's time per micro-batch and P its point-to-point time (2 v sends of
// b s_c h / (t if sequence parallel) activations on the pipeline group's link, less pp_overlap of
// them with pp_comm_overlap),
//   pipeline = m (T + P) + (p - 1)/v (T + P)     the second term is the (interleaved) bubble.
// The critical stage is the slower of a middle stage and the last stage (its layers + the logit
// layer); how many layer slots it has depends on the pipeline split, as Megatron-Core places them:
// layers/p; (layers + 2)/p when the embedding and the loss take a slot each; ceil(layers/(p v)) a
// chunk with uneven first and last stages. Defined inline: estimate() calls them per plan. Not
// part of the estimator's API.
#include <algorithm>

#include "estimator/detail/collectives.h"
#include "estimator/detail/step.h"
#include "estimator/estimator.h"

namespace clustersweep::estimator {

struct Estimator::PipelineStage {
  Parts parts;           // the critical stage, one micro-batch
  double mb_s = 0;       // their sum
  double p2p_mb_s = 0;   // pipeline sends per micro-batch
  double bubble_mb = 0;  // the fill and drain in micro-batches
};

inline void Estimator::stage_slots(StepShape& s) const noexcept {
  const Plan& plan = s.plan;
  const int layers = workload_.model.layers;
  const int chunks = plan.pp * plan.vp;
  s.embedding_slots = 0;
  s.slots = static_cast<double>(layers) / plan.pp;
  switch (plan.pipeline_split) {
    case PipelineSplit::even:
      break;
    case PipelineSplit::embedding_loss:
      s.embedding_slots = 1;
      s.slots = (layers + 2.0) / plan.pp;
      break;
    case PipelineSplit::uneven:
      s.slots = static_cast<double>((layers + chunks - 1) / chunks) * plan.vp;
      break;
  }
  s.last_stage_layers = s.slots - s.embedding_slots;
}

inline Estimator::PipelineStage Estimator::critical_stage(const StepShape& s, const Parts& layer,
                                                          const Parts& logit) const noexcept {
  const Plan& plan = s.plan;
  PipelineStage stage;
  stage.parts = s.last_stage_layers * layer + logit;
  // A stage of `slots` layers exists unless the only other stage is the first, which gives a
  // slot to the embedding.
  if (plan.pp > 1 && (plan.pp > 2 || s.embedding_slots == 0)) {
    const Parts middle = s.slots * layer;
    if (middle.sum() > stage.parts.sum()) stage.parts = middle;
  }
  stage.mb_s = stage.parts.sum();
  if (plan.pp > 1) {
    double pp_bw = 0, pp_alpha = 0;
    link(rank_strides(plan).pp, plan.pp, pp_bw, pp_alpha, Traffic::p2p);
    const double bytes = s.tokens * workload_.model.hidden * act_bytes_ / s.sp_div;
    stage.p2p_mb_s = (plan.stack.pp_comm_overlap ? 1.0 - calibration_.pp_overlap : 1.0) * 2.0 *
                     plan.vp * (bytes / pp_bw + pp_alpha);
  }
  stage.bubble_mb = plan.pp > 1 ? (plan.pp - 1.0) / plan.vp : 0.0;
  return stage;
}

// Parameters of the critical stage: the last stage's layers, `embedding` and `last_extra`, or a
// middle stage's. With one stage it holds both the input embedding and the output layer.
inline double Estimator::stage_params(const StepShape& s, double per_layer, double embedding,
                                      double last_extra) const noexcept {
  double params = s.last_stage_layers * per_layer + embedding + last_extra;
  if (s.plan.pp == 1)
    params += embedding;  // input embedding and output layer
  else if (s.plan.pp > 2 || s.embedding_slots == 0)
    params = std::max(params, s.slots * per_layer);
  return params;
}

}  // namespace clustersweep::estimator
