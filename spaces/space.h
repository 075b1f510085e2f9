#pragma once
// A sweep space parsed from a TOML spec (docs/spec-format.md).
//
// Point ids are a mixed-radix number over the axes. Design axes (workload and cluster: everything
// but the plan) are the most significant digits and plan axes the least, so the points of one
// design (one workload on one cluster configuration) are the contiguous id range
// [design * plan_points(), (design + 1) * plan_points()). The engine relies on this: it builds one
// estimator per design and loops over that design's plans.
//
// Every axis of the space's family is always present, in that family's fixed order (AxisId for
// transformers, DlrmAxisId for recommendation models: design axes, then plan axes); an axis the
// spec does not sweep has one value. The only name that varies is the cluster-size axis:
// "num_nodes" when the spec gives `cluster.nodes`, "num_gpus" when it gives `cluster.gpus`.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "estimator/dlrm.h"
#include "estimator/estimator.h"
#include "estimator/family.h"
#include "estimator/job.h"
#include "spaces/rules.h"
#include "spaces/stack_settings.h"
#include "spaces/support.h"

namespace clustersweep::spaces {

// One swept dimension. Numeric axes hold `numbers`; label axes (gpu, model, recompute, offload,
// precision, the stack settings...) hold `labels`, and a point stores the label's index.
struct Axis {
  std::string name;  // store column name, e.g. "num_nodes", "gpu", "tp"
  std::string unit;  // e.g. "Gbit/s", "GB", "" for counts
  bool is_label = false;
  bool is_plan = false;  // plan axes are the least significant digits
  std::vector<double> numbers;
  std::vector<std::string> labels;
  // The value 0 stands for "the catalog default of the point's accelerator or model" (an axis
  // the spec leaves out whose default differs between its accelerators/models); Design::value
  // holds the resolved number.
  bool zero_means_default = false;
  std::size_t size() const noexcept { return is_label ? labels.size() : numbers.size(); }
  // The value at `index` as text: the label, or the number ("8", "12.5"), or "default".
  std::string value_text(std::size_t index) const;
};

// Axis positions in Space::axes(): design axes first (most significant first), then plan axes.
enum AxisId : std::uint8_t {
  kModel,
  kSeqLen,
  kGlobalBatch,
  kPrecision,
  kGpu,
  kClusterSize,  // "num_nodes" or "num_gpus"
  kGpusPerNode,
  kNvlinkDomain,
  kNvlinkGbytesPerS,
  kInterNodeGbpsPerGpu,
  kHbmGb,
  kExpansionGb,
  kExpansionGbytesPerS,
  kPowerCapW,  // GPU board power limit (0: none)
  kFabric,     // the scale-up fabric (a label: switch, mesh, torus, or default: the accelerator's)
  // The scale-out network (estimator::ScaleOut): its shape (a label: fat_tree, rail_optimized,
  // rail_only, dragonfly), taper, pod, planes, dragonfly groups and their global taper.
  kNetwork,
  kOversubscription,
  kPodGpus,
  kPlanes,
  kGroupGpus,
  kGlobalTaper,
  kTp,  // first plan axis
  kPp,
  kCp,
  kVp,
  kMicroBatch,
  kZero,
  kRecompute,
  kSequenceParallel,
  kOffload,
  // Appended, so that the points of a spec without these axes keep the order of the other axes.
  kPipelineSplit,
  kEp,  // expert parallelism (Mixture-of-Experts models; 1 for dense ones)
  kEtp,
  // The software stack's settings, one axis each in stack_settings() order (cuda_graph ..
  // attention_kernel), appended for the same reason: a spec that sweeps none of them has one value
  // on each, and its point ids are those it had before they existed.
  kFirstStackAxis,
};
inline constexpr int kNumAxes = kFirstStackAxis + kNumStackSettings;
inline constexpr int kNumDesignAxes = 21;
inline constexpr int kNumPlanAxes = kNumAxes - kNumDesignAxes;

// The axes of a recommendation-model space (workload.family = "dlrm"): its workload, the cluster
// axes of a transformer space in the same order, and the sharding of its tables.
enum DlrmAxisId : std::uint8_t {
  kDlrmModel,
  kDlrmGlobalBatch,
  kDlrmPrecision,
  kDlrmGpu,  // first of the cluster axes: kGpu .. kGlobalTaper
  kDlrmClusterSize,
  kDlrmGpusPerNode,
  kDlrmNvlinkDomain,
  kDlrmNvlinkGbytesPerS,
  kDlrmInterNodeGbpsPerGpu,
  kDlrmHbmGb,
  kDlrmExpansionGb,
  kDlrmExpansionGbytesPerS,
  kDlrmPowerCapW,
  kDlrmFabric,
  kDlrmNetwork,
  kDlrmOversubscription,
  kDlrmPodGpus,
  kDlrmPlanes,
  kDlrmGroupGpus,
  kDlrmGlobalTaper,
  kDlrmSharding,  // the only plan axis
};
inline constexpr int kNumDlrmAxes = 21;
inline constexpr int kNumDlrmDesignAxes = 20;
// A cluster axis's position in a recommendation-model space is its transformer one minus this.
inline constexpr int kDlrmClusterShift = int{kGpu} - int{kDlrmGpu};

// A price per GPU: one for every accelerator, or one per accelerator (catalog keys), then given
// for every accelerator of the sweep.
struct GpuPrice {
  double all = 0;  // without by_gpu: every accelerator's price (0: not given)
  std::vector<std::pair<std::string, double>> by_gpu;

