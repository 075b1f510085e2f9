#pragma once
// The columns of a results store (docs/store-format.md) and a block of rows in memory, one typed
// array per column. No HDF5 here: the store writer and reader map these types to HDF5 types.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "estimator/dlrm.h"
#include "estimator/estimator.h"
#include "estimator/job.h"

namespace clustersweep::spaces {
class Space;
}

namespace clustersweep::engine {

// What a metric of a point that was not evaluated, or does not run, holds.
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Every column is stored at its natural width: the narrowest type that holds all its values
// (a `keep = "all"` store is written at disk speed, so a byte a row is a byte of bandwidth).
enum class ColumnType : std::uint8_t {
  u64,      // point_id; design_id when the space has more than 2^32 designs
  u32,      // integral values up to 2^32 - 1 (design_id)
  u16,      // integral values up to 65535 (seq_len, bandwidths in whole units, dp, num_gpus)
  u8,       // integral values up to 255 (tp, pp, micro_batch, num_nodes...)
  i32,      // integral values outside 0..2^32-1 that fit int32
  f64,      // measurements and non-integral axes
  f32,      // breakdowns and secondary metrics (7 significant digits are enough)
  boolean,  // feasible: HDF5 enum int8 {FALSE, TRUE}, which h5py reads as numpy bool
  label8,   // HDF5 enum uint8 {label0 = 0, label1 = 1, ...}: up to 256 labels (gpu, model...)
  label,    // HDF5 enum uint16: labels beyond 256
};

// Calls f with a null pointer to the element type of `type` (u64: std::uint64_t*, label8 and
// boolean: std::uint8_t*, f32: float*, ...): the one place that maps column types to C++ types.
template <class F>
decltype(auto) visit(ColumnType type, F&& f) {
  switch (type) {
    case ColumnType::u64:
      return f(static_cast<std::uint64_t*>(nullptr));
    case ColumnType::u32:
      return f(static_cast<std::uint32_t*>(nullptr));
    case ColumnType::u16:
    case ColumnType::label:
      return f(static_cast<std::uint16_t*>(nullptr));
    case ColumnType::u8:
    case ColumnType::boolean:
    case ColumnType::label8:
      return f(static_cast<std::uint8_t*>(nullptr));
    case ColumnType::i32:
      return f(static_cast<std::int32_t*>(nullptr));
    case ColumnType::f32:
      return f(static_cast<float*>(nullptr));
    case ColumnType::f64:
      break;
  }
  return f(static_cast<double*>(nullptr));
}

// Bytes of one value of `type` (in memory and on disk).
std::size_t element_size(ColumnType type) noexcept;
// The narrowest integer column type holding every value of `values` (u8, u16, u32, i32), or f64
// when one is not an integer or out of int32/uint32 range.
ColumnType narrowest_type(const std::vector<double>& values) noexcept;
// The label column type for `labels` labels: label8 up to 256, else label.
ColumnType label_type(std::size_t labels) noexcept;
bool is_label(ColumnType type) noexcept;

struct Column {
  std::string name;
  std::string unit;  // the dataset's "units" attribute ("" for ids, counts, labels)
  std::string role;  // "id", "design_axis", "plan_axis", "metric"
  ColumnType type = ColumnType::f64;
  std::vector<std::string> labels;  // label columns: the names of codes 0..n-1
  // The value of every row (a label's code), where the space gives the column one value (an axis
  // with one value, a catalog default that resolves to one): the store keeps it as the dataset's
  // fill value and writes no row of it, and a RowBlock holds it from the start.
  std::optional<double> constant = std::nullopt;
};

// A metric column: one output of a family's estimator per point. A family's metric columns are the
// last columns of its stores, in the order of its table.
struct MetricColumn {
  const char* name;
  const char* unit;
  // f64 for what analysis ranks and prices by (step and train time, energy to train), whose ties
  // and orders it must keep; f32 for the rest: 7 significant digits are far finer than the
  // estimate's accuracy (docs/store-format.md, "Columns").
  ColumnType type;
  bool needs_run;  // NaN unless the point is feasible; else filled for every evaluated point
  bool summary;    // kept by `[output] columns = "summary"`
};
// The metrics of the training job both families start with, filled by job_metric_values().
inline constexpr std::array<MetricColumn, 10> kJobMetrics = {{
    {"step_time_s", "s", ColumnType::f64, true, true},
    {"time_to_train_s", "s", ColumnType::f64, true, true},
    {"time_to_train_failure_free_s", "s", ColumnType::f32, true, false},
    {"goodput", "fraction", ColumnType::f32, true, false},
    {"checkpoint_interval_s", "s", ColumnType::f32, true, false},
    {"step_time_lo_s", "s", ColumnType::f32, true, false},
    {"step_time_hi_s", "s", ColumnType::f32, true, false},
    {"time_to_train_lo_s", "s", ColumnType::f32, true, false},
    {"time_to_train_hi_s", "s", ColumnType::f32, true, false},
    {"calibration_support", "", ColumnType::f32, false, false},
}};
inline constexpr int kNumJobMetrics = static_cast<int>(kJobMetrics.size());

// The metrics every family reports after its throughput, the same way; filled by
// model_metric_values().
inline constexpr std::array<MetricColumn, 12> kModelMetrics = {{
    {"mfu", "fraction", ColumnType::f32, true, true},
    {"model_flops_per_step", "FLOP", ColumnType::f32, false, false},
    {"mem_per_gpu_bytes", "B", ColumnType::f32, false, true},
    {"mem_hbm_bytes", "B", ColumnType::f32, false, false},
    {"mem_expansion_bytes", "B", ColumnType::f32, false, false},
    {"energy_per_step_j", "J", ColumnType::f32, true, false},
    {"energy_to_train_j", "J", ColumnType::f64, true, true},
    {"gpu_power_w", "W", ColumnType::f32, true, false},
    {"energy_gpu_to_train_j", "J", ColumnType::f32, true, false},
    {"energy_facility_to_train_j", "J", ColumnType::f64, true, false},
    {"network_capex_usd", "USD", ColumnType::f64, false, true},
    {"network_power_w", "W", ColumnType::f32, false, false},
}};

// The parts of a family's metric table, one after another.
template <std::size_t... N>
constexpr std::array<MetricColumn, (N + ...)> join_metrics(
    const std::array<MetricColumn, N>&... parts) {
  std::array<MetricColumn, (N + ...)> out{};
  std::size_t at = 0;
  ((std::copy(parts.begin(), parts.end(), out.begin() + static_cast<std::ptrdiff_t>(at)), at += N),
   ...);
  return out;
}

// The job's values in kJobMetrics order into `out`: a step of `step_s` in the job `j`, with
// `support` calibration runs like the point (spaces/support.h).
inline void job_metric_values(double step_s, const estimator::JobFigures& j, int support,
                              double* out) noexcept {
  const double values[] = {step_s,
                           j.outcome.wall_s,
                           j.failure_free_s,
                           j.outcome.goodput,
                           j.outcome.checkpoint_interval_s,
                           j.step_lo_s,
                           j.step_hi_s,
                           j.wall_lo_s,
                           j.wall_hi_s,
                           static_cast<double>(support)};
  static_assert(std::size(values) == kJobMetrics.size());
  std::copy(std::begin(values), std::end(values), out);
}

// kModelMetrics' values of `e` (an estimator::Estimate or DlrmEstimate), whose job takes `energy_j`
// of IT energy to train in a facility of `pue`, into `out`. The job's GPU energy is its IT energy
// in the proportion of the step's.
template <class Estimate>
void model_metric_values(const Estimate& e, double energy_j, double pue, double* out) noexcept {
  const double values[] = {e.mfu,
                           e.model_flops_per_step,
                           e.memory.hbm_bytes + e.memory.expansion_bytes,
                           e.memory.hbm_bytes,
                           e.memory.expansion_bytes,
                           e.energy_per_step_j,
                           energy_j,
                           e.power.gpu_w,
                           e.power.it_j > 0 ? energy_j * e.power.gpu_j / e.power.it_j : 0.0,
                           energy_j * pue,
                           e.power.network_capex_usd,
                           e.power.network_power_w};
  static_assert(std::size(values) == kModelMetrics.size());
  std::copy(std::begin(values), std::end(values), out);
}

// `values` of a family's metrics into `out`, NaN for the needs_run ones of a point that does not
// run.
template <std::size_t N>
void metric_values(const std::array<MetricColumn, N>& metrics, const double* values, bool feasible,
                   double* out) noexcept {
  for (std::size_t i = 0; i < N; ++i) out[i] = feasible || !metrics[i].needs_run ? values[i] : kNaN;
}

// The transformer family's metrics: what make_schema() declares and transformer_metric_values()
// fills, side by side so that a metric is added in one place.
inline constexpr auto kTransformerMetrics = join_metrics(
    kJobMetrics,
    std::array<MetricColumn, 1>{{{"tokens_per_s", "tokens/s", ColumnType::f32, true, true}}},
    kModelMetrics,
    std::array<MetricColumn, 13>{{
        {"time_compute_s", "s", ColumnType::f32, true, false},
        {"time_memory_bound_s", "s", ColumnType::f32, true, false},
        {"time_tp_comm_s", "s", ColumnType::f32, true, false},
        {"time_cp_comm_s", "s", ColumnType::f32, true, false},
        {"time_pp_p2p_s", "s", ColumnType::f32, true, false},
        {"time_pp_bubble_s", "s", ColumnType::f32, true, false},
        {"time_dp_exposed_s", "s", ColumnType::f32, true, false},
        {"time_ep_a2a_s", "s", ColumnType::f32, true, false},
        {"time_edp_exposed_s", "s", ColumnType::f32, true, false},
        {"time_optimizer_s", "s", ColumnType::f32, true, false},
        {"time_offload_s", "s", ColumnType::f32, true, false},
        {"time_host_s", "s", ColumnType::f32, true, false},
        {"time_overhead_s", "s", ColumnType::f32, true, false},
    }});
inline constexpr int kNumTransformerMetrics = static_cast<int>(kTransformerMetrics.size());

// The metric values of an evaluated point in kTransformerMetrics order, `steps` optimizer steps to
// train in a job with the failures and checkpoints of `job` (its time and energy to train include
// the lost work), with the 90% prediction `interval` of the step and `support` calibration runs
// like the point (spaces/support.h; the interval is already widened for it); NaN for the needs_run
// metrics of a point that does not run. Inline: it runs per row.
inline void transformer_metric_values(const estimator::Estimate& e, double steps,
                                      const estimator::JobDesign& job,
                                      const estimator::StepInterval& interval, int support,
                                      double pue, double* out) noexcept {
  const auto& t = e.time;
  // A point that does not run has no job: its job columns are NaN (metric_values), so the failure
  // model is not evaluated for it.
  const estimator::JobFigures j =
      e.feasible ? estimator::job_figures(job, t.total_s, e.energy_per_step_j, steps, interval)
                 : estimator::JobFigures{};
  double run[kNumTransformerMetrics];
  job_metric_values(t.total_s, j, support, run);
  run[kNumJobMetrics] = e.tokens_per_s;
  model_metric_values(e, j.energy_j, pue, run + kNumJobMetrics + 1);
  const double breakdown[] = {t.compute_s,     t.memory_bound_s, t.tp_comm_s,    t.cp_comm_s,
                              t.pp_p2p_s,      t.pp_bubble_s,    t.dp_exposed_s, t.ep_a2a_s,
                              t.edp_exposed_s, t.optimizer_s,    t.offload_s,    t.host_s,
                              t.overhead_s};
  constexpr std::size_t kBreakdown = kNumJobMetrics + 1 + kModelMetrics.size();
  static_assert(kBreakdown + std::size(breakdown) == kNumTransformerMetrics);
  std::copy(std::begin(breakdown), std::end(breakdown), run + kBreakdown);
  metric_values(kTransformerMetrics, run, e.feasible, out);
}

// A recommendation-model store's column of the framework each row's design trains in (no axis:
// the spec's `[workload] framework` or the accelerator's default), after the axes.
inline constexpr const char* kDlrmFrameworkColumn = "framework";

// The recommendation-model family's metrics, filled by dlrm_metric_values() in this order.
inline constexpr auto kDlrmMetrics = join_metrics(
    kJobMetrics,
    std::array<MetricColumn, 1>{{{"samples_per_s", "samples/s", ColumnType::f32, true, true}}},
    kModelMetrics,
    std::array<MetricColumn, 8>{{
        {"time_embedding_fwd_s", "s", ColumnType::f32, true, false},
        {"time_embedding_bwd_s", "s", ColumnType::f32, true, false},
        {"time_all_to_all_s", "s", ColumnType::f32, true, false},
        {"time_mlp_compute_s", "s", ColumnType::f32, true, false},
        {"time_memory_bound_s", "s", ColumnType::f32, true, false},
        {"time_dense_allreduce_s", "s", ColumnType::f32, true, false},
        {"time_optimizer_s", "s", ColumnType::f32, true, false},
        {"time_overhead_s", "s", ColumnType::f32, true, false},
    }});
inline constexpr int kNumDlrmMetrics = static_cast<int>(kDlrmMetrics.size());

// The metric values of an evaluated recommendation-model point in kDlrmMetrics order.
inline void dlrm_metric_values(const estimator::DlrmEstimate& e, double steps,
                               const estimator::JobDesign& job,
                               const estimator::StepInterval& interval, int support, double pue,
                               double* out) noexcept {
  const auto& t = e.time;
  // A point that does not run has no job: its job columns are NaN (metric_values), so the failure
  // model is not evaluated for it.
  const estimator::JobFigures j =
      e.feasible ? estimator::job_figures(job, t.total_s, e.energy_per_step_j, steps, interval)
                 : estimator::JobFigures{};
  double run[kNumDlrmMetrics];
  job_metric_values(t.total_s, j, support, run);
  run[kNumJobMetrics] = e.samples_per_s;
  model_metric_values(e, j.energy_j, pue, run + kNumJobMetrics + 1);
  const double breakdown[] = {t.embedding_fwd_s, t.embedding_bwd_s, t.all_to_all_s,
                              t.mlp_compute_s,   t.memory_bound_s,  t.dense_allreduce_s,
                              t.optimizer_s,     t.overhead_s};
  constexpr std::size_t kBreakdown = kNumJobMetrics + 1 + kModelMetrics.size();
  static_assert(kBreakdown + std::size(breakdown) == kNumDlrmMetrics);
  std::copy(std::begin(breakdown), std::end(breakdown), run + kBreakdown);
  metric_values(kDlrmMetrics, run, e.feasible, out);
}

struct Schema {
  std::vector<Column> columns;
  // The columns of the full schema that `[output] columns` left out (make_schema()), in order.
  std::vector<std::string> omitted;
  // Index of the column named `name`, or npos.
  std::size_t index(const std::string& name) const noexcept;
  std::size_t row_bytes() const noexcept;  // bytes of one row on disk
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
};

// The store's columns for a space: point_id, design_id, one column per axis (Space::axes()
// order), then the columns of the space's family: for the transformer dp, feasible,
// infeasible_reason, num_gpus and its metrics (docs/store-format.md lists them); of those, the
// ones the spec's `[output] columns` keeps (point_id, design_id and feasible always), in that
// order. InputError naming the spec's line for a listed name that is no column of the store.
// Integral columns get the narrowest type that holds every value the space can produce (design
// axes with catalog defaults resolved: design_axis_values()).
Schema make_schema(const spaces::Space& space);
// Every column a store of `space` can keep: make_schema() with `[output] columns = "all"`.
Schema full_schema(const spaces::Space& space);
// The code of each estimator::DlrmFramework in the kDlrmFrameworkColumn column of `schema`, npos
// where it is not among the column's labels: a design fills the column without looking up a name.
std::array<std::size_t, estimator::kNumDlrmFrameworks> dlrm_framework_codes(const Schema& schema);

// The values the store's column of design axis `axis` can hold: the axis's numbers, with a 0 that
// means "catalog default" (Axis::zero_means_default) replaced by every default it resolves to
// (spaces::Design::value). Label axes: the label codes.
std::vector<double> design_axis_values(const spaces::Space& space, int axis);

// Rows of a Schema, column-major: one typed array per column.
class RowBlock {
 public:
  using Data =
      std::variant<std::vector<std::uint64_t>, std::vector<std::int32_t>, std::vector<double>,
                   std::vector<std::uint8_t>, std::vector<std::uint16_t>, std::vector<float>,
                   std::vector<std::uint32_t>>;

