#pragma once
// The one way from settings to a point: named settings that remember where each value came from
// (a flag, a file key, a CSV column) resolve, with the catalog's and the calibration's defaults,
// to the estimator's Workload, Cluster and Plan. `estimate` and `validate` resolve Settings; the
// sweep resolves each design's axis values through the same resolve_workload() and
// resolve_cluster(), and every path checks the result with the rules of spaces/rules.h.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "estimator/dlrm.h"
#include "estimator/estimator.h"
#include "estimator/job.h"
#include "spaces/catalog.h"
#include "spaces/rules.h"
#include "spaces/stack_settings.h"
#include "spaces/support.h"

namespace clustersweep::spaces {

// What a job trains when neither a spec nor a setting says: GPT-3's published training tokens, and
// one epoch of Criteo 1TB's click logs (MLPerf DLRMv2 trains on about one epoch).
inline constexpr double kDefaultTrainingTokens = 300e9;
inline constexpr double kDefaultTrainingSamples = 4.2e9;

// Where a resolved value that was not given came from (a given one's origin is its
// Setting::where: a flag, a file key or a CSV column).
enum class Origin : std::uint8_t {
  catalog,      // the accelerator's or the model's catalog entry
  calibration,  // the calibration's default (e.g. default_inter_node_gbps_per_gpu)
  rule,         // derived by a rule of the point (dp = num_gpus / (tp*pp*cp), a following domain)
  fallback,     // the built-in default of the setting (tp = 1, recompute = none...)
};
const char* to_string(Origin origin) noexcept;  // "catalog", "calibration", ...

// One setting's text and where it was given: "--tp", "plan.toml:4:1: tp",
// "runs.csv:12: column 'tp'".
struct Setting {
  std::string text;
  std::string where;
};

// The settings of one point by name (snake_case, as the spec's keys and the store's columns:
// "tp", "seq_len", "inter_node_gbps_per_gpu"). Later set() calls override earlier ones.
class Settings {
 public:
  void set(const std::string& name, std::string text, std::string where);
  void erase(const std::string& name) { values_.erase(name); }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  const Setting& at(const std::string& name) const { return values_.at(name); }
  // Where `name` was given, or "--name-with-dashes" when it was not (the flag that would set it).
  std::string where(const std::string& name) const;

  // Typed reads; InputError "WHERE: must be ..., got 'TEXT'" when the text is not one.
  long long integer(const std::string& name, long long fallback, long long min_value = 1) const;
  double number(const std::string& name, double fallback, bool allow_zero = false,
                bool allow_infinity = false) const;
  bool boolean(const std::string& name, bool fallback = false) const;

