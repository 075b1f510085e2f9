#include "engine/schema.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"
#include "base/names.h"
#include "estimator/estimator.h"
#include "estimator/family.h"
#include "spaces/space.h"

namespace clustersweep::engine {

std::size_t Schema::index(const std::string& name) const noexcept {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i].name == name) return i;
  return npos;
}

std::size_t element_size(ColumnType type) noexcept {
  return visit(type, [](auto* tag) { return sizeof(*tag); });
}

ColumnType narrowest_type(const std::vector<double>& values) noexcept {
  double lo = 0, hi = 0;
  for (double v : values) {
    if (!std::isfinite(v) || v != std::floor(v)) return ColumnType::f64;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo >= 0 && hi <= std::numeric_limits<std::uint8_t>::max()) return ColumnType::u8;
  if (lo >= 0 && hi <= std::numeric_limits<std::uint16_t>::max()) return ColumnType::u16;
  if (lo >= 0 && hi <= std::numeric_limits<std::uint32_t>::max()) return ColumnType::u32;
  if (lo >= std::numeric_limits<std::int32_t>::min() &&
      hi <= std::numeric_limits<std::int32_t>::max())
    return ColumnType::i32;
  return ColumnType::f64;
}

ColumnType label_type(std::size_t labels) noexcept {
  return labels <= 256 ? ColumnType::label8 : ColumnType::label;
}

bool is_label(ColumnType type) noexcept {
  return type == ColumnType::label8 || type == ColumnType::label;
}

std::vector<double> design_axis_values(const spaces::Space& space, int axis) {
  const auto& axes = space.axes();
  const spaces::Axis& a = axes[static_cast<std::size_t>(axis)];
  std::vector<double> values;
  if (a.is_label) {
    for (std::size_t i = 0; i < a.labels.size(); ++i) values.push_back(static_cast<double>(i));
    return values;
  }
  if (!a.zero_means_default) return a.numbers;
  auto add = [&](double v) {
    if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
  };
  std::size_t zero = 0;
  for (std::size_t i = 0; i < a.numbers.size(); ++i) {
    if (a.numbers[i] != 0)
      add(a.numbers[i]);
    else
      zero = i;
  }
  // A catalog default depends on the model, the accelerator and gpus_per_node only
  // (spaces::Space::design()): resolve it for each of their combinations, the other axes at their
  // first value and this axis at its 0.
  std::uint32_t digits[spaces::kNumAxes] = {};
  digits[axis] = static_cast<std::uint32_t>(zero);
  // The model axis is first in every family; the cluster axes follow the gpu axis in order.
  const bool dlrm = space.family() == estimator::Family::dlrm;
  const int gpu_axis = dlrm ? int{spaces::kDlrmGpu} : int{spaces::kGpu};
  const int gpn_axis = gpu_axis + (int{spaces::kGpusPerNode} - int{spaces::kGpu});
  spaces::Design design;
  spaces::DlrmDesign dlrm_design;
  spaces::Violation why;
  const std::size_t gpns = axis == gpn_axis ? 1 : axes[gpn_axis].size();
  for (std::size_t m = 0; m < axes[0].size(); ++m)
    for (std::size_t g = 0; g < axes[gpu_axis].size(); ++g)
      for (std::size_t n = 0; n < gpns; ++n) {
        digits[0] = static_cast<std::uint32_t>(m);
        digits[gpu_axis] = static_cast<std::uint32_t>(g);
        if (axis != gpn_axis) digits[gpn_axis] = static_cast<std::uint32_t>(n);
        const std::uint64_t d = space.encode(digits) / space.plan_points();
        if (dlrm) {
          space.dlrm_design(d, dlrm_design, why);
          add(dlrm_design.value[static_cast<std::size_t>(axis)]);
        } else {
          space.design(d, design, why);
          add(design.value[static_cast<std::size_t>(axis)]);
        }
      }
  return values;
}

std::size_t Schema::row_bytes() const noexcept {
  std::size_t bytes = 0;
  for (const auto& c : columns) bytes += element_size(c.type);
  return bytes;
}

