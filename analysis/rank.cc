#include "analysis/rank.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <queue>

#include "analysis/output.h"
#include "base/error.h"
#include "base/format.h"

namespace clustersweep::analysis {

std::vector<RowRef> top_rows(const Dataset& data, const Objective& by, std::size_t n,
                             ScanOptions options) {
  const Column& column = data.column(by.column, "--by");
  if (column.is_label)
    throw InputError(fmt::format("--by: column '{}' holds labels, not numbers", column.name));
  options.feasible_only = true;
  // A max-heap of the n best (value, row) pairs: its top is the worst kept.
  const auto worse = [](const RowRef& a, const RowRef& b) {
    return a.value != b.value ? a.value < b.value : a.row < b.row;
  };
  std::priority_queue<RowRef, std::vector<RowRef>, decltype(worse)> heap(worse);
  if (n == 0) return {};
  Scan scan(data, {column.name}, options);
  const double sign = by.maximize ? -1 : 1;
  while (scan.next())
    for (std::size_t i = 0; i < scan.size(); ++i) {
      const double v = scan[0][i];
      if (!scan.keep(i) || std::isnan(v)) continue;
      const RowRef r{scan.offset() + i, sign * v};
      if (heap.size() < n)
        heap.push(r);
      else if (worse(r, heap.top())) {
        heap.pop();
        heap.push(r);
      }
    }
  std::vector<RowRef> out(heap.size());
  for (std::size_t i = out.size(); i-- > 0; heap.pop()) out[i] = heap.top();
  for (auto& r : out) r.value *= sign;
  return out;
}

std::size_t TiedRows::tied() const noexcept {
  std::size_t n = 0;
  for (const auto& t : ties) n += t.size();
  return n;
}

TiedRows top_distinct_rows(const Dataset& data, const Objective& by, std::size_t n,
                           ScanOptions options, const std::vector<std::string>& same) {
  const Column& column = data.column(by.column, "--by");
  if (column.is_label)
    throw InputError(fmt::format("--by: column '{}' holds labels, not numbers", column.name));
  options.feasible_only = true;
  if (n == 0) return {};
  // Scan columns: by, the `same` ones, then the tie-break columns the store has.
  std::vector<std::string> columns = {column.name};
  for (const auto& c : same)
    if (c != column.name) columns.push_back(data.column(c, "--columns").name);
  const std::size_t keys = columns.size();
  for (const char* name : {"num_gpus", "mem_per_gpu_bytes"})
    if (data.find(name)) columns.push_back(name);
  struct Group {
    double value;                     // by, negated when maximized
    std::vector<double> key;          // the `same` values
    std::vector<double> rank;         // the tie-break values of `best`
    std::uint64_t first, best;        // store rows: the group's first and its representative
    std::vector<std::uint64_t> rows;  // every row of the group
  };
  // Groups by (value, first row); a group pushed out of the n best never returns (the n better
  // ones stay better), so every group kept has all its rows.
  std::vector<Group> groups;
  const double sign = by.maximize ? -1 : 1;
  const auto equal = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
  Scan scan(data, columns, options);
  std::vector<double> key(keys - 1), rank(columns.size() - keys);
  while (scan.next())
    for (std::size_t i = 0; i < scan.size(); ++i) {
      const double v = sign * scan[0][i];
      if (!scan.keep(i) || std::isnan(v)) continue;
      if (groups.size() == n && v > groups.back().value) continue;
      const std::uint64_t row = scan.offset() + i;
      for (std::size_t c = 1; c < keys; ++c) key[c - 1] = scan[c][i];
      for (std::size_t c = keys; c < columns.size(); ++c) rank[c - keys] = scan[c][i];
      const auto found = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
        return g.value == v && std::equal(key.begin(), key.end(), g.key.begin(), equal);
      });
      if (found != groups.end()) {
        found->rows.push_back(row);
        if (std::lexicographical_compare(rank.begin(), rank.end(), found->rank.begin(),
                                         found->rank.end())) {
          found->rank = rank;
          found->best = row;
        }
        continue;
      }
      // Rows come in store order, so a new group goes after every group of the same value.
      const auto at = std::upper_bound(groups.begin(), groups.end(), v,
                                       [](double x, const Group& g) { return x < g.value; });
      groups.insert(at, Group{v, key, rank, row, row, {row}});
      if (groups.size() > n) groups.pop_back();
    }
  TiedRows out;
  for (auto& g : groups) {
    out.rows.push_back({g.best, sign * g.value});
    g.rows.erase(std::find(g.rows.begin(), g.rows.end(), g.best));
    out.ties.push_back(std::move(g.rows));
  }
  return out;
}

