#include "engine/summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <ostream>

#include "base/format.h"
#include "engine/evaluate.h"

namespace clustersweep::engine {

namespace {

constexpr std::uint64_t kReadRows = 1 << 18;

// The value of `column` in row `row`.
double value_at(const StoreReader& store, const std::string& column, std::uint64_t row) {
  std::vector<double> v;
  store.read(column, row, 1, v);
  return v[0];
}

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
  auto value = [&](const char* column, std::uint64_t row) { return value_at(store, column, row); };
  // Stores written before the network's bill of materials have no network_capex_usd: no share.
  const bool has_network = store.find_column("network_capex_usd") != nullptr;
  auto cost_of = [&](double gpu, double gpus, double time, double energy, double network) {
    return pricing.cost_usd(
        price[static_cast<std::size_t>(gpu)] + pricing.network_usd_per_gpu_s(network, gpus), gpus,
        time, energy);
  };

  // 1. Each design's best plan: the first of its feasible rows with the lowest objective, from the
  // columns the objective needs (a third of the bytes of every figure the table shows).
  struct Candidate {
    double objective;
    std::uint64_t row;
  };
  std::vector<Candidate> candidates;
  const bool priced = objective == spaces::Objective::cost;
  const char* column = objective == spaces::Objective::step_time ? "step_time_s"
                       : objective == spaces::Objective::energy  ? "energy_to_train_j"
                                                                 : "time_to_train_s";
  std::vector<double> feasible, design, obj, gpus, gpu, energy, network;
  double current_design = -1;
  for (std::uint64_t offset = 0; offset < store.rows(); offset += kReadRows) {
    const std::uint64_t n = std::min(kReadRows, store.rows() - offset);
    store.read("feasible", offset, n, feasible);
    store.read("design_id", offset, n, design);
    store.read(column, offset, n, obj);
    if (priced) {
      store.read("num_gpus", offset, n, gpus);
      store.read("gpu", offset, n, gpu);
      store.read("energy_to_train_j", offset, n, energy);
      if (has_network)
        store.read("network_capex_usd", offset, n, network);
      else
        network.assign(n, 0.0);
    }
    for (std::uint64_t i = 0; i < n; ++i) {
      if (design[i] != current_design) {
        current_design = design[i];
        candidates.push_back({std::numeric_limits<double>::infinity(), 0});
      }
      if (feasible[i] == 0) continue;
      const double o = priced ? cost_of(gpu[i], gpus[i], obj[i], energy[i], network[i]) : obj[i];
      if (std::isfinite(o) && o < candidates.back().objective) candidates.back() = {o, offset + i};
    }
  }
  std::erase_if(candidates, [](const Candidate& c) { return !std::isfinite(c.objective); });
  std::stable_sort(
      candidates.begin(), candidates.end(),
      [](const Candidate& a, const Candidate& b) { return a.objective < b.objective; });

  // 2. Lines of equal figures, best first, reading the figures of the designs that can make one:
  // equal figures have equal objectives, so once `top` lines are full only designs as good as the
  // last line can still join one.
  std::vector<BestRow> best;
  for (const Candidate& candidate : candidates) {
    if (best.size() == top && candidate.objective > best.back().objective) break;
    const std::uint64_t row = candidate.row;
    const double time = value("time_to_train_s", row), energy_j = value("energy_to_train_j", row);
    const double n_gpus = value("num_gpus", row);
    BestRow c{row,
              candidate.objective,
              {time, value("step_time_s", row), value("mfu", row), energy_j,
               cost_of(value("gpu", row), n_gpus, time, energy_j,
                       has_network ? value("network_capex_usd", row) : 0)},
              n_gpus,
              value("mem_per_gpu_bytes", row),
              {}};
    // A design's best plan joins the line of equal figures, or makes a line of its own.
    auto same = std::find_if(best.begin(), best.end(),
                             [&](const BestRow& b) { return b.figures == c.figures; });
    if (same != best.end()) {
      if (std::pair(c.gpus, c.memory) < std::pair(same->gpus, same->memory)) {
        std::swap(c.row, same->row);
        same->gpus = c.gpus;
        same->memory = c.memory;
      }
      same->tied_rows.push_back(c.row);
    } else if (best.size() < top) {
      best.push_back(std::move(c));
    }
  }
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
  out << fmt::format("best designs by {} (the best plan of each{}):\n",
                     spaces::to_string(space.objective()),
                     pricing.prices_gpus() ? "" : "; cost is electricity only: no GPU price given");
  // The calibration runs like each best plan (spaces/support.h), from its point id and the spec,
  // so the table is the same in every keep mode; marked "!" when few.
  const bool transformer = space.family() == estimator::Family::transformer;
  auto support = [&](std::uint64_t row) {
    const auto point = static_cast<std::uint64_t>(value_at(store, "point_id", row));
    spaces::Design design;
    if (!space.design(point / space.plan_points(), design)) return std::string("-");
    std::uint32_t digits[spaces::kNumAxes];
    space.decode(point, digits);
    estimator::Plan plan;
    space.plan_values(design, digits + spaces::kTp, plan);
    const int runs =
        space.support_of(design).of(spaces::regime_of(plan, design.workload.model), plan.cp);
    return fmt::format("{}{}", runs, runs < spaces::kFewCalibrationRuns ? " !" : "");
  };
  constexpr auto kRow = "  {:>2}  {:>10}  {:>8}  {:>6}  {:>9}  {:>8}  ";
  const std::string header = fmt::format(kRow, "#", "train", "step", "MFU", "energy", "cost") +
                             (transformer ? fmt::format("{:>7}  ", "support") : "");
  out << header << "design | plan\n";
  // The axes the sweep varies (the others are the spec's and the same in every row) that the
  // store keeps.
  std::vector<std::string> design_axes, plan_axes;
  for (const auto& a : space.axes())
    if (a.size() > 1 && store.find_column(a.name))
      (a.is_plan ? plan_axes : design_axes).push_back(a.name);
  // The transformer's derived degree, with its plan.
  if (store.schema().index("dp") != Schema::npos) plan_axes.push_back("dp");
  auto value = [&](const std::string& column, std::uint64_t row) {
    return value_at(store, column, row);
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
    const auto& [ttt, step, mfu, energy, cost] = best[k].figures;
    const std::string design = settings(design_axes, row);
    // The settings wrap within 120 columns under their own heading.
    const std::string indent(header.size(), ' ');
    const std::string wrapped =
        wrap_words(fmt::format("{}{} | {}", indent, design.empty() ? "(one design)" : design,
                               settings(plan_axes, row)),
                   120, indent);
    out << fmt::format(kRow, k + 1, format_quantity(ttt, "s"), format_quantity(step, "s"),
                       format_quantity(mfu, "fraction"),
                       format_quantity(energy * pricing.pue / 3.6e6, "kWh"),
                       format_quantity(cost, "USD"))
        << (transformer ? fmt::format("{:>7}  ", support(row)) : "")
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
  if (transformer)
    out << fmt::format(
        "support: the calibration runs like the plan (docs/calibration.md); ! under {}: its "
        "estimate is unchecked there\n",
        spaces::kFewCalibrationRuns);
}

}  // namespace clustersweep::engine
