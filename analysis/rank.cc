#include "analysis/rank.h"

#include <fmt/format.h>

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

TextTable rows_table(const Dataset& data, const std::vector<RowRef>& rows,
                     const std::vector<std::string>& metrics, std::vector<std::string>& common,
                     const std::vector<std::string>& labels,
                     const std::vector<std::uint64_t>& about) {
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
  common.clear();
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
  TextTable table;
  table.header = {labels.empty() ? "rank" : ""};
  if (has_id) table.header.push_back("point_id");
  for (std::size_t c : varying) table.header.push_back(names[c]);
  for (const auto& m : metrics) {
    const Column* column = data.find(m);
    table.header.push_back(column->unit.empty() ? m : fmt::format("{} [{}]", m, column->unit));
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::vector<std::string> cells = {i < labels.size() ? labels[i] : fmt::format("{}", i + 1)};
    if (has_id) cells.push_back(fmt::format("{:.0f}", values.back()[i]));
    for (std::size_t c : varying) cells.push_back(data.find(names[c])->format(values[c][i]));
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      const Column* column = data.find(metrics[m]);
      const double v = values[axes + m][i];
      cells.push_back(column->is_label ? column->format(v) : fmt::format("{:.4g}", v));
    }
    table.rows.push_back(std::move(cells));
  }
  return table;
}

void print_rows(std::ostream& out, const Dataset& data, const std::vector<RowRef>& rows,
                const std::vector<std::string>& metrics) {
  if (rows.empty()) {
    out << "No row matches.\n";
    return;
  }
  std::vector<std::string> common;
  const TextTable table = rows_table(data, rows, metrics, common);
  if (!common.empty()) out << fmt::format("Common to all rows: {}\n\n", fmt::join(common, " "));
  table.print(out);
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

std::string money(double usd) {
  if (std::fabs(usd) >= 1e6) return fmt::format("${:.3g}M", usd / 1e6);
  if (std::fabs(usd) >= 1e3) return fmt::format("${:.3g}k", usd / 1e3);
  return fmt::format("${:.2f}", usd);
}

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

void print_energy(std::ostream& out, const Dataset& data, const EnergyReport& r,
                  const std::vector<std::string>& origin) {
  const Pricing& p = data.pricing();
  const auto from = [&](std::size_t i) {
    return i < origin.size() ? fmt::format(" ({})", origin[i]) : std::string();
  };
  out << fmt::format("Pricing: PUE {}{}, electricity ${}/kWh{}, grid {} g CO2e/kWh{}\n", p.pue,
                     from(0), p.usd_per_kwh, from(1), p.carbon_g_per_kwh, from(2));
  out << fmt::format("Accelerators: {}\n", cost_model(p, from));
  out << "cost_usd = energy_kwh x price per kWh + GPU time x (hourly price, or capex / "
         "amortization)\n";
  if (r.feasible == 0) {
    out << "\nNo feasible design to price.\n";
    return;
  }
  out << fmt::format("\n{} feasible designs re-priced:\n", r.feasible);
  TextTable ranges{{"quantity", "min", "mean", "max"}, {}};
  const double n = static_cast<double>(r.feasible);
  ranges.rows.push_back({"time to train", format_duration(r.time_s.min),
                         format_duration(r.time_s.sum / n), format_duration(r.time_s.max)});
  ranges.rows.push_back({"energy (MWh)", fmt::format("{:.4g}", r.energy_kwh.min / 1e3),
                         fmt::format("{:.4g}", r.energy_kwh.sum / n / 1e3),
                         fmt::format("{:.4g}", r.energy_kwh.max / 1e3)});
  ranges.rows.push_back(
      {"cost", money(r.cost_usd.min), money(r.cost_usd.sum / n), money(r.cost_usd.max)});
  ranges.rows.push_back({"emissions (t CO2e)", fmt::format("{:.4g}", r.co2e_kg.min / 1e3),
                         fmt::format("{:.4g}", r.co2e_kg.sum / n / 1e3),
                         fmt::format("{:.4g}", r.co2e_kg.max / 1e3)});
  ranges.print(out);

  std::vector<std::string> labels;
  std::vector<RowRef> rows;
  std::vector<std::string> none;
  const auto answer = [&](const std::string& label, const RowRef& ref) {
    if (!ref.found()) {
      none.push_back(label);
      return;
    }
    labels.push_back(label);
    rows.push_back(ref);
  };
  answer("fastest", r.fastest);
  answer("least energy", r.least_energy);
  answer("cheapest", r.cheapest);
  answer("least carbon", r.least_carbon);
  if (r.deadline_s)
    answer(fmt::format("cheapest within {:.4g} days", *r.deadline_s / 86400),
           r.cheapest_within_deadline);
  if (r.budget_usd)
    answer(fmt::format("fastest within {}", money(*r.budget_usd)), r.fastest_within_budget);
  std::vector<std::string> common;
  TextTable table = rows_table(data, rows, {"time_to_train_s", "energy_kwh", "cost_usd", "co2e_kg"},
                               common, labels);
  out << "\n";
  if (!common.empty())
    out << fmt::format("Common to these designs: {}\n\n", fmt::join(common, " "));
  table.print(out);
  for (const auto& label : none)
    out << fmt::format("\nNo feasible design is the {}: {}\n", label,
                       label.rfind("cheapest within", 0) == 0
                           ? "none trains that fast (try a later --deadline-days)"
                           : "none costs that little (try a larger --budget-usd)");
}

}  // namespace clustersweep::analysis
