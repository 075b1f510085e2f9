#include "analysis/sensitivity.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <ostream>
#include <random>

#include "analysis/output.h"
#include "base/error.h"
#include "base/format.h"

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

  // Pass 2: the normal equations X'X b = X'y on y = log(target), and which level pairs of two
  // categorical factors occur together (to find the factors that move together).
  std::vector<std::vector<std::uint8_t>> pairs(factors.size() * factors.size());
  for (std::size_t a = 0; a < factors.size(); ++a)
    for (std::size_t b = a + 1; b < factors.size(); ++b)
      if (!factors[a].numeric && !factors[b].numeric)
        pairs[a * factors.size() + b].resize(factors[a].levels.size() * factors[b].levels.size());
  std::vector<std::size_t> level_of(factors.size());
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
          level_of[static_cast<std::size_t>(&f - factors.data())] = level;
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
        for (std::size_t a = 0; a < factors.size(); ++a)
          for (std::size_t b = a + 1; b < factors.size(); ++b) {
            auto& seen = pairs[a * factors.size() + b];
            if (!seen.empty()) seen[level_of[a] * factors[b].levels.size() + level_of[b]] = 1;
          }
      }
  }
  // Only the lower triangle was accumulated (columns are added in ascending order).
  xtx = xtx.selfadjointView<Eigen::Lower>();

  // Groups: factors joined when each value of one goes with exactly one value of the other.
  std::vector<std::size_t> group(factors.size());
  for (std::size_t a = 0; a < factors.size(); ++a) group[a] = a;
  const auto root = [&](std::size_t a) {
    while (group[a] != a) a = group[a];
    return a;
  };
  for (std::size_t a = 0; a < factors.size(); ++a)
    for (std::size_t b = a + 1; b < factors.size(); ++b) {
      const auto& seen = pairs[a * factors.size() + b];
      if (seen.empty() || factors[a].levels.size() != factors[b].levels.size()) continue;
      if (static_cast<std::size_t>(std::count(seen.begin(), seen.end(), 1)) ==
          factors[a].levels.size())
        group[root(b)] = root(a);
    }
  std::vector<std::vector<std::size_t>> groups;  // factor indices, in axis order
  std::vector<std::size_t> group_index(factors.size());
  for (std::size_t a = 0; a < factors.size(); ++a) {
    const std::size_t r = root(a);
    if (r == a) {
      group_index[a] = groups.size();
      groups.emplace_back();
    }
    group_index[a] = group_index[r];
    groups[group_index[a]].push_back(a);
  }

  // R^2 of a set of groups (bit g = group g), memoized: the Shapley shares reuse every subset.
  std::map<std::uint64_t, double> memo;
  const auto fit = [&](std::uint64_t set) {
    const auto it = memo.find(set);
    if (it != memo.end()) return it->second;
    std::vector<std::size_t> use = {0};
    for (std::size_t g = 0; g < groups.size(); ++g)
      if (set >> g & 1)
        for (std::size_t f : groups[g])
          for (std::size_t c = 0; c < factors[f].width(); ++c)
            use.push_back(factors[f].first_column + c);
    std::sort(use.begin(), use.end());
    return memo[set] = r_squared(xtx, xty, yty, n, use);
  };
  const std::size_t k = groups.size();
  const std::uint64_t everything = k == 64 ? ~0ull : (std::uint64_t{1} << k) - 1;
  result.full_r2 = fit(everything);

  // Shapley shares: exact over every subset for up to kExactGroups groups, else the average over
  // a fixed sample of orders (seeded, so the same store gives the same shares).
  constexpr std::size_t kExactGroups = 12, kSampledOrders = 256;
  std::vector<double> share(k, 0);
  if (k <= kExactGroups) {
    std::vector<double> weight(k, 0);  // |S|! (k - |S| - 1)! / k!
    for (std::size_t size = 0; size < k; ++size) {
      double w = 1.0 / static_cast<double>(k);
      for (std::size_t i = 1; i <= size; ++i)
        w *= static_cast<double>(i) / static_cast<double>(k - i);
      weight[size] = w;
    }
    for (std::uint64_t set = 0; set <= everything; ++set)
      for (std::size_t g = 0; g < k; ++g)
        if (!(set >> g & 1))
          share[g] += weight[static_cast<std::size_t>(std::popcount(set))] *
                      (fit(set | std::uint64_t{1} << g) - fit(set));
  } else {
    result.shares_sampled = true;
    std::mt19937_64 random(20261125);
    std::vector<std::size_t> order(k);
    for (std::size_t i = 0; i < k; ++i) order[i] = i;
    for (std::size_t s = 0; s < kSampledOrders; ++s) {
      std::shuffle(order.begin(), order.end(), random);
      std::uint64_t set = 0;
      double before = 0;
      for (std::size_t g : order) {
        set |= std::uint64_t{1} << g;
        const double after = fit(set);
        share[g] += (after - before) / static_cast<double>(kSampledOrders);
        before = after;
      }
    }
  }
  for (std::size_t g = 0; g < k; ++g) {
    AxisEffect e;
    for (std::size_t f : groups[g]) e.columns.push_back(axes[factors[f].axis]);
    e.column = e.columns.front();
    const Factor& first = factors[groups[g].front()];
    e.levels = first.numeric ? kMaxLevels + 1 : first.levels.size();
    e.numeric = first.numeric;
    e.unique_r2 = std::max(0.0, result.full_r2 - fit(everything & ~(std::uint64_t{1} << g)));
    e.alone_r2 = fit(std::uint64_t{1} << g);
    e.share_r2 = std::max(0.0, share[g]);
    result.effects.push_back(e);
  }
  std::stable_sort(
      result.effects.begin(), result.effects.end(), [](const AxisEffect& a, const AxisEffect& b) {
        return a.share_r2 != b.share_r2 ? a.share_r2 > b.share_r2 : a.alone_r2 > b.alone_r2;
      });
  return result;
}

