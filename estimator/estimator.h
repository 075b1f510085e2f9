#pragma once
// The analytical model of one training step of a dense decoder-only transformer on a GPU cluster.
// Pure: plain structs in, plain structs out; no I/O, no clock, no allocation in estimate().
// The equations and their sources are in docs/estimator.md.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string_view>

#include "estimator/dlrm_calibration.h"
#include "estimator/network.h"
#include "estimator/power.h"
#include "estimator/stack.h"

namespace clustersweep::estimator {

// int8 comes last so that the codes of the others stay what they were (AQT int8 training on TPU).
enum class Precision : std::uint8_t { fp32, tf32, fp16, bf16, fp8, fp4, int8 };
inline constexpr int kNumPrecisions = 7;
inline constexpr const char* kPrecisionNames[kNumPrecisions] = {"fp32", "tf32", "fp16", "bf16",
                                                                "fp8",  "fp4",  "int8"};
enum class Mlp : std::uint8_t { gelu, swiglu };
enum class Recompute : std::uint8_t { none, selective, full };
// What a selective recompute recomputes (Megatron-Core's --recompute-modules), as bits of
// Plan::recompute_modules; none set means its default, the attention core. Each drops the
// activations its module keeps for the backward and repeats its forward in the backward
// (docs/estimator.md, "Recompute modules").
enum RecomputeModule : std::uint8_t {
  kRecomputeCoreAttn = 1,        // the attention scores, softmax and context (unfused attention)
  kRecomputeLayernorm = 2,       // the norms' outputs: the QKV and MLP GEMM inputs
  kRecomputeMlaUpProj = 4,       // MLA's up-projected queries, keys and values
  kRecomputeMlp = 8,             // the dense MLP (fc1 output, activation)
  kRecomputeMoeAct = 16,         // the routed experts' activation output (fc2 input)
  kRecomputeMoe = 32,            // the whole MoE layer: routed activations, dispatch included
  kRecomputeSharedExperts = 64,  // the shared experts' MLP
};
inline constexpr int kNumRecomputeModules = 7;
// What lives in the memory-expansion tier (COMET): nothing; the optimizer state (master weights
// and moments); the optimizer state and stashed activations; or also the weights.
enum class Offload : std::uint8_t { none, optimizer, optimizer_activations, all };
// How the layers are placed on the pp*vp pipeline chunks (docs/estimator.md, "Pipeline splits"):
// every chunk holds layers/(pp*vp) layers; Megatron-Core's account_for_embedding_in_pipeline_split
// and account_for_loss_in_pipeline_split, which count the embedding and the loss as one layer each
// ((layers + 2)/(pp*vp) slots a chunk); or uneven first and last stages, so the critical stage
// holds ceil(layers/(pp*vp)) layers a chunk.
enum class PipelineSplit : std::uint8_t { even, embedding_loss, uneven };
inline constexpr int kNumPipelineSplits = 3;

// The architecture of a decoder-only transformer: dense, or Mixture-of-Experts when num_experts > 0
// (a dense model is the special case of no experts). Every field past `vocab` is 0 when absent.
struct Model {
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;    // = heads without GQA/MQA; unused with MLA
  int ffn_hidden = 0;  // dense layers' MLP width, per gate/up matrix for SwiGLU
  Mlp mlp = Mlp::gelu;
  int vocab = 0;
  // Attention head dimensions; 0 = hidden/heads. With MLA qk_head_dim is nope + rope.
  int qk_head_dim = 0;
  int v_head_dim = 0;
  // DeepSeek's multi-head latent attention when kv_lora_rank > 0 (q_lora_rank 0: a full-rank
  // query projection).
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_rope_head_dim = 0;
  // Mixture-of-Experts: routed experts per MoE layer, experts per token, one routed expert's MLP
  // width and the total width of the always-active shared experts.
  int num_experts = 0;
  int top_k = 0;
  int moe_ffn_hidden = 0;
  int shared_ffn_hidden = 0;
  int dense_layers =
      0;               // of `layers`, with a dense MLP (DeepSeek's first k, Llama 4's interleaved)
  int mtp_layers = 0;  // DeepSeek multi-token-prediction layers, after the last layer
  int sliding_window = 0;         // tokens a windowed layer attends to (GPT-OSS 128)
  int sliding_window_layers = 0;  // layers that use the window
};
inline bool is_moe(const Model& m) noexcept { return m.num_experts > 0; }
inline bool is_mla(const Model& m) noexcept { return m.kv_lora_rank > 0; }
// Layers whose MLP is a Mixture of Experts.
inline int moe_layers(const Model& m) noexcept { return is_moe(m) ? m.layers - m.dense_layers : 0; }

struct Workload {
  Model model;
  int seq_len = 0;
  std::int64_t global_batch = 0;  // sequences per optimizer step
  Precision precision = Precision::bf16;
  // > 0: LoRA fine-tuning (Hu et al. 2021): the base weights are frozen (no weight-gradient
  // GEMMs, gradients or optimizer state for them) and adapters of this rank train on the
  // attention projections (query/key/value and output, as MLPerf's Llama 2 70B LoRA).
  int lora_rank = 0;
};

// The optimizer steps that train `tokens` tokens (NaN for a workload without tokens per step).
inline double steps_to_train(const Workload& w, double tokens) noexcept {
  const double per_step = static_cast<double>(w.global_batch) * static_cast<double>(w.seq_len);
  return per_step > 0 ? tokens / per_step : std::numeric_limits<double>::quiet_NaN();
}

// How the chips of one scale-up domain are joined (docs/estimator.md, "Scale-up fabrics"):
// switched (NVSwitch, NVL72): every chip reaches every other at its full scale-up bandwidth;
// mesh (AMD Infinity Fabric, Gaudi's scale-up RoCE ports): one direct link to each other chip of
// the domain, so a group of g chips has only the g-1 links between its members; torus (TPU ICI,
// Trainium NeuronLink): chips on a 2D or 3D torus, collectives run per dimension.
enum class Fabric : std::uint8_t { switched, mesh, torus };
inline constexpr int kNumFabrics = 3;
inline constexpr const char* kFabricNames[kNumFabrics] = {"switch", "mesh", "torus"};
inline constexpr int kMaxTorusDims = 3;

// The scale-out network's shape (docs/estimator.md, "Scale-out networks"): fat_tree, a folded
// Clos whose leaves hold whole nodes; rail_optimized, the same Clos with the leaves wired by rail
// (GPU k of every node on leaf k, DGX SuperPOD), so one leaf reaches more nodes for same-rail
// traffic; rail_only (Wang et al. 2023), one network per rail and no spine between rails:
// cross-rail traffic is forwarded through the scale-up domain first (PXN); dragonfly, groups of
// routers joined all-to-all inside and by global links between groups (Slingshot, DragonFly+).
enum class Network : std::uint8_t { fat_tree, rail_optimized, rail_only, dragonfly };
inline constexpr int kNumNetworks = 4;
inline constexpr const char* kNetworkNames[kNumNetworks] = {"fat_tree", "rail_optimized",
                                                            "rail_only", "dragonfly"};

// A scale-out network's shape and taper. The default is today's non-blocking fat tree: every GPU
// reaches every other at its full scale-out bandwidth.
struct ScaleOut {
  Network network = Network::fat_tree;
  // The taper (downlinks : uplinks) above the leaf, or above a pod of pod_gpus GPUs when pod_gpus
  // is set; 1 is non-blocking. Traffic that crosses the tapered level gets 1/oversubscription of
  // its bandwidth.
  double oversubscription = 1;
  int pod_gpus = 0;  // 0: the taper sits above the leaf
  // Parallel planes: each NIC port split over `planes` independent networks of 1/planes of its
  // speed each (the same bandwidth in total, switches of planes x the radix at that speed).
  int planes = 1;
  int group_gpus = 0;       // dragonfly: GPUs per group (0: one leaf's worth)
  double global_taper = 1;  // dragonfly: a group's injection : its global links' bandwidth
};

// The scale-out network as the step-time model places a group's traffic on it
// (detail/collectives.h, scale_out_levels): how many consecutive GPUs share a leaf, sit below the
// taper and form a dragonfly group. Computed once per cluster.
struct ScaleOutLevels {
  // A non-blocking fat tree or rail-optimized network: every group gets its full scale-out
  // bandwidth, and the model takes none of the steps below.
  bool non_blocking = true;
  Network network = Network::fat_tree;
  std::int64_t node_gpus = 1;   // GPUs per node: the rails, one NIC each
  std::int64_t taper_gpus = 0;  // a group spanning more crosses the tapered level
  double oversubscription = 1;
  std::int64_t group_gpus = 0;  // dragonfly: a group spanning more crosses the global links
  double global_taper = 1;
};

struct Accelerator {
  double peak_flops[kNumPrecisions] = {};  // dense FLOP/s per Precision; 0 = not supported
  double hbm_bytes = 0;
  double hbm_bytes_per_s = 0;
  double nvlink_bytes_per_s = 0;  // per GPU, one direction
  double tdp_w = 0;
  double idle_w = 0;
  // Its 8-bit tensor cores take only the TN operand layout (Hopper, Ada): a low-precision GEMM's
  // backward needs a transposed 8-bit copy of each operand, written by the quantization kernel.
  bool fp8_tn_only = false;
  // The share of its own fused attention's rate (cuDNN, FlashAttention-3) that attention kernels
  // written for the previous generation's warp-level MMA reach (FlashAttention-2, Triton's flash
  // kernel): they use neither Hopper's wgmma nor its TMA. 1 where those kernels are the part's own.
  double legacy_attention_share = 1;
};

struct Cluster {
  Accelerator gpu;
  int num_gpus = 0;
  int gpus_per_node = 0;
  int nvlink_domain = 0;              // GPUs sharing one NVLink/NVSwitch domain
  double nvlink_bytes_per_s = 0;      // per GPU, one direction
  double inter_node_bytes_per_s = 0;  // scale-out, per GPU, one direction
  double nvlink_latency_s = 0;
  double inter_node_latency_s = 0;
  double hbm_bytes = 0;              // capacity per GPU (may differ from gpu.hbm_bytes)
  double expansion_bytes = 0;        // memory-expansion tier per GPU (host DRAM, CXL)
  double expansion_bytes_per_s = 0;  // per GPU, one direction
  double node_overhead_w = 0;        // per node: CPUs, NICs, fans, beyond the GPUs (maximum)
  double power_cap_w = 0;            // GPU board power limit (0: none, the TDP)
  Fabric fabric = Fabric::switched;  // of the scale-up domain (nvlink_domain chips)
  // With Fabric::torus: the domain's dimensions, the fastest-varying rank first (their product is
  // nvlink_domain); unused dimensions are 1.
  std::array<int, kMaxTorusDims> torus{1, 1, 1};
  ScaleOut scale_out;  // the scale-out network's shape (the default: non-blocking fat tree)
};

// What a group sends over the scale-up fabric: a collective (ring, tree), a point-to-point
// send to one neighbour (pipeline stages, the context-parallel ring), an all-to-all (expert
// dispatch, embedding exchange).
enum class Traffic : std::uint8_t { collective, p2p, all_to_all };

// The links that share a chip's scale-up bandwidth (nvlink_bytes_per_s): one switch port
// (counted as one), a mesh's link to each other chip of the domain, a torus's two per dimension.
inline double scale_up_links(const Cluster& c) noexcept {
  switch (c.fabric) {
    case Fabric::switched:
      break;
    case Fabric::mesh:
      return std::max(c.nvlink_domain - 1, 1);
    case Fabric::torus: {
      int dims = 0;
      for (const int length : c.torus) dims += length > 1;
      return std::max(2 * dims, 1);
    }
  }
  return 1;
}

// The most balanced torus of `chips` in `dims` dimensions (1 to kMaxTorusDims), smallest first,
// as TPU slices are shaped (8: 2x4, 32: 4x8, 256: 16x16; 64: 4x4x4, 128: 4x4x8): each prime
// factor, largest first, multiplies the smallest dimension so far. Unused dimensions are 1.
std::array<int, kMaxTorusDims> balanced_torus(int chips, int dims) noexcept;

// Whether a group of n ranks at stride `stride` is a box of the torus (rank places in mixed radix,
// the first dimension fastest): its stride and its extent stride * n each either fill whole
// dimensions or split one dimension evenly, so every member's group has the same shape. A group
// that leaves the domain is only checked within it.
inline bool torus_box(const std::array<int, kMaxTorusDims>& torus, int stride, int n) noexcept {
  std::int64_t domain = 1;
  for (const int length : torus) domain *= length;
  const std::int64_t r = std::max(stride, 1);
  if (r >= domain) return true;
  const std::int64_t extent = std::min<std::int64_t>(r * std::max(n, 1), domain);
  for (const std::int64_t x : {r, extent}) {
    if (domain % x != 0) return false;
    std::int64_t place = 1;
    for (const int length : torus) {
      if (x > place && x < place * length && (x % place != 0 || length % (x / place) != 0))
        return false;
      place *= length;
    }
  }
  return true;
}

// The nodes of a cluster: its GPUs over the GPUs of a node, the last node perhaps part-filled.
inline int num_nodes(const Cluster& c) noexcept {
  const std::int64_t per_node = c.gpus_per_node > 0 ? c.gpus_per_node : 1;
  return static_cast<int>((std::int64_t{c.num_gpus} + per_node - 1) / per_node);
}

struct Plan {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int cp = 1;
  int vp = 1;  // interleaved virtual stages per pipeline rank
  bool sequence_parallel = false;
  int zero = 0;  // 0..3; FSDP FULL_SHARD = 3
  Recompute recompute = Recompute::none;
  std::uint8_t recompute_modules = 0;  // RecomputeModule bits, with Recompute::selective
  int micro_batch = 1;
  Offload offload = Offload::none;
  PipelineSplit pipeline_split = PipelineSplit::even;
  // Megatron-Core MoE parallel folding: the experts use etp x ep x edp over the tp x cp x dp GPUs
  // of a pipeline stage (edp = tp*cp*dp / (etp*ep)).
  int ep = 1;
  int etp = 1;
  // Tokens an expert takes per batch, as a multiple of its balanced share; the rest are dropped
  // (GShard, Switch); with TokenRouting::capacity only. 0 = no capacity.
  double capacity_factor = 0;
  // The runtime settings of the software stack (estimator/stack.h).
  Stack stack;
};

// Where a plan's parallel groups sit in the job's rank numbering (Stack::rank_order): a group of n
// ranks at stride r spans r n consecutive ranks. tp is always fastest (stride 1) and the experts
// fold etp, then ep, over a stage's ranks (ep at stride etp). tp-pp-dp runs without cp and ep and,
// on a Mixture-of-Experts model, with etp = tp (spaces/rules.h): its experts' replicas are the
// weights', reduced with them, so the experts' own stride matters in Megatron's order only.
struct RankStrides {
  int cp = 1;
  int dp = 1;         // of the data-parallel degree alone
  int pp = 1;         // of the pipeline's stages
  int weights = 1;    // of the dp x cp ranks holding the same weights (the gradient reduction)
  int expert_dp = 1;  // of the edp ranks holding the same experts
};
constexpr RankStrides rank_strides(const Plan& p) noexcept {
  if (p.stack.rank_order == RankOrder::tp_pp_dp)
    return {p.tp, p.tp * p.pp, p.tp, p.tp * p.pp, p.etp * p.ep};
  return {p.tp, p.tp * p.cp, p.tp * p.cp * p.dp, p.tp, p.etp * p.ep};
}

// Why a point cannot run. Stable codes: they are stored in results (docs/store-format.md).
enum class Infeasible : std::uint8_t {
  none = 0,
  degrees_mismatch,       // tp*pp*dp*cp != num_gpus
  tp_not_dividing_heads,  // tp must divide heads and kv_heads (or kv_heads divide tp)
  pp_vp_not_dividing_layers,
  batch_not_divisible,  // global_batch % (dp*micro_batch) != 0
  cp_not_dividing_seq,
  precision_unsupported,  // the accelerator has no peak for this precision
  out_of_memory,          // does not fit HBM (+ expansion tier)
  invalid_plan,           // any other structural violation (zero out of range, vp>1 with pp=1...)
};
inline constexpr int kNumInfeasible = 9;
const char* to_string(Infeasible reason) noexcept;

// Names as used in files and flags: "bf16", "swiglu", "selective", "optimizer_activations".
const char* to_string(Precision precision) noexcept;
const char* to_string(Mlp mlp) noexcept;
const char* to_string(Recompute recompute) noexcept;
const char* to_string(Offload offload) noexcept;
const char* to_string(PipelineSplit split) noexcept;
// false (and `out` untouched) when `name` is not one of the names above.
bool parse_precision(std::string_view name, Precision& out) noexcept;
bool parse_mlp(std::string_view name, Mlp& out) noexcept;
bool parse_recompute(std::string_view name, Recompute& out) noexcept;
// A plan's recompute as flags, specs and the store spell it: "none", "selective", "full", or
// selective with its modules, "selective:mla_up_proj+mlp" (RecomputeModule names: core_attn,
// layernorm, mla_up_proj, mlp, moe_act, moe, shared_experts).
std::string recompute_label(Recompute recompute, std::uint8_t modules);
// "none, selective, full or selective:MODULE+MODULE... (core_attn, ...)": for error messages.
std::string recompute_values();
// false (and the outputs untouched) when `label` is none of those; modules in any order, each once.
bool parse_recompute_label(std::string_view label, Recompute& recompute,
                           std::uint8_t& modules) noexcept;
// The modules a selective recompute recomputes, its default made explicit (0 -> core_attn).
inline std::uint8_t recomputed_modules(Recompute recompute, std::uint8_t modules) noexcept {
  if (recompute != Recompute::selective) return 0;
  return modules == 0 ? std::uint8_t{kRecomputeCoreAttn} : modules;
}
bool parse_offload(std::string_view name, Offload& out) noexcept;
bool parse_pipeline_split(std::string_view name, PipelineSplit& out) noexcept;
const char* to_string(Fabric fabric) noexcept;  // "switch", "mesh", "torus"
bool parse_fabric(std::string_view name, Fabric& out) noexcept;
const char* to_string(Network network) noexcept;  // kNetworkNames
bool parse_network(std::string_view name, Network& out) noexcept;

// Seconds of one optimizer step, by cause. Each part is the time it adds to the step: what overlap
// hides (DP communication behind the backward, TP communication behind GEMMs, CP exchanges behind
// attention, tier traffic behind compute) is already taken out, so total_s is their plain sum.
struct StepTime {
  double compute_s = 0;       // GEMMs and attention matmuls, incl. recompute
  double memory_bound_s = 0;  // elementwise, norms, softmax: bounded by HBM bandwidth
  double tp_comm_s = 0;       // tensor/sequence-parallel collectives
  double cp_comm_s = 0;       // context-parallel KV exchange (exposed part)
  double pp_p2p_s = 0;        // pipeline point-to-point sends
  double pp_bubble_s = 0;     // pipeline fill/drain
  double ep_a2a_s = 0;        // expert dispatch/combine all-to-all (exposed part)
  double dp_exposed_s = 0;    // data-parallel / ZeRO communication not hidden by backward
  double edp_exposed_s = 0;   // expert data-parallel communication not hidden by backward
  double optimizer_s = 0;     // optimizer step
  double offload_s = 0;       // exposed traffic to/from the expansion tier
  double host_s = 0;          // kernel launches the GPU waits for, and MoE host syncs
  double overhead_s = 0;      // framework overheads (calibrated)
  double total_s = 0;
};

// Bytes per GPU, by kind; the peak footprint is hbm_bytes + expansion_bytes. The expert parts
// are the routed experts' (sharded over ep x etp x edp); the others hold everything else.
struct Memory {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;  // of all in-flight micro-batches
  double workspace_bytes = 0;
  double expert_weights_bytes = 0;
  double expert_gradients_bytes = 0;
  double expert_optimizer_bytes = 0;
  double expert_activations_bytes = 0;  // routed tokens' activations, all in-flight micro-batches
  double hbm_bytes = 0;                 // the part that must live in HBM
  double expansion_bytes = 0;           // the part moved to the expansion tier
};

struct Estimate {
  bool feasible = false;
  Infeasible reason = Infeasible::none;
  StepTime time;
  Memory memory;
  double model_flops_per_step = 0;  // 6*N*T-style model FLOPs (active parameters), no recompute
  double tokens_per_s = 0;          // whole job
  double mfu = 0;                   // model FLOPs / (step time * num_gpus * peak)
  double energy_per_step_j = 0;     // IT energy: servers and network, before PUE (power.it_j)
  StepPower power;                  // average power and the energy of a step by scope
};

// Efficiency parameters fitted on ../shared/validation (data/calibration.toml; a user may override
// them with measurements of their own cluster). Every field is a plain number; calibration_fields()
// lists them with their names in calibration.toml. The defaults below are the physically motivated
// prior from which `clustersweep validate --fit` starts (docs/calibration.md).
struct Calibration {
  // Achieved fraction of peak for a GEMM: gemm_eff_max * d/(d + gemm_half_dim) on the smallest
  // GEMM dimension d, so small (tp-split, small micro-batch) GEMMs run less efficiently.
  double gemm_eff_max = 0.8;
  double gemm_half_dim = 256;
  double attention_eff = 0.5;       // attention score/context matmuls, fraction of peak
  double hbm_eff = 0.8;             // achieved fraction of HBM bandwidth
  double nvlink_eff = 0.75;         // achieved fraction of NVLink bandwidth in collectives
  double inter_node_eff = 0.8;      // achieved fraction of scale-out bandwidth
  double expansion_eff = 0.8;       // achieved fraction of expansion-tier bandwidth
  double dp_overlap = 0.7;          // fraction of DP communication hidden behind backward
  double tp_overlap = 0.3;          // fraction of TP communication hidden behind GEMMs
  double per_layer_overhead_s = 0;  // framework time per layer per micro-batch
  // Host seconds to launch one kernel (PyTorch dispatch + CUDA launch); the GPU waits for them
  // when a layer's launches take longer than its kernels run (not in a CUDA graph).
  double launch_s = 0;
  // Fraction of TP communication hidden without userbuffers (tp_comm_overlap off): Megatron's
  // asynchronous all-reduce under the weight-gradient GEMM; never more than tp_overlap.
  double tp_overlap_off = 0.1;
  double pp_overlap = 0;  // fraction of the pipeline sends hidden with pp_comm_overlap
  // Attention kernels' efficiency relative to cuDNN's fused attention (and FlashAttention-3); 1
  // until runs of more than one source tell them apart (docs/calibration.md).
  double flash2_attention_eff = 1;
  double triton_attention_eff = 1;
  double per_step_overhead_s = 0;                // framework overhead per optimizer step
  double default_inter_node_gbps_per_gpu = 400;  // when a run does not state it
  // Fraction of the bf16 GEMM efficiency that fp8/fp4 GEMMs reach (scaling/casting, smaller
  // tiles saturate less): an fp8 GEMM runs at fp8 peak * gemm efficiency * this.
  double low_precision_gemm_eff = 0.8;
  // Elementwise/normalisation HBM traffic per token per layer in units of (hidden) elements; the
  // default is the count of docs/estimator.md (layer norms, residuals, dropout, activation).
  double memory_bound_scale = 1.0;
  // 1: fused (Flash) attention: no s^2 score tensors are stored, the backward recomputes the
  // scores (Dao et al. 2022); 0: the Megatron/Korthikanti unfused attention.
  double flash_attention = 1;
  // 1: causal attention kernels skip the masked half of the score matrix.
  double causal_attention_skip = 1;
  double workspace_bytes = 2.0e9;       // CUDA context, library workspaces, fragmentation, per GPU
  double nvlink_latency_s = 3e-6;       // alpha of one NVLink hop (collective step)
  double inter_node_latency_s = 10e-6;  // alpha of one scale-out hop
  double default_expansion_gbytes_per_s = 0;  // unused unless a cluster has an expansion tier
  // How much of the scale-out bandwidth of the k group members inside one NVLink domain a
  // collective drives: per-rank bandwidth min(NVLink, (1 + nic_aggregation (k - 1)) x scale-out).
  // 1 = NCCL rings/trees with one channel per NIC; 0 = every rank limited by its own NIC.
  double nic_aggregation = 0.5;
  // 1: dropout masks are stored (GPT-3/Megatron recipes, Korthikanti's count); 0: no dropout.
  double dropout_masks = 0;
  // Mixture-of-Experts parameters ([moe] in calibration.toml; moe_calibration_fields()).
  // Learned (dropless) routing: the relative spread of the token loads of expert-parallel ranks.
  // The busiest of ep ranks then takes 1 + load_cv sqrt(2 ln ep) of the balanced share (the
  // expected maximum of ep normal loads); it also sets the tokens a capacity drops.
  double moe_load_cv = 0.05;
  // Expert GEMMs as grouped GEMMs over the local experts: this fraction of a plain GEMM's
  // efficiency at the same per-expert size.
  double moe_grouped_gemm_eff = 0.9;
  double moe_expert_half_rows = 64;  // rows per local expert at half the grouped efficiency
  double moe_a2a_eff = 0.7;          // achieved fraction of link bandwidth, NCCL dispatchers
  double moe_deepep_eff = 0.8;       // the same for DeepEP's fused kernels
  double moe_hybridep_eff = 0.85;    // the same for HybridEP's
  // Fraction of the all-to-all hidden without the overlap setting (the shared experts run while
  // the tokens travel); with a2a_overlap the rest hides under another micro-batch's compute.
  double moe_a2a_overlap = 0.3;
  double moe_permute_passes = 4;    // HBM passes over the routed tokens (permute, unpermute)
  double moe_layer_overhead_s = 0;  // host sync per MoE layer per micro-batch (not in a graph)
  // The routed tokens' memory-bound kernels (permutation gathers and scatters by routing index,
  // the activation over each expert's variable-length chunk) reach this fraction of the
  // bandwidth a dense layer's streaming elementwise kernels reach (hbm_eff).
  double moe_routed_hbm_eff = 1;
  // fp8/fp4 expert GEMMs reach this fraction of the dense fp8/fp4 GEMM efficiency
  // (low_precision_gemm_eff): each expert's chunk is quantized and scaled on its own and its GEMM
  // is small, so the per-GEMM scaling and casting are amortized over fewer FLOPs.
  double moe_low_precision_expert_eff = 1;
  // The 90% prediction interval of a step time as measured / predicted ratios, dense and MoE:
  // e^-q and e^q, q the conformal quantile of the held-out |log residuals| (`validate --fit` sets
  // them; docs/calibration.md, "Prediction intervals"). The step is in [predicted x lo,
  // predicted x hi]; a user's file may set the two ends apart.
  double interval_lo = 0.768;
  double interval_hi = 1.301;
  double moe_interval_lo = 0.654;
  double moe_interval_hi = 1.529;
  // A point with few calibration runs like it (spaces/support.h) has the interval [lo^w, hi^w]:
  // the held-out residuals of such runs against the others' (docs/calibration.md).
  double interval_widening = 1.4;
  // The power model ([power] in calibration.toml; estimator/power.h): board power by kind of
  // work as fractions of TDP, the share of a node's maximum beyond its GPUs drawn while training,
  // and how power follows the clock under a cap.
  double gemm_power = 0.95;
  double memory_power = 0.75;
  double comm_power = 0.5;
  double wait_power = 0.3;
  double node_power = 0.5;
  double dvfs_exponent = 2.4;
  // The scale-out network's parts by port speed, with their prices and power
  // (spaces/data/network.toml; estimator/network.h): what its bill of materials is made of.
  NetworkCatalog network;
  // The recommendation-model family's parameters ([dlrm] in calibration.toml).
  DlrmCalibration dlrm;
};

// The 90% prediction interval of a step of `model` (dense or MoE) as measured / predicted ratios.
struct StepInterval {
  double lo = 1;
  double hi = 1;
};
StepInterval step_interval(const Calibration& calibration, const Model& model) noexcept;

// The prediction-interval fields of every section are not fitted but derived from the fit's
// held-out residuals; they are named so.
inline bool is_interval_field(std::string_view name) noexcept {
  return name.starts_with("interval_");
}

// The named fields of Calibration, in file order: name in calibration.toml, member, and the
// bounds the fit (`clustersweep validate --fit`) may move it within (lo == hi: never fitted).
struct CalibrationField {
  const char* name;
  double Calibration::*member;
  double lo;
  double hi;
  const char* doc;
};
// The [calibration] fields, then the [moe] fields, then the [power] fields; stable order.
// calibration_fields_end() is moe_calibration_fields_begin(), so [begin, moe end) are all
// transformer-family step-time fields; the [power] fields serve every family.
const CalibrationField* calibration_fields_begin() noexcept;
const CalibrationField* calibration_fields_end() noexcept;
const CalibrationField* moe_calibration_fields_begin() noexcept;
const CalibrationField* moe_calibration_fields_end() noexcept;
const CalibrationField* power_calibration_fields_begin() noexcept;
const CalibrationField* power_calibration_fields_end() noexcept;

// Closed forms used by estimate() and pinned by the tests.
// Model FLOPs of one optimizer step (forward + backward, every matmul incl. attention scores over
// the full s x s matrix and the logit layer; Narayanan et al. SC'21 eq. 3 convention). With
// Recompute::full the recompute forward of the transformer layers is included (96 B s l h^2 form);
// Recompute::selective adds the attention-score forward.
double training_flops_per_step(const Workload& workload, Recompute recompute) noexcept;
// Parameters of one transformer layer (QKV, output projection, MLP, two norms) and in total
// (layers + input embedding + output layer, untied). For an MoE model a layer's count is the mean
// over its layers, and total_params counts every expert and the MTP layers.
double params_per_layer(const Model& model) noexcept;
double total_params(const Model& model) noexcept;
// Parameters one token passes through (MoE: top_k routed experts, not all of them).
double active_params(const Model& model) noexcept;
// Training FLOPs per token by Megatron-LM's num_floating_point_operations (training.py): GEMMs
// x 3 (forward, two backward), causal attention as half the score matrix, routed and shared
// experts, MLA projections, MTP layers with their projection and logits; no router, no recompute.
double megatron_flops_per_token(const Model& model, int seq_len) noexcept;
// Activation bytes stored by one transformer layer for one micro-batch during the forward pass
// (Korthikanti et al. 2022, Table 2, generalised to GQA and SwiGLU; 16-bit activations and 1-byte
// dropout masks). seq_len is the local sequence (after context parallelism). Without
// dropout_masks the two 1-byte masks are not stored (no dropout, as in Llama/MPT/Nemotron
// recipes); with fp8_gemm_inputs the four GEMM inputs kept for the backward are 1 byte (fp8/fp4
// training with Transformer Engine).
double activation_bytes_per_layer(const Model& model, double seq_len, double micro_batch, int tp,
                                  bool sequence_parallel, Recompute recompute, bool flash_attention,
                                  bool dropout_masks = true, bool fp8_gemm_inputs = false,
                                  std::uint8_t recompute_modules = 0) noexcept;

// A set of plans of one workload on one cluster for the plan search (docs/search.md): the degrees
// tp, pp, dp, cp, ep, etp and the capacity factor of `plan` are fixed; each other setting ranges
// over the values marked (a range for vp and the micro-batch).
struct PlanBox {
  Plan plan;
  int vp_min = 1, vp_max = 1;
  int micro_batch_min = 1, micro_batch_max = 1;
  bool zero[4] = {true, true, true, true};  // by ZeRO stage
  bool recompute[3] = {true, true, true};   // by Recompute
  // The modules of every selective recompute in the box, together (more modules recompute more
  // and keep less: the least memory of them all); Plan::recompute_modules bits.
  std::uint8_t recompute_modules = 0;
  bool sequence_parallel[2] = {true, true};                      // off, on
  bool offload[4] = {true, true, true, true};                    // by Offload
  bool pipeline_split[kNumPipelineSplits] = {true, true, true};  // by PipelineSplit
};

// Lower bounds over every plan of a PlanBox that the rules accept (spaces/rules.h): no such plan
// has a smaller step time, a smaller busy time (the part of the step energy counts at busy power:
// compute, memory-bound kernels, optimizer) or needs less HBM.
struct StepBound {
  double time_s = 0;
  double busy_s = 0;
  double hbm_bytes = 0;
};

// Everything that depends only on the workload and the cluster, computed once; estimate() is then
// cheap, allocation-free and thread-safe.
class Estimator {
 public:
  Estimator(const Workload& workload, const Cluster& cluster, const Calibration& calibration);
  Estimate estimate(const Plan& plan) const noexcept;
  // Allocation-free; each term is the matching term of estimate() with the settings the box
  // leaves open at their most favourable values (docs/search.md).
  StepBound bound(const PlanBox& box) const noexcept;
  // The lower bound of the step energy of a plan whose step and busy times are at least these.
  double energy_bound_j(double time_s, double busy_s) const noexcept;
  // One copy of the training state a restart needs, whatever the plan: every parameter's weight
  // and optimizer state (fp32 master and moments), as the job model saves it (estimator/job.h).
  double checkpoint_bytes() const noexcept;

