#pragma once
// `clustersweep sensitivity`: how much of the variance of log(target) each swept axis explains.
// A least-squares regression of log(target) on every axis as a categorical factor (one indicator
// per value but the first; an axis with more than kMaxLevels values enters as one numeric
// regressor, log-scaled when positive), fitted from normal equations accumulated chunk by chunk
// (memory: one p x p matrix, p = the number of indicators). Each axis is scored by
//   unique: the drop in R^2 when the axis is removed from the full model (its own share), and
//   alone:  the R^2 of the axis by itself (one-way ANOVA eta^2),
// which agree when the feasible points form a balanced full-factorial design, and
//   share:  the axis's Shapley share of the full R^2 (the average of what it adds over every order
//           in which the axes can enter the model), which splits what collinear axes explain
//           jointly instead of giving it to no one (unique) or to each of them (alone); the shares
//           add up to the full R^2, and axes are ranked by it.
// Axes that move together in the data (every value of one goes with one value of the other, as the
// accelerator with its default NVLink bandwidth) cannot be told apart by any fit: they form one
// group, scored as one factor.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "analysis/dataset.h"
#include "analysis/svg.h"

namespace clustersweep::analysis {

struct AxisEffect {
  const Column* column = nullptr;      // the first axis of the group
  std::vector<const Column*> columns;  // the group: axes that move together (usually one)
  std::size_t levels = 0;              // distinct values among the fitted rows
  bool numeric = false;                // entered as one numeric regressor (too many levels)
  double unique_r2 = 0;                // R^2(full) - R^2(full without this group)
  double alone_r2 = 0;                 // R^2 of this group alone
  double share_r2 = 0;                 // Shapley share of R^2(full)
  std::string name() const;            // "gpu = nvlink_gbytes_per_s"
};

struct Sensitivity {
  std::string target;
  std::uint64_t rows = 0;                    // feasible rows with a positive, finite target
  double full_r2 = 0;                        // all axes together (main effects only)
  std::vector<AxisEffect> effects;           // varying axis groups, largest share first
  bool shares_sampled = false;               // Shapley shares from sampled orders (many groups)
  std::vector<const Column*> constant_axes;  // axes with one value: explain nothing
  // A store that keeps only the best plan(s) of each design (keep = best-per-design or
  // pareto-per-design) holds the chosen plan, a consequence of the design rather than a swept
  // factor: its plan axes are left out.
  bool plan_axes_excluded = false;
};

inline constexpr std::size_t kMaxLevels = 64;

Sensitivity sensitivity(const Dataset& data, const std::string& target, ScanOptions options);
void print_sensitivity(std::ostream& out, const Sensitivity& result);
// The ranked table print_sensitivity() prints (rank, axis, values, share %, alone %, unique %).
struct TextTable;
TextTable sensitivity_table(const Sensitivity& result);
// What the columns mean, one line each.
std::vector<std::string> sensitivity_notes(const Sensitivity& result);
BarChart sensitivity_chart(const Sensitivity& result);

}  // namespace clustersweep::analysis