  bool given() const noexcept { return all > 0 || !by_gpu.empty(); }
  // The accelerator's price: its by_gpu entry, else `all`.
  double of(std::string_view gpu) const noexcept;
  bool operator==(const GpuPrice&) const = default;
};
// The one text form of a GpuPrice, in flags, store attributes and messages: "2.5", or
// "H100-SXM5-80GB=2.5,B200-180GB=5".
std::string to_string(const GpuPrice& price);
// Reads the text form; throws InputError naming `what` (a flag or key) and what is valid.
GpuPrice parse_gpu_price(std::string_view text, std::string_view what);
// What is wrong with a per-accelerator price for the accelerators `gpus` (a spec's cluster.gpu,
// a store's gpu column; `source` names them): a key for none of them ("did you mean"), or one of
// them without a price. "" when nothing is.
std::string gpu_price_problem(const GpuPrice& price, const std::vector<std::string>& gpus,
                              std::string_view source);

// Re-pricing parameters stored with the results, never baked into them (analysis re-prices).
struct Pricing {
  double pue = 1.2;
  double usd_per_kwh = 0.10;
  double carbon_g_per_kwh = 400;
  GpuPrice gpu_hour_usd;       // if given, cost = GPU-hours * price
  GpuPrice capex_usd_per_gpu;  // else capex amortized over amortize_years
  double amortize_years = 4;

  // Visits every parameter of `p` (a Pricing or a const Pricing) as (name, field): the names of
  // the spec's [pricing] keys and of the store's root attributes.
  template <class Self, class Visit>
  static void for_each(Self& p, Visit&& visit) {
    visit("pue", p.pue);
    visit("usd_per_kwh", p.usd_per_kwh);
    visit("carbon_g_per_kwh", p.carbon_g_per_kwh);
    visit("gpu_hour_usd", p.gpu_hour_usd);
    visit("capex_usd_per_gpu", p.capex_usd_per_gpu);
    visit("amortize_years", p.amortize_years);
  }

