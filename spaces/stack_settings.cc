#include "spaces/stack_settings.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <string>

namespace clustersweep::spaces {
namespace {

namespace est = estimator;

// "on"/"off" rather than "true"/"false": CSV readers would turn those labels into booleans and
// JSON keeps them text, so one store exported both ways would read back differently.
const char* bool_name(int v) noexcept { return v ? "on" : "off"; }

// An enum member of Stack as a table row.
#define CS_ENUM(member, Enum, count_, help_)                                           \
  StackSetting {                                                                       \
#member, help_, count_, false,                                                       \
        [](const est::Stack& s) noexcept { return static_cast<int>(s.member); },         \
        [](est::Stack& s, int v) noexcept { s.member = static_cast<est::Enum>(v); },     \
        [](int v) noexcept { return est::to_string(static_cast<est::Enum>(v)); } \
  }
#define CS_BOOL(member, help_)                                                                       \
  StackSetting {                                                                                     \
#member, help_, 2, true,                                                                         \
        [](const est::Stack&                                                                         \
               s) noexcept { return int{s.member}; },                                                \
                                                   [](est::Stack & s,                                \
                                                      int v) noexcept { s.member = v != 0; },        \
                                                                                           bool_name \
  }

const StackSetting kSettings[] = {
    CS_ENUM(cuda_graph, CudaGraph, est::kNumCudaGraphs,
            "CUDA graphs: none (default), partial (attention, router and MoE preprocessing "
            "scopes) or full (whole layers or iteration; dropless MoE layers keep their "
            "dispatch and experts outside)"),
    CS_ENUM(dispatcher, Dispatcher, est::kNumDispatchers,
            "MoE token dispatcher: alltoall (default), allgather, deepep or hybridep (ep > 1)"),
    CS_ENUM(token_routing, TokenRouting, est::kNumTokenRoutings,
            "MoE routing: dropless (default; the busiest expert-parallel rank sets the pace), "
            "balanced (forced balance, as benchmarks run) or capacity (capacity_factor)"),
    CS_BOOL(a2a_overlap,
            "hide the expert all-to-all under another micro-batch's compute (default false)"),
    CS_BOOL(fp8_attention, "attention matmuls in fp8 (fp8 training; default false)"),
    CS_BOOL(tp_comm_overlap,
            "tensor-parallel collectives pipelined with the GEMMs (userbuffers; default true)"),
    CS_BOOL(dp_overlap, "gradient reduction overlapped with the backward (default true)"),
    CS_BOOL(param_gather_overlap,
            "sharded parameters gathered ahead of use (ZeRO >= 1; default true)"),
    CS_BOOL(pp_comm_overlap, "pipeline send/recv overlapped with compute (default true)"),
    CS_ENUM(fp8_recipe, Fp8Recipe, est::kNumFp8Recipes,
            "fp8 scaling: delayed (default), current, mxfp8 (Blackwell) or blockwise"),
    CS_ENUM(attention_kernel, AttentionKernel, est::kNumAttentionKernels,
            "attention kernel: cudnn (default), flash2, flash3, triton or unfused"),
};
#undef CS_ENUM
#undef CS_BOOL
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
    if (text == "1" || text == "true" || text == "yes" || text == "on") return 1;
    if (text == "0" || text == "false" || text == "no" || text == "off") return 0;
    return -1;
  }
  for (int i = 0; i < setting.count; ++i)
    if (text == setting.value_name(i)) return i;
  return -1;
}

std::string stack_values(const StackSetting& setting) {
  if (setting.boolean) return "true or false";
  std::string out;
  for (int i = 0; i < setting.count; ++i)
    out += fmt::format("{}{}",
                       i == 0                   ? ""
                       : i + 1 == setting.count ? " or "
                                                : ", ",
                       setting.value_name(i));
  return out;
}

}  // namespace clustersweep::spaces
