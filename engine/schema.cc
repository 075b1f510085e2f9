#include "engine/schema.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "estimator/estimator.h"
#include "spaces/space.h"

namespace clustersweep::engine {

std::size_t Schema::index(const std::string& name) const noexcept {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i].name == name) return i;
  return npos;
}

namespace {

std::size_t element_size(ColumnType type) noexcept {
  switch (type) {
    case ColumnType::u64:
    case ColumnType::f64:
      return 8;
    case ColumnType::i32:
    case ColumnType::f32:
      return 4;
    case ColumnType::boolean:
      return 1;
    case ColumnType::label:
      return 2;
  }
  return 8;
}

bool all_int32(const std::vector<double>& values) {
  for (double v : values)
    if (v != std::floor(v) || v < std::numeric_limits<std::int32_t>::min() ||
        v > std::numeric_limits<std::int32_t>::max())
      return false;
  return true;
}

}  // namespace

std::size_t Schema::row_bytes() const noexcept {
  std::size_t bytes = 0;
  for (const auto& c : columns) bytes += element_size(c.type);
  return bytes;
}

Schema make_schema(const spaces::Space& space) {
  Schema s;
  auto add = [&](std::string name, std::string unit, std::string role, ColumnType type) {
    s.columns.push_back(Column{std::move(name), std::move(unit), std::move(role), type, {}});
  };
  add("point_id", "", "id", ColumnType::u64);
  add("design_id", "", "id", ColumnType::u64);
  for (const auto& axis : space.axes()) {
    const std::string role = axis.is_plan ? "plan_axis" : "design_axis";
    if (axis.is_label) {
      add(axis.name, axis.unit, role, ColumnType::label);
      s.columns.back().labels = axis.labels;
    } else {
      add(axis.name, axis.unit, role, all_int32(axis.numbers) ? ColumnType::i32 : ColumnType::f64);
    }
  }
  add("dp", "", "plan_axis", ColumnType::i32);
  add("feasible", "", "metric", ColumnType::boolean);
  add("infeasible_reason", "", "metric", ColumnType::label);
  for (int r = 0; r < estimator::kNumInfeasible; ++r)
    s.columns.back().labels.push_back(estimator::to_string(static_cast<estimator::Infeasible>(r)));
  // The cluster-size axis is "num_gpus" when the spec sweeps GPU counts: no second column then.
  if (s.index("num_gpus") == Schema::npos) add("num_gpus", "", "metric", ColumnType::i32);
  for (const char* name : {"step_time_s", "time_to_train_s"})
    add(name, "s", "metric", ColumnType::f64);
  add("tokens_per_s", "tokens/s", "metric", ColumnType::f64);
  add("mfu", "fraction", "metric", ColumnType::f64);
  add("model_flops_per_step", "FLOP", "metric", ColumnType::f64);
  for (const char* name : {"mem_per_gpu_bytes", "mem_hbm_bytes", "mem_expansion_bytes"})
    add(name, "B", "metric", ColumnType::f64);
  for (const char* name : {"energy_per_step_j", "energy_to_train_j"})
    add(name, "J", "metric", ColumnType::f64);
  for (const char* name :
       {"time_compute_s", "time_memory_bound_s", "time_tp_comm_s", "time_cp_comm_s",
        "time_pp_p2p_s", "time_pp_bubble_s", "time_dp_exposed_s", "time_optimizer_s",
        "time_offload_s", "time_overhead_s"})
    add(name, "s", "metric", ColumnType::f32);
  return s;
}

RowBlock::RowBlock(const Schema& schema) {
  for (const auto& c : schema.columns) {
    types_.push_back(c.type);
    switch (c.type) {
      case ColumnType::u64:
        data_.emplace_back(std::vector<std::uint64_t>());
        break;
      case ColumnType::i32:
        data_.emplace_back(std::vector<std::int32_t>());
        break;
      case ColumnType::f64:
        data_.emplace_back(std::vector<double>());
        break;
      case ColumnType::f32:
        data_.emplace_back(std::vector<float>());
        break;
      case ColumnType::boolean:
        data_.emplace_back(std::vector<std::uint8_t>());
        break;
      case ColumnType::label:
        data_.emplace_back(std::vector<std::uint16_t>());
        break;
    }
  }
}

void RowBlock::resize(std::size_t rows) {
  if (rows > capacity_) {
    const std::size_t capacity = std::max(rows, capacity_ + capacity_ / 2);
    for (auto& d : data_) std::visit([capacity](auto& v) { v.resize(capacity); }, d);
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