namespace {

void add(Schema& s, std::string name, std::string unit, std::string role, ColumnType type) {
  s.columns.push_back(Column{std::move(name), std::move(unit), std::move(role), type, {}, {}});
}

// A label column of `labels` (codes 0..n-1); with one label it is constant: every row's code is 0.
void add_labels(Schema& s, std::string name, std::string unit, std::string role,
                std::vector<std::string> labels) {
  add(s, std::move(name), std::move(unit), std::move(role), label_type(labels.size()));
  if (labels.size() == 1) s.columns.back().constant = 0.0;
  s.columns.back().labels = std::move(labels);
}

// The type of a column holding up to the largest cluster's GPU count: the cluster-size axis
// (`size_axis`), times the largest node where it counts nodes.
ColumnType gpu_count_type(const spaces::Space& space, int size_axis, int gpus_per_node_axis) {
  const auto& axes = space.axes();
  double max_gpus = 0;
  for (double size : axes[size_axis].numbers) max_gpus = std::max(max_gpus, size);
  if (axes[size_axis].name != "num_gpus") {
    double max_gpn = 0;
    for (double gpn : design_axis_values(space, gpus_per_node_axis))
      max_gpn = std::max(max_gpn, gpn);
    max_gpus *= max_gpn;
  }
  return narrowest_type({max_gpus});
}

// Every family's outcome columns: feasibility and its reason, the cluster size in GPUs (unless
// the cluster-size axis is num_gpus itself), then the family's metrics.
void add_outcome_columns(Schema& s, ColumnType gpus_type, const MetricColumn* metrics, int count) {
  add(s, "feasible", "", "metric", ColumnType::boolean);
  add(s, "infeasible_reason", "", "metric", label_type(estimator::kNumInfeasible));
  for (int r = 0; r < estimator::kNumInfeasible; ++r)
    s.columns.back().labels.push_back(estimator::to_string(static_cast<estimator::Infeasible>(r)));
  if (s.index("num_gpus") == Schema::npos) add(s, "num_gpus", "", "metric", gpus_type);
  for (int i = 0; i < count; ++i)
    add(s, metrics[i].name, metrics[i].unit, "metric", metrics[i].type);
}

}  // namespace

Schema full_schema(const spaces::Space& space) {
  Schema s;
  add(s, "point_id", "", "id",
      space.size() - 1 <= std::numeric_limits<std::uint32_t>::max() ? ColumnType::u32
                                                                    : ColumnType::u64);
  add(s, "design_id", "", "id",
      space.designs() - 1 <= std::numeric_limits<std::uint32_t>::max() ? ColumnType::u32
                                                                       : ColumnType::u64);
  const auto& axes = space.axes();
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const spaces::Axis& axis = axes[i];
    const std::string role = axis.is_plan ? "plan_axis" : "design_axis";
    if (axis.is_label) {
      add_labels(s, axis.name, axis.unit, role, axis.labels);
    } else {
      const std::vector<double> values =
          axis.is_plan ? axis.numbers : design_axis_values(space, static_cast<int>(i));
      add(s, axis.name, axis.unit, role, narrowest_type(values));
      if (values.size() == 1) s.columns.back().constant = values.front();
    }
  }
  switch (space.family()) {
    case estimator::Family::transformer: {
      // The derived plan degree dp, at most the largest cluster's GPU count.
      const ColumnType gpus = gpu_count_type(space, spaces::kClusterSize, spaces::kGpusPerNode);
      add(s, "dp", "", "plan_axis", gpus);
      add_outcome_columns(s, gpus, kTransformerMetrics.data(), kNumTransformerMetrics);
      break;
    }
    case estimator::Family::dlrm: {
      // The framework a design trains in is no axis: the spec's, or its accelerator's default.
      // Named as the transformer's framework column, so that readers find one column.
      std::vector<std::string> frameworks;
      for (estimator::DlrmFramework f : space.dlrm_frameworks())
        frameworks.emplace_back(estimator::to_string(f));
      add_labels(s, kDlrmFrameworkColumn, "", "design_axis", std::move(frameworks));
      add_outcome_columns(s,
                          gpu_count_type(space, spaces::kDlrmClusterSize, spaces::kDlrmGpusPerNode),
                          kDlrmMetrics.data(), kNumDlrmMetrics);
      break;
    }
  }
  return s;
}

std::array<std::size_t, estimator::kNumDlrmFrameworks> dlrm_framework_codes(const Schema& schema) {
  std::array<std::size_t, estimator::kNumDlrmFrameworks> codes;
  codes.fill(Schema::npos);
  const std::size_t c = schema.index(kDlrmFrameworkColumn);
  if (c == Schema::npos) return codes;
  const std::vector<std::string>& labels = schema.columns[c].labels;
  for (int f = 0; f < estimator::kNumDlrmFrameworks; ++f) {
    const auto at = std::find(labels.begin(), labels.end(),
                              estimator::to_string(static_cast<estimator::DlrmFramework>(f)));
    if (at != labels.end())
      codes[static_cast<std::size_t>(f)] = static_cast<std::size_t>(at - labels.begin());
  }
  return codes;
}