  // Whether the accelerators are priced; without a price a cost is electricity only.
  bool prices_gpus() const noexcept { return gpu_hour_usd.given() || capex_usd_per_gpu.given(); }
  // The one pricing formula (docs/analysis.md), shared by the engine's objective and analysis.
  // Facility energy: IT energy (GPUs, the rest of the servers, the switches) times PUE.
  double energy_kwh(double energy_j) const noexcept { return energy_j * pue / 3.6e6; }
  double co2e_kg(double energy_j) const noexcept {
    return energy_kwh(energy_j) * carbon_g_per_kwh / 1000;
  }
  // Accelerator cost per GPU-second of `gpu`: rented by the hour, or bought and amortized.
  double usd_per_gpu_s(std::string_view gpu) const noexcept {
    if (gpu_hour_usd.given()) return gpu_hour_usd.of(gpu) / 3600;
    return amortize_years > 0 ? capex_usd_per_gpu.of(gpu) / (amortize_years * 365.25 * 24 * 3600)
                              : 0;
  }
  // The network's share of an owned cluster's cost per GPU-second: its capex over its GPUs,
  // amortized as the accelerators' capex is. 0 for a rented cluster (the hourly price includes
  // the network) and where the accelerators are not priced (a cost of electricity alone).
  double network_usd_per_gpu_s(double network_capex_usd, double num_gpus) const noexcept {
    if (gpu_hour_usd.given() || !capex_usd_per_gpu.given() || amortize_years <= 0 ||
        num_gpus <= 0 || !(network_capex_usd > 0))
      return 0;
    return network_capex_usd / num_gpus / (amortize_years * 365.25 * 24 * 3600);
  }
  // usd_per_gpu_s() of each accelerator of `gpus` (a store's gpu labels, indexed by label code).
  std::vector<double> usd_per_gpu_s(const std::vector<std::string>& gpus) const {
    std::vector<double> out;
    for (const auto& gpu : gpus) out.push_back(usd_per_gpu_s(gpu));
    return out;
  }
  // Electricity plus accelerators at `usd_per_gpu` per GPU-second (usd_per_gpu_s(), with an owned
  // cluster's network_usd_per_gpu_s()).
  double cost_usd(double usd_per_gpu, double num_gpus, double time_s,
                  double energy_j) const noexcept {
    return energy_kwh(energy_j) * usd_per_kwh + num_gpus * time_s * usd_per_gpu;
  }
};

// The prices a store holds in its root attributes, read through `source`'s
// string_attribute(name) and number_attribute(name) (optionals): a per-accelerator price is
// stored as its text form, any other as a number. Missing ones keep their defaults.
template <class Source>
Pricing stored_pricing(const Source& source) {
  Pricing p;
  Pricing::for_each(p, [&](const char* name, auto& field) {
    if constexpr (std::is_same_v<std::decay_t<decltype(field)>, GpuPrice>) {
      if (const auto text = source.string_attribute(name))
        field = parse_gpu_price(*text, name);
      else if (const auto number = source.number_attribute(name))
        field.all = *number;
    } else if (const auto number = source.number_attribute(name)) {
      field = *number;
    }
  });
  return p;
}

enum class Keep : std::uint8_t { all, feasible, best_per_design, pareto_per_design };
enum class Objective : std::uint8_t { step_time, time_to_train, energy, cost };
const char* to_string(Keep keep) noexcept;  // "all", "best-per-design", ...

// Which columns a store keeps per row (`[output] columns`, docs/spec-format.md). The names of a
// list are checked against the store's columns by engine::make_schema(), the one place that knows
// them; `where` keeps each name's place in the spec for its message.
struct OutputColumns {
  enum class Kind : std::uint8_t { all, summary, list };
  Kind kind = Kind::all;
  bool given = false;              // false: the default of the keep mode (summary for keep = "all")
  std::vector<std::string> names;  // Kind::list
  std::vector<std::string> where;  // "file:line:column" of each name
  std::string text() const;        // "all", "summary", or the list as TOML: ["a", "b"]
};
// Filters of the store's column datasets (`[output] compression`, docs/store-format.md).
enum class Compression : std::uint8_t { none, fast, small };
const char* to_string(Compression compression) noexcept;  // "none", "fast", "small"
bool parse_compression(std::string_view text, Compression& out) noexcept;
const char* to_string(Objective objective) noexcept;  // "step_time", "time_to_train", ...

// One design: the workload and cluster the plan loop runs on.
struct Design {
  estimator::Workload workload;
  estimator::Cluster cluster;
  std::uint64_t id = 0;  // the design index Space::design() filled this from
  // Axis-value index of each design axis (Space::axes() order), for the store's axis columns.
  std::array<std::uint32_t, kNumDesignAxes> axis_index{};
  // The value of each design axis with catalog defaults resolved, in the axis's unit (label
  // axes: the label index). Differs from the axis value only where Axis::zero_means_default.
  std::array<double, kNumDesignAxes> value{};
};

// One recommendation-model design: the workload and cluster its sharding plans run on.
struct DlrmDesign {
  estimator::DlrmWorkload workload;
  estimator::Cluster cluster;
  std::uint64_t id = 0;
  std::array<std::uint32_t, kNumDlrmDesignAxes> axis_index{};
  // The value of each design axis with catalog defaults resolved (label axes: the label index).
  std::array<double, kNumDlrmDesignAxes> value{};
};

// A value of the `sharding` axis: one sharding for every table, or the planner's best placement.
struct ShardingChoice {
  bool best = true;
  estimator::Sharding sharding = estimator::Sharding::table_wise;
};

// A spec frozen for jobs that run it later (`clustersweep submit`): its text, with a
// `calibration` file it names redirected to a frozen copy at `frozen_calibration` (an absolute
// path), so that editing, moving or deleting the originals cannot change what a queued or
// requeued job runs. The text is the original byte for byte when it names no calibration.
struct FrozenSpec {
  std::string text;
  std::string calibration;  // the calibration file the original names, resolved; empty if none
};
FrozenSpec freeze_spec(std::string_view text, const std::string& spec_path,
                       const std::string& frozen_calibration);

class Space {
 public:
  // Parses and validates spec text; every error is an InputError naming
  // `filename:line:column: key: message`. The catalog is Catalog::builtin(); the calibration is
  // builtin_calibration() unless the spec names a `calibration` file (relative paths are relative
  // to the directory of `filename`).
  static Space parse(std::string_view toml_text, std::string_view filename);
  // Reads and parses a spec file; InputError "cannot read spec 'PATH': REASON" when unreadable.
  static Space load(const std::string& path);