  const Workload& workload() const noexcept { return workload_; }
  const Cluster& cluster() const noexcept { return cluster_; }

 private:
  // The parts of estimate() and bound(), one mechanism a file. The per-plan ones are defined inline
  // in estimator/detail/<mechanism>.h (named below), which estimator.cc and bound.cc include, so
  // estimate() compiles as one function and stays allocation-free; so are the intermediate
  // structs. What runs once per Estimator is in ordinary .cc files.

  // detail/step.h: the plan's sizes every part uses, the time parts of a layer or stage, and the
  // time of a GEMM of rows x k by k x n.
  struct StepShape;
  struct Parts;
  double gemm_s(double rows, double k, double n) const noexcept;
  // detail/collectives.h: achieved bandwidth and latency of a group of n ranks at stride `stride`
  // in Megatron's rank order.
  void link(int stride, int n, double& bytes_per_s, double& alpha,
            Traffic traffic = Traffic::collective) const noexcept;
  // The scale-out bandwidth of such a group, `scale_up` its scale-up bandwidth, on a network other
  // than the default non-blocking one (detail::placed_scale_out_bytes_per_s), in estimator.cc.
  double placed_scale_out_bytes_per_s(int stride, int n, Traffic traffic,
                                      double scale_up) const noexcept;
  // detail/attention.h. How a plan's attention kernel runs the score and context matmuls: FLOP/s
  // achieved, backward over forward time, and whether the s x s scores stay on chip.
  struct AttentionKernelCost {
    double flops_per_s = 0;
    double bwd_factor = 2;
    bool fused = true;
  };
  // The exposed context-parallel exchange of one layer and micro-batch of `tokens` local tokens.
  struct CpExchange {
    double forward_s = 0, backward_s = 0;
  };
  AttentionKernelCost attention_kernel(const Stack& stack) const noexcept;
  double attention_gemm_fwd_s(const StepShape& shape) const noexcept;
  // The attention score and context matmuls of one layer's forward over `tokens` local tokens.
  double attention_fwd_s(double tokens, int tp, const AttentionKernelCost& kernel) const noexcept;
  double attention_elementwise_bytes(const StepShape& shape) const noexcept;
  double attention_operands(double tp) const noexcept;
  CpExchange cp_exchange_s(double tokens, int tp, int cp,
                           const AttentionKernelCost& kernel) const noexcept;
  // detail/experts.h: the dense MLP, an MoE layer's router and experts, and the forward dispatch +
  // combine of `token_bytes` over an ep group, less what the shared experts hide.
  struct MoeForward;
  double dense_mlp_fwd_s(const StepShape& shape) const noexcept;
  double dense_mlp_operands(double tp) const noexcept;
  MoeForward moe_forward(const StepShape& shape) const noexcept;
  void add_dispatch_einsums(const StepShape& shape, MoeForward& forward) const noexcept;
  double a2a_fwd_s(double token_bytes, int ep, int etp, Dispatcher dispatcher) const noexcept;
  // detail/host.h: the host time of one layer's kernel launches per micro-batch that CUDA graphs
  // do not remove, and the host syncs of the MoE layers per layer and micro-batch (the mean over
  // layers).
  struct LayerLaunches {
    double before_dispatch_s = 0;
    double from_dispatch_s = 0;
  };
  LayerLaunches layer_launches(const Plan& plan) const noexcept;
  // The launch time the GPU waits for in a mean layer whose kernels run `layer_s`, `experts_s` of
  // it from the dispatch on.
  double exposed_launch_s(const Plan& plan, double layer_s, double experts_s) const noexcept;
  // Whether MoE layers copy their token counts to the host before the dispatch (not inside a
  // whole-layer CUDA graph with static shapes).
  bool syncs_before_experts(const Plan& plan) const noexcept;
  double moe_sync_s(const Plan& plan) const noexcept;
  // detail/quantize.h: the casts of low-precision GEMM operands, one layer and micro-batch.
  double quantize_s(const StepShape& shape, double moe_operands) const noexcept;
  // detail/layer.h: one layer and the logit layer, forward + backward (+ recompute).
  struct LayerForward;
  LayerForward layer_forward(const StepShape& shape) const noexcept;
  Parts layer_parts(const StepShape& shape, const LayerForward& forward) const noexcept;
  Parts logit_parts(const StepShape& shape, const Parts& layer) const noexcept;
  // detail/pipeline.h: the critical stage's layer slots, time, sends and parameters.
  struct PipelineStage;
  void stage_slots(StepShape& shape) const noexcept;
  PipelineStage critical_stage(const StepShape& shape, const Parts& layer,
                               const Parts& logit) const noexcept;
  double stage_params(const StepShape& shape, double per_layer, double embedding,
                      double last_extra) const noexcept;
  // detail/memory.h: the footprint per GPU, the optimizer step and the expansion-tier traffic.
  struct GpuParams;
  struct Activations;
  struct TierTraffic;
  GpuParams gpu_params(const StepShape& shape) const noexcept;
  Activations activations(const StepShape& shape, double routed_rows) const noexcept;
  Memory memory(const StepShape& shape, const GpuParams& params,
                const Activations& activations) const noexcept;
  TierTraffic tier_traffic(const Plan& plan, const GpuParams& params,
                           const Activations& activations, const Memory& memory) const noexcept;
  // detail/data_parallel.h. The data-parallel collectives of one group under a ZeRO stage: what
  // each backward window has to hide, and what a step of `micro_batches` leaves exposed when each
  // window is `window` long.
  struct DpCost {
    double per_window = 0;
    double exposed = 0;
  };
  struct DataParallel;
  DpCost dp_cost_s(int zero, double grads, double params, int group, int stride, double window,
                   double micro_batches, bool gather_overlap = true) const noexcept;
  DataParallel data_parallel(const StepShape& shape, const GpuParams& params,
                             double effective_mb_s) const noexcept;
  // estimator.cc: the guard against malformed plans and the assembly of a step.
  bool well_formed(const Plan& plan) const noexcept;
  StepShape step_shape(const Plan& plan) const noexcept;
  StepTime step_time(const StepShape& shape, const PipelineStage& stage, double effective_mb_s,
                     const TierTraffic& tier, const DataParallel& dp) const noexcept;
  // bound.cc: the terms of bound().
  struct BoundShape;
  struct LayerBound;
  struct StateBound;
  BoundShape bound_shape(const PlanBox& box) const noexcept;
  double gemm_flops_bound(const BoundShape& shape) const noexcept;
  LayerBound layer_bound(const BoundShape& shape) const noexcept;
  double steady_bound(const BoundShape& shape, const LayerBound& layer) const noexcept;
  double p2p_bound(const BoundShape& shape) const noexcept;
  double bubble_bound(const BoundShape& shape, const LayerBound& layer) const noexcept;
  StateBound state_bound(const BoundShape& shape) const noexcept;
  double first_stage_layers_bound(const BoundShape& shape) const noexcept;
  double activations_bound(const BoundShape& shape) const noexcept;
  double hbm_bound(const BoundShape& shape, const StateBound& state,
                   double activations) const noexcept;
  double dp_exposed_bound(const BoundShape& shape, const StateBound& state,
                          double effective) const noexcept;