std::string tie_settings(const Dataset& data, std::uint64_t row,
                         const std::vector<std::uint64_t>& ties) {
  std::vector<std::string> axes;
  for (const Column* c : data.axes()) axes.push_back(c->name);
  std::vector<std::uint64_t> rows = {row};
  rows.insert(rows.end(), ties.begin(), ties.end());
  const auto values = fetch_rows(data, rows, axes);
  std::vector<std::string> differ;
  for (std::size_t c = 0; c < axes.size(); ++c) {
    std::vector<double> others;
    for (std::size_t i = 1; i < rows.size(); ++i)
      if (values[c][i] != values[c][0]) others.push_back(values[c][i]);
    if (others.empty()) continue;
    std::sort(others.begin(), others.end());
    others.erase(std::unique(others.begin(), others.end()), others.end());
    std::vector<std::string> shown;
    for (double v : others) shown.push_back(data.find(axes[c])->format(v));
    differ.push_back(fmt::format("{}={}", axes[c], fmt::join(shown, "|")));
  }
  return fmt::format("{} ({} row{})", fmt::join(differ, " "), ties.size(),
                     ties.size() == 1 ? "" : "s");
}

namespace {

// A table of rows: rank (or `labels`), point_id, the axes that differ among the rows, then
// `metrics`; `common` gets the axis settings shared by every row of `about`, and `legend` the
// column names of the short headings.
TiedTable rows_table(const Dataset& data, const std::vector<RowRef>& rows,
                     const std::vector<std::string>& metrics,
                     const std::vector<std::string>& labels,
                     const std::vector<std::uint64_t>& about) {
  TiedTable out;
  std::vector<std::string>& common = out.common;
  std::vector<std::string> names;
  for (const Column* c : data.axes()) names.push_back(c->name);
  const std::size_t axes = names.size();
  for (const auto& m : metrics) names.push_back(m);
  const bool has_id = data.find("point_id") != nullptr;
  if (has_id) names.push_back("point_id");
  std::vector<std::uint64_t> ids;
  for (const auto& r : rows) ids.push_back(r.row);
  const auto values = fetch_rows(data, ids, names);

  std::vector<std::size_t> varying;
  const std::vector<std::string> axis_names(names.begin(),
                                            names.begin() + static_cast<std::ptrdiff_t>(axes));
  const auto stated =
      about.empty() ? std::vector<std::vector<double>>() : fetch_rows(data, about, axis_names);
  for (std::size_t c = 0; c < axes; ++c) {
    const auto& v = about.empty() ? values[c] : stated[c];
    const bool same = std::all_of(v.begin(), v.end(), [&](double x) { return x == v[0]; });
    if (same)
      common.push_back(fmt::format("{}={}", names[c], data.find(names[c])->format(v[0])));
    else
      varying.push_back(c);
  }
  // Columns: the rank (or label), point_id, the varying axes, the metrics.
  std::vector<std::pair<const Column*, const std::vector<double>*>> shown;
  if (has_id) shown.emplace_back(data.find("point_id"), &values.back());
  for (std::size_t c : varying) shown.emplace_back(data.find(names[c]), &values[c]);
  for (std::size_t m = 0; m < metrics.size(); ++m)
    shown.emplace_back(data.find(metrics[m]), &values[axes + m]);
  TextTable& table = out.table;
  table.header = {labels.empty() ? "rank" : ""};
  table.right = {labels.empty() ? char{1} : char{0}};
  std::vector<const Column*> columns;
  for (const auto& [column, v] : shown) {
    table.header.push_back(column->heading());
    table.right.push_back(!column->is_label);
    columns.push_back(column);
  }
  out.legend = legend(columns);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::vector<std::string> cells = {i < labels.size() ? labels[i] : fmt::format("{}", i + 1)};
    for (const auto& [column, v] : shown) cells.push_back(column->display((*v)[i]));
    table.rows.push_back(std::move(cells));
  }
  return out;
}

}  // namespace

