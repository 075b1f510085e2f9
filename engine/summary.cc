#include "engine/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "engine/evaluate.h"

namespace clustersweep::engine {

namespace {

constexpr std::uint64_t kReadRows = 1 << 18;

const char* objective_column(spaces::Objective objective) {
  switch (objective) {
    case spaces::Objective::step_time:
      return "step_time_s";
    case spaces::Objective::time_to_train:
      return "time_to_train_s";
    case spaces::Objective::energy:
      return "energy_to_train_j";
    case spaces::Objective::cost:
      return "cost_usd";
  }
  return "time_to_train_s";
}

}  // namespace

std::uint64_t count_feasible(const StoreReader& store) {
  std::uint64_t count = 0;
  std::vector<double> feasible;
  for (std::uint64_t offset = 0; offset < store.rows(); offset += kReadRows) {
    const std::uint64_t n = std::min(kReadRows, store.rows() - offset);
    store.read("feasible", offset, n, feasible);
    for (double f : feasible) count += f != 0;
  }
  return count;
}

std::vector<BestRow> best_designs(const StoreReader& store, spaces::Objective objective,
                                  std::size_t top) {
  const bool cost = objective == spaces::Objective::cost;
  const spaces::Pricing pricing = spaces::stored_pricing(store);
  std::vector<BestRow> best;  // at most `top` designs, sorted by objective
  std::vector<double> feasible, design, value, gpus, gpu, time, energy;
  const std::vector<double> price = pricing.usd_per_gpu_s(store.find_column("gpu")->labels);
  for (std::uint64_t offset = 0; offset < store.rows(); offset += kReadRows) {
    const std::uint64_t n = std::min(kReadRows, store.rows() - offset);
    store.read("feasible", offset, n, feasible);
    store.read("design_id", offset, n, design);
    if (cost) {
      store.read("num_gpus", offset, n, gpus);
      store.read("gpu", offset, n, gpu);
      store.read("time_to_train_s", offset, n, time);
      store.read("energy_to_train_j", offset, n, energy);
    } else {
      store.read(objective_column(objective), offset, n, value);
    }
    for (std::uint64_t i = 0; i < n; ++i) {
      if (feasible[i] == 0) continue;
      const double v = cost ? pricing.cost_usd(price[static_cast<std::size_t>(gpu[i])], gpus[i],
                                               time[i], energy[i])
                            : value[i];
      if (!std::isfinite(v)) continue;
      const auto id = static_cast<std::uint64_t>(design[i]);
      auto same = std::find_if(best.begin(), best.end(),
                               [&](const BestRow& b) { return b.design_id == id; });
      if (same != best.end()) {
        if (v >= same->objective) continue;
        best.erase(same);
      } else if (best.size() == top && v >= best.back().objective) {
        continue;
      }
      const BestRow row{offset + i, id, v};
      best.insert(std::upper_bound(
                      best.begin(), best.end(), row,
                      [](const BestRow& a, const BestRow& b) { return a.objective < b.objective; }),
                  row);
      if (best.size() > top) best.pop_back();
    }
  }
  return best;
}

namespace {

std::string format_value(const ColumnInfo& column, double v) {
  if (column.is_label) {
    const auto i = static_cast<std::size_t>(v);
    return i < column.labels.size() ? column.labels[i] : fmt::format("#{}", v);
  }
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:g}", v);
}

std::string duration(double seconds) {
  if (!std::isfinite(seconds)) return "-";
  if (seconds >= 86400) return fmt::format("{:.1f} d", seconds / 86400);
  if (seconds >= 3600) return fmt::format("{:.1f} h", seconds / 3600);
  if (seconds >= 1) return fmt::format("{:.2f} s", seconds);
  return fmt::format("{:.1f} ms", seconds * 1e3);
}

}  // namespace

void print_best_designs(const StoreReader& store, const spaces::Space& space, std::size_t top,
                        std::ostream& out) {
  const auto best = best_designs(store, space.objective(), top);
  if (best.empty()) {
    out << "no feasible point: every plan of every design was removed or ran out of memory\n";
    return;
  }
  const spaces::Pricing pricing = spaces::stored_pricing(store);
  const std::vector<double> price = pricing.usd_per_gpu_s(store.find_column("gpu")->labels);
  out << fmt::format(
      "best designs by {} (the best plan of each{}):\n", spaces::to_string(space.objective()),
      pricing.prices_gpus() ? "" : "; cost $ is electricity only: no GPU price given");
  out << fmt::format("  {:>2}  {:>10}  {:>10}  {:>5}  {:>9}  {:>10}  {}\n", "#", "train", "step",
                     "MFU", "MWh", "cost $", "design | plan");
  std::vector<std::string> design_axes, plan_axes;
  // A space without expert parallelism keeps ep = etp = 1: its plans need not say so.
  const auto& axes = space.axes();
  const bool experts = space.family() == estimator::Family::transformer &&
                       (axes[spaces::kEp].size() > 1 || axes[spaces::kEp].numbers[0] != 1 ||
                        axes[spaces::kEtp].size() > 1 || axes[spaces::kEtp].numbers[0] != 1);
  for (const auto& a : axes) {
    if (!a.is_plan) {
      if (a.size() > 1) design_axes.push_back(a.name);
    } else if (experts || (a.name != "ep" && a.name != "etp")) {
      plan_axes.push_back(a.name);
    }
  }
  // The transformer's derived degree, with its plan.
  if (store.schema().index("dp") != Schema::npos) plan_axes.push_back("dp");
  std::vector<double> v;
  auto value = [&](const std::string& column, std::uint64_t row) {
    store.read(column, row, 1, v);
    return v[0];
  };
  for (std::size_t k = 0; k < best.size(); ++k) {
    const std::uint64_t row = best[k].row;
    const double ttt = value("time_to_train_s", row);
    const double energy = value("energy_to_train_j", row);
    const double cost = pricing.cost_usd(price[static_cast<std::size_t>(value("gpu", row))],
                                         value("num_gpus", row), ttt, energy);
    std::string design, plan;
    for (const auto& name : design_axes)
      design += fmt::format("{}{}={}", design.empty() ? "" : " ", name,
                            format_value(*store.find_column(name), value(name, row)));
    for (const auto& name : plan_axes)
      plan += fmt::format("{}{}={}", plan.empty() ? "" : " ", name,
                          format_value(*store.find_column(name), value(name, row)));
    out << fmt::format("  {:>2}  {:>10}  {:>10}  {:>4.1f}%  {:>9.1f}  {:>10.3g}  {} | {}\n", k + 1,
                       duration(ttt), duration(value("step_time_s", row)), 100 * value("mfu", row),
                       energy * pricing.pue / 3.6e9, cost, design.empty() ? "(one design)" : design,
                       plan);
  }
}

}  // namespace clustersweep::engine