  // Spaces are immutable and cheap to copy (they share their parsed state).
  Space(const Space&) = default;
  Space& operator=(const Space&) = default;
  Space(Space&&) noexcept = default;
  Space& operator=(Space&&) noexcept = default;
  ~Space();

  // The workload family of every point (workload.family); its axes, plans and store columns.
  estimator::Family family() const noexcept;
  const std::vector<Axis>& axes() const noexcept;
  std::uint64_t size() const noexcept;         // all points, valid or not
  std::uint64_t designs() const noexcept;      // product of the design axes
  std::uint64_t plan_points() const noexcept;  // product of the plan axes

  // Fills the axis-value indices of `point_id` (one per axis, in axes() order).
  void decode(std::uint64_t point_id, std::uint32_t* axis_index) const noexcept;
  // The inverse of decode().
  std::uint64_t encode(const std::uint32_t* axis_index) const noexcept;
  // The workload and cluster of design `design` (0 <= design < designs()), resolved by
  // resolve_workload() and resolve_cluster() (spaces/resolve.h). Returns false (and leaves `why`
  // set) when the design breaks a rule: check_design() or the spec's own design rules.
  bool design(std::uint64_t design, Design& out) const noexcept;
  bool design(std::uint64_t design, Design& out, Violation& why) const noexcept;
  // The plan of plan index `plan` within a design; false with `why` when a structural rule
  // (check_plan() of spaces/rules.h, or a constraint of the spec) removes it before evaluation.
  // dp is derived here. Allocation-free. `design` must be one that design() filled and accepted.
  bool plan(const Design& design, std::uint64_t plan, estimator::Plan& out,
            estimator::Infeasible& why) const noexcept;
  bool plan(const Design& design, std::uint64_t plan, estimator::Plan& out,
            Violation& why) const noexcept;
  // As plan(), from the plan axes' value indices (kNumPlanAxes of them, plan-axis order, e.g.
  // decode()'s output + kTp): no divisions, for loops that step an odometer over the plans.
  bool plan_from_digits(const Design& design, const std::uint32_t* plan_digits,
                        estimator::Plan& out, estimator::Infeasible& why) const noexcept;