 private:
  std::map<std::string, Setting> values_;
};

// Every setting resolve() reads, with its help line: the flags of `estimate`, the keys of its TOML
// file, in the order --help lists them.
enum class SettingFamily : std::uint8_t {
  every,        // the model, batch, precision, cluster and calibration of any point
  transformer,  // a transformer's architecture and parallel plan
  dlrm,         // a recommendation model's tables, MLPs and sharding
};
struct SettingInfo {
  const char* name;
  SettingFamily family;  // the points that read it
  const char* help;
};
const std::vector<SettingInfo>& setting_infos();
// The store's columns whose setting (flag, spec key) has another name: {column, setting}. Each
// name is an alias of the other where a user gives points (a table's columns, the Python
// module's keyword arguments).
inline constexpr std::pair<const char*, const char*> kColumnSettings[] = {{"num_gpus", "gpus"},
                                                                          {"num_nodes", "nodes"}};
// The store column of a setting's name ("gpus" -> "num_gpus"); any other name as it is.
std::string_view column_of_setting(std::string_view name) noexcept;
// The setting of a store column's name ("num_gpus" -> "gpus"); any other name as it is.
std::string_view setting_of_column(std::string_view name) noexcept;
// "seq_len" -> "seq-len".
std::string flag_name(std::string_view setting);

// The cluster a design describes before catalog defaults: 0 (or < 0 for the latencies and the
// node overhead, where 0 is a value) means "not set".
struct ClusterSettings {
  std::int64_t nodes = 0;  // give nodes or num_gpus
  std::int64_t num_gpus = 0;
  int gpus_per_node = 0;
  int nvlink_domain = 0;
  double nvlink_gbytes_per_s = 0;
  double inter_node_gbps_per_gpu = 0;
  double hbm_gb = 0;
  double expansion_gb = 0;
  double expansion_gbytes_per_s = 0;
  double nvlink_latency_us = -1;
  double inter_node_latency_us = -1;
  double node_overhead_w = -1;
  double power_cap_w = 0;  // 0: none
  int fabric = -1;         // an estimator::Fabric, -1: the accelerator's
  // A torus's dimensions, fastest first (all 0: the accelerator's number of dimensions, shaped
  // by estimator::balanced_torus from the domain).
  std::array<int, estimator::kMaxTorusDims> torus{0, 0, 0};
  estimator::ScaleOut scale_out;  // the default: a non-blocking fat tree
};

// What is wrong with a scale-out network on a cluster of `num_gpus` GPUs in nodes of
// `gpus_per_node`, switches of `switch_ports` ports (estimator::switch_ports): the setting at fault
// and why, in the words an error puts after its name; an empty setting when nothing is. A taper
// below 1, a pod that is not whole nodes or does not divide the cluster, a dragonfly group larger
// than the cluster, a rail-only cluster beyond one two-tier rail network (R^2/2 nodes, R = the
// radix x planes).
struct ScaleOutProblem {
  std::string setting;
  std::string message;
};
ScaleOutProblem scale_out_problem(const estimator::ScaleOut& scale_out, std::int64_t num_gpus,
                                  int gpus_per_node, double switch_ports);
// The scale-out network in words, "rail_only, 2:1 above pods of 1024 GPUs, 2 planes"; empty for
// the default non-blocking fat tree of a single plane.
std::string scale_out_text(const estimator::ScaleOut& scale_out);

// The text form of a torus's dimensions, "16x16" or "4x4x8", read into `out` (unused dimensions
// 1); throws InputError naming `what` when it is not 1 to 3 positive integers joined by 'x'.
std::array<int, estimator::kMaxTorusDims> parse_torus(std::string_view text, std::string_view what);
std::string torus_text(const std::array<int, estimator::kMaxTorusDims>& torus);
// The scale-up domain in words: "NVLink domain 8 at 450 GB/s", "mesh of 8 at 448 GB/s (64 GB/s
// per link)", "torus 16x16 at 400 GB/s (100 GB/s per link)".
std::string scale_up_text(const estimator::Cluster& cluster);

// The catalog and calibration defaults of a cluster, in one place: gpus_per_node, the NVLink
// bandwidth, HBM and node overhead are the accelerator's; a node-local NVLink domain (the catalog's
// domain equals its node) follows gpus_per_node while a rack-scale one (NVL72) keeps its size; the
// scale-out bandwidth, the expansion-tier bandwidth and the latencies are the calibration's.
estimator::Cluster resolve_cluster(const AcceleratorEntry& gpu, const ClusterSettings& settings,
                                   const estimator::Calibration& calibration) noexcept;
// The NVLink domain resolve_cluster() gives an unset nvlink_domain with `gpus_per_node` per node.
int default_nvlink_domain(const AcceleratorEntry& gpu, int gpus_per_node) noexcept;
// The scale-out resolve_cluster() gives an unset inter_node_gbps_per_gpu: the accelerator's usual
// one (the catalog's scale_out_gbps), else the calibration's default.
double default_inter_node_gbps(const AcceleratorEntry& gpu,
                               const estimator::Calibration& calibration) noexcept;

// The cluster of settings (gpu, nodes or gpus, gpus_per_node, the bandwidths...) with the
// defaults of resolve_cluster(); the origin of each default goes into `origins`. Without nodes and
// gpus the cluster has `gpus_if_unset` GPUs (0: an InputError naming --nodes). Every family's
// points resolve their cluster here.
struct ResolvedCluster {
  std::string gpu_name;
  estimator::Cluster cluster;
  std::int64_t nodes = 0;
};
ResolvedCluster resolve_cluster(const Settings& settings, const estimator::Calibration& calibration,
                                std::map<std::string, Origin>& origins,
                                std::int64_t gpus_if_unset = 0);

// A model with its published training defaults (catalog entry or inline architecture).
struct ModelChoice {
  std::string key;
  estimator::Model model;
  int seq_len = 0;  // 0: no default
  std::int64_t global_batch = 0;
};
// seq_len and global_batch 0 take the model's defaults.
estimator::Workload resolve_workload(const ModelChoice& model, int seq_len,
                                     std::int64_t global_batch,
                                     estimator::Precision precision) noexcept;

// The first pipeline split, in PipelineSplit order, that the rules accept for this pipeline:
// what a point gets when it does not name one.
estimator::PipelineSplit default_pipeline_split(const estimator::Model& model, int pp,
                                                int vp) noexcept;

// A resolved point, with the origin of each value that was not given.
struct Point {
  std::string model_name;  // catalog key, or "custom" for an inline architecture
  std::string gpu_name;
  estimator::Workload workload;
  estimator::Cluster cluster;
  estimator::Plan plan;
  estimator::Calibration calibration;
  CalibrationSupport support;  // of the calibration: the runs it was fitted on, counted
  RuleOptions rules;
  std::int64_t nodes = 0;
  double training_tokens = kDefaultTrainingTokens;  // for the job: its time, energy and failures
  estimator::Reliability reliability;
  std::map<std::string, Origin> origin;  // by setting name; absent = given
};

// Resolves settings to a point. Malformed or missing settings are InputErrors naming where they
// came from ("--tp: must be a positive integer, got 'x'"); the structural rules are not applied
// here (see check()).
Point resolve(const Settings& settings);
// Which of the stack's settings `settings` gives, by stack_settings() index: the others take
// the defaults of the plan's framework (spaces/frameworks.h).
std::array<bool, kNumStackSettings> given_stack(const Settings& settings);
// As resolve(), with this calibration (and the built-in support) instead of the built-in one or
// the `calibration` setting's.
Point resolve(const Settings& settings, const estimator::Calibration& calibration);

// The calibration support of a point run with `plan` and its step's 90% prediction interval,
// widened when the support is few (spaces/support.h).
struct PointInterval {
  PointSupport support;
  estimator::StepInterval interval;
};
PointInterval point_interval(const Point& point, const estimator::Plan& plan);
// check_design() and check_plan() of the point.
Violation check(const Point& point) noexcept;
// The violation as one line naming the setting to blame and where it came from:
// "--tp: 5 does not divide the 96 attention heads".
std::string explain(const Violation& violation, const Settings& settings);

// ---- Recommendation models (estimator/dlrm.h)

// Is `model` a recommendation model of the catalog (the DLRM family's points)?
bool is_dlrm_model(std::string_view model) noexcept;

// A resolved recommendation-model point: the workload, the cluster and the sharding to place,
// with the origin of each value that was not given.
struct DlrmPoint {
  std::string model_name;  // catalog key, or "custom"
  std::string gpu_name;
  estimator::DlrmWorkload workload;
  estimator::Cluster cluster;
  bool best_sharding = true;  // the planner's best placement, else `sharding` for every table
  estimator::Sharding sharding = estimator::Sharding::table_wise;
  // A published run's "row": the faster row-wise placement (estimator::plan_row_wise).
  bool any_row_wise = false;
  estimator::Calibration calibration;
  CalibrationSupport support;
  std::int64_t nodes = 0;
  double training_samples = kDefaultTrainingSamples;
  estimator::Reliability reliability;
  std::map<std::string, Origin> origin;
};

// Settings: model (a catalog recommendation model; without it num_tables, embedding_dim,
// total_embedding_rows, bottom_mlp, top_mlp and interaction describe one), global_batch,
// precision, sharding (table, row, column, table_row, data or best) and the cluster's settings.
// Given num_tables, embedding_dim, total_embedding_rows, MLPs or interaction override the
// model's; total_embedding_rows rescales its tables. InputErrors name where a setting came from.
DlrmPoint resolve_dlrm(const Settings& settings, const estimator::Calibration& calibration);
// As above with the built-in calibration or the `calibration` setting's.
DlrmPoint resolve_dlrm(const Settings& settings);
PointInterval point_interval(const DlrmPoint& point);
// The placement of a point's tables: its sharding placed by the planner, or the planner's best.
estimator::DlrmPlan place_tables(const DlrmPoint& point, const estimator::DlrmEstimator& estimator);
// The planner's best placement ("best") and each sharding for every table, by predicted step:
// those that fit first, the fastest first. A table_row sharding needs two nodes.
struct RankedSharding {
  std::string name;  // "best", or a sharding's name
  estimator::DlrmPlan plan;
  estimator::DlrmEstimate estimate;
};
std::vector<RankedSharding> rank_shardings(const estimator::DlrmEstimator& estimator);
// "table" when every table is table_wise, else the count of each: "row:5 table:21".
std::string describe_placement(const DlrmPoint& point, const estimator::DlrmPlan& plan);

}  // namespace clustersweep::spaces
