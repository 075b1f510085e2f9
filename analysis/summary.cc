#include "analysis/summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <ostream>

#include "analysis/output.h"
#include "base/error.h"
#include "base/format.h"
#include "spaces/stack_settings.h"
#include "spaces/support.h"

namespace clustersweep::analysis {
namespace {

bool is_workload_axis(const std::string& name) {
  return name == "model" || name == "seq_len" || name == "global_batch" || name == "precision";
}

bool is_expansion_axis(const std::string& name) { return name.rfind("expansion_", 0) == 0; }

std::string format_target(const Column& column, double value) { return column.display(value); }

// A line of `text` after `indent`, wrapped to the width of the tables.
std::string wrapped(std::string_view indent, const std::string& text) {
  return wrap_words(fmt::format("{}{}", indent, text), TextTable::kWidth,
                    fmt::format("{}  ", indent)) +
         "\n";
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The best row of each value of one axis in groups of rows (or of designs' best rows) that are
// equal in the other axes the caller keys them by.
class Comparison {
 public:
  struct Slot {
    bool swept = false;
    RowRef best;
  };
  using Groups = std::map<std::vector<double>, std::vector<Slot>>;

  explicit Comparison(std::size_t values) : values_(values) {}
  void add(const std::vector<double>& group, std::size_t value, RowRef row) {
    Slot& slot = groups_.try_emplace(group, values_).first->second[value];
    slot.swept = true;
    if (row.value < slot.best.value) slot.best = row;
  }
  const Groups& groups() const noexcept { return groups_; }
  void clear() { groups_.clear(); }

 private:
  std::size_t values_;
  Groups groups_;
};

// A swept stack setting while the rows stream by: this run's groups, and what the finished runs
// said of each value.
struct StackTally {
  std::size_t axis = 0;             // index into the axes
  std::vector<std::size_t> others;  // the other stack axes, which key the groups of a run
  Comparison run;
  std::uint64_t groups = 0;
  std::vector<std::vector<double>> ratios;  // per value: target / the group's best
  std::vector<std::uint64_t> best;          // per value: groups where it was the fastest

  StackTally(std::size_t axis, std::size_t values)
      : axis(axis), run(values), ratios(values), best(values) {}

  void add(const std::vector<double>& key, RowRef row) {
    std::vector<double> group;
    for (std::size_t a : others) group.push_back(key[a]);
    run.add(group, value_of(key), row);
  }
  std::size_t value_of(const std::vector<double>& key) const {
    return std::min(static_cast<std::size_t>(std::max(key[axis], 0.0)), ratios.size() - 1);
  }
  // The groups of the run that ended: those with two feasible values or more count.
  void fold() {
    for (const auto& [group, slots] : run.groups()) {
      double lowest = std::numeric_limits<double>::infinity();
      std::size_t found = 0;
      for (const auto& slot : slots)
        if (slot.best.found()) lowest = std::min(lowest, slot.best.value), ++found;
      if (found < 2) continue;
      ++groups;
      for (std::size_t v = 0; v < slots.size(); ++v) {
        if (!slots[v].best.found()) continue;
        const double ratio = slots[v].best.value / lowest;
        ratios[v].push_back(ratio);
        if (ratio <= 1 + 1e-9) ++best[v];
      }
    }
    run.clear();
  }
  StackSettingWorth worth(const Column& column) const {
    StackSettingWorth w{column.name, groups, {}};
    for (std::size_t v = 0; v < ratios.size(); ++v) {
      if (best[v] == 0 && ratios[v].empty()) continue;
      SettingValue value{column.format(static_cast<double>(v)), ratios[v].size(), best[v]};
      if (!ratios[v].empty()) {
        value.median_ratio = median(ratios[v]);
        value.max_ratio = *std::max_element(ratios[v].begin(), ratios[v].end());
      }
      w.values.push_back(value);
    }
    std::stable_sort(w.values.begin(), w.values.end(), [](const auto& a, const auto& b) {
      return a.best != b.best ? a.best > b.best : a.median_ratio < b.median_ratio;
    });
    return w;
  }
};

// A store that kept only chosen plans holds no points equal but for a setting.
bool keeps_chosen_plans(const Dataset& data) {
  const auto keep = data.source().string_attribute("keep");
  return keep && (*keep == "best-per-design" || *keep == "pareto-per-design");
}

}  // namespace

Summary summarize(const Dataset& data, const std::string& target, ScanOptions options) {
  Summary s;
  s.target = data.column(target, "--target").name;
  s.rows = data.rows();
  const std::vector<const Column*> axes = data.axes();
  std::vector<std::string> columns = {s.target};
  for (const Column* a : axes) columns.push_back(a->name);
  const bool has_feasible = data.find("feasible") != nullptr;
  const Column* reason_column = data.find("infeasible_reason");
  if (has_feasible) columns.push_back("feasible");
  if (reason_column) columns.push_back("infeasible_reason");
  const std::size_t feasible_at = has_feasible ? 1 + axes.size() : 0;
  const std::size_t reason_at = 1 + axes.size() + (has_feasible ? 1 : 0);

  // Indices into `axes` of the design axes, the workload axes, the design axes but expansion, and
  // the axes but the stack's settings.
  std::vector<std::size_t> design, workload, cluster_but_expansion, but_stack;
  std::vector<std::size_t> stack_axes;
  std::size_t gpu_axis = axes.size(), expansion_gb = axes.size(), num_gpus_axis = axes.size();
  std::size_t dp_axis = axes.size();
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const Column& c = *axes[a];
    if (c.name == "gpu") gpu_axis = a;
    if (c.name == "dp") dp_axis = a;
    if (c.name == "expansion_gb") expansion_gb = a;
    if (c.name == "num_gpus") num_gpus_axis = a;
    // A stack setting the plans sweep is compared at otherwise equal points. A recommendation
    // model's framework belongs to its design (the spec's, or the accelerator's default): it only
    // names what every point assumed, when it has one value.
    const bool stack_setting = spaces::find_stack_setting(c.name) != nullptr;
    (stack_setting && c.role == Role::plan_axis ? stack_axes : but_stack).push_back(a);
    if (stack_setting && c.role != Role::plan_axis && c.labels.size() == 1)
      s.fixed_stack.emplace_back(c.name, c.labels[0]);
    if (c.role != Role::design_axis) continue;
    design.push_back(a);
    if (is_workload_axis(c.name)) workload.push_back(a);
    if (!is_expansion_axis(c.name)) cluster_but_expansion.push_back(a);
  }
  s.has_expansion_axis = expansion_gb < axes.size();
  s.stack_by_design = keeps_chosen_plans(data);
  std::vector<StackTally> stack;  // one per stack axis the spec swept (its labels are the values)
  for (std::size_t a : stack_axes) {
    if (axes[a]->labels.size() == 1) s.fixed_stack.emplace_back(axes[a]->name, axes[a]->labels[0]);
    if (axes[a]->labels.size() < 2) continue;
    StackTally& tally = stack.emplace_back(a, axes[a]->labels.size());
    for (std::size_t b : stack_axes)
      if (b != a) tally.others.push_back(b);
  }

  s.axes.resize(axes.size());
  for (std::size_t a = 0; a < axes.size(); ++a) s.axes[a].column = axes[a];
  std::vector<double> last_value(axes.size(), std::nan(""));
  std::vector<std::uint64_t> reasons(reason_column ? reason_column->labels.size() + 1 : 0);

  std::map<std::vector<double>, Spread> spreads;          // by workload axes
  std::map<std::vector<double>, Spread> spreads_by_size;  // by workload axes and num_gpus
  Comparison expansion(2);                                // without, with
  std::map<double, RowRef> best_by_gpu;
  std::vector<double> design_key, run_key, key;
  RowRef design_best;
  bool in_design = false, in_run = false;
  const auto finish_design = [&] {
    if (!in_design) return;
    if (s.has_expansion_axis) {
      std::vector<double> g;
      for (std::size_t a : cluster_but_expansion) g.push_back(design_key[a]);
      expansion.add(g, design_key[expansion_gb] > 0 ? 1 : 0, design_best);
    }
    if (!design_best.found()) return;
    std::vector<double> w;
    for (std::size_t a : workload) w.push_back(design_key[a]);
    const auto add = [&](Spread& spread) {
      ++spread.designs;
      if (design_best.value < spread.best.value) spread.best = design_best;
      if (!spread.worst.found() || design_best.value > spread.worst.value)
        spread.worst = design_best;
    };
    add(spreads[w]);
    if (num_gpus_axis < axes.size()) {
      w.push_back(design_key[num_gpus_axis]);
      add(spreads_by_size[w]);
    }
  };

  options.feasible_only = false;
  Scan scan(data, columns, options);
  key.resize(axes.size());
  while (scan.next()) {
    for (std::size_t i = 0; i < scan.size(); ++i) {
      if (!scan.keep(i)) continue;
      ++s.selected;
      for (std::size_t a = 0; a < axes.size(); ++a) {
        const double v = scan[1 + a][i];
        key[a] = v;
        if (v == last_value[a]) continue;
        last_value[a] = v;
        // dp = 0 marks a point whose tp * pp * cp does not divide its GPUs (no dp is derived):
        // not a swept value (docs/store-format.md).
        if (a == dp_axis && v == 0) continue;
        SweptAxis& swept = s.axes[a];
        if (std::find(swept.values.begin(), swept.values.end(), v) != swept.values.end()) continue;
        if (swept.values.size() < kMaxListedValues)
          swept.values.push_back(v);
        else
          swept.more = true;
      }
      bool same_run = in_run;
      for (std::size_t a : but_stack) same_run = same_run && key[a] == run_key[a];
      if (!same_run) {
        for (StackTally& tally : stack) tally.fold();
        run_key = key;
        in_run = true;
      }
      bool same_design = in_design;
      for (std::size_t a : design) same_design = same_design && key[a] == design_key[a];
      if (!same_design) {
        finish_design();
        design_key = key;
        design_best = {};
        in_design = true;
      }
      const bool feasible = !has_feasible || scan[feasible_at][i] != 0;
      if (!feasible) {
        if (reason_column) {
          const double r = scan[reason_at][i];
          ++reasons[r >= 0 && r < static_cast<double>(reason_column->labels.size())
                        ? static_cast<std::size_t>(r)
                        : reasons.size() - 1];
        }
        continue;
      }
      const double value = scan[0][i];
      if (!std::isfinite(value)) continue;
      ++s.feasible;
      const std::uint64_t row = scan.offset() + i;
      RowRef& best = best_by_gpu[gpu_axis < axes.size() ? key[gpu_axis] : 0];
      if (value < best.value) best = {row, value};
      if (value < design_best.value) design_best = {row, value};
      for (StackTally& tally : stack) {
        if (!s.stack_by_design) {
          tally.add(key, {row, value});
        } else {
          ++tally.groups;
          ++tally.best[tally.value_of(key)];
        }
      }
    }
  }
  finish_design();
  for (StackTally& tally : stack) {
    tally.fold();
    s.stack.push_back(tally.worth(*axes[tally.axis]));
  }

  for (const auto& [gpu, best] : best_by_gpu)
    s.best_per_accelerator[gpu_axis < axes.size() ? axes[gpu_axis]->format(gpu) : "all"] = best;
  for (auto& a : s.axes) {
    std::sort(a.values.begin(), a.values.end());
    if (a.values.size() == 1 && !a.more) s.constant_axes.push_back(a.column->name);
  }
  if (reason_column) {
    for (std::size_t r = 0; r < reasons.size(); ++r) {
      if (reasons[r] == 0) continue;
      const std::string name =
          r < reason_column->labels.size() ? reason_column->labels[r] : "unknown";
      if (name == "none" && r == 0) continue;
      s.infeasible_reasons.emplace_back(name, reasons[r]);
    }
    std::stable_sort(s.infeasible_reasons.begin(), s.infeasible_reasons.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
  }
  const auto name_spreads = [&](std::map<std::vector<double>, Spread>& from,
                                std::vector<Spread>& to) {
    for (auto& [w, spread] : from) {
      std::vector<std::string> parts;
      for (std::size_t i = 0; i < workload.size(); ++i) {
        const Column& c = *axes[workload[i]];
        // Name only the workload axes that vary.
        if (s.axes[workload[i]].values.size() > 1)
          parts.push_back(fmt::format("{}={}", c.name, c.format(w[i])));
      }
      if (w.size() > workload.size()) parts.push_back(fmt::format("num_gpus={}", w.back()));
      spread.workload = fmt::format("{}", fmt::join(parts, " "));
      to.push_back(spread);
    }
  };
  name_spreads(spreads, s.spreads);
  name_spreads(spreads_by_size, s.spreads_at_equal_gpus);
  std::vector<double> gains;
  for (const auto& [g, slots] : expansion.groups()) {
    const auto& without = slots[0];
    const auto& with = slots[1];
    if (!without.swept || !with.swept || !with.best.found()) continue;
    ++s.expansion.groups;
    if (!without.best.found()) {
      ++s.expansion.enabled;
      continue;
    }
    const double gain = without.best.value / with.best.value;
    gains.push_back(gain);
    if (gain > 1 + 1e-9) ++s.expansion.improved;
    if (gain > s.expansion.max_gain) {
      s.expansion.max_gain = gain;
      s.expansion.max_without = without.best;
      s.expansion.max_with = with.best;
    }
  }
  s.expansion.median_gain = median(std::move(gains));
  return s;
}

std::string describe_design(const Dataset& data, std::uint64_t row,
                            const std::vector<std::string>& skip) {
  std::vector<std::string> names;
  std::vector<const Column*> columns;
  for (const Column* c : data.axes()) {
    if (std::find(skip.begin(), skip.end(), c->name) != skip.end()) continue;
    names.push_back(c->name);
    columns.push_back(c);
  }
  const auto values = fetch_rows(data, {row}, names);
  std::string design, plan;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    std::string& part = columns[i]->role == Role::plan_axis ? plan : design;
    if (!part.empty()) part += ' ';
    part += fmt::format("{}={}", names[i], columns[i]->format(values[i][0]));
  }
  return plan.empty() ? design : design + " | " + plan;
}

TextTable swept_axes_table(const Summary& s) {
  TextTable axes{{"axis", "role", "values"}, {}, false};
  for (const auto& a : s.axes) {
    std::vector<std::string> values;
    for (double v : a.values) values.push_back(a.column->format(v));
    std::string text = fmt::format("{}", fmt::join(values, ", "));
    if (a.more) text += ", ...";
    if (!a.column->unit.empty()) text += " " + a.column->unit;
    axes.rows.push_back(
        {a.column->name, a.column->role == Role::plan_axis ? "plan" : "cluster/workload", text});
  }
  return axes;
}

namespace {

// How far a best row can be trusted, from what the store kept of it: the target's 90% prediction
// interval ("time_to_train_s": its _lo_s and _hi_s columns) and its calibration support, marked
// "!" when few runs are like it. Empty when the store kept neither.
std::string trust(const Dataset& data, const std::string& target, std::uint64_t row) {
  std::vector<std::string> names, parts;
  const bool seconds = target.size() > 2 && target.ends_with("_s");
  const std::string stem = seconds ? target.substr(0, target.size() - 2) : target;
  const bool interval = seconds && data.find(stem + "_lo_s") && data.find(stem + "_hi_s");
  if (interval) names = {stem + "_lo_s", stem + "_hi_s"};
  const bool support = data.find("calibration_support") != nullptr;
  if (support) names.push_back("calibration_support");
  if (names.empty()) return {};
  const auto values = fetch_rows(data, {row}, names);
  const Column& column = *data.find(target);
  if (interval)
    parts.push_back(fmt::format("90% {} - {}", format_target(column, values[0][0]),
                                format_target(column, values[1][0])));
  if (support) {
    const double runs = values.back()[0];
    parts.push_back(fmt::format("calibration support {} runs{}", runs,
                                runs < spaces::kFewCalibrationRuns ? " !" : ""));
  }
  return fmt::format(" ({})", fmt::join(parts, "; "));
}

void print_expansion(std::ostream& out, const Dataset& data, const Summary& s) {
  const Column& target = *data.find(s.target);
  out << "\nMemory-expansion tier (clusters equal but for the expansion memory; best without / "
         "best\n"
         "with; COMET reports up to 1.4x):\n";
  const ExpansionGain& e = s.expansion;
  if (!s.has_expansion_axis || e.groups == 0) {
    out << "  not swept: no cluster was evaluated both with and without expansion memory\n";
    return;
  }
  out << fmt::format(
      "  {} clusters compared; faster with the tier: {}; feasible only with it: {}\n", e.groups,
      e.improved, e.enabled);
  if (e.max_gain > 0) {
    out << fmt::format("  gain: max {:.2f}x, median {:.2f}x\n", e.max_gain, e.median_gain);
    out << wrapped("    ",
                   fmt::format("without: {}  {}", format_target(target, e.max_without.value),
                               describe_design(data, e.max_without.row, s.constant_axes)))
        << wrapped("    ", fmt::format("with:    {}  {}", format_target(target, e.max_with.value),
                                       describe_design(data, e.max_with.row, s.constant_axes)));
  }
}

}  // namespace

std::string describe_stack_setting(const StackSettingWorth& w, bool by_design) {
  std::vector<std::string> parts;
  if (by_design) {
    for (const auto& v : w.values) parts.push_back(fmt::format("{} in {}", v.value, v.best));
    return fmt::format("{} ({} kept plans): {}", w.axis, w.groups, fmt::join(parts, ", "));
  }
  if (w.groups == 0 || w.values.empty())
    return fmt::format("{}: no two values feasible at otherwise equal points", w.axis);
  const SettingValue& first = w.values.front();
  std::string text =
      fmt::format("{} ({} groups): {} best in {}", w.axis, w.groups, first.value, first.best);
  if (first.max_ratio > 1.005) text += fmt::format(" (max {:.2f}x)", first.max_ratio);
  for (std::size_t i = 1; i < w.values.size(); ++i) {
    const SettingValue& v = w.values[i];
    parts.push_back(fmt::format("{} {:.2f}x (max {:.2f}x{})", v.value, v.median_ratio, v.max_ratio,
                                v.groups == w.groups ? "" : fmt::format(", {} groups", v.groups)));
  }
  return parts.empty() ? text : fmt::format("{}; {}", text, fmt::join(parts, ", "));
}

std::string describe_fixed_stack(const Summary& s) {
  std::vector<std::string> parts;
  for (const auto& [setting, value] : s.fixed_stack) parts.push_back(setting + " " + value);
  return fmt::format("the same at every point: {}", fmt::join(parts, ", "));
}

void print_summary(std::ostream& out, const Dataset& data, const Summary& s) {
  const Column& target = *data.find(s.target);
  out << fmt::format("Store: {}\n", data.source().path());
  if (const auto version = data.source().string_attribute("tool_version"))
    out << fmt::format("Written by clustersweep {}\n", *version);
  out << fmt::format(
      "Points: {} stored, {} selected, {} feasible ({:.1f}%)\n", s.rows, s.selected, s.feasible,
      s.selected ? 100.0 * static_cast<double>(s.feasible) / static_cast<double>(s.selected) : 0.0);

  out << "\nSwept axes:\n";
  swept_axes_table(s).print(out);

  if (!s.infeasible_reasons.empty()) {
    out << "\nInfeasible points by reason:\n";
    TextTable reasons{{"reason", "points"}, {}};
    for (const auto& [name, count] : s.infeasible_reasons)
      reasons.rows.push_back({name, fmt::format("{}", count)});
    reasons.print(out);
  }
  if (s.feasible == 0) {
    out << "\nNo feasible point: nothing to rank.\n";
    return;
  }

  if (!s.constant_axes.empty())
    out << "\n"
        << wrapped("", fmt::format("Designs below omit the axes with one value: {}",
                                   fmt::join(s.constant_axes, ", ")));
  out << fmt::format("\nBest design per accelerator (minimum {}):\n", s.target);
  for (const auto& [gpu, best] : s.best_per_accelerator)
    out << fmt::format("  {}: {}{}\n", gpu, format_target(target, best.value),
                       trust(data, s.target, best.row))
        << wrapped("    ", describe_design(data, best.row, s.constant_axes));

  out << fmt::format(
      "\nSpread of {} across cluster configurations (each configuration's best plan;\n"
      "worst configuration / best configuration; COMET reports up to 7.7x):\n",
      s.target);
  for (const auto& spread : s.spreads) {
    out << fmt::format("  {}{} configurations: {:.2f}x  (best {}, worst {})\n",
                       spread.workload.empty() ? "" : spread.workload + ": ", spread.designs,
                       spread.ratio(), format_target(target, spread.best.value),
                       format_target(target, spread.worst.value));
    out << wrapped("    ", "best:  " + describe_design(data, spread.best.row, s.constant_axes))
        << wrapped("    ", "worst: " + describe_design(data, spread.worst.row, s.constant_axes));
  }

  if (!s.spreads_at_equal_gpus.empty() && s.spreads_at_equal_gpus.size() != s.spreads.size()) {
    out << "\nAt equal GPU count (the same spread within each cluster size):\n";
    const Spread* widest = &s.spreads_at_equal_gpus.front();
    std::vector<std::string> each;
    for (const auto& spread : s.spreads_at_equal_gpus) {
      each.push_back(fmt::format("{}: {:.2f}x", spread.workload, spread.ratio()));
      if (spread.ratio() > widest->ratio()) widest = &spread;
    }
    out << wrapped("  ", fmt::format("{}", fmt::join(each, ", ")));
    out << fmt::format("  widest: {} over {} configurations\n", widest->workload, widest->designs)
        << wrapped("    ", fmt::format("best:  {}  {}", format_target(target, widest->best.value),
                                       describe_design(data, widest->best.row, s.constant_axes)))
        << wrapped("    ", fmt::format("worst: {}  {}", format_target(target, widest->worst.value),
                                       describe_design(data, widest->worst.row, s.constant_axes)));
  }

  print_expansion(out, data, s);
  if (s.stack_by_design)
    out << "\nSoftware stack settings (the store kept chosen plans only: how many use each "
           "value):\n";
  else
    out << fmt::format(
        "\nSoftware stack settings (points equal in every other axis; each value's {}\n"
        "over the best value's in the same group, median and max):\n",
        s.target);
  if (s.stack.empty()) out << "  not swept\n";
  for (const auto& setting : s.stack)
    out << wrapped("  ", describe_stack_setting(setting, s.stack_by_design));
  if (!s.fixed_stack.empty()) out << wrapped("  ", describe_fixed_stack(s));
}

}  // namespace clustersweep::analysis