  Workload workload_;
  Cluster cluster_;
  Calibration calibration_;
  // Precomputed terms (implementation detail; see the constructor in estimator.cc).
  double params_per_layer_ = 0;
  double embedding_params_ = 0;
  double peak_flops_ = 0;          // GEMM peak for the workload precision, at the capped clock
  double nominal_peak_flops_ = 0;  // uncapped: MFU's denominator
  double attention_peak_ = 0;      // attention runs in 16-bit even in fp8/fp4 training
  double gemm_eff_scale_ = 1;      // gemm_eff_max, times low_precision_gemm_eff for fp8/fp4
  double act_bytes_ = 2;           // bytes per activation/communicated element
  double weight_bytes_ = 2;        // bytes per stored weight
  double grad_bytes_ = 2;          // bytes per gradient in the training precision (x trainable)
  double fp32_grad_bytes_ = 4;     // the same with grad_reduce_fp32 (fp32 beside 16-bit weights)
  double optimizer_bytes_ = 12;    // fp32 master + Adam moments per parameter
  double hbm_bytes_per_s_ = 0;     // achieved
  double nvlink_bytes_per_s_ = 0;  // achieved, all of a chip's scale-up links
  double inter_node_bytes_per_s_ = 0;
  double expansion_bytes_per_s_ = 0;
  double nvlink_latency_s_ = 0;
  double inter_node_latency_s_ = 0;
  double attention_keys_ = 0;          // keys a query attends to, mean over layers (causal, window)
  double qkv_out_ = 0;                 // QKV output width (unsplit)
  double attn_out_in_ = 0;             // output projection input width (heads x v_head_dim)
  double qk_dim_ = 0, v_dim_ = 0;      // per head
  double moe_fraction_ = 0;            // MoE layers / layers
  double dense_params_per_layer_ = 0;  // mean per layer, everything but the routed experts
  double expert_params_per_layer_ = 0;  // mean per layer, the routed experts
  double mtp_params_ = 0;               // the MTP layers, on the last stage
  double mlp_in_out_ = 0;               // first MLP GEMM output width (unsplit)
  double mlp_matrices_ = 2;
  double elementwise_h_ = 0;  // per-token elementwise traffic, hidden-sized elements
  double elementwise_f_ = 0;  // per-token elementwise traffic, ffn-sized elements
  double num_nodes_ = 1;
  double model_flops_per_step_ = 0;
  // LoRA: the share of the parameters that train (their gradients, optimizer state and update),
  // and the GEMM passes of a step per forward (3: forward, data and weight gradients; 2 frozen).
  double trainable_ = 1;
  double gemm_passes_ = 3;
  double update_bytes_ = 0;  // HBM bytes the optimizer moves per parameter besides the gradient
  // Bytes per parameter of the gradients as `stack` keeps and reduces them, and of the optimizer's
  // HBM traffic, which reads them.
  double grad_bytes(const Stack& stack) const noexcept {
    return stack.grad_reduce_fp32 ? fp32_grad_bytes_ : grad_bytes_;
  }
  double update_bytes(const Stack& stack) const noexcept {
    return update_bytes_ + grad_bytes(stack);
  }
  StepPowerModel power_;
  ScaleOutLevels scale_out_;
};

// One-shot convenience: Estimator(workload, cluster, calibration).estimate(plan).
Estimate estimate(const Workload& workload, const Cluster& cluster, const Plan& plan,
                  const Calibration& calibration);

}  // namespace clustersweep::estimator
