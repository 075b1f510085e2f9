#include "engine/summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <ostream>

#include "base/format.h"
#include "engine/evaluate.h"

namespace clustersweep::engine {

namespace {

constexpr std::uint64_t kReadRows = 1 << 18;

// What the best-designs table reads of every row.
constexpr const char* kBestDesignColumns[] = {"feasible", "design_id",         "num_gpus",
                                              "gpu",      "time_to_train_s",   "step_time_s",
                                              "mfu",      "energy_to_train_j", "mem_per_gpu_bytes"};

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
  const spaces::Pricing pricing = spaces::stored_pricing(store);
  const std::vector<double> price = pricing.usd_per_gpu_s(store.find_column("gpu")->labels);
  std::vector<BestRow> best;  // at most `top` lines, sorted by objective
  // A design's best plan joins the line of equal figures, or makes a line of its own.
  auto add = [&](BestRow c) {
    auto same = std::find_if(best.begin(), best.end(),
                             [&](const BestRow& b) { return b.figures == c.figures; });
    if (same != best.end()) {
      if (std::pair(c.gpus, c.memory) < std::pair(same->gpus, same->memory)) {
        std::swap(c.row, same->row);
        same->gpus = c.gpus;
        same->memory = c.memory;
      }
      same->tied_rows.push_back(c.row);
      return;
    }
    if (best.size() == top && c.objective >= best.back().objective) return;
    const auto at = std::upper_bound(best.begin(), best.end(), c.objective,
                                     [](double v, const BestRow& b) { return v < b.objective; });
    best.insert(at, std::move(c));
    if (best.size() > top) best.pop_back();
  };
  std::vector<double> feasible, design, gpus, gpu, time, step, mfu, energy, memory;
  std::optional<BestRow> current;  // the best plan so far of the design being read
  double current_design = -1;
  for (std::uint64_t offset = 0; offset < store.rows(); offset += kReadRows) {
    const std::uint64_t n = std::min(kReadRows, store.rows() - offset);
    store.read("feasible", offset, n, feasible);
    store.read("design_id", offset, n, design);
    store.read("num_gpus", offset, n, gpus);
    store.read("gpu", offset, n, gpu);
    store.read("time_to_train_s", offset, n, time);
    store.read("step_time_s", offset, n, step);
    store.read("mfu", offset, n, mfu);
    store.read("energy_to_train_j", offset, n, energy);
    store.read("mem_per_gpu_bytes", offset, n, memory);
    for (std::uint64_t i = 0; i < n; ++i) {
      if (design[i] != current_design) {
        if (current) add(*current);
        current.reset();
        current_design = design[i];
      }
      if (feasible[i] == 0) continue;
      const double cost =
          pricing.cost_usd(price[static_cast<std::size_t>(gpu[i])], gpus[i], time[i], energy[i]);
      const double v = objective == spaces::Objective::cost        ? cost
                       : objective == spaces::Objective::step_time ? step[i]
                       : objective == spaces::Objective::energy    ? energy[i]
                                                                   : time[i];
      if (!std::isfinite(v) || (current && v >= current->objective)) continue;
      current = BestRow{offset + i, v,         {time[i], step[i], mfu[i], energy[i], cost},
                        gpus[i],    memory[i], {}};
    }
  }
  if (current) add(*current);
  return best;
}

namespace {

// An axis value as the analysis tables print it: a label's name, else the number.
std::string format_value(const ColumnInfo& column, double v) {
  if (column.is_label) {
    const auto i = static_cast<std::size_t>(v);
    return i < column.labels.size() ? column.labels[i] : fmt::format("#{}", v);
  }
  return format_number(v);
}

}  // namespace

void print_best_designs(const StoreReader& store, const spaces::Space& space, std::size_t top,
                        std::ostream& out) {
  std::vector<std::string> missing;
  for (const char* name : kBestDesignColumns)
    if (!store.find_column(name)) missing.push_back(name);
  if (!missing.empty()) {
    out << fmt::format("best designs: not shown: the store does not keep {} ([output] columns)\n",
                       fmt::join(missing, ", "));
    return;
  }
  const auto best = best_designs(store, space.objective(), top);
  if (best.empty()) {
    out << "no feasible point: every plan of every design was removed or ran out of memory\n";
    return;
  }
  const spaces::Pricing pricing = spaces::stored_pricing(store);
  const std::vector<double> price = pricing.usd_per_gpu_s(store.find_column("gpu")->labels);
  out << fmt::format("best designs by {} (the best plan of each{}):\n",
                     spaces::to_string(space.objective()),
                     pricing.prices_gpus() ? "" : "; cost is electricity only: no GPU price given");
  constexpr auto kRow = "  {:>2}  {:>10}  {:>8}  {:>6}  {:>9}  {:>8}  ";
  const std::string header = fmt::format(kRow, "#", "train", "step", "MFU", "energy", "cost");
  out << header << "design | plan\n";
  // The axes the sweep varies (the others are the spec's and the same in every row) that the
  // store keeps.
  std::vector<std::string> design_axes, plan_axes;
  for (const auto& a : space.axes())
    if (a.size() > 1 && store.find_column(a.name))
      (a.is_plan ? plan_axes : design_axes).push_back(a.name);
  // The transformer's derived degree, with its plan.
  if (store.schema().index("dp") != Schema::npos) plan_axes.push_back("dp");
  std::vector<double> v;
  auto value = [&](const std::string& column, std::uint64_t row) {
    store.read(column, row, 1, v);
    return v[0];
  };
  auto settings = [&](const std::vector<std::string>& names, std::uint64_t row) {
    std::string text;
    for (const auto& name : names)
      text += fmt::format("{}{}={}", text.empty() ? "" : " ", name,
                          format_value(*store.find_column(name), value(name, row)));
    return text;
  };
  for (std::size_t k = 0; k < best.size(); ++k) {
    const std::uint64_t row = best[k].row;
    const double ttt = value("time_to_train_s", row);
    const double energy = value("energy_to_train_j", row);
    const double cost = pricing.cost_usd(price[static_cast<std::size_t>(value("gpu", row))],
                                         value("num_gpus", row), ttt, energy);
    const std::string design = settings(design_axes, row);
    // The settings wrap within 120 columns under their own heading.
    const std::string indent(header.size(), ' ');
    const std::string wrapped =
        wrap_words(fmt::format("{}{} | {}", indent, design.empty() ? "(one design)" : design,
                               settings(plan_axes, row)),
                   120, indent);
    out << fmt::format(kRow, k + 1, format_quantity(ttt, "s"),
                       format_quantity(value("step_time_s", row), "s"),
                       format_quantity(value("mfu", row), "fraction"),
                       format_quantity(energy * pricing.pue / 3.6e6, "kWh"),
                       format_quantity(cost, "USD"))
        << std::string_view(wrapped).substr(indent.size()) << '\n';
    if (best[k].tied_rows.empty()) continue;
    // The tied designs in one line: how many, and which settings tell them apart.
    std::vector<std::string> differ;
    for (const auto* names : {&design_axes, &plan_axes})
      for (const auto& name : *names) {
        const double mine = value(name, row);
        if (std::any_of(best[k].tied_rows.begin(), best[k].tied_rows.end(),
                        [&](std::uint64_t r) { return value(name, r) != mine; }))
          differ.push_back(name);
      }
    const auto n = best[k].tied_rows.size();
    const std::string where = differ.empty() ? std::string("axes the store does not keep")
                                             : fmt::format("{}", fmt::join(differ, ", "));
    out << wrap_words(fmt::format("{}(+{} design{} with the same figures, differing in {})", indent,
                                  n, n == 1 ? "" : "s", where),
                      120, indent)
        << '\n';
  }
}

}  // namespace clustersweep::engine
