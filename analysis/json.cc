#include "analysis/json.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "analysis/output.h"

namespace clustersweep::analysis {

Json json_value(const Column& column, double value) {
  if (column.is_label) return column.format(value);
  if (!std::isfinite(value)) return nullptr;
  if (column.type == engine::ColumnType::boolean) return value != 0;
  if (column.type != engine::ColumnType::f64 && column.type != engine::ColumnType::f32 &&
      value == std::floor(value)) {
    if (value >= 0 && value < 0x1p64) return static_cast<std::uint64_t>(value);
    if (value < 0 && value >= -0x1p63) return static_cast<std::int64_t>(value);
  }
  return value;
}

Json rows_json(const Dataset& data, const std::vector<std::uint64_t>& rows,
               std::vector<std::string> columns) {
  if (columns.empty()) columns = data.column_names();
  const auto values = fetch_rows(data, rows, columns);
  Json out = Json::array();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    Json row = Json::object();
    for (std::size_t c = 0; c < columns.size(); ++c)
      row[columns[c]] = json_value(*data.find(columns[c]), values[c][i]);
    out.push_back(std::move(row));
  }
  return out;
}

Json json_header(const char* schema, const Dataset& data, const std::string& where) {
  Json out = Json::object();
  out["schema"] = schema;
  out["store"] = data.source().path();
  out["where"] = where.empty() ? Json(nullptr) : Json(where);
  return out;
}

namespace {

Json one_row(const Dataset& data, std::uint64_t row) { return rows_json(data, {row}).front(); }

Json spread_json(const Dataset& data, const Spread& spread) {
  Json out = Json::object();
  out["workload"] = spread.workload;
  out["designs"] = spread.designs;
  out["ratio"] = spread.ratio();
  out["best"] = one_row(data, spread.best.row);
  out["worst"] = one_row(data, spread.worst.row);
  return out;
}

}  // namespace

Json summary_json(const Dataset& data, const Summary& s, const std::string& where) {
  Json out = json_header("clustersweep-summary/1", data, where);
  out["target"] = s.target;
  out["rows"] = s.rows;
  out["selected"] = s.selected;
  out["feasible"] = s.feasible;
  Json axes = Json::array();
  for (const auto& a : s.axes) {
    Json axis = Json::object();
    axis["name"] = a.column->name;
    axis["role"] = a.column->role == Role::plan_axis ? "plan" : "design";
    axis["unit"] = a.column->unit;
    Json values = Json::array();
    for (double v : a.values) values.push_back(json_value(*a.column, v));
    axis["values"] = std::move(values);
    axis["more_values"] = a.more;
    axes.push_back(std::move(axis));
  }
  out["axes"] = std::move(axes);
  Json reasons = Json::object();
  for (const auto& [name, count] : s.infeasible_reasons) reasons[name] = count;
  out["infeasible_reasons"] = std::move(reasons);
  Json best = Json::object();
  for (const auto& [gpu, ref] : s.best_per_accelerator) best[gpu] = one_row(data, ref.row);
  out["best_per_accelerator"] = std::move(best);
  Json spreads = Json::array(), at_equal_gpus = Json::array();
  for (const auto& spread : s.spreads) spreads.push_back(spread_json(data, spread));
  for (const auto& spread : s.spreads_at_equal_gpus)
    at_equal_gpus.push_back(spread_json(data, spread));
  out["spreads"] = std::move(spreads);
  out["spreads_at_equal_gpus"] = std::move(at_equal_gpus);
  Json expansion = nullptr;
  if (s.has_expansion_axis && s.expansion.groups > 0) {
    const ExpansionGain& e = s.expansion;
    expansion = Json::object();
    expansion["clusters_compared"] = e.groups;
    expansion["faster_with_tier"] = e.improved;
    expansion["feasible_only_with_tier"] = e.enabled;
    expansion["max_gain"] = e.max_gain;
    expansion["median_gain"] = e.median_gain;
    if (e.max_gain > 0) {
      expansion["max_gain_without"] = one_row(data, e.max_without.row);
      expansion["max_gain_with"] = one_row(data, e.max_with.row);
    }
  }
  out["expansion"] = std::move(expansion);
  Json stack = Json::array();
  for (const auto& setting : s.stack) {
    Json values = Json::array();
    for (const auto& v : setting.values)
      values.push_back({{"value", v.value},
                        {"groups", v.groups},
                        {"best", v.best},
                        {"median_ratio", v.median_ratio},
                        {"max_ratio", v.max_ratio}});
    stack.push_back({{"axis", setting.axis}, {"groups", setting.groups}, {"values", values}});
  }
  Json fixed = Json::object();
  for (const auto& [setting, value] : s.fixed_stack) fixed[setting] = value;
  out["stack"] = {{"kept_plans_only", s.stack_by_design},
                  {"settings", std::move(stack)},
                  {"fixed", std::move(fixed)}};
  out["constant_axes"] = s.constant_axes;
  return out;
}