TiedTable tied_table(const Dataset& data, const TiedRows& rows,
                     const std::vector<std::string>& metrics,
                     const std::vector<std::string>& labels) {
  // Every row shown and every row it stands for: what "common to all rows" is said of.
  std::vector<std::uint64_t> all;
  for (std::size_t r = 0; r < rows.rows.size(); ++r) {
    all.push_back(rows.rows[r].row);
    if (r < rows.ties.size()) all.insert(all.end(), rows.ties[r].begin(), rows.ties[r].end());
  }
  TiedTable out = rows_table(data, rows.rows, metrics, labels, all);
  if (rows.tied() == 0) return out;
  out.table.header.insert(out.table.header.begin() + 1, "ties");
  out.table.right.insert(out.table.right.begin() + 1, 1);
  for (std::size_t r = 0; r < rows.rows.size(); ++r) {
    const auto& ties = rows.ties[r];
    out.table.rows[r].insert(out.table.rows[r].begin() + 1,
                             ties.empty() ? std::string() : fmt::format("{}", ties.size()));
    if (!ties.empty())
      out.also.push_back(
          fmt::format("{}: also {}", r + 1, tie_settings(data, rows.rows[r].row, ties)));
  }
  return out;
}

std::vector<std::string> metric_columns(const Dataset& data, const std::vector<std::string>& always,
                                        const std::vector<std::string>& candidates) {
  std::vector<std::string> out = always;
  for (const auto& m : candidates) {
    const Column* c = data.find(m);
    if (c && c->role != Role::design_axis && std::find(out.begin(), out.end(), m) == out.end())
      out.push_back(m);
  }
  return out;
}

void print_tied_table(std::ostream& out, const TiedTable& t) {
  const auto wrapped = [&](const std::string& text, std::string_view indent) {
    out << wrap_words(text, TextTable::kWidth, indent) << '\n';
  };
  if (!t.common.empty())
    wrapped(fmt::format("Common to all rows: {}", fmt::join(t.common, " ")), "  "), out << '\n';
  t.table.print(out);
  for (const auto& line : t.also) wrapped("  " + line, "      ");
  if (!t.legend.empty()) wrapped("Columns: " + t.legend, "  ");
}

Pricing override_pricing(Pricing p, const PricingOverrides& o) {
  if (o.gpu_hour_usd && o.capex_usd_per_gpu)
    throw InputError("--gpu-hour-usd and --capex-usd-per-gpu are alternatives: give one of them");
  // The numbers, by their index in kPricingFlags; the GPU prices come parsed and checked.
  const std::pair<const std::optional<double>&, double&> numbers[] = {
      {o.pue, p.pue},
      {o.usd_per_kwh, p.usd_per_kwh},
      {o.carbon_g_per_kwh, p.carbon_g_per_kwh},
      {o.amortize_years, p.amortize_years},
  };
  const std::size_t flag[] = {0, 1, 2, 5};
  for (std::size_t i = 0; i < std::size(numbers); ++i) {
    const auto& [value, field] = numbers[i];
    if (!value) continue;
    if (!std::isfinite(*value) || *value < 0)
      throw InputError(
          fmt::format("{}: must be a non-negative number, got {}", kPricingFlags[flag[i]], *value));
    field = *value;
  }
  // Either price model replaces the other's stored price.
  if (o.gpu_hour_usd) {
    p.gpu_hour_usd = *o.gpu_hour_usd;
    p.capex_usd_per_gpu = {};
  }
  if (o.capex_usd_per_gpu) {
    p.capex_usd_per_gpu = *o.capex_usd_per_gpu;
    p.gpu_hour_usd = {};
  }
  if (p.pue < 1)
    throw InputError(
        fmt::format("--pue: must be at least 1 (facility / IT energy), got {}", p.pue));
  if (p.capex_usd_per_gpu.given() && !(p.amortize_years > 0))
    throw InputError(fmt::format("--amortize-years: must be positive, got {}", p.amortize_years));
  return p;
}

