// The step model of docs/estimator.md, assembled: the constructor precomputes what depends only on
// the workload and the cluster; estimate() puts together the parts of one plan's step, each in the
// file of its mechanism (estimator/detail/*.h: collectives, attention, experts, host, quantize,
// layer, pipeline, memory, data_parallel, energy), as
//   step = m (T + P) + bubble + exposed DP + optimizer + offload + per-step overhead
// with T the critical stage's time per micro-batch (the slower of compute and tier traffic) and P
// its pipeline sends. The parts are inline so that estimate() compiles as one function.
#include "estimator/estimator.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "estimator/detail/attention.h"
#include "estimator/detail/collectives.h"
#include "estimator/detail/data_parallel.h"
#include "estimator/detail/layer.h"
#include "estimator/detail/memory.h"
#include "estimator/detail/model_counts.h"
#include "estimator/detail/pipeline.h"
#include "estimator/detail/step.h"

namespace clustersweep::estimator {

using detail::expert_params_per_layer;
using detail::is_fp32;
using detail::is_low_precision;
using detail::mlp_matrices;
using detail::moe_fraction;
using detail::mtp_params;
using detail::non_expert_params_per_layer;
using detail::qk_dim;
using detail::qkv_width;
using detail::v_dim;

Estimator::Estimator(const Workload& workload, const Cluster& cluster,
                     const Calibration& calibration)
    : workload_(workload), cluster_(cluster), calibration_(calibration) {
  const Model& m = workload_.model;
  const Precision p = workload_.precision;
  params_per_layer_ = params_per_layer(m);
  dense_params_per_layer_ = non_expert_params_per_layer(m);
  expert_params_per_layer_ = expert_params_per_layer(m);
  mtp_params_ = mtp_params(m);
  moe_fraction_ = moe_fraction(m);
  embedding_params_ = static_cast<double>(m.vocab) * m.hidden;
  power_ = StepPowerModel(cluster_, calibration_);
  nominal_peak_flops_ = cluster_.gpu.peak_flops[static_cast<int>(p)];
  // Under a power cap the tensor cores run at the capped clock.
  peak_flops_ = nominal_peak_flops_ * power_.gemm_clock();
  // Fused attention runs in 16-bit even when the GEMMs run in fp8/fp4 (Transformer Engine's
  // default); fp32 training runs it at the training precision.
  attention_peak_ =
      is_low_precision(p)
          ? cluster_.gpu.peak_flops[static_cast<int>(Precision::bf16)] * power_.gemm_clock()
          : peak_flops_;
  if (attention_peak_ <= 0) attention_peak_ = peak_flops_;
  gemm_eff_scale_ =
      calibration_.gemm_eff_max * (is_low_precision(p) ? calibration_.low_precision_gemm_eff : 1.0);
  act_bytes_ = is_fp32(p) ? 4 : 2;
  weight_bytes_ = is_fp32(p) ? 4 : 2;
  grad_bytes_ = is_fp32(p) ? 4 : 2;
  // fp32 master weights + Adam m and v; fp32 training needs no separate master copy.
  optimizer_bytes_ = is_fp32(p) ? 8 : 12;
  // LoRA trains only its adapters: the frozen weights need no weight-gradient GEMM, gradient,
  // optimizer state or update. The adapters' own GEMMs (rank r) are negligible beside the base's.
  if (workload_.lora_rank > 0) {
    const double per_layer = workload_.lora_rank * (m.hidden + qkv_width(m)) +
                             workload_.lora_rank * (m.heads * v_dim(m) + m.hidden);
    trainable_ = std::min(1.0, per_layer * m.layers / total_params(m));
    gemm_passes_ = 2;
  }
  // fp16 training keeps fp16 gradients (loss scaling; Megatron-LM does not force fp32 there).
  fp32_grad_bytes_ = trainable_ * (p == Precision::fp16 ? grad_bytes_ : 4.0);
  grad_bytes_ *= trainable_;
  update_bytes_ = trainable_ * (2.0 * optimizer_bytes_ + weight_bytes_);
  optimizer_bytes_ *= trainable_;
  hbm_bytes_per_s_ = cluster_.gpu.hbm_bytes_per_s * calibration_.hbm_eff;
  nvlink_bytes_per_s_ = cluster_.nvlink_bytes_per_s * calibration_.nvlink_eff;
  inter_node_bytes_per_s_ = cluster_.inter_node_bytes_per_s * calibration_.inter_node_eff;
  // The slowest link a group spans: a group leaving the NVLink domain is bound by scale-out.
  inter_node_bytes_per_s_ = std::min(inter_node_bytes_per_s_, nvlink_bytes_per_s_);
  scale_out_ = detail::scale_out_levels(cluster_, calibration_.network);
  double expansion = cluster_.expansion_bytes_per_s;
  if (expansion <= 0 && cluster_.expansion_bytes > 0)
    expansion = calibration_.default_expansion_gbytes_per_s * 1e9;
  expansion_bytes_per_s_ = expansion * calibration_.expansion_eff;
  nvlink_latency_s_ =
      cluster_.nvlink_latency_s > 0 ? cluster_.nvlink_latency_s : calibration_.nvlink_latency_s;
  inter_node_latency_s_ = cluster_.inter_node_latency_s > 0 ? cluster_.inter_node_latency_s
                                                            : calibration_.inter_node_latency_s;
  // Keys a query attends to, mean over layers: the causal half of the sequence when the kernels
  // skip the masked half, at most the window in windowed layers.
  const double causal = calibration_.causal_attention_skip > 0 ? 0.5 : 1.0;
  const double full_keys = causal * workload_.seq_len;
  const double windowed =
      m.layers > 0 ? std::min(1.0, static_cast<double>(m.sliding_window_layers) / m.layers) : 0.0;
  const double window_keys =
      m.sliding_window > 0 ? std::min(full_keys, static_cast<double>(m.sliding_window)) : full_keys;
  attention_keys_ = (1.0 - windowed) * full_keys + windowed * window_keys;
  qkv_out_ = qkv_width(m);
  qk_dim_ = qk_dim(m);
  v_dim_ = v_dim(m);
  attn_out_in_ = m.heads * v_dim_;
  mlp_matrices_ = mlp_matrices(m);
  mlp_in_out_ = (m.mlp == Mlp::swiglu ? 2.0 : 1.0) * m.ffn_hidden;
  // Forward elementwise traffic per token in elements (docs/estimator.md): two layer norms (read
  // + write: 4 h), two bias-dropout-residual adds (read 2, write 1, 1-byte mask: 7 h), and the
  // activation function (gelu: read + write f; SwiGLU: read 2 f, write f).
  elementwise_h_ = 11.0;
  elementwise_f_ = m.mlp == Mlp::swiglu ? 3.0 : 2.0;
  elementwise_h_ *= calibration_.memory_bound_scale;
  elementwise_f_ *= calibration_.memory_bound_scale;
  num_nodes_ = num_nodes(cluster_);
  model_flops_per_step_ = training_flops_per_step(workload_, Recompute::none) * gemm_passes_ / 3.0;
}

// Out of line, unlike the rest of link(): inlined, the placement made link() too large to inline
// into its callers, and every plan on the default network paid for the calls (bench: 6% more
// instructions an estimate).
[[gnu::noinline]] double Estimator::placed_scale_out_bytes_per_s(int stride, int n, Traffic traffic,
                                                                 double scale_up) const noexcept {
  if (static_cast<std::int64_t>(stride) * n <= std::max(cluster_.nvlink_domain, 1))
    return inter_node_bytes_per_s_;
  return detail::placed_scale_out_bytes_per_s(scale_out_, stride, n, traffic,
                                              inter_node_bytes_per_s_, scale_up);
}

// The structural rules (heads, layers, batch, sequence divisibility...) are spaces::check_plan's,
// which every command applies before estimating. This guard only keeps a plan that skipped it
// from dividing by zero or indexing past the model: it is not the rule check.
inline bool Estimator::well_formed(const Plan& plan) const noexcept {
  const Model& m = workload_.model;
  const int chunks = plan.pp * plan.vp;
  return plan.tp >= 1 && plan.pp >= 1 && plan.dp >= 1 && plan.cp >= 1 && plan.vp >= 1 &&
         plan.micro_batch >= 1 && plan.zero >= 0 && plan.zero <= 3 && m.layers >= 1 &&
         chunks <= m.layers + 2 && (plan.offload == Offload::none || expansion_bytes_per_s_ > 0) &&
         m.hidden >= 1 && m.heads >= 1 && m.kv_heads >= 1 && workload_.seq_len >= plan.cp &&
         static_cast<std::int64_t>(plan.tp) * plan.pp * plan.dp * plan.cp == cluster_.num_gpus &&
         workload_.global_batch >= static_cast<std::int64_t>(plan.dp) * plan.micro_batch &&
         plan.ep >= 1 && plan.etp >= 1 && plan.capacity_factor >= 0 &&
         (static_cast<std::int64_t>(plan.tp) * plan.cp * plan.dp) %
                 (static_cast<std::int64_t>(plan.ep) * plan.etp) ==
             0 &&
         (is_moe(m) ? m.num_experts % plan.ep == 0 && m.top_k >= 1 && m.moe_ffn_hidden >= 1
                    : plan.ep == 1);
}

inline Estimator::StepShape Estimator::step_shape(const Plan& plan) const noexcept {
  const Calibration& c = calibration_;
  StepShape s{.plan = plan};
  stage_slots(s);
  const std::int64_t replica_batch = static_cast<std::int64_t>(plan.dp) * plan.micro_batch;
  s.t = plan.tp;
  s.sp = plan.sequence_parallel && plan.tp > 1;
  s.sp_div = s.sp ? s.t : 1.0;
  s.seq = workload_.seq_len;
  s.s_local = s.seq / plan.cp;
  s.tokens = plan.micro_batch * s.s_local;
  s.micro_batches = static_cast<double>(workload_.global_batch / replica_batch);
  // Two all-reduces per layer forward and two backward (Shoeybi et al. 2019); sequence
  // parallelism replaces each by an all-gather + reduce-scatter of the same volume. Without
  // userbuffers only Megatron's asynchronous all-reduce under the weight-gradient GEMM hides.
  double tp_bw = 0, tp_alpha = 0;
  link(1, plan.tp, tp_bw, tp_alpha);
  s.tp_hidden =
      plan.stack.tp_comm_overlap ? c.tp_overlap : std::min(c.tp_overlap_off, c.tp_overlap);
  s.tp_one =
      (1.0 - s.tp_hidden) * detail::all_reduce_s(s.tokens * workload_.model.hidden * act_bytes_,
                                                 plan.tp, tp_bw, tp_alpha);
  s.kernel = attention_kernel(plan.stack);
  return s;
}

// Each part is the time it adds to the step: what overlap hides is already taken out.
inline StepTime Estimator::step_time(const StepShape& s, const PipelineStage& stage,
                                     double effective_mb_s, const TierTraffic& tier,
                                     const DataParallel& dp) const noexcept {
  const double pipeline_mb = s.micro_batches;
  StepTime st;
  st.compute_s = pipeline_mb * stage.parts.compute;
  st.memory_bound_s = pipeline_mb * stage.parts.memory;
  st.tp_comm_s = pipeline_mb * stage.parts.tp;
  st.cp_comm_s = pipeline_mb * stage.parts.cp;
  st.pp_p2p_s = pipeline_mb * stage.p2p_mb_s;
  st.pp_bubble_s = stage.bubble_mb * (effective_mb_s + stage.p2p_mb_s);
  st.ep_a2a_s = pipeline_mb * stage.parts.ep;
  st.dp_exposed_s = dp.dense.exposed;
  st.edp_exposed_s = dp.expert.exposed;
  st.optimizer_s = tier.optimizer_s;
  st.offload_s = tier.offload_step_s + pipeline_mb * (effective_mb_s - stage.mb_s);
  st.host_s = pipeline_mb * stage.parts.host;
  st.overhead_s = pipeline_mb * stage.parts.overhead + calibration_.per_step_overhead_s;
  st.total_s = st.compute_s + st.memory_bound_s + st.tp_comm_s + st.cp_comm_s + st.pp_p2p_s +
               st.pp_bubble_s + st.ep_a2a_s + st.dp_exposed_s + st.edp_exposed_s + st.optimizer_s +
               st.offload_s + st.host_s + st.overhead_s;
  return st;
}

namespace {
Estimate infeasible(Infeasible reason) {
  Estimate e;
  e.reason = reason;
  return e;
}
}  // namespace

Estimate Estimator::estimate(const Plan& plan) const noexcept {
  if (!well_formed(plan)) return infeasible(Infeasible::invalid_plan);
  if (peak_flops_ <= 0) return infeasible(Infeasible::precision_unsupported);
  const StepShape shape = step_shape(plan);
  const LayerForward forward = layer_forward(shape);
  const Parts layer = layer_parts(shape, forward);
  const PipelineStage stage = critical_stage(shape, layer, logit_parts(shape, layer));
  const GpuParams params = gpu_params(shape);
  const Activations stashed = activations(shape, forward.routed_rows);
  Estimate e;
  e.memory = memory(shape, params, stashed);
  const TierTraffic tier = tier_traffic(plan, params, stashed, e.memory);
  // A micro-batch takes as long as the slower of its compute and its tier traffic.
  const double effective_mb_s = std::max(stage.mb_s, tier.offload_mb_s);
  e.time =
      step_time(shape, stage, effective_mb_s, tier, data_parallel(shape, params, effective_mb_s));
  const StepTime& st = e.time;
  e.model_flops_per_step = model_flops_per_step_;
  const double tokens_per_step = static_cast<double>(workload_.global_batch) * shape.seq;
  e.tokens_per_s = tokens_per_step / st.total_s;
  e.mfu = e.model_flops_per_step / (st.total_s * cluster_.num_gpus * nominal_peak_flops_);
  // The calibrated framework overhead is time the modelled kernels do not explain: kernels
  // running below the model's efficiency, at about memory-bound power.
  e.power = power_.step({.gemm = st.compute_s,
                         .memory = st.memory_bound_s + st.optimizer_s + st.overhead_s,
                         .comm = st.tp_comm_s + st.cp_comm_s + st.pp_p2p_s + st.ep_a2a_s +
                                 st.dp_exposed_s + st.edp_exposed_s + st.offload_s,
                         .wait = st.pp_bubble_s + st.host_s});
  e.energy_per_step_j = e.power.it_j;
  // A group that must leave its NVLink domain over a zero-bandwidth network (or any other zero
  // bandwidth the step needs) cannot run.
  if (!std::isfinite(st.total_s)) return infeasible(Infeasible::invalid_plan);
  const bool fits = e.memory.hbm_bytes <= cluster_.hbm_bytes &&
                    e.memory.expansion_bytes <= cluster_.expansion_bytes;
  e.feasible = fits;
  e.reason = fits ? Infeasible::none : Infeasible::out_of_memory;
  return e;
}

double Estimator::checkpoint_bytes() const noexcept {
  return total_params(workload_.model) * (trainable_ * weight_bytes_ + optimizer_bytes_);
}

Estimate estimate(const Workload& workload, const Cluster& cluster, const Plan& plan,
                  const Calibration& calibration) {
  return Estimator(workload, cluster, calibration).estimate(plan);
}

std::array<int, kMaxTorusDims> balanced_torus(int chips, int dims) noexcept {
  std::array<int, kMaxTorusDims> shape{1, 1, 1};
  dims = std::clamp(dims, 1, kMaxTorusDims);
  std::array<int, 32> primes{};  // of chips, smallest first: an int has at most 31
  int count = 0;
  for (int rest = std::max(chips, 1), p = 2; rest > 1;) {
    if (static_cast<std::int64_t>(p) * p > rest) p = rest;
    if (rest % p == 0) {
      primes[count++] = p;
      rest /= p;
    } else {
      ++p;
    }
  }
  for (int i = count - 1; i >= 0; --i)
    *std::min_element(shape.begin(), shape.begin() + dims) *= primes[i];
  std::sort(shape.begin(), shape.begin() + dims);
  return shape;
}

}  // namespace clustersweep::estimator
