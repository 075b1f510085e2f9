#pragma once
// The runtime settings of the software stack that change a step without changing the parallel
// plan: CUDA graphs, the MoE token dispatcher and routing, communication overlaps, the FP8 scaling
// recipe and the attention kernel. Each is a mechanism of the step model (docs/estimator.md,
// "The software stack"); the defaults are the frameworks' own where a recipe does not set them.
#include <cstdint>
#include <string_view>

namespace clustersweep::estimator {

// CUDA-graph capture: none; per-module graphs of some scopes (attention, router, MoE
// preprocessing: Transformer Engine's make_graphed_callables); a whole-iteration or whole-layer
// graph, which needs static shapes (capacity routing or forced balance on MoE layers).
enum class CudaGraph : std::uint8_t { none, partial, full };
inline constexpr int kNumCudaGraphs = 3;
// The MoE token dispatcher: Megatron's NCCL all-to-all (with separate permute and unpermute
// kernels), its all-gather dispatcher, the fused DeepEP / HybridEP kernels, or GShard's one-hot
// dispatch and combine einsums (MaxText's capacity routing; with ep > 1 XLA's all-to-all moves
// their output). einsum comes last so that the codes of the others stay what they were.
enum class Dispatcher : std::uint8_t { alltoall, allgather, deepep, hybridep, einsum };
inline constexpr int kNumDispatchers = 5;
// How tokens reach their experts: learned routing with no token dropped (the busiest rank waits
// for its load), routing forced to balance (benchmarks), or a capacity per expert (padded to it,
// the excess dropped; Plan::capacity_factor).
enum class TokenRouting : std::uint8_t { dropless, balanced, capacity };
inline constexpr int kNumTokenRoutings = 3;
// How an 8-bit GEMM's operands are scaled: from an amax history (Transformer Engine's
// DelayedScaling), from the current tensor's amax (one more pass over it), or per block of 32
// (MXFP8) or of 128 (blockwise).
enum class Fp8Recipe : std::uint8_t { delayed, current, mxfp8, blockwise };
inline constexpr int kNumFp8Recipes = 4;
// The kernel of softmax(QK^T)V: cuDNN's fused attention (Transformer Engine's choice on Hopper
// and later), FlashAttention-2 or -3, the Triton FlashAttention of llm-foundry, the unfused
// path (Megatron's fused softmax between two batched GEMMs, s x s scores materialised), or
// another vendor's fused flash-style kernel (Splash attention on TPU, Neuron's NKI flash
// attention), which never materialises the scores either.
enum class AttentionKernel : std::uint8_t { cudnn, flash2, flash3, triton, unfused, fused };
inline constexpr int kNumAttentionKernels = 6;
// How the job numbers its ranks, which decides the GPUs each parallel group spans (rank_strides in
// estimator.h): Megatron-Core's default tp-cp-ep-dp-pp numbers tp fastest and pp slowest, so a
// data-parallel group is close and a pipeline's sends go far; its --use-tp-pp-dp-mapping (tp-pp-dp,
// the order Meta ran Llama 3 405B in) puts pp inside dp, so the pipeline's sends stay close and
// the gradient reduction crosses the cluster. Megatron-Core runs the second without cp and ep.
enum class RankOrder : std::uint8_t { tp_cp_ep_dp_pp, tp_pp_dp };
inline constexpr int kNumRankOrders = 2;

// The training framework a plan runs in (spaces/frameworks.h: what each runs, its defaults):
// none named (every plan), Megatron-Core (Megatron-LM, NeMo 2, Megatron-Bridge), PyTorch FSDP2
// (torchtitan, NeMo AutoModel, llm-foundry's FSDP), DeepSpeed (ZeRO, Megatron-DeepSpeed), MaxText
// (JAX/XLA), NeuronX Distributed (Trainium) or Primus (AMD's Megatron-Core on ROCm).
enum class Framework : std::uint8_t {
  any,
  megatron_core,
  fsdp2,
  deepspeed,
  maxtext,
  neuronx,
  primus
};
inline constexpr int kNumFrameworks = 7;

struct Stack {
  Framework framework = Framework::any;
  CudaGraph cuda_graph = CudaGraph::none;
  Dispatcher dispatcher = Dispatcher::alltoall;
  TokenRouting token_routing = TokenRouting::dropless;
  bool a2a_overlap = false;          // expert all-to-all under another micro-batch's compute
  bool fp8_attention = false;        // attention matmuls at the 8-bit rate (fp8 training only)
  bool tp_comm_overlap = true;       // userbuffers: TP collectives pipelined with the GEMMs
  bool dp_overlap = true;            // gradient reduction issued during the backward
  bool param_gather_overlap = true;  // sharded parameters gathered ahead of their use
  bool pp_comm_overlap = true;       // pipeline send/recv overlapped with compute
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;
  AttentionKernel attention_kernel = AttentionKernel::cudnn;
  RankOrder rank_order = RankOrder::tp_cp_ep_dp_pp;
  // Gradients accumulated and reduced in fp32 beside bf16 or 8-bit weights (Megatron-LM forces it
  // with bf16, torchtitan's FSDP2 reduces in float32, MaxText's weights are fp32); NVIDIA's NeMo
  // and Megatron-Bridge performance recipes reduce in bf16 (grad_reduce_in_fp32 false). fp16 and
  // fp32 training keep their own precision either way.
  bool grad_reduce_fp32 = true;
};

// Names as used in flags, specs, files and the store: "megatron-core", "partial", "hybridep".
const char* to_string(Framework framework) noexcept;
const char* to_string(CudaGraph graph) noexcept;
const char* to_string(Dispatcher dispatcher) noexcept;
const char* to_string(TokenRouting routing) noexcept;
const char* to_string(Fp8Recipe recipe) noexcept;
const char* to_string(AttentionKernel kernel) noexcept;
const char* to_string(RankOrder order) noexcept;  // "tp-cp-ep-dp-pp", "tp-pp-dp"
// false (and `out` untouched) when `name` is not one of the names above.
bool parse_framework(std::string_view name, Framework& out) noexcept;
bool parse_cuda_graph(std::string_view name, CudaGraph& out) noexcept;
bool parse_dispatcher(std::string_view name, Dispatcher& out) noexcept;
bool parse_token_routing(std::string_view name, TokenRouting& out) noexcept;
bool parse_fp8_recipe(std::string_view name, Fp8Recipe& out) noexcept;
bool parse_attention_kernel(std::string_view name, AttentionKernel& out) noexcept;
bool parse_rank_order(std::string_view name, RankOrder& out) noexcept;

}  // namespace clustersweep::estimator
