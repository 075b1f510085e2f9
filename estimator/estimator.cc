// The step-time, memory and energy model of docs/estimator.md. Every equation there has its source;
// comments here say why a term is shaped the way it is.
#include "estimator/estimator.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <iterator>
#include <limits>

namespace clustersweep::estimator {
namespace {

bool is_low_precision(Precision p) { return p == Precision::fp8 || p == Precision::fp4; }
bool is_fp32(Precision p) { return p == Precision::fp32 || p == Precision::tf32; }

// ceil(log2(n)) for n >= 1: the depth of a binary tree over n ranks.
double tree_depth(int n) {
  return n <= 1 ? 0.0 : static_cast<double>(std::bit_width(static_cast<unsigned>(n - 1)));
}

// Alpha-beta collectives (Thakur, Rabenseifner & Gropp 2005). `bytes` is the full buffer; each
// returns the faster of ring and (double binary) tree, as NCCL picks per message size.
double all_reduce_s(double bytes, int n, double bytes_per_s, double alpha_s) {
  if (n <= 1) return 0;
  const double ring = 2.0 * (n - 1) / n * bytes / bytes_per_s + 2.0 * (n - 1) * alpha_s;
  const double tree = 2.0 * bytes / bytes_per_s + 2.0 * tree_depth(n) * alpha_s;
  return std::min(ring, tree);
}
// All-gather or reduce-scatter of a buffer of `bytes` in total (ring).
double all_gather_s(double bytes, int n, double bytes_per_s, double alpha_s) {
  if (n <= 1) return 0;
  return (n - 1.0) / n * bytes / bytes_per_s + (n - 1.0) * alpha_s;
}

// Time parts of one transformer layer (or the logit layer) for one micro-batch, forward +
// backward (+ recompute), on one GPU.
struct Parts {
  double compute = 0;
  double memory = 0;
  double tp = 0;
  double cp = 0;
  double ep = 0;    // expert all-to-all, exposed
  double host = 0;  // kernel launches and syncs the GPU waits for
  double overhead = 0;
  double sum() const { return compute + memory + tp + cp + ep + host + overhead; }
};
Parts operator*(double k, const Parts& p) {
  return {k * p.compute, k * p.memory, k * p.tp, k * p.cp, k * p.ep, k * p.host, k * p.overhead};
}
Parts operator+(const Parts& a, const Parts& b) {
  return {a.compute + b.compute, a.memory + b.memory,    a.tp + b.tp, a.cp + b.cp, a.ep + b.ep,
          a.host + b.host,       a.overhead + b.overhead};
}

// ---- token routing (docs/estimator.md, "Token routing")
// The busiest expert-parallel rank's routed rows as a multiple of the balanced share. Capacity
// routing pads every expert to its capacity (Megatron's moe_pad_expert_input_to_capacity, which
// static shapes need); forced balance gives every rank its share; learned routing leaves rank loads
// spread by load_cv, and the step waits for the largest of ep of them: for normal loads the
// expected maximum is about 1 + load_cv sqrt(2 ln ep).
double routed_load(const Plan& p, double load_cv) {
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

bool fused_dispatch(Dispatcher d) { return d == Dispatcher::deepep || d == Dispatcher::hybridep; }

// Bytes an 8-bit GEMM operand element costs to quantize (docs/estimator.md, "Low-precision
// operands"): delayed scaling reads 16 bits and writes 8 (3), current and blockwise scaling read
// the tensor once more for its amax (5), MXFP8 writes the row- and column-wise copies its backward
// needs (4); TN-only tensor cores (Hopper) need a transposed copy of every operand (+1).
double quantize_bytes_per_element(Fp8Recipe recipe, bool tn_only) {
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

// Kernels one layer launches per micro-batch, forward and backward (counted from Megatron-Core's
// transformer layer with Transformer Engine modules; docs/estimator.md, "Host overhead and CUDA
// graphs"): the attention block (norm, QKV, rotary, attention, projection, residual), a dense MLP,
// an MoE layer's router (GEMM, top-k, auxiliary loss, token counts), its dispatch and combine
// (permutations and the collectives; one fused kernel each way with DeepEP/HybridEP), and its
// grouped GEMM, which Transformer Engine launches expert by expert (fc1, activation, fc2 and
// their backward).
constexpr double kAttentionLaunches = 24;
constexpr double kMlpLaunches = 18;
constexpr double kRouterLaunches = 24;
constexpr double kDispatchLaunches = 24;
constexpr double kFusedDispatchLaunches = 8;
constexpr double kLaunchesPerLocalExpert = 8;

constexpr CalibrationField kFields[] = {
    {"gemm_eff_max", &Calibration::gemm_eff_max, 0.3, 1.0,
     "fraction of dense peak a large GEMM reaches"},
    {"gemm_half_dim", &Calibration::gemm_half_dim, 16, 2048,
     "smallest GEMM dimension at which a GEMM reaches half of gemm_eff_max"},
    {"attention_eff", &Calibration::attention_eff, 0.15, 1.0,
     "fraction of 16-bit peak the attention score/context matmuls reach"},
    {"hbm_eff", &Calibration::hbm_eff, 0.3, 1.0, "achieved fraction of HBM bandwidth"},
    {"nvlink_eff", &Calibration::nvlink_eff, 0.3, 1.0,
     "achieved fraction of NVLink bandwidth in collectives"},
    {"inter_node_eff", &Calibration::inter_node_eff, 0.2, 1.0,
     "achieved fraction of scale-out bandwidth in collectives"},
    {"expansion_eff", &Calibration::expansion_eff, 0, 0,
     "achieved fraction of expansion-tier bandwidth; not fitted (no published run uses the tier), "
     "set like hbm_eff's prior"},
    {"dp_overlap", &Calibration::dp_overlap, 0.0, 1.0,
     "fraction of a micro-batch's time that can hide data-parallel communication"},
    {"tp_overlap", &Calibration::tp_overlap, 0.0, 0.9,
     "fraction of tensor-parallel communication hidden behind GEMMs"},
    {"per_layer_overhead_s", &Calibration::per_layer_overhead_s, 0.0, 0.01,
     "framework time per layer per micro-batch (fwd+bwd) the GPU waits for whatever it runs"},
    {"per_step_overhead_s", &Calibration::per_step_overhead_s, 0.0, 2.0,
     "framework time per optimizer step"},
    {"launch_s", &Calibration::launch_s, 0.0, 1e-4,
     "host seconds to launch one kernel outside a CUDA graph (PyTorch dispatch and CUDA launch)"},
    {"tp_overlap_off", &Calibration::tp_overlap_off, 0.0, 0.9,
     "fraction of tensor-parallel communication hidden without userbuffers (at most tp_overlap)"},
    {"pp_overlap", &Calibration::pp_overlap, 0.0, 1.0,
     "fraction of the pipeline sends hidden with pp_comm_overlap"},
    {"flash2_attention_eff", &Calibration::flash2_attention_eff, 0.2, 1.0,
     "FlashAttention-2's attention efficiency relative to cuDNN's fused attention"},
    {"triton_attention_eff", &Calibration::triton_attention_eff, 0.2, 1.0,
     "Triton FlashAttention's attention efficiency relative to cuDNN's fused attention"},
    {"default_inter_node_gbps_per_gpu", &Calibration::default_inter_node_gbps_per_gpu, 0, 0,
     "scale-out Gbit/s per GPU assumed when a run does not state it: one 400 Gbit/s NDR NIC per "
     "GPU, the DGX H100/B200 and GB200 NVL72 reference designs"},
    {"busy_power_fraction", &Calibration::busy_power_fraction, 0, 0,
     "GPU power while computing, fraction of TDP; not fitted (no power data), about what training "
     "draws per published DGX power traces"},
    {"low_precision_gemm_eff", &Calibration::low_precision_gemm_eff, 0.3, 1.0,
     "fp8/fp4 GEMM efficiency relative to 16-bit GEMM efficiency"},
    {"memory_bound_scale", &Calibration::memory_bound_scale, 0.25, 4.0,
     "multiplier on the counted elementwise HBM traffic"},
    {"flash_attention", &Calibration::flash_attention, 0, 0,
     "1 = fused attention (no s^2 tensors stored; FlashAttention, Dao et al. 2022, used by every "
     "current framework), 0 = unfused"},
    {"causal_attention_skip", &Calibration::causal_attention_skip, 0, 0,
     "1 = causal kernels skip the masked half of the score matrix (FlashAttention-2, cuDNN)"},
    {"workspace_bytes", &Calibration::workspace_bytes, 0, 0,
     "bytes per GPU for the CUDA context, cuBLAS/NCCL workspaces and allocator fragmentation "
     "(typical 1-3 GB)"},
    {"nvlink_latency_s", &Calibration::nvlink_latency_s, 0, 0,
     "seconds, alpha of one NVLink collective step when the cluster gives none (NCCL small-message "
     "latency, a few us)"},
    {"inter_node_latency_s", &Calibration::inter_node_latency_s, 0, 0,
     "seconds, alpha of one scale-out collective step when the cluster gives none (InfiniBand/RoCE "
     "NCCL hop, ~10 us)"},
    {"default_expansion_gbytes_per_s", &Calibration::default_expansion_gbytes_per_s, 0, 0,
     "expansion-tier GB/s per GPU assumed when a cluster gives a capacity but no bandwidth (0: "
     "such a tier cannot be used)"},
    {"nic_aggregation", &Calibration::nic_aggregation, 0.0, 1.0,
     "share of the NICs of a group's members inside one NVLink domain a collective drives"},
    {"dropout_masks", &Calibration::dropout_masks, 0, 0,
     "1 = 1-byte dropout masks are stored (GPT-3-era recipes, Korthikanti's count), 0 = no dropout "
     "(Llama, MPT, Nemotron recipes)"},
    {"interval_lo", &Calibration::interval_lo, 0, 0,
     "90% prediction interval of a dense transformer step: lowest measured / predicted"},
    {"interval_hi", &Calibration::interval_hi, 0, 0,
     "90% prediction interval of a dense transformer step: highest measured / predicted"},
    {"interval_widening", &Calibration::interval_widening, 0, 0,
     "exponent on every family's interval ratios for a point with few calibration runs like it"},
    // [moe]: from here on (kFirstMoeField).
    {"load_cv", &Calibration::moe_load_cv, 0.0, 1.0,
     "relative spread of the expert-parallel ranks' token loads under learned (dropless) routing"},
    {"grouped_gemm_eff", &Calibration::moe_grouped_gemm_eff, 0.3, 1.0,
     "efficiency of the grouped expert GEMMs relative to one GEMM of the per-expert size"},
    {"expert_half_rows", &Calibration::moe_expert_half_rows, 0.0, 2048.0,
     "tokens per local expert at which the grouped expert GEMMs lose half their efficiency"},
    {"a2a_eff", &Calibration::moe_a2a_eff, 0.2, 1.0,
     "achieved fraction of link bandwidth in the NCCL all-to-all and all-gather dispatchers"},
    {"deepep_eff", &Calibration::moe_deepep_eff, 0.2, 1.0,
     "achieved fraction of link bandwidth in DeepEP's dispatch and combine"},
    {"hybridep_eff", &Calibration::moe_hybridep_eff, 0.2, 1.0,
     "achieved fraction of link bandwidth in HybridEP's dispatch and combine"},
    {"a2a_overlap", &Calibration::moe_a2a_overlap, 0.0, 0.9,
     "fraction of the all-to-all hidden without a2a_overlap (shared experts during dispatch)"},
    {"permute_passes", &Calibration::moe_permute_passes, 0.0, 12.0,
     "HBM passes over the routed tokens for permutation and unpermutation, forward"},
    {"layer_overhead_s", &Calibration::moe_layer_overhead_s, 0.0, 0.005,
     "host syncs per MoE layer per micro-batch (fwd+bwd), which a CUDA graph of the layer removes"},
    {"interval_lo", &Calibration::moe_interval_lo, 0, 0,
     "90% prediction interval of a MoE step: lowest measured / predicted"},
    {"interval_hi", &Calibration::moe_interval_hi, 0, 0,
     "90% prediction interval of a MoE step: highest measured / predicted"},
};
constexpr std::size_t kFirstMoeField = 31;
static_assert(std::string_view(kFields[kFirstMoeField].name) == "load_cv");

}  // namespace

const CalibrationField* calibration_fields_begin() noexcept { return std::begin(kFields); }
const CalibrationField* calibration_fields_end() noexcept { return kFields + kFirstMoeField; }
const CalibrationField* moe_calibration_fields_begin() noexcept { return kFields + kFirstMoeField; }
const CalibrationField* moe_calibration_fields_end() noexcept { return std::end(kFields); }

StepInterval step_interval(const Calibration& c, const Model& model) noexcept {
  return is_moe(model) ? StepInterval{c.moe_interval_lo, c.moe_interval_hi}
                       : StepInterval{c.interval_lo, c.interval_hi};
}

const char* to_string(Infeasible reason) noexcept {
  switch (reason) {
    case Infeasible::none:
      return "none";
    case Infeasible::degrees_mismatch:
      return "degrees_mismatch";
    case Infeasible::tp_not_dividing_heads:
      return "tp_not_dividing_heads";
    case Infeasible::pp_vp_not_dividing_layers:
      return "pp_vp_not_dividing_layers";
    case Infeasible::batch_not_divisible:
      return "batch_not_divisible";
    case Infeasible::cp_not_dividing_seq:
      return "cp_not_dividing_seq";
    case Infeasible::precision_unsupported:
      return "precision_unsupported";
    case Infeasible::out_of_memory:
      return "out_of_memory";
    case Infeasible::invalid_plan:
      return "invalid_plan";
  }
  return "unknown";
}

const char* to_string(Precision p) noexcept {
  constexpr const char* names[] = {"fp32", "tf32", "fp16", "bf16", "fp8", "fp4"};
  return names[static_cast<int>(p)];
}
const char* to_string(Mlp mlp) noexcept { return mlp == Mlp::swiglu ? "swiglu" : "gelu"; }
const char* to_string(Recompute r) noexcept {
  constexpr const char* names[] = {"none", "selective", "full"};
  return names[static_cast<int>(r)];
}
const char* to_string(Offload o) noexcept {
  constexpr const char* names[] = {"none", "optimizer", "optimizer_activations", "all"};
  return names[static_cast<int>(o)];
}

const char* to_string(PipelineSplit split) noexcept {
  constexpr const char* names[] = {"even", "embedding_loss", "uneven"};
  return names[static_cast<int>(split)];
}

namespace {
template <class Enum, int N>
bool parse_name(std::string_view name, Enum& out) noexcept {
  for (int i = 0; i < N; ++i) {
    if (name == to_string(static_cast<Enum>(i))) {
      out = static_cast<Enum>(i);
      return true;
    }
  }
  return false;
}
}  // namespace

bool parse_precision(std::string_view name, Precision& out) noexcept {
  return parse_name<Precision, kNumPrecisions>(name, out);
}
bool parse_mlp(std::string_view name, Mlp& out) noexcept { return parse_name<Mlp, 2>(name, out); }
bool parse_recompute(std::string_view name, Recompute& out) noexcept {
  return parse_name<Recompute, 3>(name, out);
}
bool parse_offload(std::string_view name, Offload& out) noexcept {
  return parse_name<Offload, 4>(name, out);
}
bool parse_pipeline_split(std::string_view name, PipelineSplit& out) noexcept {
  return parse_name<PipelineSplit, kNumPipelineSplits>(name, out);
}

namespace {
double qk_dim(const Model& m) {
  return m.qk_head_dim > 0 ? m.qk_head_dim : static_cast<double>(m.hidden) / std::max(m.heads, 1);
}
double v_dim(const Model& m) {
  return m.v_head_dim > 0 ? m.v_head_dim : static_cast<double>(m.hidden) / std::max(m.heads, 1);
}
// Q, K and V output width of a standard (MHA/GQA) attention.
double qkv_width(const Model& m) {
  return m.heads * qk_dim(m) + static_cast<double>(m.kv_heads) * (qk_dim(m) + v_dim(m));
}
double mlp_matrices(const Model& m) { return m.mlp == Mlp::swiglu ? 3.0 : 2.0; }
double moe_fraction(const Model& m) {
  return m.layers > 0 ? static_cast<double>(moe_layers(m)) / m.layers : 0.0;
}
// Attention projection parameters of one layer (no norms): QKV and output, or MLA's down and up
// projections with their two LoRA norms (DeepSeek-V2 sec. 2.1).
double attention_params(const Model& m) {
  const double h = m.hidden, a = m.heads, qk = qk_dim(m), v = v_dim(m);
  if (!is_mla(m)) return h * qkv_width(m) + a * v * h;
  const double q =
      m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank * a * qk + m.q_lora_rank : h * a * qk;
  const double nope = qk - m.qk_rope_head_dim;
  const double kv = h * (m.kv_lora_rank + m.qk_rope_head_dim) +
                    static_cast<double>(m.kv_lora_rank) * a * (nope + v) + m.kv_lora_rank;
  return q + kv + a * v * h;
}
// MLP parameters of a dense layer, and of an MoE layer without / with only its routed experts.
double dense_mlp_params(const Model& m) { return mlp_matrices(m) * m.hidden * m.ffn_hidden; }
double moe_shared_params(const Model& m) {
  const double router = m.num_experts > 1 ? static_cast<double>(m.hidden) * m.num_experts : 0.0;
  return mlp_matrices(m) * m.hidden * m.shared_ffn_hidden + router;
}
double routed_expert_params(const Model& m) {
  return static_cast<double>(m.num_experts) * mlp_matrices(m) * m.hidden * m.moe_ffn_hidden;
}
// Mean over layers of the parameters outside the routed experts, and of the routed experts.
double non_expert_params_per_layer(const Model& m) {
  const double f = moe_fraction(m);
  return attention_params(m) + 2.0 * m.hidden + (1.0 - f) * dense_mlp_params(m) +
         f * moe_shared_params(m);
}
double expert_params_per_layer(const Model& m) { return moe_fraction(m) * routed_expert_params(m); }
// An MTP module: its layer (an MoE layer when the model has experts), the projection of
// [h; embedding] to h and two norms (DeepSeek-V3 sec. 2.2); embedding and output head shared.
double mtp_params(const Model& m) {
  const double mlp =
      is_moe(m) ? moe_shared_params(m) + routed_expert_params(m) : dense_mlp_params(m);
  return m.mtp_layers *
         (attention_params(m) + 2.0 * m.hidden + mlp + 2.0 * m.hidden * m.hidden + 2.0 * m.hidden);
}
// Forward GEMM FLOPs per token of one layer, mean over layers, for the parameters a token uses.
double layer_gemm_flops_per_token(const Model& m) {
  const double f = moe_fraction(m);
  const double mlp = (1.0 - f) * dense_mlp_params(m) +
                     f * mlp_matrices(m) * m.hidden *
                         (static_cast<double>(m.top_k) * m.moe_ffn_hidden + m.shared_ffn_hidden);
  return 2.0 * (attention_params(m) + mlp);
}
// Forward attention matmul FLOPs per token of one layer over the full s x s matrix (scores and
// context; Narayanan et al. count 4 s h for qk = v = h/heads).
double layer_attention_flops_per_token(const Model& m, double seq_len) {
  return 2.0 * seq_len * m.heads * (qk_dim(m) + v_dim(m));
}
}  // namespace

double params_per_layer(const Model& m) noexcept {
  return non_expert_params_per_layer(m) + expert_params_per_layer(m);
}

double total_params(const Model& m) noexcept {
  return m.layers * params_per_layer(m) + mtp_params(m) + 2.0 * m.vocab * m.hidden + m.hidden;
}

double active_params(const Model& m) noexcept {
  return m.layers * layer_gemm_flops_per_token(m) / 2.0 + 2.0 * m.vocab * m.hidden;
}

double megatron_flops_per_token(const Model& m, int seq_len) noexcept {
  // Term by term as Megatron-LM's transformer_flops(): 12 = 3 (fwd, wgrad, dgrad) x 2 (FMA) x 2
  // (GEMMs per block), the attention core counted over half the causal score matrix.
  const double h = m.hidden, s = seq_len, a = m.heads, L = m.layers, mtp = m.mtp_layers;
  const double gated = m.mlp == Mlp::swiglu ? 1.5 : 1.0;
  const double expansion = 12.0;
  const double n_moe = moe_layers(m) + (is_moe(m) ? mtp : 0.0);
  const double n_dense = (L - moe_layers(m)) + (is_moe(m) ? 0.0 : mtp);
  const double layers = L + mtp;
  // Keys per query: half the sequence (causal), the window in sliding-window layers (as
  // Megatron-LM counts GPT-OSS's window_size and window_attn_skip_freq).
  const double windowed = L > 0 ? std::min(1.0, m.sliding_window_layers / L) : 0.0;
  const double keys =
      (1.0 - windowed) * s / 2.0 +
      windowed * (m.sliding_window > 0 ? std::min(s / 2.0, 1.0 * m.sliding_window) : s / 2.0);
  double attention = 0;
  if (is_mla(m)) {
    const double rope = m.qk_rope_head_dim, nope = qk_dim(m) - rope, v = v_dim(m);
    const double q_term =
        m.q_lora_rank > 0 ? m.q_lora_rank * (h + a * (nope + rope) + 1) : h * a * (nope + rope);
    attention = 6.0 * layers *
                (q_term + m.kv_lora_rank * (h + a * (nope + v) + 1) + h * rope + a * v * h +
                 keys * a * (nope + rope) + keys * a * v);
  } else {
    const double query = a * qk_dim(m);
    attention = expansion * layers * h * h *
                ((1.0 + static_cast<double>(m.kv_heads) / a + keys / h) * query / h);
  }
  const double mlp =
      expansion * layers * h *
      (m.ffn_hidden * gated * (n_dense / layers) +
       (static_cast<double>(m.moe_ffn_hidden) * m.top_k * gated + m.shared_ffn_hidden * gated) *
           (n_moe / layers));
  const double mtp_extra = 6.0 * mtp * (3.0 * h + 2.0 * h * h);
  const double logits = 6.0 * h * m.vocab * (mtp + 1.0);
  return mlp + attention + mtp_extra + logits;
}

double training_flops_per_step(const Workload& w, Recompute recompute) noexcept {
  const Model& m = w.model;
  const double s = w.seq_len;
  const double gemm = layer_gemm_flops_per_token(m);
  const double attention = layer_attention_flops_per_token(m, s);
  const double logit_fwd = 2.0 * m.hidden * m.vocab;
  // An MTP module runs a layer, its projection and the shared output head once more.
  const double mtp_fwd = m.mtp_layers * (gemm + attention + 4.0 * m.hidden * m.hidden + logit_fwd);
  double per_token = 3.0 * (m.layers * (gemm + attention) + logit_fwd + mtp_fwd);
  if (recompute == Recompute::full) per_token += m.layers * (gemm + attention);
  if (recompute == Recompute::selective) per_token += m.layers * attention;
  return per_token * s * static_cast<double>(w.global_batch);
}

double activation_bytes_per_layer(const Model& m, double s, double b, int tp,
                                  bool sequence_parallel, Recompute recompute, bool flash_attention,
                                  bool dropout_masks, bool fp8_gemm_inputs) noexcept {
  const double h = m.hidden;
  const double t = std::max(tp, 1);
  const double sbh = s * b * h;
  const double replicated_div = sequence_parallel ? t : 1.0;
  if (recompute == Recompute::full) return 2.0 * sbh / replicated_div;  // the layer input only
  // Korthikanti et al. 2022 sec. 4.1, per sbh with 16-bit values and 1-byte dropout masks:
  // replicated across TP ranks: 2 layer-norm inputs (4), QKV input (2), MLP input (2), two
  // dropout masks (2); split by TP: Q (2), K and V (4 kv/a), projection input (2), MLP
  // activations (gelu: its input and output, 4 f/h; SwiGLU: gate+up output and product, 6 f/h).
  const double gemm_input = fp8_gemm_inputs ? 1.0 : 2.0;  // QKV, projection, fc1, fc2 inputs
  // The MLP a layer keeps inside the tensor-parallel group: the dense one, or an MoE layer's
  // shared experts (the routed experts' activations are counted per expert-parallel rank by
  // the estimator); the mean over layers.
  const double moe = moe_fraction(m);
  const double f_ratio =
      ((1.0 - moe) * m.ffn_hidden + moe * static_cast<double>(m.shared_ffn_hidden)) / h;
  double replicated = 4.0 + 2.0 * gemm_input + (dropout_masks ? 2.0 : 0.0);
  // Q, K and V per head (MLA up-projects K and V for every head, and keeps its two latents).
  const double kv_heads = is_mla(m) ? m.heads : m.kv_heads;
  const double qkv = 2.0 * (m.heads * qk_dim(m) + kv_heads * (qk_dim(m) + v_dim(m))) / h;
  if (is_mla(m)) replicated += gemm_input * (m.q_lora_rank + m.kv_lora_rank) / h;
  const double mlp = (m.mlp == Mlp::swiglu ? 4.0 : 2.0) * f_ratio + gemm_input * f_ratio;
  const double split = qkv + gemm_input * m.heads * v_dim(m) / h + mlp;
  double per_sbh = replicated / replicated_div + split / t;
  // Scores, softmax output, its dropout mask and output: 5 a s / h, unless the attention core is
  // recomputed (selective) or never materialised (fused attention).
  if (recompute == Recompute::none && !flash_attention) per_sbh += 5.0 * m.heads * s / h / t;
  return per_sbh * sbh;
}

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
  peak_flops_ = cluster_.gpu.peak_flops[static_cast<int>(p)];
  // Fused attention runs in 16-bit even when the GEMMs run in fp8/fp4 (Transformer Engine's
  // default); fp32 training runs it at the training precision.
  attention_peak_ = is_low_precision(p) ? cluster_.gpu.peak_flops[static_cast<int>(Precision::bf16)]
                                        : peak_flops_;
  if (attention_peak_ <= 0) attention_peak_ = peak_flops_;
  gemm_eff_scale_ =
      calibration_.gemm_eff_max * (is_low_precision(p) ? calibration_.low_precision_gemm_eff : 1.0);
  act_bytes_ = is_fp32(p) ? 4 : 2;
  weight_bytes_ = is_fp32(p) ? 4 : 2;
  grad_bytes_ = is_fp32(p) ? 4 : 2;
  // fp32 master weights + Adam m and v; fp32 training needs no separate master copy.
  optimizer_bytes_ = is_fp32(p) ? 8 : 12;
  hbm_bytes_per_s_ = cluster_.gpu.hbm_bytes_per_s * calibration_.hbm_eff;
  nvlink_bytes_per_s_ = cluster_.nvlink_bytes_per_s * calibration_.nvlink_eff;
  inter_node_bytes_per_s_ = cluster_.inter_node_bytes_per_s * calibration_.inter_node_eff;
  // The slowest link a group spans: a group leaving the NVLink domain is bound by scale-out.
  inter_node_bytes_per_s_ = std::min(inter_node_bytes_per_s_, nvlink_bytes_per_s_);
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
  model_flops_per_step_ = training_flops_per_step(workload_, Recompute::none);
}

// Token dispatch and combine forward: each an all-to-all of `token_bytes` (this rank's routed
// tokens) over the ep group (stride etp), which spans `domains` NVLink domains. Peers inside this
// GPU's domain are reached over NVLink, the others over its NIC, concurrently; one latency per
// exchange. With NCCL's all-to-all a token bound for k experts crosses the network k (D-1)/D
// times; DeepEP and HybridEP send it once per distinct remote domain among its k and forward it
// there over NVLink: (D-1)(1 - (1-1/D)^k) (DeepSeek-V3 report sec. 3.2.2); the all-gather
// dispatcher sends every token to every rank. Each dispatcher reaches its own fraction of the
// links' bandwidth.
double Estimator::a2a_fwd_s(double token_bytes, int ep, int etp,
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
  const double one =
      std::max(token_bytes * local_copies / (nvlink_bytes_per_s_ * eff),
               crosses ? token_bytes * remote_copies / (inter_node_bytes_per_s_ * eff) : 0.0) +
      (crosses ? inter_node_latency_s_ : nvlink_latency_s_);
  return 2.0 * (1.0 - c.moe_a2a_overlap) * one;
}

// A group of n ranks at stride `stride` (Megatron's rank order: tp fastest, then cp, dp, pp)
// stays inside one NVLink domain iff stride * n <= domain. A group that leaves it is bound by
// scale-out, but its k members inside one domain drive k NICs at once: NCCL's rings and trees
// cross each domain boundary once per channel, one channel per NIC, so the group's bandwidth per
// rank is min(NVLink, k x scale-out per GPU).
void Estimator::link(int stride, int n, double& bytes_per_s, double& alpha) const noexcept {
  const int domain = std::max(cluster_.nvlink_domain, 1);
  if (static_cast<std::int64_t>(stride) * n <= domain) {
    bytes_per_s = nvlink_bytes_per_s_;
    alpha = nvlink_latency_s_;
  } else {
    const double per_domain =
        std::clamp(static_cast<double>(domain / std::max(stride, 1)), 1.0, static_cast<double>(n));
    const double nics = 1.0 + calibration_.nic_aggregation * (per_domain - 1.0);
    bytes_per_s = std::min(nvlink_bytes_per_s_, nics * inter_node_bytes_per_s_);
    alpha = inter_node_latency_s_;
  }
}

// cuDNN's fused attention and FlashAttention-3 at attention_eff of the 16-bit peak (of the fp8 peak
// with fp8_attention, less the low-precision GEMM factor); FlashAttention-2 and Triton's kernel at
// their fitted share of it. Fused kernels recompute the scores backward: 5 matmuls against 2
// forward (Dao et al. 2022); the unfused path keeps the scores and runs 4.
Estimator::AttentionKernelCost Estimator::attention_kernel(const Stack& st) const noexcept {
  const Calibration& c = calibration_;
  AttentionKernelCost k;
  k.fused = c.flash_attention > 0 && st.attention_kernel != AttentionKernel::unfused;
  k.bwd_factor = k.fused ? 2.5 : 2.0;
  double rate = attention_peak_ * c.attention_eff;
  if (st.fp8_attention && is_low_precision(workload_.precision))
    rate = cluster_.gpu.peak_flops[static_cast<int>(Precision::fp8)] * c.attention_eff *
           c.low_precision_gemm_eff;
  if (st.attention_kernel == AttentionKernel::flash2) rate *= c.flash2_attention_eff;
  if (st.attention_kernel == AttentionKernel::triton) rate *= c.triton_attention_eff;
  k.flops_per_s = rate;
  return k;
}

double Estimator::attention_fwd_s(double tokens, int tp,
                                  const AttentionKernelCost& kernel) const noexcept {
  return 2.0 * tokens * attention_keys_ * workload_.model.heads * (qk_dim_ + v_dim_) / tp /
         kernel.flops_per_s;
}

// Ring attention: cp-1 exchanges of this rank's K and V chunk forward; K, V and their gradients
// backward, each overlapped with the attention of the previous chunk.
Estimator::CpExchange Estimator::cp_exchange_s(double tokens, int tp, int cp,
                                               const AttentionKernelCost& kernel) const noexcept {
  if (cp <= 1) return {};
  const Model& m = workload_.model;
  double bw = 0, alpha = 0;
  link(tp, cp, bw, alpha);
  const double kv_heads = is_mla(m) ? m.heads : m.kv_heads;
  const double kv_bytes = tokens * kv_heads * (qk_dim_ + v_dim_) / tp * act_bytes_;
  const double step = (cp - 1.0) * (kv_bytes / bw + alpha);
  const double attention = attention_fwd_s(tokens, tp, kernel);
  return {std::max(0.0, step - attention),
          std::max(0.0, 2.0 * step - kernel.bwd_factor * attention)};
}

Estimator::DpCost Estimator::dp_cost_s(int zero, double grads, double params, int group, int stride,
                                       double window, double micro_batches,
                                       bool gather_overlap) const noexcept {
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

// CUDA graphs replay their captured kernels without the host: per-module graphs capture a dense
// layer and an MoE layer's attention and router scopes; whole-layer graphs also the experts and
// their dispatch, when the shapes are static (balanced or capacity routing). The launches of the
// mean layer before an MoE layer's dispatch (attention, router, a dense layer) and from it on
// (dispatch, experts, combine), in host seconds.
Estimator::LayerLaunches Estimator::layer_launches(const Plan& plan) const noexcept {
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
    if (st.cuda_graph == CudaGraph::full && st.token_routing != TokenRouting::dropless) after = 0;
  }
  out.before_dispatch_s =
      calibration_.launch_s * ((1.0 - moe_fraction_) * dense + moe_fraction_ * before);
  out.from_dispatch_s = calibration_.launch_s * moe_fraction_ * after;
  return out;
}

// The host runs ahead of the GPU and hides its launches behind the kernels queued before them,
// except where it must wait for the GPU: an MoE layer whose shapes depend on the routing copies the
// tokens per expert to the host before its dispatch, so the launches from there on can hide only
// behind the experts' own kernels (docs/estimator.md, "Host overhead and CUDA graphs").
double Estimator::exposed_launch_s(const Plan& plan, double layer_s,
                                   double experts_s) const noexcept {
  const LayerLaunches l = layer_launches(plan);
  if (!syncs_before_experts(plan))
    return std::max(0.0, l.before_dispatch_s + l.from_dispatch_s - layer_s);
  return std::max(0.0, l.before_dispatch_s - (layer_s - experts_s)) +
         std::max(0.0, l.from_dispatch_s - experts_s);
}

bool Estimator::syncs_before_experts(const Plan& plan) const noexcept {
  const Stack& st = plan.stack;
  return is_moe(workload_.model) &&
         !(st.cuda_graph == CudaGraph::full && st.token_routing != TokenRouting::dropless);
}

double Estimator::moe_sync_s(const Plan& plan) const noexcept {
  return syncs_before_experts(plan) ? moe_fraction_ * calibration_.moe_layer_overhead_s : 0.0;
}

Estimate Estimator::estimate(const Plan& plan) const noexcept {
  Estimate e;
  const Model& m = workload_.model;
  auto infeasible = [&e](Infeasible reason) {
    e.feasible = false;
    e.reason = reason;
    return e;
  };
  // The structural rules (heads, layers, batch, sequence divisibility...) are spaces::check_plan's,
  // which every command applies before estimating. This guard only keeps a plan that skipped it
  // from dividing by zero or indexing past the model: it is not the rule check.
  const int chunks = plan.pp * plan.vp;
  const bool well_formed =
      plan.tp >= 1 && plan.pp >= 1 && plan.dp >= 1 && plan.cp >= 1 && plan.vp >= 1 &&
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
  if (!well_formed) return infeasible(Infeasible::invalid_plan);
  if (peak_flops_ <= 0) return infeasible(Infeasible::precision_unsupported);
  // Layer slots of the critical stage (docs/estimator.md, "Pipeline splits").
  int embedding_slots = 0;
  double stage_slots = static_cast<double>(m.layers) / plan.pp;
  switch (plan.pipeline_split) {
    case PipelineSplit::even:
      break;
    case PipelineSplit::embedding_loss:
      embedding_slots = 1;
      stage_slots = (m.layers + 2.0) / plan.pp;
      break;
    case PipelineSplit::uneven:
      stage_slots = static_cast<double>((m.layers + chunks - 1) / chunks) * plan.vp;
      break;
  }
  const std::int64_t replica_batch = static_cast<std::int64_t>(plan.dp) * plan.micro_batch;

  const double h = m.hidden;
  const double f = m.ffn_hidden;
  const double v = m.vocab;
  const double t = plan.tp;
  const bool sp = plan.sequence_parallel && plan.tp > 1;
  const double sp_div = sp ? t : 1.0;
  const double seq = workload_.seq_len;
  const double s_local = seq / plan.cp;
  const double tokens = plan.micro_batch * s_local;
  const double micro_batches = static_cast<double>(workload_.global_batch / replica_batch);

  const Calibration& c = calibration_;

  // GEMM time: efficiency grows with the smallest GEMM dimension (wave quantisation and
  // memory-bound small tiles).
  const double half = c.gemm_half_dim;
  auto gemm_rows_s = [&](double rows, double k, double n) {
    const double d = std::min(rows, std::min(k, n));
    const double eff = gemm_eff_scale_ * d / (d + half);
    return 2.0 * rows * k * n / (peak_flops_ * eff);
  };
  auto gemm_s = [&](double k, double n) { return gemm_rows_s(tokens, k, n); };

  // ---- one transformer layer, one micro-batch, forward -------------------------------------
  double tp_bw = 0, tp_alpha = 0;
  link(1, plan.tp, tp_bw, tp_alpha);
  // Two all-reduces per layer forward and two backward (Shoeybi et al. 2019); sequence
  // parallelism replaces each by an all-gather + reduce-scatter of the same volume.
  const Stack& stack = plan.stack;
  const double tp_hidden =
      stack.tp_comm_overlap ? c.tp_overlap : std::min(c.tp_overlap_off, c.tp_overlap);
  const double tp_one =
      (1.0 - tp_hidden) * all_reduce_s(tokens * h * act_bytes_, plan.tp, tp_bw, tp_alpha);
  // Every layer's attention; MLA's down projections are not split by tensor parallelism.
  double attention_gemm_fwd = gemm_s(attn_out_in_ / t, h);
  if (is_mla(m)) {
    const double nope = qk_dim_ - m.qk_rope_head_dim;
    attention_gemm_fwd +=
        gemm_s(h, m.kv_lora_rank + m.qk_rope_head_dim) +
        gemm_s(m.kv_lora_rank, m.heads * (nope + v_dim_) / t) +
        (m.q_lora_rank > 0 ? gemm_s(h, m.q_lora_rank) + gemm_s(m.q_lora_rank, m.heads * qk_dim_ / t)
                           : gemm_s(h, m.heads * qk_dim_ / t));
  } else {
    attention_gemm_fwd += gemm_s(h, qkv_out_ / t);
  }
  const AttentionKernelCost kernel = attention_kernel(stack);
  const double attention_fwd = attention_fwd_s(tokens, plan.tp, kernel);
  // The dense MLP (of the dense layers) and an MoE layer's parts: router, shared experts, and the
  // routed experts as grouped GEMMs over the E/ep local experts, each of `expert_rows` tokens.
  const double moe = moe_fraction_;
  const double dense_mlp_fwd = moe < 1 ? gemm_s(h, mlp_in_out_ / t) + gemm_s(f / t, h) : 0.0;
  const int etp = plan.etp;
  const int ep = plan.ep;
  double routed_rows = 0;  // rows of this GPU's expert GEMMs, busiest rank
  double moe_fwd = 0, moe_memory_fwd = 0, moe_comm_fwd = 0, a2a_fwd = 0;
  double moe_operands = 0;  // GEMM inputs and output gradients of an MoE layer, per token
  if (moe > 0) {
    const double sf = m.shared_ffn_hidden, fm = m.moe_ffn_hidden;
    const double in_out = m.mlp == Mlp::swiglu ? 2.0 : 1.0;  // first GEMM: gate and up
    // The busiest rank's share of the routed tokens (token routing).
    const double imbalance = routed_load(plan, c.moe_load_cv);
    routed_rows = tokens * m.top_k * etp / t * imbalance;
    const double local_experts = static_cast<double>(m.num_experts) / ep;
    const double expert_rows = routed_rows / local_experts;
    // A grouped GEMM over several local experts loses efficiency with fewer rows per expert
    // (tiles of different experts do not share waves).
    const double grouped = local_experts > 1 ? c.moe_grouped_gemm_eff * expert_rows /
                                                   (expert_rows + c.moe_expert_half_rows)
                                             : 1.0;
    moe_fwd =
        (gemm_rows_s(expert_rows, h, in_out * fm / etp) + gemm_rows_s(expert_rows, fm / etp, h)) *
        local_experts / grouped;
    if (sf > 0) moe_fwd += gemm_s(h, in_out * sf / t) + gemm_s(sf / t, h);
    moe_operands = routed_rows / tokens * (2.0 * h + (1.0 + in_out) * fm / etp) +
                   (sf > 0 ? 2.0 * h + (1.0 + in_out) * sf / t : 0.0);
    if (m.num_experts > 1) moe_fwd += gemm_rows_s(tokens / t, h, m.num_experts);  // router
    // Routed activations, and the permutation of the routed tokens to and from expert order.
    moe_memory_fwd = act_bytes_ *
                     (elementwise_f_ * (routed_rows * fm / etp + tokens * sf / t) +
                      (m.num_experts > 1 && !fused_dispatch(stack.dispatcher)
                           ? c.moe_permute_passes * routed_rows * h
                           : 0.0)) /
                     hbm_bytes_per_s_;
    // The expert-tensor-parallel collective over the routed tokens (with ep = 1 and etp = tp the
    // dense MLP's all-reduce), and the shared experts' tensor-parallel one.
    double etp_bw = 0, etp_alpha = 0;
    link(1, etp, etp_bw, etp_alpha);
    const double routed_bytes = tokens * m.top_k * h * act_bytes_;
    moe_comm_fwd = (1.0 - tp_hidden) * all_reduce_s(routed_bytes, etp, etp_bw, etp_alpha);
    if (sf > 0) moe_comm_fwd += tp_one;
    // Token dispatch and combine of this rank's routed tokens.
    a2a_fwd = a2a_fwd_s(tokens / t * h * act_bytes_ * imbalance, ep, etp, stack.dispatcher);
  }
  const double gemm_fwd = attention_gemm_fwd + (1.0 - moe) * dense_mlp_fwd + moe * moe_fwd;
  const double dense_f = (1.0 - moe) * f;
  double elementwise_bytes =
      act_bytes_ * tokens * (elementwise_h_ * h / sp_div + elementwise_f_ * dense_f / t);
  double attention_elementwise_bytes = 0;
  if (!kernel.fused)  // scale+mask+softmax and dropout over the score matrix
    attention_elementwise_bytes =
        4.0 * act_bytes_ * plan.micro_batch * (m.heads / t) * s_local * seq * c.memory_bound_scale;
  const double memory_fwd =
      (elementwise_bytes + attention_elementwise_bytes) / hbm_bytes_per_s_ + moe * moe_memory_fwd;
  // Low-precision GEMMs quantize their activation operands forward and their output gradients
  // backward: read in 16 bits, written in 8 (3 bytes an element), plus a transposed 8-bit copy
  // (1 byte) where the tensor cores take only the TN layout (Transformer Engine's cast-transpose).
  // Weights are quantized once per step and cached across micro-batches.
  double quantize_s = 0;
  if (is_low_precision(workload_.precision)) {
    double attention_operands = h + attn_out_in_ / t + h + qkv_out_ / t;
    if (is_mla(m))
      attention_operands +=
          m.kv_lora_rank + m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim + m.q_lora_rank;
    const double dense_operands = 2.0 * h + (f + mlp_in_out_) / t;
    const double operands = attention_operands + (1.0 - moe) * dense_operands + moe * moe_operands;
    quantize_s = quantize_bytes_per_element(stack.fp8_recipe, cluster_.gpu.fp8_tn_only) * tokens *
                 operands * calibration_.memory_bound_scale / hbm_bytes_per_s_;
  }
  // One attention all-reduce and the dense MLP's, or the MoE layer's collectives.
  const double tp_fwd = tp_one + (1.0 - moe) * tp_one + moe * moe_comm_fwd;

  const CpExchange cp_exchange = cp_exchange_s(tokens, plan.tp, plan.cp, kernel);
  const double cp_fwd = cp_exchange.forward_s, cp_bwd = cp_exchange.backward_s;

  Parts layer;
  layer.compute = 3.0 * gemm_fwd + (1.0 + kernel.bwd_factor) * attention_fwd;
  layer.memory = 3.0 * memory_fwd + quantize_s;
  layer.tp = 2.0 * tp_fwd;
  layer.cp = cp_fwd + cp_bwd;
  layer.ep = 2.0 * moe * a2a_fwd;
  if (plan.recompute == Recompute::full) {
    layer.compute += gemm_fwd + attention_fwd;
    layer.memory += memory_fwd;
    layer.tp += tp_fwd;
    layer.cp += cp_fwd;
    layer.ep += moe * a2a_fwd;
  } else if (plan.recompute == Recompute::selective && !kernel.fused) {
    // Recompute the attention core (fused attention recomputes it anyway).
    layer.compute += attention_fwd;
    layer.memory += attention_elementwise_bytes / hbm_bytes_per_s_;
  }
  // With a2a_overlap the all-to-all of one micro-batch runs under another's compute, up to what
  // that compute lasts (Megatron-Core's overlap_moe_expert_parallel_comm, DeepSeek's DualPipe).
  if (stack.a2a_overlap) layer.ep = std::max(0.0, layer.ep - layer.compute);
  // The host launches the layer's kernels while the GPU runs earlier ones: only what the launches
  // take beyond the GPU's time is exposed; host syncs of dropless MoE layers expose their latency.
  // The experts' kernels of the mean layer: their GEMMs and memory passes, and the all-to-all.
  const double experts_s =
      moe * ((plan.recompute == Recompute::full ? 4.0 : 3.0) * (moe_fwd + moe_memory_fwd)) +
      layer.ep;
  layer.host = moe_sync_s(plan) + exposed_launch_s(plan, layer.sum(), experts_s);
  layer.overhead = c.per_layer_overhead_s;

  // ---- logit layer and loss (last stage), one micro-batch ------------------------------------
  Parts logit;
  logit.compute = 3.0 * gemm_s(h, v / t);
  // Cross entropy in fp32 over the vocabulary shard: ~12 bytes per logit forward and backward.
  logit.memory = 24.0 * tokens * v / t / hbm_bytes_per_s_;
  logit.tp = sp ? tp_one : 0.0;  // gather the sequence-parallel input, reduce-scatter its grad
  // An MTP module: one more layer, its projection, and the shared output head again.
  if (m.mtp_layers > 0) {
    Parts mtp = layer;
    mtp.compute += 3.0 * gemm_s(2.0 * h, h / t);
    logit = logit + static_cast<double>(m.mtp_layers) * (mtp + logit);
  }

  // ---- the critical pipeline stage ---------------------------------------------------------
  const double slots = stage_slots;
  const double last_stage_layers = slots - embedding_slots;
  Parts stage = last_stage_layers * layer + logit;
  if (plan.pp > 1 && (plan.pp > 2 || embedding_slots == 0)) {
    const Parts middle = slots * layer;
    if (middle.sum() > stage.sum()) stage = middle;
  }
  const double stage_mb_s = stage.sum();

  double p2p_mb_s = 0;
  if (plan.pp > 1) {
    double pp_bw = 0, pp_alpha = 0;
    link(plan.tp * plan.cp * plan.dp, plan.pp, pp_bw, pp_alpha);
    const double bytes = tokens * h * act_bytes_ / sp_div;
    p2p_mb_s = (stack.pp_comm_overlap ? 1.0 - c.pp_overlap : 1.0) * 2.0 * plan.vp *
               (bytes / pp_bw + pp_alpha);
  }
  const double bubble_mb = plan.pp > 1 ? (plan.pp - 1.0) / plan.vp : 0.0;

  // ---- parameters per GPU ------------------------------------------------------------------
  // Everything but the routed experts is split by tp and replicated over dp*cp; the routed
  // experts are split by etp x ep and replicated over edp. The last stage holds the MTP modules.
  auto stage_params_of = [&](double per_layer, double embedding, double last_extra) {
    double params = last_stage_layers * per_layer + embedding + last_extra;
    if (plan.pp == 1)
      params += embedding;  // input embedding and output layer
    else if (plan.pp > 2 || embedding_slots == 0)
      params = std::max(params, slots * per_layer);
    return params;
  };
  const double expert_share = mtp_params_ > 0 && m.num_experts > 0
                                  ? routed_expert_params(m) * m.mtp_layers / mtp_params_
                                  : 0.0;
  const double gpu_params = stage_params_of(dense_params_per_layer_, embedding_params_,
                                            mtp_params_ * (1 - expert_share)) /
                            t;
  const double gpu_expert_params =
      stage_params_of(expert_params_per_layer_, 0.0, mtp_params_ * expert_share) /
      (static_cast<double>(etp) * ep);

  // Gradients are reduced over the dp*cp ranks that hold the same weights (stride tp), expert
  // gradients over the edp ranks that hold the same experts (stride etp*ep).
  const int dp_group = plan.dp * plan.cp;
  const int edp_group = static_cast<int>(static_cast<std::int64_t>(plan.tp) * plan.cp * plan.dp /
                                         (static_cast<std::int64_t>(etp) * ep));
  const double grad_total = gpu_params * grad_bytes_;
  const double param_total = gpu_params * weight_bytes_;
  const double expert_grad_total = gpu_expert_params * grad_bytes_;
  const double expert_param_total = gpu_expert_params * weight_bytes_;

  // ---- memory per GPU ----------------------------------------------------------------------
  const bool flash = kernel.fused;
  Memory& mem = e.memory;
  mem.weights_bytes = param_total / (plan.zero >= 3 ? dp_group : 1);
  mem.gradients_bytes = grad_total / (plan.zero >= 2 ? dp_group : 1);
  mem.optimizer_bytes = gpu_params * optimizer_bytes_ / (plan.zero >= 1 ? dp_group : 1);
  mem.expert_weights_bytes = expert_param_total / (plan.zero >= 3 ? edp_group : 1);
  mem.expert_gradients_bytes = expert_grad_total / (plan.zero >= 2 ? edp_group : 1);
  mem.expert_optimizer_bytes =
      gpu_expert_params * optimizer_bytes_ / (plan.zero >= 1 ? edp_group : 1);
  const double act_scale = act_bytes_ / 2.0;
  const bool dropout = c.dropout_masks > 0;
  const bool fp8_inputs = is_low_precision(workload_.precision);
  const double act_layer =
      act_scale * activation_bytes_per_layer(m, s_local, plan.micro_batch, plan.tp, sp,
                                             plan.recompute, flash, dropout, fp8_inputs);
  // Routed tokens of an MoE layer: the permuted input (gemm input), fc1's output and the
  // activation's (as the dense MLP's), per routed row; kept unless the layer is recomputed.
  const double gemm_input = fp8_inputs ? 1.0 : 2.0;
  const double expert_act_layer =
      plan.recompute == Recompute::full
          ? 0.0
          : act_scale * moe * routed_rows *
                ((m.num_experts > 1 ? gemm_input * h : 0.0) +
                 ((m.mlp == Mlp::swiglu ? 4.0 : 2.0) + gemm_input) * m.moe_ffn_hidden / etp);
  // Micro-batch chunks in flight on the first stage: 1F1B warm-up (pp) and, interleaved,
  // Megatron's 2(pp-1) + (vp-1)pp + 1 chunk forwards (Narayanan et al. 2021).
  const double first_stage_layers = plan.pp > 1 ? slots - embedding_slots : m.layers;
  const double chunk_layers = first_stage_layers / plan.vp;
  double chunks_in_flight = plan.vp;
  if (plan.pp > 1) {
    chunks_in_flight =
        plan.vp == 1 ? plan.pp : 2.0 * (plan.pp - 1) + (plan.vp - 1.0) * plan.pp + 1.0;
    chunks_in_flight = std::min(chunks_in_flight, micro_batches * plan.vp);
  }
  mem.activations_bytes = act_layer * chunk_layers * chunks_in_flight;
  mem.expert_activations_bytes = expert_act_layer * chunk_layers * chunks_in_flight;
  if (plan.recompute == Recompute::full)  // the layer being recomputed holds its full activations
    mem.activations_bytes +=
        act_scale * activation_bytes_per_layer(m, s_local, plan.micro_batch, plan.tp, sp,
                                               Recompute::none, flash, dropout, fp8_inputs);
  // Logits and their gradient (16-bit; the fused cross entropy works in place) on the last stage,
  // gathered parameters of two layers (ZeRO-3 prefetch), and a fixed workspace.
  mem.workspace_bytes = c.workspace_bytes + 2.0 * act_bytes_ * tokens * v / t;
  if (plan.zero >= 3)
    mem.workspace_bytes +=
        2.0 * (dense_params_per_layer_ / t + expert_params_per_layer_ / (etp * ep)) * weight_bytes_;
  const double total_bytes = mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes +
                             mem.activations_bytes + mem.workspace_bytes +
                             mem.expert_weights_bytes + mem.expert_gradients_bytes +
                             mem.expert_optimizer_bytes + mem.expert_activations_bytes;
  const double all_optimizer = mem.optimizer_bytes + mem.expert_optimizer_bytes;
  const double all_activations = mem.activations_bytes + mem.expert_activations_bytes;
  const double all_weights = mem.weights_bytes + mem.expert_weights_bytes;
  switch (plan.offload) {
    case Offload::none:
      mem.expansion_bytes = 0;
      break;
    case Offload::optimizer:
      mem.expansion_bytes = all_optimizer;
      break;
    case Offload::optimizer_activations:
      mem.expansion_bytes = all_optimizer + all_activations;
      break;
    case Offload::all:
      mem.expansion_bytes = all_optimizer + all_activations + all_weights;
      break;
  }
  mem.hbm_bytes = total_bytes - mem.expansion_bytes;

  // ---- optimizer and expansion-tier traffic -------------------------------------------------
  const double local_params = gpu_params / (plan.zero >= 1 ? dp_group : 1) +
                              gpu_expert_params / (plan.zero >= 1 ? edp_group : 1);
  // Adam: read master, m, v, gradient; write master, m, v, 16-bit weight (28 bytes mixed).
  const double optimizer_s =
      local_params * (2.0 * optimizer_bytes_ + grad_bytes_ + weight_bytes_) / hbm_bytes_per_s_;
  double offload_step_s = 0;  // exposed optimizer-state streaming
  double offload_mb_s = 0;    // tier traffic per micro-batch, overlapped with its compute
  if (plan.offload != Offload::none) {
    // COMET: state in the expansion tier streams through the GPU at the tier's bandwidth.
    const double opt_traffic = local_params *
                               (2.0 * optimizer_bytes_ + grad_bytes_ + weight_bytes_) /
                               expansion_bytes_per_s_;
    offload_step_s = std::max(0.0, opt_traffic - optimizer_s);
    if (plan.offload == Offload::optimizer_activations || plan.offload == Offload::all)
      offload_mb_s +=
          2.0 * (act_layer + expert_act_layer) * first_stage_layers / expansion_bytes_per_s_;
    if (plan.offload == Offload::all) offload_mb_s += 2.0 * all_weights / expansion_bytes_per_s_;
  }
  // A micro-batch takes as long as the slower of its compute and its tier traffic.
  const double effective_mb_s = std::max(stage_mb_s, offload_mb_s);

  // ---- data-parallel / ZeRO communication --------------------------------------------------
  auto dp_cost = [&](double grads, double params, int group, int stride, double window) {
    return dp_cost_s(plan.zero, grads, params, group, stride, window, micro_batches,
                     stack.param_gather_overlap);
  };
  const double window = (stack.dp_overlap ? c.dp_overlap : 0.0) * effective_mb_s;
  DpCost dense_dp, expert_dp;
  if (edp_group == dp_group && etp * ep == plan.tp) {
    // The experts are replicated over the same ranks as the rest: one reduction of both.
    dense_dp = dp_cost(grad_total + expert_grad_total, param_total + expert_param_total, dp_group,
                       plan.tp, window);
  } else {
    // Expert gradients share the backward window with the others.
    dense_dp = dp_cost(grad_total, param_total, dp_group, plan.tp, window);
    expert_dp = dp_cost(expert_grad_total, expert_param_total, edp_group, etp * ep,
                        std::max(0.0, window - dense_dp.per_window));
  }

  // ---- assemble ------------------------------------------------------------------------------
  const double pipeline_mb = micro_batches;
  StepTime& st = e.time;
  st.compute_s = pipeline_mb * stage.compute;
  st.memory_bound_s = pipeline_mb * stage.memory;
  st.tp_comm_s = pipeline_mb * stage.tp;
  st.cp_comm_s = pipeline_mb * stage.cp;
  st.pp_p2p_s = pipeline_mb * p2p_mb_s;
  st.pp_bubble_s = bubble_mb * (effective_mb_s + p2p_mb_s);
  st.ep_a2a_s = pipeline_mb * stage.ep;
  st.dp_exposed_s = dense_dp.exposed;
  st.edp_exposed_s = expert_dp.exposed;
  st.optimizer_s = optimizer_s;
  st.offload_s = offload_step_s + pipeline_mb * (effective_mb_s - stage_mb_s);
  st.host_s = pipeline_mb * stage.host;
  st.overhead_s = pipeline_mb * stage.overhead + c.per_step_overhead_s;
  st.total_s = st.compute_s + st.memory_bound_s + st.tp_comm_s + st.cp_comm_s + st.pp_p2p_s +
               st.pp_bubble_s + st.ep_a2a_s + st.dp_exposed_s + st.edp_exposed_s + st.optimizer_s +
               st.offload_s + st.host_s + st.overhead_s;

  e.model_flops_per_step = model_flops_per_step_;
  const double tokens_per_step = static_cast<double>(workload_.global_batch) * seq;
  e.tokens_per_s = tokens_per_step / st.total_s;
  e.mfu = e.model_flops_per_step / (st.total_s * cluster_.num_gpus * peak_flops_);

  e.energy_per_step_j =
      step_energy_j(st.total_s, st.compute_s + st.memory_bound_s + st.optimizer_s);

  // A group that must leave its NVLink domain over a zero-bandwidth network (or any other zero
  // bandwidth the step needs) cannot run.
  if (!std::isfinite(st.total_s)) {
    e = Estimate{};
    return infeasible(Infeasible::invalid_plan);
  }
  const bool fits =
      mem.hbm_bytes <= cluster_.hbm_bytes && mem.expansion_bytes <= cluster_.expansion_bytes;
  e.feasible = fits;
  e.reason = fits ? Infeasible::none : Infeasible::out_of_memory;
  return e;
}

// Energy: busy kernels at busy_power_fraction * TDP, the rest of the step at idle power.
double Estimator::step_energy_j(double total_s, double busy_s) const noexcept {
  busy_s = std::min(total_s, busy_s);
  const double gpu_j = busy_s * cluster_.gpu.tdp_w * calibration_.busy_power_fraction +
                       (total_s - busy_s) * cluster_.gpu.idle_w;
  return cluster_.num_gpus * gpu_j + num_nodes_ * cluster_.node_overhead_w * total_s;
}

double Estimator::checkpoint_bytes() const noexcept {
  return total_params(workload_.model) * (weight_bytes_ + optimizer_bytes_);
}

double Estimator::energy_bound_j(double time_s, double busy_s) const noexcept {
  // Increasing in the step time; in the busy time too unless busy power is below idle power, when
  // the least energy has every second busy.
  const bool busy_costs_more =
      cluster_.gpu.tdp_w * calibration_.busy_power_fraction >= cluster_.gpu.idle_w;
  return step_energy_j(time_s, busy_costs_more ? busy_s : time_s);
}

// Each term below is at most the matching term of estimate() for every plan of the box the rules
// accept (gb divisible by dp * micro_batch, so micro-batches * tokens = gb * s/cp / dp exactly);
// docs/search.md states why. Parts estimate() adds that are hard to bound (context-parallel
// exchanges, data-parallel exposure, tier traffic, logits) are bounded by 0.
StepBound Estimator::bound(const PlanBox& box) const noexcept {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const Model& m = workload_.model;
  const Calibration& c = calibration_;
  const Plan& p = box.plan;
  if (peak_flops_ <= 0 || p.tp < 1 || p.pp < 1 || p.dp < 1 || p.cp < 1 || p.ep < 1 || p.etp < 1)
    return {kInf, kInf, kInf};
  const double t = p.tp, pp = p.pp, L = m.layers, h = m.hidden;
  const double moe = moe_fraction_;
  const double s_local = static_cast<double>(workload_.seq_len) / p.cp;
  const double gb = static_cast<double>(workload_.global_batch);
  // Tokens of all micro-batches of one step on one pipeline rank; the fewest micro-batches.
  const double step_tokens = gb * s_local / p.dp;
  const double mb_min = box.micro_batch_min, mb_max = box.micro_batch_max;
  const double micro_batches_min = std::max(1.0, std::floor(gb / (p.dp * mb_max)));
  // Every pipeline split gives the critical stage at least layers/pp layers of each part.
  const double stage_layers = L / pp;
  const bool sp_possible = box.sequence_parallel[1] && p.tp > 1;
  const double sp_div = sp_possible ? t : 1.0;

  // Per layer and micro-batch, as a * tokens + b: GEMMs at their peak efficiency (the size
  // factor d/(d + gemm_half_dim), the grouped-GEMM factor and the router only add time), the
  // attention matmuls, elementwise traffic, tensor-parallel and expert all-to-all bandwidth terms
  // (a), and their latencies (b).
  const Stack& stack = p.stack;
  const double imbalance = routed_load(p, c.moe_load_cv);
  const AttentionKernelCost kernel = attention_kernel(stack);
  const double tp_hidden =
      stack.tp_comm_overlap ? c.tp_overlap : std::min(c.tp_overlap_off, c.tp_overlap);
  const double in_out = m.mlp == Mlp::swiglu ? 2.0 : 1.0;
  double attention_gemm = 2.0 * attn_out_in_ * h / t;
  if (is_mla(m)) {
    const double nope = qk_dim_ - m.qk_rope_head_dim;
    attention_gemm +=
        2.0 * (h * (m.kv_lora_rank + m.qk_rope_head_dim) +
               m.kv_lora_rank * m.heads * (nope + v_dim_) / t +
               (m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank * m.heads * qk_dim_ / t
                                  : h * m.heads * qk_dim_ / t));
  } else {
    attention_gemm += 2.0 * h * qkv_out_ / t;
  }
  const double dense_mlp = 2.0 * (h * mlp_in_out_ + m.ffn_hidden * h) / t;
  double moe_gemm = 0;
  if (moe > 0)
    moe_gemm = 2.0 * m.top_k * imbalance * h * m.moe_ffn_hidden * (1.0 + in_out) / t +
               2.0 * h * m.shared_ffn_hidden * (1.0 + in_out) / t;
  const double gemm_flops = attention_gemm + (1.0 - moe) * dense_mlp + moe * moe_gemm;
  const double attention_per_token =
      2.0 * attention_keys_ * m.heads * (qk_dim_ + v_dim_) / t / kernel.flops_per_s;
  const double compute_a = 3.0 * gemm_flops / (peak_flops_ * gemm_eff_scale_) +
                           (1.0 + kernel.bwd_factor) * attention_per_token;
  const double memory_a =
      3.0 * act_bytes_ *
      (elementwise_h_ * h / sp_div + elementwise_f_ * (1.0 - moe) * m.ffn_hidden / t) /
      hbm_bytes_per_s_;
  double tp_bw = 0, tp_alpha = 0;
  link(1, p.tp, tp_bw, tp_alpha);
  // all_reduce_s >= its bandwidth term plus the smaller of its two latency terms.
  double tp_a = 0, tp_b = 0;
  if (p.tp > 1) {
    const double n = p.tp;
    tp_a = 2.0 * (2.0 - moe) * (1.0 - tp_hidden) * 2.0 * (n - 1) / n * h * act_bytes_ / tp_bw;
    tp_b = 2.0 * (2.0 - moe) * (1.0 - tp_hidden) * std::min(2.0 * (n - 1), 2.0 * tree_depth(p.tp)) *
           tp_alpha;
  }
  double ep_a = 0, ep_b = 0;
  // With a2a_overlap the exposed all-to-all may be anything down to 0.
  if (moe > 0 && p.ep > 1 && !stack.a2a_overlap) {
    // a2a_fwd_s is an affine function of its bytes: its value at 0 is the latency.
    ep_b = 2.0 * moe * a2a_fwd_s(0.0, p.ep, p.etp, stack.dispatcher);
    ep_a = 2.0 * moe *
           (a2a_fwd_s(h * act_bytes_ * imbalance / t, p.ep, p.etp, stack.dispatcher) -
            ep_b / (2.0 * moe));
  }
  const double busy_a = compute_a + memory_a;
  const double layer_a = busy_a + tp_a + ep_a;
  const double layer_b = tp_b + ep_b;
  const double overhead = c.per_layer_overhead_s + moe_sync_s(p);

  StepBound b;
  // One layer over all micro-batches of the step. The exposed context-parallel exchange
  // n max(0, a T/n + b) = max(0, a T + b n) of T tokens in n micro-batches grows with n.
  const CpExchange cp = cp_exchange_s(step_tokens / micro_batches_min, p.tp, p.cp, kernel);
  const bool full_only = !box.recompute[static_cast<int>(Recompute::none)] &&
                         !box.recompute[static_cast<int>(Recompute::selective)];
  const double layer_step =
      layer_a * step_tokens + (layer_b + overhead) * micro_batches_min +
      micro_batches_min * (cp.forward_s + cp.backward_s + (full_only ? cp.forward_s : 0.0));
  // The critical stage is at least the last, which holds the logit layer and loss (and the MTP
  // modules) besides at least layers/pp - spared layers: spared = 1 - 2/pp when the embedding and
  // loss take a layer's slot each, else 0. So it is layers/pp layers plus max(0, logits - spared
  // layers).
  const double logit_a = 6.0 * h * m.vocab / t / (peak_flops_ * gemm_eff_scale_) +
                         24.0 * m.vocab / t / hbm_bytes_per_s_;
  const double logits_step =
      (1.0 + m.mtp_layers) * logit_a * step_tokens + m.mtp_layers * layer_step;
  const double spared =
      p.pp > 1 && box.pipeline_split[static_cast<int>(PipelineSplit::embedding_loss)]
          ? 1.0 - 2.0 / pp
          : 0.0;
  const double steady =
      stage_layers * layer_step + std::max(0.0, logits_step - spared * layer_step);
  // Pipeline sends: 2 vp per micro-batch of tokens * h / sp_div.
  double p2p = 0;
  if (p.pp > 1) {
    double pp_bw = 0, pp_alpha = 0;
    link(p.tp * p.cp * p.dp, p.pp, pp_bw, pp_alpha);
    p2p = (stack.pp_comm_overlap ? 1.0 - c.pp_overlap : 1.0) * 2.0 * box.vp_min *
          (step_tokens * h * act_bytes_ / sp_div / pp_bw + micro_batches_min * pp_alpha);
  }
  // The bubble: (pp - 1)/vp micro-batches of the critical stage.
  double bubble = 0;
  if (p.pp > 1)
    bubble =
        (pp - 1.0) / box.vp_max * stage_layers * (layer_a * mb_min * s_local + layer_b + overhead);
  // The optimizer over this rank's parameters, sharded by ZeRO-1 and above.
  const int dp_group = p.dp * p.cp;
  const double edp_group = static_cast<double>(p.tp) * p.cp * p.dp / (p.etp * p.ep);
  const double stage_params = stage_layers * dense_params_per_layer_ / t;
  const double stage_expert_params = stage_layers * expert_params_per_layer_ / (p.etp * p.ep);
  const int zero_max = box.zero[3] ? 3 : box.zero[2] ? 2 : box.zero[1] ? 1 : 0;
  const double local_params = stage_params / (zero_max >= 1 ? dp_group : 1) +
                              stage_expert_params / (zero_max >= 1 ? edp_group : 1);
  const double optimizer =
      local_params * (2.0 * optimizer_bytes_ + grad_bytes_ + weight_bytes_) / hbm_bytes_per_s_;
  // ---- HBM: the least over the box's offload, ZeRO, recompute and sequence-parallel choices --
  const double weights = stage_params * weight_bytes_ / (zero_max >= 3 ? dp_group : 1) +
                         stage_expert_params * weight_bytes_ / (zero_max >= 3 ? edp_group : 1);
  const double grads = stage_params * grad_bytes_ / (zero_max >= 2 ? dp_group : 1) +
                       stage_expert_params * grad_bytes_ / (zero_max >= 2 ? edp_group : 1);
  const double optimizer_state =
      stage_params * optimizer_bytes_ / (zero_max >= 1 ? dp_group : 1) +
      stage_expert_params * optimizer_bytes_ / (zero_max >= 1 ? edp_group : 1);
  // Activations: chunk layers x chunks in flight >= first-stage layers x min(pp, micro-batches).
  double first_stage_layers = L;
  if (p.pp > 1) {
    first_stage_layers = kInf;
    if (box.pipeline_split[static_cast<int>(PipelineSplit::even)] ||
        box.pipeline_split[static_cast<int>(PipelineSplit::uneven)])
      first_stage_layers = L / pp;
    if (box.pipeline_split[static_cast<int>(PipelineSplit::embedding_loss)])
      first_stage_layers = std::min(first_stage_layers, (L + 2.0) / pp - 1.0);
    first_stage_layers = std::max(0.0, first_stage_layers);
  }
  const double in_flight = first_stage_layers * (p.pp > 1 ? std::min(pp, micro_batches_min) : 1.0);
  double act_layer = kInf;
  for (int r = 0; r < 3; ++r)
    for (int sp = 0; sp < 2; ++sp)
      if (box.recompute[r] && box.sequence_parallel[sp])
        act_layer = std::min(
            act_layer, act_bytes_ / 2.0 *
                           activation_bytes_per_layer(m, s_local, mb_min, p.tp, sp == 1 && p.tp > 1,
                                                      static_cast<Recompute>(r), kernel.fused,
                                                      c.dropout_masks > 0,
                                                      is_low_precision(workload_.precision)));
  const double activations = act_layer == kInf ? 0.0 : act_layer * in_flight;
  const double workspace = c.workspace_bytes + 2.0 * act_bytes_ * mb_min * s_local * m.vocab / t;
  b.hbm_bytes = kInf;
  if (box.offload[static_cast<int>(Offload::none)])
    b.hbm_bytes = weights + grads + optimizer_state + activations + workspace;
  if (box.offload[static_cast<int>(Offload::optimizer)])
    b.hbm_bytes = std::min(b.hbm_bytes, weights + grads + activations + workspace);
  if (box.offload[static_cast<int>(Offload::optimizer_activations)])
    b.hbm_bytes = std::min(b.hbm_bytes, weights + grads + workspace);
  if (box.offload[static_cast<int>(Offload::all)])
    b.hbm_bytes = std::min(b.hbm_bytes, grads + workspace);

  // ---- the expansion tier, when every offload choice left uses it ---------------------------
  // The optimizer state streams through the GPU at the tier's bandwidth instead of HBM's; with
  // activations offloaded, a micro-batch takes at least its activations' two crossings.
  double tier_step = 0, effective = steady;
  if (!box.offload[static_cast<int>(Offload::none)]) {
    if (expansion_bytes_per_s_ <= 0) return {kInf, kInf, kInf};  // no such plan runs
    tier_step =
        std::max(0.0, local_params * (2.0 * optimizer_bytes_ + grad_bytes_ + weight_bytes_) *
                          (1.0 / expansion_bytes_per_s_ - 1.0 / hbm_bytes_per_s_));
    if (!box.offload[static_cast<int>(Offload::optimizer)] && act_layer != kInf)
      effective = std::max(effective, micro_batches_min * 2.0 * act_layer * first_stage_layers /
                                          expansion_bytes_per_s_);
  }

  // The exposed data-parallel traffic given the least steady time: a step of n micro-batches of
  // x seconds (the slower of compute and tier traffic) takes n x + exposed(x) with exposed(x)
  // falling at most n x dp_overlap as x grows (dp_overlap <= 1), and exposed grows with n; so the
  // fewest micro-batches, the least x and the least bytes bound it. The expert part of split groups
  // is bounded by 0.
  double dp_exposed = 0;
  if (c.dp_overlap >= 0 && c.dp_overlap <= 1) {
    const double window = (stack.dp_overlap ? c.dp_overlap : 0.0) * effective / micro_batches_min;
    const bool merged = edp_group == dp_group && p.etp * p.ep == p.tp;
    const double params = stage_params + (merged ? stage_expert_params : 0.0);
    dp_exposed = kInf;
    for (int zero = 0; zero < 4; ++zero)
      if (box.zero[zero])
        dp_exposed = std::min(
            dp_exposed, dp_cost_s(zero, params * grad_bytes_, params * weight_bytes_, dp_group,
                                  p.tp, window, micro_batches_min, stack.param_gather_overlap)
                            .exposed);
    if (dp_exposed == kInf) dp_exposed = 0;
  }
  b.time_s = effective + tier_step + dp_exposed + p2p + bubble + optimizer + c.per_step_overhead_s;
  b.busy_s = stage_layers * busy_a * step_tokens + optimizer;

  // The terms are summed in another order than estimate() sums them, which may round a few ulps
  // above it; a margin far above rounding and far below any real difference keeps them below.
  constexpr double kMargin = 1.0 - 1e-9;
  b.time_s *= kMargin;
  b.busy_s *= kMargin;
  b.hbm_bytes *= kMargin;
  return b;
}

Estimate estimate(const Workload& workload, const Cluster& cluster, const Plan& plan,
                  const Calibration& calibration) {
  return Estimator(workload, cluster, calibration).estimate(plan);
}

}  // namespace clustersweep::estimator
