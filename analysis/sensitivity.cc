#include "analysis/sensitivity.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <ostream>

#include "analysis/output.h"
#include "base/error.h"

namespace clustersweep::analysis {
namespace {

struct Factor {
  std::size_t axis = 0;        // index into the scanned axes
  std::vector<double> levels;  // ascending; level 0 is the baseline (no indicator)
  bool numeric = false;
  bool log = false;
  std::size_t first_column = 0;  // first design-matrix column of this factor
  std::size_t width() const { return numeric ? 1 : levels.size() - 1; }
};

// R^2 of the least-squares fit on the design-matrix columns `use` (the intercept, column 0, is
// always used), from the accumulated normal equations.
double r_squared(const Eigen::MatrixXd& xtx, const Eigen::VectorXd& xty, double yty, double n,
                 const std::vector<std::size_t>& use) {
  const auto m = static_cast<Eigen::Index>(use.size());
  Eigen::MatrixXd a(m, m);
  Eigen::VectorXd b(m);
  for (Eigen::Index i = 0; i < m; ++i) {
    b(i) = xty(static_cast<Eigen::Index>(use[static_cast<std::size_t>(i)]));
    for (Eigen::Index j = 0; j < m; ++j)
      a(i, j) = xtx(static_cast<Eigen::Index>(use[static_cast<std::size_t>(i)]),
                    static_cast<Eigen::Index>(use[static_cast<std::size_t>(j)]));
  }
  // Indicators can be collinear (num_gpus with num_nodes, levels that never co-occur): the
  // complete orthogonal decomposition gives the minimum-norm solution of a singular system.
  const Eigen::VectorXd beta = a.completeOrthogonalDecomposition().solve(b);
  const double mean = xty(0) / n;
  const double total = yty - n * mean * mean;
  if (total <= 0) return 0;
  const double residual = yty - beta.dot(b);
  return std::clamp(1 - residual / total, 0.0, 1.0);
}

}  // namespace

Sensitivity sensitivity(const Dataset& data, const std::string& target, ScanOptions options) {
  Sensitivity result;
  result.target = data.column(target, "--target").name;
  if (data.column(target, "--target").is_label)
    throw InputError(fmt::format("--target: column '{}' holds labels, not numbers", target));
  std::vector<const Column*> axes;
  // dp is derived from the plan, and num_gpus from num_nodes * gpus_per_node when the spec sweeps
  // nodes: a derived column would share the variance of the axes it comes from.
  const bool has_nodes = data.find("num_nodes") != nullptr;
  const std::string keep = data.source().string_attribute("keep").value_or("all");
  result.plan_axes_excluded = keep == "best-per-design" || keep == "pareto-per-design";
  for (const Column* c : data.axes()) {
    if (c->name == "dp" || (c->name == "num_gpus" && has_nodes)) continue;
    if (result.plan_axes_excluded && c->role == Role::plan_axis) continue;
    axes.push_back(c);
  }
  std::vector<std::string> columns = {result.target};
  for (const Column* a : axes) columns.push_back(a->name);
  options.feasible_only = true;

  // Pass 1: the levels of each axis among the rows that will be fitted.
  std::vector<std::vector<double>> levels(axes.size());
  std::vector<bool> too_many(axes.size(), false);
  std::vector<double> last(axes.size(), std::nan(""));
  {
    Scan scan(data, columns, options);
    while (scan.next())
      for (std::size_t i = 0; i < scan.size(); ++i) {
        const double y = scan[0][i];
        if (!scan.keep(i) || !(y > 0) || !std::isfinite(y)) continue;
        ++result.rows;
        for (std::size_t a = 0; a < axes.size(); ++a) {
          const double v = scan[1 + a][i];
          if (v == last[a] || too_many[a]) continue;
          last[a] = v;
          if (std::find(levels[a].begin(), levels[a].end(), v) != levels[a].end()) continue;
          levels[a].push_back(v);
          if (levels[a].size() > kMaxLevels) too_many[a] = true;
        }
      }
  }
  if (result.rows < 2)
    throw InputError(
        fmt::format("sensitivity: {} feasible rows with a positive {}; need at least 2",
                    result.rows, result.target));
  std::vector<Factor> factors;
  std::size_t width = 1;  // the intercept
  for (std::size_t a = 0; a < axes.size(); ++a) {
    if (!too_many[a] && levels[a].size() < 2) {
      result.constant_axes.push_back(axes[a]);
      continue;
    }
    Factor f;
    f.axis = a;
    f.numeric = too_many[a];
    f.levels = levels[a];
    std::sort(f.levels.begin(), f.levels.end());
    f.log = f.numeric && f.levels.front() > 0;
    f.first_column = width;
    width += f.width();
    factors.push_back(std::move(f));
  }

  // Pass 2: the normal equations X'X b = X'y on y = log(target).
  const auto p = static_cast<Eigen::Index>(width);
  Eigen::MatrixXd xtx = Eigen::MatrixXd::Zero(p, p);
  Eigen::VectorXd xty = Eigen::VectorXd::Zero(p);
  double yty = 0, n = 0;
  std::vector<std::size_t> at;  // nonzero columns of the row
  std::vector<double> value;    // their values
  {
    Scan scan(data, columns, options);
    while (scan.next())
      for (std::size_t i = 0; i < scan.size(); ++i) {
        const double target_value = scan[0][i];
        if (!scan.keep(i) || !(target_value > 0) || !std::isfinite(target_value)) continue;
        const double y = std::log(target_value);
        at.assign(1, 0);
        value.assign(1, 1.0);
        for (const Factor& f : factors) {
          const double v = scan[1 + f.axis][i];
          if (f.numeric) {
            at.push_back(f.first_column);
            value.push_back(f.log ? std::log(v) : v);
            continue;
          }
          const auto level = static_cast<std::size_t>(
              std::lower_bound(f.levels.begin(), f.levels.end(), v) - f.levels.begin());
          if (level == 0) continue;
          at.push_back(f.first_column + level - 1);
          value.push_back(1.0);
        }
        for (std::size_t r = 0; r < at.size(); ++r) {
          const auto ri = static_cast<Eigen::Index>(at[r]);
          xty(ri) += value[r] * y;
          for (std::size_t c = 0; c <= r; ++c)
            xtx(ri, static_cast<Eigen::Index>(at[c])) += value[r] * value[c];
        }
        yty += y * y;
        n += 1;
      }
  }
  // Only the lower triangle was accumulated (columns are added in ascending order).
  xtx = xtx.selfadjointView<Eigen::Lower>();

  std::vector<std::size_t> all(width);
  for (std::size_t c = 0; c < width; ++c) all[c] = c;
  result.full_r2 = r_squared(xtx, xty, yty, n, all);
  for (const Factor& f : factors) {
    std::vector<std::size_t> without, alone = {0};
    for (std::size_t c = 0; c < width; ++c) {
      const bool mine = c >= f.first_column && c < f.first_column + f.width();
      if (!mine)
        without.push_back(c);
      else
        alone.push_back(c);
    }
    AxisEffect e;
    e.column = axes[f.axis];
    e.levels = f.numeric ? kMaxLevels + 1 : f.levels.size();
    e.numeric = f.numeric;
    e.unique_r2 = std::max(0.0, result.full_r2 - r_squared(xtx, xty, yty, n, without));
    e.alone_r2 = r_squared(xtx, xty, yty, n, alone);
    result.effects.push_back(e);
  }
  std::stable_sort(
      result.effects.begin(), result.effects.end(), [](const AxisEffect& a, const AxisEffect& b) {
        return a.unique_r2 != b.unique_r2 ? a.unique_r2 > b.unique_r2 : a.alone_r2 > b.alone_r2;
      });
  return result;
}

void print_sensitivity(std::ostream& out, const Sensitivity& r) {
  out << fmt::format(
      "Sensitivity of log({}) to the swept axes: {} feasible points; all axes together\n"
      "(main effects) explain {:.1f}% of its variance, interactions the rest.\n\n",
      r.target, r.rows, 100 * r.full_r2);
  TextTable table{{"rank", "axis", "values", "unique %", "alone %"}, {}};
  for (std::size_t i = 0; i < r.effects.size(); ++i) {
    const AxisEffect& e = r.effects[i];
    table.rows.push_back(
        {fmt::format("{}", i + 1), e.column->name,
         e.numeric ? fmt::format(">{} (numeric)", kMaxLevels) : fmt::format("{}", e.levels),
         fmt::format("{:.2f}", 100 * e.unique_r2), fmt::format("{:.2f}", 100 * e.alone_r2)});
  }
  table.print(out);
  out << "\nunique: R^2 lost when the axis is left out of the full model; alone: R^2 of the axis "
         "by itself.\n";
  if (r.plan_axes_excluded)
    out << "The store keeps the best plan(s) of each design: the plan axes hold the chosen plan, "
           "not a swept\n"
           "factor, and are left out.\n";
  if (!r.constant_axes.empty()) {
    std::vector<std::string> names;
    for (const Column* c : r.constant_axes) names.push_back(c->name);
    out << fmt::format("Not varied among the fitted points: {}\n", fmt::join(names, ", "));
  }
}

BarChart sensitivity_chart(const Sensitivity& r) {
  BarChart chart;
  chart.title = fmt::format("Variance of log({}) explained per axis (all axes: {:.1f}%)", r.target,
                            100 * r.full_r2);
  chart.value_label = "unique share of the variance (%): R² lost without the axis";
  for (const AxisEffect& e : r.effects) {
    chart.labels.push_back(e.column->name);
    chart.values.push_back(100 * e.unique_r2);
  }
  return chart;
}

}  // namespace clustersweep::analysis
