#include "spaces/architecture.h"

#include <fmt/format.h>

namespace clustersweep::spaces {
namespace {

using estimator::Model;

constexpr ArchitectureField kFields[] = {
    {"qk_head_dim", &Model::qk_head_dim,
     "query/key head dimension (default hidden/heads; MLA: nope + rope)"},
    {"v_head_dim", &Model::v_head_dim, "value head dimension (default hidden/heads)"},
    {"q_lora_rank", &Model::q_lora_rank, "MLA query compression rank (0: full-rank query)"},
    {"kv_lora_rank", &Model::kv_lora_rank,
     "MLA key/value compression rank (> 0: multi-head latent attention)"},
    {"qk_rope_head_dim", &Model::qk_rope_head_dim,
     "MLA decoupled rotary key dimension, part of qk_head_dim (default 64 with MLA)"},
    {"num_experts", &Model::num_experts, "routed experts per MoE layer (0: a dense model)"},
    {"top_k", &Model::top_k, "experts each token is routed to"},
    {"moe_ffn_hidden", &Model::moe_ffn_hidden,
     "MLP width of one routed expert (per gate/up matrix)"},
    {"shared_ffn_hidden", &Model::shared_ffn_hidden,
     "total MLP width of the always-active shared experts (0: none)"},
    {"dense_layers", &Model::dense_layers,
     "layers with a dense MLP (ffn_hidden) instead of experts"},
    {"mtp_layers", &Model::mtp_layers, "multi-token-prediction layers (DeepSeek-V3: 1)"},
    {"sliding_window", &Model::sliding_window,
     "tokens a sliding-window layer attends to (0: none)"},
    {"sliding_window_layers", &Model::sliding_window_layers,
     "layers with sliding-window attention"},
};

}  // namespace

std::span<const ArchitectureField> architecture_fields() noexcept { return kFields; }

void apply_architecture_defaults(Model& m) noexcept {
  if (m.kv_lora_rank > 0) {
    if (m.qk_rope_head_dim == 0) m.qk_rope_head_dim = 64;
    m.kv_heads = m.heads;
  }
}

ArchitectureProblem check_architecture(const Model& m) {
  auto problem = [](const char* field, std::string message) {
    return ArchitectureProblem{field, std::move(message)};
  };
  if (m.num_experts == 0) {
    for (const char* field : {"top_k", "moe_ffn_hidden", "shared_ffn_hidden", "dense_layers"}) {
      for (const auto& f : kFields)
        if (field == std::string_view(f.name) && m.*(f.member) != 0)
          return problem(field, "is a Mixture-of-Experts setting; give num_experts too");
    }
  } else {
    if (m.top_k < 1 || m.top_k > m.num_experts)
      return problem("top_k", fmt::format("must be between 1 and num_experts ({}), got {}",
                                          m.num_experts, m.top_k));
    if (m.moe_ffn_hidden < 1)
      return problem("moe_ffn_hidden", "missing; an MoE model needs its experts' MLP width");
    if (m.dense_layers >= m.layers)
      return problem("dense_layers", fmt::format("must be less than layers ({}), got {}", m.layers,
                                                 m.dense_layers));
  }
  if ((m.num_experts == 0 || m.dense_layers > 0) && m.ffn_hidden < 1)
    return problem("ffn_hidden", "missing; the dense layers need their MLP width");
  if (m.kv_lora_rank > 0) {
    if (m.qk_head_dim <= m.qk_rope_head_dim)
      return problem("qk_head_dim",
                     fmt::format("must exceed qk_rope_head_dim ({}) with MLA, got {}",
                                 m.qk_rope_head_dim, m.qk_head_dim));
  } else {
    if (m.q_lora_rank > 0 || m.qk_rope_head_dim > 0)
      return problem(m.q_lora_rank > 0 ? "q_lora_rank" : "qk_rope_head_dim",
                     "is a multi-head latent attention setting; give kv_lora_rank too");
  }
  if (m.qk_head_dim == 0 && m.v_head_dim == 0 && m.heads > 0 && m.hidden % m.heads != 0)
    return problem("hidden", fmt::format("{} is not a multiple of the {} heads; give qk_head_dim "
                                         "and v_head_dim",
                                         m.hidden, m.heads));
  if (m.sliding_window_layers > m.layers)
    return problem("sliding_window_layers", fmt::format("must be at most layers ({}), got {}",
                                                        m.layers, m.sliding_window_layers));
  if (m.sliding_window_layers > 0 && m.sliding_window == 0)
    return problem("sliding_window", "missing; sliding_window_layers needs the window");
  return {};
}

}  // namespace clustersweep::spaces