namespace {

// Kept whatever `[output] columns` says: a row's identity (merge orders by it, the run's summary
// groups by design) and whether it runs (what analysis filters on first).
bool always_kept(const std::string& name) {
  return name == "point_id" || name == "design_id" || name == "feasible";
}

bool in_summary(const std::string& name, const std::string& role) {
  if (role != "metric" || name == "feasible" || name == "infeasible_reason" || name == "num_gpus")
    return true;
  for (const auto& m : kTransformerMetrics)
    if (name == m.name) return m.summary;
  for (const auto& m : kDlrmMetrics)
    if (name == m.name) return m.summary;
  return false;
}

}  // namespace

Schema make_schema(const spaces::Space& space) {
  Schema full = full_schema(space);
  const spaces::OutputColumns& wanted = space.output_columns();
  using Kind = spaces::OutputColumns::Kind;
  if (wanted.kind == Kind::all) return full;
  for (std::size_t i = 0; i < wanted.names.size(); ++i) {
    if (full.index(wanted.names[i]) != Schema::npos) continue;
    std::vector<std::string> names;
    for (const auto& c : full.columns) names.push_back(c.name);
    const auto close = closest_names(wanted.names[i], names, 1);
    throw InputError(
        fmt::format("{}: output.columns: '{}' is no column of this {} store; {}", wanted.where[i],
                    wanted.names[i], estimator::to_string(space.family()),
                    close.empty() ? fmt::format("its columns are: {}", fmt::join(names, ", "))
                                  : fmt::format("did you mean '{}'?", close.front())));
  }
  Schema s;
  for (auto& c : full.columns) {
    const bool kept =
        always_kept(c.name) ||
        (wanted.kind == Kind::summary
             ? in_summary(c.name, c.role)
             : std::find(wanted.names.begin(), wanted.names.end(), c.name) != wanted.names.end());
    if (kept)
      s.columns.push_back(std::move(c));
    else
      s.omitted.push_back(c.name);
  }
  return s;
}

RowBlock::RowBlock(const Schema& schema) {
  for (const auto& c : schema.columns) {
    types_.push_back(c.type);
    constants_.push_back(c.constant);
    visit(c.type, [&](auto* tag) {
      data_.emplace_back(std::vector<std::remove_pointer_t<decltype(tag)>>());
    });
  }
}

namespace {

// Grows `v` to `n` elements, a large array in transparent huge pages where the kernel gives them
// on request (its "madvise" mode): a table of a million rows then faults in 512 times fewer pages.
template <class T>
void grow(std::vector<T>& v, std::size_t n) {
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  if (n > v.capacity()) {
    v.reserve(n);
    const auto begin = reinterpret_cast<std::uintptr_t>(v.data());
    const std::uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1);
    const std::uintptr_t last = (begin + v.capacity() * sizeof(T)) & ~(kHuge - 1);
    if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }
  v.resize(n);
}

}  // namespace

void RowBlock::resize(std::size_t rows) {
  if (rows > capacity_) {
    const std::size_t capacity = std::max(rows, capacity_ + capacity_ / 2);
    for (std::size_t c = 0; c < data_.size(); ++c)
      std::visit(
          [&](auto& v) {
            grow(v, capacity);
            using T = typename std::decay_t<decltype(v)>::value_type;
            if (constants_[c])
              std::fill(v.begin() + static_cast<std::ptrdiff_t>(capacity_), v.end(),
                        static_cast<T>(*constants_[c]));
          },
          data_[c]);
    capacity_ = capacity;
  }
  rows_ = rows;
}

const void* RowBlock::raw(std::size_t c) const noexcept {
  return std::visit([](const auto& v) -> const void* { return v.data(); }, data_[c]);
}

void* RowBlock::raw(std::size_t c) noexcept {
  return std::visit([](auto& v) -> void* { return v.data(); }, data_[c]);
}

double RowBlock::number(std::size_t c, std::size_t row) const noexcept {
  return std::visit([row](const auto& v) { return static_cast<double>(v[row]); }, data_[c]);
}

void RowBlock::append(const RowBlock& other, std::size_t row) {
  const std::size_t at = rows_;
  resize(rows_ + 1);
  for (std::size_t c = 0; c < data_.size(); ++c)
    std::visit(
        [&](auto& v) {
          using V = std::decay_t<decltype(v)>;
          v[at] = std::get<V>(other.data_[c])[row];
        },
        data_[c]);
}

}  // namespace clustersweep::engine
