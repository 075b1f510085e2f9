#pragma once
// The parsed state of a Space, shared by the spec parser (spec_parser.cc) and the point code
// (space.cc). Internal to spaces/.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/expression.h"
#include "spaces/catalog.h"
#include "spaces/resolve.h"
#include "spaces/space.h"

namespace clustersweep::spaces {

using estimator::kPrecisionNames;
inline constexpr const char* kOffloadNames[] = {"none", "optimizer", "optimizer_activations",
                                                "all"};
inline constexpr const char* kSplitNames[] = {"even", "embedding_loss", "uneven"};
inline constexpr const char* kKeepNames[] = {"all", "feasible", "best-per-design",
                                             "pareto-per-design"};
inline constexpr const char* kCompressionNames[] = {"none", "fast", "small"};
inline constexpr const char* kObjectiveNames[] = {"step_time", "time_to_train", "energy", "cost"};

// Constraint variables beyond the axes: the cluster size the axes do not hold (at index
// axes.size()), a transformer's dp after it, then the design's peak facility power in MW
// (Impl::facility_var).
inline constexpr int kVarDp = kNumAxes + 1;
inline constexpr int kNumVars = kNumAxes + 3;

struct Space::Impl {
  std::string text;
  std::string filename;
  estimator::Family family = estimator::Family::transformer;
  std::vector<Axis> axes;
  int first_plan_axis = kTp;  // axes before it are the design's, the rest the plan's
  std::array<std::uint64_t, kNumAxes> radix{};
  std::array<std::uint64_t, kNumAxes> stride{};
  std::uint64_t size = 0;
  std::uint64_t designs = 0;
  std::uint64_t plan_points = 0;
  bool plan_fits_32 = true;
  bool size_is_nodes = true;

  std::vector<ModelChoice> models;
  std::vector<const AcceleratorEntry*> gpus;
  std::vector<estimator::Precision> precisions;
  std::vector<int> fabrics;  // of the fabric axis's labels: an estimator::Fabric, -1 the default
  std::vector<estimator::Network> networks;  // of the network axis's labels
  // Plan axis values as the estimator's types.
  std::vector<int> tp, pp, cp, vp, micro_batch, zero, ep, etp;
  std::vector<estimator::Recompute> recompute;
  std::vector<std::uint8_t> recompute_modules;  // by the same digit (Plan::recompute_modules)
  std::vector<std::uint8_t> sequence_parallel;
  std::vector<estimator::Offload> offload;
  std::vector<estimator::PipelineSplit> pipeline_split;
  // The stack axes: by setting (stack_settings() order), the value index of each axis value.
  std::array<std::vector<int>, kNumStackSettings> stack;
  // The stack of every plan on the settings the spec gives one value, and the settings it sweeps:
  // a plan sets only those, so that the settings a spec leaves alone cost a plan nothing.
  estimator::Stack stack_base;
  std::vector<int> swept_stack;
  // Plan digits up to the last plan axis with more than one value: the digits after it are always
  // 0, so that odometers over the plans start there.
  int plan_digits_used = kNumPlanAxes;

  double nvlink_latency_us = -1;  // < 0: the calibration's
  double inter_node_latency_us = -1;
  double node_overhead_w = -1;                               // < 0: the accelerator's catalog value
  std::array<int, estimator::kMaxTorusDims> torus{0, 0, 0};  // cluster.torus; 0: balanced
  RuleOptions rules;

  std::vector<std::string> constraint_texts;
  std::vector<Expression> design_constraints;
  std::vector<Expression> plan_constraints;
  std::vector<int> plan_constraint_design_vars;  // design variables the plan constraints read

  // Recommendation-model spaces.
  std::vector<const DlrmModelEntry*> dlrm_models;
  std::vector<ShardingChoice> shardings;
  double training_samples = kDefaultTrainingSamples;
  // The spec's [workload] framework; without one each design takes its accelerator's default
  // (default_dlrm_framework), as estimate does.
  std::optional<estimator::DlrmFramework> dlrm_framework;

  double training_tokens = kDefaultTrainingTokens;
  int lora_rank = 0;
  Pricing pricing;
  int facility_var = kNumVars - 1;  // the constraint variable facility_mw
  estimator::Reliability reliability;
  Keep keep = Keep::all;
  Objective objective = Objective::step_time;
  OutputColumns output_columns;
  Compression compression = Compression::none;
  estimator::Calibration calibration;
  std::string calibration_file;  // the file the spec names, resolved; empty: the built-in one
  CalibrationSupport support;

  bool fill_design(std::uint64_t design, Design& out, Violation& why) const noexcept;
  bool fill_dlrm_design(std::uint64_t design, DlrmDesign& out, Violation& why) const noexcept;
  // The cluster axes of a design (the gpu axis at `gpu_axis`) as settings for resolve_cluster().
  ClusterSettings cluster_settings(const std::uint32_t* axis_index, int gpu_axis) const noexcept;
  // The spec's design constraints on a design's axis values (and the other cluster size).
  bool design_constraints_hold(const double* axis_values, int num_axes,
                               const estimator::Cluster& cluster) const noexcept;
  // The plan of the digits, dp derived, without any rule check.
  void plan_values(const Design& d, const std::uint32_t* digit, estimator::Plan& p) const noexcept;
  bool check_plan(const Design& design, const std::uint32_t* digit, estimator::Plan& out,
                  Violation& why) const noexcept;
  void resolve_values(Design& design) const noexcept;
  // The constraint variables a design sets: its axis values and the cluster size they do not hold.
  void design_variables(const double* axis_values, int num_axes, const estimator::Cluster& cluster,
                        double* vars) const noexcept;
  // Everything the structural plan rules read of a design: designs with equal keys have the
  // same valid plans.
  std::vector<double> plan_rules_key(const Design& design) const;
  void count_plans(const Design& design, std::array<std::uint64_t, kNumRules>& counts) const;
};

// Parses impl.text (named impl.filename in errors) into `impl`.
void parse_spec(Space::Impl& impl);

}  // namespace clustersweep::spaces
