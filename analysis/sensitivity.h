#pragma once
// `clustersweep sensitivity`: how much of the variance of log(target) each swept axis explains.
// A least-squares regression of log(target) on every axis as a categorical factor (one indicator
// per value but the first; an axis with more than kMaxLevels values enters as one numeric
// regressor, log-scaled when positive), fitted from normal equations accumulated chunk by chunk
// (memory: one p x p matrix, p = the number of indicators). Each axis is scored by
//   unique: the drop in R^2 when the axis is removed from the full model (its own share), and
//   alone:  the R^2 of the axis by itself (one-way ANOVA eta^2),
// which agree when the feasible points form a balanced full-factorial design.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "analysis/dataset.h"
#include "analysis/svg.h"

namespace clustersweep::analysis {

struct AxisEffect {
  const Column* column = nullptr;
  std::size_t levels = 0;  // distinct values among the fitted rows
  bool numeric = false;    // entered as one numeric regressor (too many levels)
  double unique_r2 = 0;    // R^2(full) - R^2(full without this axis)
  double alone_r2 = 0;     // R^2 of this axis alone
};

struct Sensitivity {
  std::string target;
  std::uint64_t rows = 0;                    // feasible rows with a positive, finite target
  double full_r2 = 0;                        // all axes together (main effects only)
  std::vector<AxisEffect> effects;           // varying axes, most important first
  std::vector<const Column*> constant_axes;  // axes with one value: explain nothing
  // A store that keeps only the best plan(s) of each design (keep = best-per-design or
  // pareto-per-design) holds the chosen plan, a consequence of the design rather than a swept
  // factor: its plan axes are left out.
  bool plan_axes_excluded = false;
};

inline constexpr std::size_t kMaxLevels = 64;

Sensitivity sensitivity(const Dataset& data, const std::string& target, ScanOptions options);
void print_sensitivity(std::ostream& out, const Sensitivity& result);
BarChart sensitivity_chart(const Sensitivity& result);

}  // namespace clustersweep::analysis
