#include "analysis/dataset.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/filter.h"
#include "base/error.h"
#include "base/format.h"
#include "base/names.h"
#include "spaces/stack_settings.h"

namespace clustersweep::analysis {
namespace {

struct PricedColumn {
  const char* name;
  const char* unit;
  std::vector<std::string> needs;
};

const std::vector<PricedColumn>& priced_columns() {
  static const std::vector<PricedColumn> columns = {
      {"energy_kwh", "kWh", {"energy_to_train_j"}},
      {"co2e_kg", "kg", {"energy_to_train_j"}},
      {"gpu_hours", "h", {"num_gpus", "time_to_train_s"}},
      {"cost_usd", "USD", {"energy_to_train_j", "num_gpus", "time_to_train_s", "gpu"}},
  };
  return columns;
}

const PricedColumn* find_priced(std::string_view name) {
  for (const auto& p : priced_columns())
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace

std::string Column::format(double value) const {
  if (is_label) {
    if (value >= 0 && value < static_cast<double>(labels.size()))
      return labels[static_cast<std::size_t>(value)];
    return fmt::format("#{}", value);
  }
  if (std::isnan(value)) return "nan";
  if (value == std::floor(value) && std::fabs(value) < 1e15) return fmt::format("{:.0f}", value);
  return fmt::format("{:.4g}", value);
}

std::string Column::display(double value) const {
  if (is_label || is_axis() || role == Role::id) return format(value);
  return format_quantity(value, unit);
}

std::string Column::heading() const {
  static const std::map<std::string_view, std::string_view> kShort = {
      {"point_id", "point"},
      {"num_nodes", "nodes"},
      {"num_gpus", "GPUs"},
      {"gpus_per_node", "GPUs/node"},
      {"nvlink_domain", "NVL domain"},
      {"nvlink_gbytes_per_s", "NVL GB/s"},
      {"inter_node_gbps_per_gpu", "net Gb/s"},
      {"hbm_gb", "HBM GB"},
      {"expansion_gb", "exp GB"},
      {"expansion_gbytes_per_s", "exp GB/s"},
      {"power_cap_w", "cap W"},
      {"oversubscription", "taper"},
      {"pod_gpus", "pod GPUs"},
      {"group_gpus", "group GPUs"},
      {"global_taper", "global taper"},
      {"global_batch", "batch"},
      {"micro_batch", "mb"},
      {"sequence_parallel", "sp"},
      {"pipeline_split", "split"},
      {"recompute", "recomp"},
      {"time_to_train_s", "time to train"},
      {"time_to_train_failure_free_s", "without failures"},
      {"checkpoint_interval_s", "ckpt every"},
      {"time_to_train_lo_s", "90% from"},
      {"time_to_train_hi_s", "90% to"},
      {"calibration_support", "support"},
      {"step_time_s", "step time"},
      {"tokens_per_s", "tokens/s"},
      {"samples_per_s", "samples/s"},
      {"energy_kwh", "energy"},
      {"energy_to_train_j", "IT energy"},
      {"cost_usd", "cost"},
      {"co2e_kg", "CO2e"},
      {"gpu_hours", "GPU-hours"},
      {"mem_per_gpu_bytes", "mem/GPU"},
  };
  const auto it = kShort.find(name);
  std::string text(it == kShort.end() ? std::string_view(name) : it->second);
  if (unit.find("electricity only") != std::string::npos) text += ", electricity only";
  return text;
}

std::string legend(const std::vector<const Column*>& columns) {
  std::vector<std::string> entries;
  for (const Column* c : columns) {
    std::string shown = c->heading();
    const auto comma = shown.find(',');
    if (comma != std::string::npos) shown.resize(comma);
    if (shown != c->name) entries.push_back(fmt::format("{} = {}", shown, c->name));
  }
  return fmt::format("{}", fmt::join(entries, ", "));
}

std::string Column::exact(double value) const {
  if (is_label) return format(value);
  if (std::isnan(value)) return {};
  if (type == engine::ColumnType::boolean) return value != 0 ? "true" : "false";
  if (value == std::floor(value) && std::fabs(value) < 0x1p63) return fmt::format("{:.0f}", value);
  return fmt::format("{}", value);
}

bool is_priced_column(std::string_view name) { return find_priced(name) != nullptr; }

Role classify_column(std::string_view name) {
  static const std::vector<std::string_view> plan = {
      "tp",     "pp", "dp", "cp", "vp", "micro_batch", "zero", "recompute", "sequence_parallel",
      "offload"};
  // Estimator outputs (docs/store-format.md). num_gpus is not here: it is the cluster size (an
  // axis itself when the spec sweeps gpus, else num_nodes * gpus_per_node), so it belongs to the
  // design.
  static const std::vector<std::string_view> metrics = {"feasible",
                                                        "infeasible_reason",
                                                        "step_time_s",
                                                        "tokens_per_s",
                                                        "mfu",
                                                        "time_to_train_s",
                                                        "mem_per_gpu_bytes",
                                                        "energy_per_step_j",
                                                        "energy_to_train_j",
                                                        "design_id",
                                                        "plan_id",
                                                        "hbm_used_bytes",
                                                        "expansion_used_bytes",
                                                        "mem_hbm_bytes",
                                                        "mem_expansion_bytes",
                                                        "model_flops_per_step",
                                                        "compute_s",
                                                        "memory_bound_s",
                                                        "tp_comm_s",
                                                        "cp_comm_s",
                                                        "pp_p2p_s",
                                                        "pp_bubble_s",
                                                        "dp_exposed_s",
                                                        "optimizer_s",
                                                        "offload_s",
                                                        "overhead_s",
                                                        "power_w",
                                                        "avg_power_w"};
  if (name == "point_id") return Role::id;
  if (std::find(plan.begin(), plan.end(), name) != plan.end() || spaces::find_stack_setting(name))
    return Role::plan_axis;
  if (std::find(metrics.begin(), metrics.end(), name) != metrics.end()) return Role::metric;
  if (name.rfind("time_", 0) == 0 || name.rfind("mem_", 0) == 0 || name.rfind("energy_", 0) == 0)
    return Role::metric;
  return Role::design_axis;
}

Dataset::Dataset(const ColumnSource& source, Pricing pricing)
    : source_(&source), pricing_(pricing) {
  for (const auto& info : source.columns()) {
    Role role = classify_column(info.name);
    if (info.role == "id")
      role = Role::id;
    else if (info.role == "design_axis")
      role = Role::design_axis;
    else if (info.role == "plan_axis")
      role = Role::plan_axis;
    else if (info.role == "metric")
      role = Role::metric;
    // num_gpus is the cluster size: part of the design even where the store calls it a metric.
    if (info.name == "num_gpus") role = Role::design_axis;
    columns_.push_back(Column{info.name, info.unit, info.is_label, info.labels, role, info.type});
  }
  for (const auto& p : priced_columns()) {
    const bool available = std::all_of(p.needs.begin(), p.needs.end(), [&](const std::string& n) {
      return source.columns().end() !=
             std::find_if(source.columns().begin(), source.columns().end(),
                          [&](const ColumnInfo& c) { return c.name == n; });
    });
    // Without a GPU price a cost is the electricity alone: every header of it says so.
    const bool electricity_only = std::string_view(p.name) == "cost_usd" && !pricing_.prices_gpus();
    if (available && !find(p.name))
      columns_.push_back(Column{
          p.name, electricity_only ? "USD, electricity only" : p.unit, false, {}, Role::priced});
  }
}

std::vector<const Column*> Dataset::axes() const {
  std::vector<const Column*> out;
  for (const auto& c : columns_)
    if (c.is_axis()) out.push_back(&c);
  return out;
}

std::vector<std::string> Dataset::column_names() const {
  std::vector<std::string> out;
  if (find("point_id")) out.push_back("point_id");
  for (const auto& c : columns_)
    if (c.name != "point_id") out.push_back(c.name);
  return out;
}

std::vector<std::string> Dataset::column_list(std::string_view text, std::string_view what) const {
  std::vector<std::string> out;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    out.push_back(column(text.substr(start, comma - start), what).name);
    start = comma + 1;
  }
  return out;
}

const Column* Dataset::find(std::string_view name) const noexcept {
  for (const auto& c : columns_)
    if (c.name == name) return &c;
  return nullptr;
}

std::optional<std::string> Dataset::not_kept(std::string_view name) const {
  const auto text = source_->string_attribute("omitted_columns");
  if (!text || text->empty()) return std::nullopt;
  std::vector<std::string> omitted;
  for (std::size_t start = 0; start <= text->size();) {
    const std::size_t blank = std::min(text->find(' ', start), text->size());
    omitted.push_back(text->substr(start, blank - start));
    start = blank + 1;
  }
  const auto left_out = [&](std::string_view n) {
    return std::find(omitted.begin(), omitted.end(), n) != omitted.end();
  };
  std::string missing(name);
  if (!left_out(name)) {
    const PricedColumn* p = find_priced(name);
    if (!p) return std::nullopt;
    const auto need = std::find_if(p->needs.begin(), p->needs.end(), left_out);
    if (need == p->needs.end()) return std::nullopt;
    missing = *need;
  }
  const std::string kept = source_->string_attribute("kept_columns").value_or("?");
  const bool list = kept != "all" && kept != "summary";
  return fmt::format(
      "{}'{}' was not kept in '{}' (its sweep's [output] columns = {}); rerun the sweep with "
      "columns = \"all\", or with '{}' in its list",
      missing == name ? "column " : fmt::format("column '{}' needs '{}', but ", name, missing),
      missing, source_->path(), list ? kept : fmt::format("\"{}\"", kept), missing);
}

const Column& Dataset::column(std::string_view name, std::string_view what) const {
  if (const Column* c = find(name)) return *c;
  if (const auto why = not_kept(name)) throw InputError(fmt::format("{}: {}", what, *why));
  std::vector<std::string> names;
  for (const auto& c : columns_) names.push_back(c.name);
  const auto close = closest_names(name, names, 1);
  if (!close.empty())
    throw InputError(
        fmt::format("{}: unknown column '{}'; did you mean '{}'?", what, name, close[0]));
  throw InputError(
      fmt::format("{}: unknown column '{}'; columns are: {}", what, name, fmt::join(names, ", ")));
}

// ---- Scan ------------------------------------------------------------------------------------

Scan::Scan(const Dataset& data, const std::vector<std::string>& columns, ScanOptions options)
    : data_(data), options_(options) {
  for (const auto& name : columns) {
    data_.column(name, "column");
    buffer(name);
  }
  for (const auto& name : columns)
    wanted_index_.push_back(
        static_cast<std::size_t>(std::find(names_.begin(), names_.end(), name) - names_.begin()));
  if (options_.where) {
    for (const auto& name : options_.where->columns()) buffer(name);
    for (const auto& name : options_.where->columns())
      filter_index_.push_back(
          static_cast<std::size_t>(std::find(names_.begin(), names_.end(), name) - names_.begin()));
  }
  if (options_.feasible_only && data_.find("feasible")) buffer("feasible");
  wanted_.resize(columns.size());
  next_ = options_.begin;
  end_ = options_.end == 0 ? data_.rows() : std::min(options_.end, data_.rows());
  if (options_.chunk_rows == 0) options_.chunk_rows = kDefaultChunkRows;
}

Scan::~Scan() = default;

// Registers a column (and, for a priced one, the stored columns it needs, first).
std::vector<double>& Scan::buffer(const std::string& name) {
  auto it = std::find(names_.begin(), names_.end(), name);
  if (it == names_.end()) {
    const Column* column = data_.find(name);
    if (const PricedColumn* p = find_priced(name); p && column && column->role == Role::priced) {
      for (const auto& need : p->needs) buffer(need);
      if (p->name == std::string_view("cost_usd") && data_.find("network_capex_usd"))
        buffer("network_capex_usd");
    }
    names_.push_back(name);
    buffers_.emplace_back();
    it = names_.end() - 1;
  }
  return buffers_[static_cast<std::size_t>(it - names_.begin())];
}

void Scan::load(std::size_t index) {
  const std::string& name = names_[index];
  std::vector<double>& out = buffers_[index];
  const PricedColumn* priced = find_priced(name);
  if (!priced || data_.find(name)->role != Role::priced) {
    data_.source().read(name, offset_, size_, out);
    return;
  }
  const auto column = [&](const char* n) {
    return buffers_[static_cast<std::size_t>(std::find(names_.begin(), names_.end(), n) -
                                             names_.begin())]
        .data();
  };
  const Pricing& p = data_.pricing();
  out.resize(size_);
  const double* energy_j =
      priced->needs[0] == "energy_to_train_j" ? column("energy_to_train_j") : nullptr;
  const std::string_view n = name;
  if (n == "energy_kwh") {
    for (std::size_t i = 0; i < size_; ++i) out[i] = p.energy_kwh(energy_j[i]);
  } else if (n == "co2e_kg") {
    for (std::size_t i = 0; i < size_; ++i) out[i] = p.co2e_kg(energy_j[i]);
  } else if (n == "gpu_hours") {
    const double* gpus = column("num_gpus");
    const double* time_s = column("time_to_train_s");
    for (std::size_t i = 0; i < size_; ++i) out[i] = gpus[i] * time_s[i] / 3600;
  } else {  // cost_usd: electricity plus the accelerators (rented, or bought and amortized with
            // the network's share)
    const double* gpus = column("num_gpus");
    const double* time_s = column("time_to_train_s");
    const double* gpu = column("gpu");
    // Stores written before the network's bill of materials have no network_capex_usd.
    const double* network = data_.find("network_capex_usd") ? column("network_capex_usd") : nullptr;
    const std::vector<double> price = p.usd_per_gpu_s(data_.find("gpu")->labels);
    for (std::size_t i = 0; i < size_; ++i)
      out[i] = p.cost_usd(price[static_cast<std::size_t>(gpu[i])] +
                              (network ? p.network_usd_per_gpu_s(network[i], gpus[i]) : 0),
                          gpus[i], time_s[i], energy_j[i]);
  }
}

bool Scan::next() {
  if (next_ >= end_) return false;
  offset_ = next_;
  size_ = static_cast<std::size_t>(std::min<std::uint64_t>(options_.chunk_rows, end_ - next_));
  next_ += size_;
  for (std::size_t i = 0; i < names_.size(); ++i) load(i);
  for (std::size_t i = 0; i < wanted_.size(); ++i) wanted_[i] = buffers_[wanted_index_[i]].data();
  keep_.assign(size_, 1);
  if (options_.feasible_only && data_.find("feasible")) {
    const double* feasible = buffer("feasible").data();
    for (std::size_t i = 0; i < size_; ++i) keep_[i] = feasible[i] != 0;
  }
  if (options_.where) {
    std::vector<const double*> columns;
    for (std::size_t i : filter_index_) columns.push_back(buffers_[i].data());
    options_.where->apply(columns, size_, keep_);
  }
  return true;
}

}  // namespace clustersweep::analysis