Pricing resolve_pricing(const ColumnSource& source, const PricingOverrides& o,
                        std::vector<std::string>* origin) {
  const Pricing p = override_pricing(stored_pricing(source), o);
  // A per-accelerator price prices exactly the store's accelerators.
  for (const auto& column : source.columns()) {
    if (column.name != "gpu") continue;
    const std::pair<const spaces::GpuPrice&, const char*> prices[] = {
        {p.gpu_hour_usd, o.gpu_hour_usd ? "--gpu-hour-usd" : "the store's gpu_hour_usd"},
        {p.capex_usd_per_gpu,
         o.capex_usd_per_gpu ? "--capex-usd-per-gpu" : "the store's capex_usd_per_gpu"}};
    for (const auto& [price, what] : prices) {
      const std::string problem = spaces::gpu_price_problem(price, column.labels, "the store");
      if (!problem.empty()) throw InputError(fmt::format("{}: {}", what, problem));
    }
  }
  if (origin) {
    origin->clear();
    const bool given[] = {
        o.pue.has_value(),          o.usd_per_kwh.has_value(),       o.carbon_g_per_kwh.has_value(),
        o.gpu_hour_usd.has_value(), o.capex_usd_per_gpu.has_value(), o.amortize_years.has_value()};
    std::size_t i = 0;
    Pricing::for_each(p, [&](const char* attribute, const auto&) {
      const bool stored = source.number_attribute(attribute) || source.string_attribute(attribute);
      origin->push_back(given[i] ? kPricingFlags[i] : stored ? "store" : "default");
      ++i;
    });
  }
  return p;
}

EnergyReport energy_report(const Dataset& data, ScanOptions options,
                           std::optional<double> deadline_days, std::optional<double> budget_usd) {
  for (const char* needed : {"time_to_train_s", "energy_kwh", "cost_usd", "co2e_kg"})
    data.column(needed, "energy");
  EnergyReport r;
  if (deadline_days) {
    if (!(*deadline_days > 0))
      throw InputError(fmt::format("--deadline-days: must be positive, got {}", *deadline_days));
    r.deadline_s = *deadline_days * 86400;
  }
  if (budget_usd) {
    if (!(*budget_usd > 0))
      throw InputError(fmt::format("--budget-usd: must be positive, got {}", *budget_usd));
    r.budget_usd = budget_usd;
  }
  options.feasible_only = true;
  Scan scan(data, {"time_to_train_s", "energy_kwh", "cost_usd", "co2e_kg"}, options);
  // Ties (common: designs that differ only in an axis the estimate ignores) go to the faster one.
  double tie_time[6] = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY};
  RowRef* slots[6] = {&r.fastest,
                      &r.least_energy,
                      &r.cheapest,
                      &r.least_carbon,
                      &r.cheapest_within_deadline,
                      &r.fastest_within_budget};
  double t = 0;
  const auto better = [&](RowRef& best, std::uint64_t row, double v) {
    const std::size_t slot = static_cast<std::size_t>(std::find(slots, slots + 6, &best) - slots);
    if (v < best.value || (v == best.value && t < tie_time[slot])) {
      best = {row, v};
      tie_time[slot] = t;
    }
  };
  while (scan.next())
    for (std::size_t i = 0; i < scan.size(); ++i) {
      t = scan[0][i];
      const double kwh = scan[1][i], usd = scan[2][i], co2 = scan[3][i];
      if (!scan.keep(i) || !std::isfinite(t) || !std::isfinite(kwh) || !std::isfinite(usd))
        continue;
      const std::uint64_t row = scan.offset() + i;
      ++r.feasible;
      r.time_s.add(t);
      r.energy_kwh.add(kwh);
      r.cost_usd.add(usd);
      r.co2e_kg.add(co2);
      better(r.fastest, row, t);
      better(r.least_energy, row, kwh);
      better(r.cheapest, row, usd);
      better(r.least_carbon, row, co2);
      if (r.deadline_s && t <= *r.deadline_s) better(r.cheapest_within_deadline, row, usd);
      if (r.budget_usd && usd <= *r.budget_usd) better(r.fastest_within_budget, row, t);
    }
  return r;
}