  RowBlock() = default;
  explicit RowBlock(const Schema& schema);

  std::size_t rows() const noexcept { return rows_; }
  std::size_t columns() const noexcept { return data_.size(); }
  ColumnType type(std::size_t column) const noexcept { return types_[column]; }
  // Sets the number of rows; never shrinks the arrays, so a block reused for chunk after chunk
  // allocates (and fills: zeros, or a constant column's value) only while it grows.
  void resize(std::size_t rows);
  void clear() noexcept { rows_ = 0; }
  std::size_t capacity() const noexcept { return capacity_; }

  // The typed array of a column; T must match its ColumnType (u64: uint64_t, u32: uint32_t,
  // u16 and label: uint16_t, u8, boolean and label8: uint8_t, i32: int32_t, f64: double,
  // f32: float).
  template <class T>
  T* column(std::size_t c) noexcept {
    return std::get<std::vector<T>>(data_[c]).data();
  }
  template <class T>
  const T* column(std::size_t c) const noexcept {
    return std::get<std::vector<T>>(data_[c]).data();
  }
  const void* raw(std::size_t c) const noexcept;
  void* raw(std::size_t c) noexcept;
  double number(std::size_t c, std::size_t row) const noexcept;  // any type, as a double

  // Appends row `row` of `other` (same schema).
  void append(const RowBlock& other, std::size_t row);

 private:
  std::vector<ColumnType> types_;
  std::vector<std::optional<double>> constants_;  // Column::constant
  std::vector<Data> data_;
  std::size_t rows_ = 0;
  std::size_t capacity_ = 0;  // elements of every array
};

}  // namespace clustersweep::engine
