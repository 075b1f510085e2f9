#include "estimator/stack.h"

namespace clustersweep::estimator {
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

const char* to_string(CudaGraph graph) noexcept {
  constexpr const char* kNames[] = {"none", "partial", "full"};
  return kNames[static_cast<int>(graph)];
}
const char* to_string(Dispatcher dispatcher) noexcept {
  constexpr const char* kNames[] = {"alltoall", "allgather", "deepep", "hybridep"};
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
  constexpr const char* kNames[] = {"cudnn", "flash2", "flash3", "triton", "unfused"};
  return kNames[static_cast<int>(kernel)];
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

}  // namespace clustersweep::estimator
