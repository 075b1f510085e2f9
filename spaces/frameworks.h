#pragma once
// Framework profiles (spaces/data/frameworks.toml): the plans each training framework runs and
// the defaults of its runtime settings. The rules framework_parallelism, framework_sharding and
// framework_stack (spaces/rules.h) read them; resolve() and the spec take a profile's defaults for
// the stack settings a plan leaves unset. Framework::any has no profile: every plan is allowed.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/dlrm.h"
#include "estimator/estimator.h"
#include "spaces/catalog.h"
#include "spaces/stack_settings.h"

namespace clustersweep::spaces {

struct FrameworkProfile {
  estimator::Framework framework = estimator::Framework::any;
  std::string title;                  // "Megatron-Core (Megatron-LM, NeMo 2, Megatron-Bridge)"
  std::vector<std::string> software;  // lower-case prefixes of the runs' software column
  std::vector<std::string> vendors;   // the accelerator vendors it runs on; empty: every one
  bool tensor_parallel = true, sequence_parallel = true, pipeline_parallel = true,
       interleaved_pipeline = true, context_parallel = true, expert_parallel = true,
       expert_tensor_parallel = true;
  // Bit i set: value i (the enum's index; the ZeRO stage) runs.
  std::uint32_t zero = 0xF, zero_with_pipeline = 0xF;
  std::uint32_t recompute = ~0u, offload = ~0u, pipeline_split = ~0u;
  std::array<std::uint32_t, kNumStackSettings> stack{};  // by stack_settings() index
  estimator::Stack defaults;                             // each setting's first listed value
  // Stack settings as (stack_settings() index, value) pairs.
  using StackValues = std::vector<std::pair<std::size_t, int>>;
  // Settings where one software of the framework has a default of its own (NeMo AutoModel's
  // Transformer Engine attention under FSDP2), by software prefix.
  std::vector<std::pair<std::string, StackValues>> software_stack;
  // Settings whose default goes with the token routing (MaxText's capacity routing runs the
  // one-hot einsum dispatch), by TokenRouting.
  std::array<StackValues, estimator::kNumTokenRoutings> routing_stack;
  std::string source;
};

// The built-in profile of `framework`; nullptr for Framework::any.
const FrameworkProfile* framework_profile(estimator::Framework framework) noexcept;

// The framework a validation run's `software` text names ("nemo 25.02.01" -> megatron-core);
// Framework::any when no profile claims it.
estimator::Framework framework_of_software(std::string_view software) noexcept;

// The stack settings a validation run's `software` sets by its own default where its framework's
// differs: the profile's [framework.software_stack] entry of the very prefix that names the
// software (a shorter prefix's entry never reaches a longer prefix's software); empty for most
// software.
std::vector<std::pair<std::string, std::string>> software_stack_defaults(std::string_view software);

// Whether `framework` runs on accelerators of `vendor` (AcceleratorEntry::vendor); Framework::any
// runs on every one.
bool framework_runs_on(estimator::Framework framework, std::string_view vendor) noexcept;

// Sets the stack settings that `given` marks false (by stack_settings() index) to `framework`'s
// defaults, those of its [framework.routing_stack] for the routing the stack then has included;
// nothing for Framework::any.
void apply_framework_defaults(estimator::Framework framework,
                              const std::array<bool, kNumStackSettings>& given,
                              estimator::Stack& stack) noexcept;

// The frameworks (not `any`) that run `plan`'s parallel settings and the stack settings `given`
// marks, each with its own defaults for the others, on parts of `vendor` (empty: any vendor):
// {"megatron-core", "fsdp2"}.
std::vector<std::string> frameworks_running(estimator::Plan plan,
                                            const std::array<bool, kNumStackSettings>& given,
                                            std::string_view vendor = {});

// The framework a recommendation model is taken to train in when none is given: the fastest of
// the frameworks the part runs, which is how its published runs ran. That is HugeCTR's whole-step
// CUDA graphs where CUDA runs (every MLPerf DLRMv2 submission, A100 to GB200 NVL72), else `any`
// (the host runs ahead of the GPU).
estimator::DlrmFramework default_dlrm_framework(const AcceleratorEntry& gpu) noexcept;

}  // namespace clustersweep::spaces