namespace {

// "$2.5/GPU-hour", or per accelerator "$/GPU-hour H100-SXM5-80GB=2.5,B200-180GB=5".
std::string gpu_price(const spaces::GpuPrice& price, const char* per) {
  if (price.by_gpu.empty()) return fmt::format("${}/{}", price.all, per);
  return fmt::format("$/{} {}", per, spaces::to_string(price));
}

// The accelerator price model, each figure with where it came from (`from(i)`: kPricingFlags[i]).
template <class From>
std::string cost_model(const Pricing& p, const From& from) {
  if (p.gpu_hour_usd.given())
    return fmt::format("{} rented{}", gpu_price(p.gpu_hour_usd, "GPU-hour"), from(3));
  if (p.capex_usd_per_gpu.given())
    return fmt::format("{} bought{}, amortized over {} years{}",
                       gpu_price(p.capex_usd_per_gpu, "GPU"), from(4), p.amortize_years, from(5));
  return "electricity only (no --gpu-hour-usd or --capex-usd-per-gpu)";
}

}  // namespace

EnergyView energy_view(const Dataset& data, const EnergyReport& r,
                       const std::vector<std::string>& origin) {
  const Pricing& p = data.pricing();
  // Where a figure came from, when not from the store: "(--pue)", "(default)".
  const auto from = [&](std::size_t i) {
    return i < origin.size() && origin[i] != "store" ? fmt::format(" ({})", origin[i])
                                                     : std::string();
  };
  EnergyView v;
  v.pricing = {fmt::format("Pricing{}: PUE {}{}, electricity ${}/kWh{}, grid {} g CO2e/kWh{}",
                           origin.empty() ? "" : " (the store's unless marked)", p.pue, from(0),
                           p.usd_per_kwh, from(1), p.carbon_g_per_kwh, from(2)),
               fmt::format("Accelerators: {}", cost_model(p, from)),
               "cost_usd = energy_kwh x price per kWh + GPU time x (hourly price, or capex / "
               "amortization)"};
  v.feasible = r.feasible;
  if (r.feasible == 0) return v;
  v.ranges = TextTable{{"quantity", "min", "mean", "max"}, {}};
  v.ranges.right = {0, 1, 1, 1};
  const double n = static_cast<double>(r.feasible);
  const auto range = [&](const char* name, const Range& x, const char* unit) {
    v.ranges.rows.push_back({name, format_quantity(x.min, unit), format_quantity(x.sum / n, unit),
                             format_quantity(x.max, unit)});
  };
  range("time to train", r.time_s, "s");
  range("energy", r.energy_kwh, "kWh");
  range("cost", r.cost_usd, "USD");
  range("emissions (CO2e)", r.co2e_kg, "kg");

  std::vector<std::string> labels;
  std::vector<RowRef> rows;
  const auto answer = [&](const std::string& label, const RowRef& ref, const char* hint) {
    if (!ref.found()) {
      v.unanswered.push_back(fmt::format("No feasible design is the {}: {}", label, hint));
      return;
    }
    labels.push_back(label);
    rows.push_back(ref);
  };
  answer("fastest", r.fastest, "");
  answer("least energy", r.least_energy, "");
  answer("cheapest", r.cheapest, "");
  answer("least carbon", r.least_carbon, "");
  if (r.deadline_s)
    answer(fmt::format("cheapest within {:.4g} days", *r.deadline_s / 86400),
           r.cheapest_within_deadline, "none trains that fast (try a later --deadline-days)");
  if (r.budget_usd)
    answer(fmt::format("fastest within {}", format_quantity(*r.budget_usd, "USD")),
           r.fastest_within_budget, "none costs that little (try a larger --budget-usd)");
  v.answers = tied_table(data, {rows, {}}, {"time_to_train_s", "energy_kwh", "cost_usd", "co2e_kg"},
                         labels);
  return v;
}

void print_energy(std::ostream& out, const Dataset& data, const EnergyReport& r,
                  const std::vector<std::string>& origin) {
  const EnergyView v = energy_view(data, r, origin);
  for (const auto& line : v.pricing) out << line << '\n';
  if (v.feasible == 0) {
    out << "\nNo feasible design to price.\n";
    return;
  }
  out << fmt::format("\n{} feasible designs re-priced:\n", v.feasible);
  v.ranges.print(out);
  out << "\n";
  print_tied_table(out, v.answers);
  for (const auto& line : v.unanswered) out << '\n' << line << '\n';
}

}  // namespace clustersweep::analysis
