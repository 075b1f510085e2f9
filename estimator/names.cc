// Names of the estimator's enums as files and flags spell them ("bf16", "swiglu", "selective",
// "optimizer_activations"), and their parsing; the Infeasible codes are stable because results
// store them (docs/store-format.md).
#include <string>
#include <string_view>

#include "estimator/estimator.h"

namespace clustersweep::estimator {

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

const char* to_string(Precision p) noexcept { return kPrecisionNames[static_cast<int>(p)]; }
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
constexpr const char* kRecomputeModuleNames[kNumRecomputeModules] = {
    "core_attn", "layernorm", "mla_up_proj", "mlp", "moe_act", "moe", "shared_experts"};
}  // namespace

std::string recompute_label(Recompute recompute, std::uint8_t modules) {
  std::string out = to_string(recompute);
  if (recompute != Recompute::selective || modules == 0) return out;
  char separator = ':';
  for (int i = 0; i < kNumRecomputeModules; ++i) {
    if (!(modules & (1u << i))) continue;
    (out += separator) += kRecomputeModuleNames[i];
    separator = '+';
  }
  return out;
}

std::string recompute_values() {
  std::string modules;
  for (const char* name : kRecomputeModuleNames) (modules += modules.empty() ? "" : ", ") += name;
  return "none, selective, full or selective:MODULE+MODULE... of " + modules;
}

bool parse_recompute_label(std::string_view label, Recompute& recompute,
                           std::uint8_t& modules) noexcept {
  const std::size_t colon = label.find(':');
  Recompute r{};
  if (!parse_recompute(label.substr(0, colon), r)) return false;
  std::uint8_t m = 0;
  if (colon != std::string_view::npos) {
    if (r != Recompute::selective) return false;
    std::string_view rest = label.substr(colon + 1);
    while (true) {
      const std::size_t plus = rest.find('+');
      const std::string_view name = rest.substr(0, plus);
      int found = -1;
      for (int i = 0; i < kNumRecomputeModules && found < 0; ++i)
        if (name == kRecomputeModuleNames[i]) found = i;
      if (found < 0 || (m & (1u << found))) return false;
      m = static_cast<std::uint8_t>(m | (1u << found));
      if (plus == std::string_view::npos) break;
      rest = rest.substr(plus + 1);
    }
  }
  recompute = r;
  modules = m;
  return true;
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
const char* to_string(Fabric fabric) noexcept { return kFabricNames[static_cast<int>(fabric)]; }
bool parse_fabric(std::string_view name, Fabric& out) noexcept {
  return parse_name<Fabric, kNumFabrics>(name, out);
}
const char* to_string(Network network) noexcept { return kNetworkNames[static_cast<int>(network)]; }
bool parse_network(std::string_view name, Network& out) noexcept {
  return parse_name<Network, kNumNetworks>(name, out);
}

// The software stack's settings (stack.h).
const char* to_string(Framework framework) noexcept {
  constexpr const char* kNames[] = {"any",     "megatron-core", "fsdp2", "deepspeed",
                                    "maxtext", "neuronx",       "primus"};
  return kNames[static_cast<int>(framework)];
}
const char* to_string(CudaGraph graph) noexcept {
  constexpr const char* kNames[] = {"none", "partial", "full"};
  return kNames[static_cast<int>(graph)];
}
const char* to_string(Dispatcher dispatcher) noexcept {
  constexpr const char* kNames[] = {"alltoall", "allgather", "deepep", "hybridep", "einsum"};
  return kNames[static_cast<int>(dispatcher)];
}
const char* to_string(TokenRouting routing) noexcept {
  constexpr const char* kNames[] = {"dropless", "balanced", "capacity"};
  return kNames[static_cast<int>(routing)];
}
const char* to_string(Fp8Recipe recipe) noexcept {
  constexpr const char* kNames[] = {"delayed", "current", "mxfp8", "blockwise"};
  return kNames[static_cast<int>(recipe)];
}
const char* to_string(AttentionKernel kernel) noexcept {
  constexpr const char* kNames[] = {"cudnn", "flash2", "flash3", "triton", "unfused", "fused"};
  return kNames[static_cast<int>(kernel)];
}
const char* to_string(RankOrder order) noexcept {
  constexpr const char* kNames[] = {"tp-cp-ep-dp-pp", "tp-pp-dp"};
  return kNames[static_cast<int>(order)];
}

bool parse_framework(std::string_view name, Framework& out) noexcept {
  return parse_name<Framework, kNumFrameworks>(name, out);
}
bool parse_cuda_graph(std::string_view name, CudaGraph& out) noexcept {
  return parse_name<CudaGraph, kNumCudaGraphs>(name, out);
}
bool parse_dispatcher(std::string_view name, Dispatcher& out) noexcept {
  return parse_name<Dispatcher, kNumDispatchers>(name, out);
}
bool parse_token_routing(std::string_view name, TokenRouting& out) noexcept {
  return parse_name<TokenRouting, kNumTokenRoutings>(name, out);
}
bool parse_fp8_recipe(std::string_view name, Fp8Recipe& out) noexcept {
  return parse_name<Fp8Recipe, kNumFp8Recipes>(name, out);
}
bool parse_attention_kernel(std::string_view name, AttentionKernel& out) noexcept {
  return parse_name<AttentionKernel, kNumAttentionKernels>(name, out);
}
bool parse_rank_order(std::string_view name, RankOrder& out) noexcept {
  return parse_name<RankOrder, kNumRankOrders>(name, out);
}

}  // namespace clustersweep::estimator
