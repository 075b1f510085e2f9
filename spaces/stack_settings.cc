#include "spaces/stack_settings.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>

#include "base/format.h"
#include "base/numbers.h"

namespace clustersweep::spaces {
namespace {

namespace est = estimator;

// "on"/"off" rather than "true"/"false": CSV readers would turn those labels into booleans and
// JSON keeps them text, so one store exported both ways would read back differently.
const char* bool_name(int v) noexcept { return v ? "on" : "off"; }

// A table row of an enum member of Stack, and of a boolean one.
template <auto Member, int Count>
constexpr StackSetting enum_setting(const char* name, const char* help) {
  using Enum = std::remove_cvref_t<decltype(std::declval<est::Stack&>().*Member)>;
  return {name,
          help,
          Count,
          false,
          [](const est::Stack& s) noexcept { return static_cast<int>(s.*Member); },
          [](est::Stack& s, int v) noexcept { s.*Member = static_cast<Enum>(v); },
          [](int v) noexcept { return est::to_string(static_cast<Enum>(v)); }};
}
template <auto Member>
constexpr StackSetting bool_setting(const char* name, const char* help) {
  return {name,
          help,
          2,
          true,
          [](const est::Stack& s) noexcept { return int{s.*Member}; },
          [](est::Stack& s, int v) noexcept { s.*Member = v != 0; },
          bool_name};
}

constexpr StackSetting framework_setting() {
  StackSetting s = enum_setting<&est::Stack::framework, est::kNumFrameworks>(
      "framework",
      "training framework: any (default; every plan), megatron-core, fsdp2, deepspeed, maxtext, "
      "neuronx or primus: only "
      "the plans it runs, its runtime settings as defaults (spaces/data/frameworks.toml); for "
      "recommendation models any (the host runs ahead of the GPU), hugectr (whole-step CUDA "
      "graphs) or torchrec (the host syncs every step)");
  s.all_from = 1;
  return s;
}

const StackSetting kSettings[] = {
    framework_setting(),
    enum_setting<&est::Stack::cuda_graph, est::kNumCudaGraphs>(
        "cuda_graph",
        "CUDA graphs: none (default), partial (attention, router and MoE preprocessing "
        "scopes) or full (whole layers or iteration; dropless MoE layers keep their "
        "dispatch and experts outside)"),
    enum_setting<&est::Stack::dispatcher, est::kNumDispatchers>(
        "dispatcher",
        "MoE token dispatcher: alltoall (default), allgather, deepep or hybridep (ep > 1), or "
        "einsum (GShard's one-hot dispatch and combine matmuls; capacity routing)"),
    enum_setting<&est::Stack::token_routing, est::kNumTokenRoutings>(
        "token_routing",
        "MoE routing: dropless (default; the busiest expert-parallel rank sets the pace), "
        "balanced (forced balance, as benchmarks run) or capacity (capacity_factor)"),
    bool_setting<&est::Stack::a2a_overlap>(
        "a2a_overlap",
        "hide the expert all-to-all under another micro-batch's compute (default false)"),
    bool_setting<&est::Stack::fp8_attention>(
        "fp8_attention", "attention matmuls in fp8 (fp8 training; default false)"),
    bool_setting<&est::Stack::tp_comm_overlap>(
        "tp_comm_overlap",
        "tensor-parallel collectives pipelined with the GEMMs (userbuffers; default true)"),
    bool_setting<&est::Stack::dp_overlap>(
        "dp_overlap", "gradient reduction overlapped with the backward (default true)"),
    bool_setting<&est::Stack::param_gather_overlap>(
        "param_gather_overlap",
        "sharded parameters gathered ahead of use (ZeRO >= 1; default true)"),
    bool_setting<&est::Stack::pp_comm_overlap>(
        "pp_comm_overlap", "pipeline send/recv overlapped with compute (default true)"),
    enum_setting<&est::Stack::fp8_recipe, est::kNumFp8Recipes>(
        "fp8_recipe", "fp8 scaling: delayed (default), current, mxfp8 (Blackwell) or blockwise"),
    enum_setting<&est::Stack::attention_kernel, est::kNumAttentionKernels>(
        "attention_kernel",
        "attention kernel: cudnn (default), flash2, flash3, triton, unfused or fused (another "
        "vendor's flash-style kernel: TPU Splash, Neuron NKI)"),
    enum_setting<&est::Stack::rank_order, est::kNumRankOrders>(
        "rank_order",
        "how ranks are numbered: tp-cp-ep-dp-pp (default; Megatron-Core's: data parallelism "
        "close, the pipeline far) or tp-pp-dp (--use-tp-pp-dp-mapping, Llama 3's: the pipeline "
        "close, data parallelism across the cluster; cp = 1 and ep = 1)"),
    bool_setting<&est::Stack::grad_reduce_fp32>(
        "grad_reduce_fp32",
        "gradients accumulated and reduced in fp32 with bf16, fp8, fp4 or int8 training "
        "(default true; NeMo's and Megatron-Bridge's performance recipes: false)"),
};
static_assert(std::size(kSettings) == kNumStackSettings);

}  // namespace

std::span<const StackSetting> stack_settings() noexcept { return kSettings; }

const StackSetting* find_stack_setting(std::string_view name) noexcept {
  const auto* at = std::find_if(std::begin(kSettings), std::end(kSettings),
                                [name](const StackSetting& s) { return name == s.name; });
  return at == std::end(kSettings) ? nullptr : at;
}

int parse_stack_value(const StackSetting& setting, std::string_view text) noexcept {
  if (setting.boolean) {
    bool value = false;
    return read_boolean(text, value) ? int{value} : -1;
  }
  for (int i = 0; i < setting.count; ++i)
    if (text == setting.value_name(i)) return i;
  return -1;
}

std::string stack_values(const StackSetting& setting) {
  if (setting.boolean) return "true or false";
  std::vector<std::string> names;
  for (int i = 0; i < setting.count; ++i) names.emplace_back(setting.value_name(i));
  return join_or(names);
}

}  // namespace clustersweep::spaces