namespace {

// Rows with the point ids of the rows each stands for.
Json tied_rows_json(const Dataset& data, const std::vector<std::uint64_t>& rows,
                    const std::vector<std::vector<std::uint64_t>>& ties) {
  Json out = rows_json(data, rows);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    Json ids = Json::array();
    if (i < ties.size() && data.find("point_id")) {
      const auto values = fetch_rows(data, ties[i], {"point_id"});
      for (double id : values.front()) ids.push_back(static_cast<std::uint64_t>(id));
    }
    out[i]["tied_point_ids"] = std::move(ids);
  }
  return out;
}

}  // namespace

Json top_json(const Dataset& data, const Objective& by, const TiedRows& rows,
              const std::string& where) {
  Json out = json_header("clustersweep-top/1", data, where);
  out["by"] = by.column;
  out["largest_first"] = by.maximize;
  std::vector<std::uint64_t> ids;
  for (const auto& r : rows.rows) ids.push_back(r.row);
  out["rows"] = tied_rows_json(data, ids, rows.ties);
  return out;
}

Json fronts_json(const Dataset& data, const FrontRequest& request, const FrontResult& result,
                 const std::string& where) {
  Json out = json_header("clustersweep-pareto/1", data, where);
  Json objectives = Json::array();
  for (const auto& o : request.objectives)
    objectives.push_back({{"column", o.column}, {"maximize", o.maximize}});
  out["objectives"] = std::move(objectives);
  out["group_by"] = request.group_by.empty() ? Json(nullptr) : Json(request.group_by);
  out["all_ties"] = request.all_ties;
  out["rows_selected"] = result.rows_selected;
  Json fronts = Json::array();
  for (const auto& f : result.fronts) {
    Json front = Json::object();
    front["group"] = request.group_by.empty() ? Json(nullptr)
                                              : json_value(*data.find(request.group_by), f.group);
    front["rows"] = tied_rows_json(data, f.rows, f.ties);
    fronts.push_back(std::move(front));
  }
  out["fronts"] = std::move(fronts);
  return out;
}

Json energy_json(const Dataset& data, const EnergyReport& r, const std::vector<std::string>& origin,
                 const std::string& where) {
  Json out = json_header("clustersweep-energy/1", data, where);
  Json pricing = Json::object();
  std::size_t i = 0;
  Pricing::for_each(data.pricing(), [&](const char* name, const auto& value) {
    Json field = Json::object();
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, double>)
      field["value"] = value;
    else if (value.by_gpu.empty())
      field["value"] = value.given() ? Json(value.all) : Json(nullptr);
    else
      for (const auto& [gpu, price] : value.by_gpu) field["value"][gpu] = price;
    field["from"] = i < origin.size() ? Json(origin[i]) : Json(nullptr);
    pricing[name] = std::move(field);
    ++i;
  });
  out["pricing"] = std::move(pricing);
  out["feasible"] = r.feasible;
  const double n = static_cast<double>(std::max<std::uint64_t>(r.feasible, 1));
  const auto range = [&](const Range& v) {
    return r.feasible ? Json{{"min", v.min}, {"mean", v.sum / n}, {"max", v.max}} : Json(nullptr);
  };
  out["ranges"] = {{"time_to_train_s", range(r.time_s)},
                   {"energy_kwh", range(r.energy_kwh)},
                   {"cost_usd", range(r.cost_usd)},
                   {"co2e_kg", range(r.co2e_kg)}};
  const auto row = [&](const RowRef& ref) {
    return ref.found() ? rows_json(data, {ref.row}).front() : Json(nullptr);
  };
  out["fastest"] = row(r.fastest);
  out["least_energy"] = row(r.least_energy);
  out["cheapest"] = row(r.cheapest);
  out["least_carbon"] = row(r.least_carbon);
  out["deadline_s"] = r.deadline_s ? Json(*r.deadline_s) : Json(nullptr);
  out["cheapest_within_deadline"] = r.deadline_s ? row(r.cheapest_within_deadline) : Json(nullptr);
  out["budget_usd"] = r.budget_usd ? Json(*r.budget_usd) : Json(nullptr);
  out["fastest_within_budget"] = r.budget_usd ? row(r.fastest_within_budget) : Json(nullptr);
  return out;
}

Json sensitivity_json(const Dataset& data, const Sensitivity& r, const std::string& where) {
  Json out = json_header("clustersweep-sensitivity/1", data, where);
  out["target"] = r.target;
  out["rows"] = r.rows;
  out["full_r2"] = r.full_r2;
  out["shares_sampled"] = r.shares_sampled;
  Json effects = Json::array();
  for (const AxisEffect& e : r.effects) {
    std::vector<std::string> axes;
    for (const Column* c : e.columns) axes.push_back(c->name);
    effects.push_back({{"axes", axes},
                       {"levels", e.numeric ? Json(nullptr) : Json(e.levels)},
                       {"share_r2", e.share_r2},
                       {"alone_r2", e.alone_r2},
                       {"unique_r2", e.unique_r2}});
  }
  out["effects"] = std::move(effects);
  std::vector<std::string> constant;
  for (const Column* c : r.constant_axes) constant.push_back(c->name);
  out["constant_axes"] = constant;
  out["plan_axes_excluded"] = r.plan_axes_excluded;
  return out;
}

}  // namespace clustersweep::analysis