std::string AxisEffect::name() const {
  std::vector<std::string> names;
  for (const Column* c : columns) names.push_back(c->name);
  if (names.empty() && column) names.push_back(column->name);
  return fmt::format("{}", fmt::join(names, " = "));
}

TextTable sensitivity_table(const Sensitivity& r) {
  TextTable table{{"rank", "axis", "values", "share %", "alone %", "unique %"}, {}};
  table.right = {1, 0, 1, 1, 1, 1};
  for (std::size_t i = 0; i < r.effects.size(); ++i) {
    const AxisEffect& e = r.effects[i];
    table.rows.push_back(
        {fmt::format("{}", i + 1), e.name(),
         e.numeric ? fmt::format(">{} (numeric)", kMaxLevels) : fmt::format("{}", e.levels),
         fmt::format("{:.1f}", 100 * e.share_r2), fmt::format("{:.1f}", 100 * e.alone_r2),
         fmt::format("{:.1f}", 100 * e.unique_r2)});
  }
  return table;
}

std::vector<std::string> sensitivity_notes(const Sensitivity& r) {
  std::vector<std::string> notes = {
      fmt::format("share: the axis's part of the {:.1f}% all axes explain, averaged over every "
                  "order in which the axes can enter the model (Shapley){}; the shares add up to "
                  "the total.",
                  100 * r.full_r2, r.shares_sampled ? ", from 256 sampled orders" : ""),
      "alone: what the axis explains by itself. unique: what is lost when it is left out. An "
      "axis that moves with others explains much alone and little uniquely.",
  };
  for (const AxisEffect& e : r.effects)
    if (e.columns.size() > 1)
      notes.push_back(fmt::format(
          "{} move together in these points (each value of one goes with one value of the "
          "other): no fit can tell their effects apart.",
          e.name()));
  if (r.plan_axes_excluded)
    notes.push_back(
        "The store keeps the best plan(s) of each design: the plan axes hold the chosen plan, not "
        "a swept factor, and are left out.");
  if (!r.constant_axes.empty()) {
    std::vector<std::string> names;
    for (const Column* c : r.constant_axes) names.push_back(c->name);
    notes.push_back(fmt::format("Not varied among the fitted points: {}.", fmt::join(names, ", ")));
  }
  return notes;
}

void print_sensitivity(std::ostream& out, const Sensitivity& r) {
  out << wrap_words(fmt::format("Sensitivity of log({}) to the swept axes: {} feasible points; all "
                                "axes together (main effects) explain {:.1f}% of its variance, "
                                "interactions the rest.",
                                r.target, r.rows, 100 * r.full_r2),
                    TextTable::kWidth, "")
      << "\n\n";
  sensitivity_table(r).print(out);
  out << '\n';
  for (const auto& note : sensitivity_notes(r))
    out << wrap_words(note, TextTable::kWidth, "  ") << '\n';
}

BarChart sensitivity_chart(const Sensitivity& r) {
  BarChart chart;
  chart.title = fmt::format("Variance of log({}) explained per axis (all axes: {:.1f}%)", r.target,
                            100 * r.full_r2);
  chart.value_label = "share of the variance explained (%, Shapley)";
  for (const AxisEffect& e : r.effects) {
    chart.labels.push_back(e.name());
    chart.values.push_back(100 * e.share_r2);
  }
  return chart;
}

}  // namespace clustersweep::analysis
