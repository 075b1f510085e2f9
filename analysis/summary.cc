#include "analysis/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <ostream>

#include "analysis/output.h"
#include "base/error.h"
#include "base/format.h"

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

  // Indices into `axes` of the design axes, the workload axes, and the design axes but expansion.
  std::vector<std::size_t> design, workload, cluster_but_expansion;
  std::size_t gpu_axis = axes.size(), expansion_gb = axes.size(), num_gpus_axis = axes.size();
  std::size_t dp_axis = axes.size();
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const Column& c = *axes[a];
    if (c.name == "gpu") gpu_axis = a;
    if (c.name == "dp") dp_axis = a;
    if (c.name == "expansion_gb") expansion_gb = a;
    if (c.name == "num_gpus") num_gpus_axis = a;
    if (c.role != Role::design_axis) continue;
    design.push_back(a);
    if (is_workload_axis(c.name)) workload.push_back(a);
    if (!is_expansion_axis(c.name)) cluster_but_expansion.push_back(a);
  }
  s.has_expansion_axis = expansion_gb < axes.size();

  s.axes.resize(axes.size());
  for (std::size_t a = 0; a < axes.size(); ++a) s.axes[a].column = axes[a];
  std::vector<double> last_value(axes.size(), std::nan(""));
  std::vector<std::uint64_t> reasons(reason_column ? reason_column->labels.size() + 1 : 0);

  std::map<std::vector<double>, Spread> spreads;          // by workload axes
  std::map<std::vector<double>, Spread> spreads_by_size;  // by workload axes and num_gpus
  struct ExpansionSlot {
    bool swept = false;
    RowRef best;
  };
  std::map<std::vector<double>, std::array<ExpansionSlot, 2>> expansion;  // without, with
  std::map<double, RowRef> best_by_gpu;
  std::vector<double> design_key, key;
  RowRef design_best;
  bool in_design = false;
  const auto finish_design = [&] {
    if (!in_design) return;
    if (s.has_expansion_axis) {
      std::vector<double> g;
      for (std::size_t a : cluster_but_expansion) g.push_back(design_key[a]);
      ExpansionSlot& slot = expansion[g][design_key[expansion_gb] > 0 ? 1 : 0];
      slot.swept = true;
      if (design_best.value < slot.best.value) slot.best = design_best;
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
    }
  }
  finish_design();

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
  for (const auto& [g, slots] : expansion) {
    const auto& [without, with] = slots;
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
  if (!gains.empty()) {
    std::sort(gains.begin(), gains.end());
    const std::size_t n = gains.size();
    s.expansion.median_gain = n % 2 ? gains[n / 2] : (gains[n / 2 - 1] + gains[n / 2]) / 2;
  }
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
    out << fmt::format("  {}: {}\n", gpu, format_target(target, best.value))
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

}  // namespace clustersweep::analysis