  // The plan of those digits with dp derived, whether or not the rules accept it.
  void plan_values(const Design& design, const std::uint32_t* plan_digits,
                   estimator::Plan& out) const noexcept;

  // A recommendation-model space's design (family() == dlrm), resolved as resolve_dlrm() does;
  // false with `why` when a design rule or a constraint of the spec removes it.
  bool dlrm_design(std::uint64_t design, DlrmDesign& out, Violation& why) const noexcept;
  // The values of its `sharding` axis, in axis order.
  const std::vector<ShardingChoice>& shardings() const noexcept;
  // The frameworks its designs train in, in estimator::DlrmFramework order: the spec's
  // `[workload] framework`, or else each accelerator's default (default_dlrm_framework()), as
  // dlrm_design() resolves them.
  std::vector<estimator::DlrmFramework> dlrm_frameworks() const;
  // Whether the spec's constraints keep sharding value `digit` of a design dlrm_design() accepted;
  // false with `why` (user_constraint) when one removes it.
  bool dlrm_plan(const DlrmDesign& design, std::uint32_t digit, Violation& why) const noexcept;

  // Structurally valid plans of one design (0 when the design itself is invalid), and of the
  // whole space. Both are exact; valid_points() memoizes designs that share everything the
  // structural rules read, so it costs far less than checking every point.
  std::uint64_t valid_plans(std::uint64_t design) const;
  std::uint64_t valid_points() const;
  // Points removed, by rule (index = Rule; [none] = valid points). Sums to size(). Checks one
  // design per combination of the axes a rule or constraint reads; InputError naming the spec
  // when there are more than kMaxCountedDesigns of them (a bound on the time it takes).
  std::array<std::uint64_t, kNumRules> count_by_rule() const;
  static constexpr std::uint64_t kMaxCountedDesigns = 20'000'000;
  // Designs that no design rule or constraint removes, counted the same way.
  std::uint64_t valid_designs() const;

  // "model=gpt3-175b gpu=H100-SXM5-80GB num_nodes=16 ... tp=8 pp=4 ..." for messages.
  std::string describe_point(std::uint64_t point_id) const;

  double training_tokens() const noexcept;   // tokens to train, for time_to_train_s
  double training_samples() const noexcept;  // samples to train a recommendation model
  const Pricing& pricing() const noexcept;
  const estimator::Reliability& reliability() const noexcept;  // [reliability]
  // The job model's view of a design (estimator/job.h): its size and its training state.
  estimator::JobDesign job(const estimator::Cluster& cluster,
                           double checkpoint_bytes) const noexcept;
  // What a design's GPU-second costs: pricing().usd_per_gpu_s() of its accelerator, with an owned
  // cluster's network_usd_per_gpu_s() of its network's bill of materials.
  double usd_per_gpu_s(const Design& design) const noexcept;
  double usd_per_gpu_s(const DlrmDesign& design) const noexcept;
  Keep keep() const noexcept;
  Objective objective() const noexcept;
  const OutputColumns& output_columns() const noexcept;
  Compression compression() const noexcept;
  const estimator::Calibration& calibration() const noexcept;
  // The calibration file the spec names, resolved against the spec's folder; empty for none.
  const std::string& calibration_file() const noexcept;
  // The runs of the calibration like each point (spaces/support.h), and those of a design's.
  const CalibrationSupport& support() const noexcept;
  DesignSupport support_of(const Design& design) const;
  DesignSupport support_of(const DlrmDesign& design) const;
  const std::string& text() const noexcept;      // the full spec text, stored with the results
  const std::string& filename() const noexcept;  // as given to parse()/load()
  const RuleOptions& rule_options() const noexcept;
  const std::vector<std::string>& constraints() const noexcept;  // the user's expressions

  struct Impl;  // defined in spaces/space.cc

 private:
  explicit Space(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace clustersweep::spaces
