#pragma once
// The workload families clustersweep models: a closed set. A family has its own model of one
// training step (its workload, plan and estimate types), catalog entries, spec keys and axes,
// store columns and measured-runs format; docs/architecture.md lists the places it plugs in.
// Every switch over Family has no default case, so adding a family makes the compiler name each
// place that must learn about it. One store holds one family.
#include <cstdint>
#include <string_view>

namespace clustersweep::estimator {

enum class Family : std::uint8_t {
  transformer,  // dense decoder-only transformers (estimator/estimator.h)
  dlrm,         // recommendation models: DLRM, DCNv2 (estimator/dlrm.h)
};
inline constexpr int kNumFamilies = 2;

// "transformer", "dlrm": the name in specs, stores and messages.
const char* to_string(Family family) noexcept;
// false (and `out` untouched) when `name` is not a family's name.
bool parse_family(std::string_view name, Family& out) noexcept;
// "transformer, dlrm" (all the names, for messages).
const char* family_names() noexcept;

}  // namespace clustersweep::estimator
