#pragma once
// `clustersweep summary`: what was swept, how much was feasible, the best design per accelerator,
// the spread of the target (time to train) across cluster configurations, the gain of the
// memory-expansion tier at an otherwise equal cluster (the two headline numbers of COMET), and what
// each swept setting of the software stack is worth.
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "analysis/dataset.h"

namespace clustersweep::analysis {

struct SweptAxis {
  const Column* column = nullptr;
  std::vector<double> values;  // distinct values seen, ascending (at most kMaxListedValues)
  bool more = false;           // there were more distinct values than listed
};

struct RowRef {
  std::uint64_t row = 0;
  double value = std::numeric_limits<double>::infinity();
  bool found() const noexcept { return value != std::numeric_limits<double>::infinity(); }
};

// The target's spread across the cluster configurations (designs) of one workload: each design's
// best plan, then the ratio of the worst design's best to the best design's best.
struct Spread {
  std::string workload;       // e.g. "model=gpt3-175b" ("" when only one workload)
  std::uint64_t designs = 0;  // designs with a feasible plan
  RowRef best, worst;         // rows of the best plan of the best and of the worst design
  double ratio() const noexcept { return worst.value / best.value; }
};

// Designs that differ only in the expansion tier: best without it / best with it.
struct ExpansionGain {
  std::uint64_t groups = 0;    // clusters swept both with and without expansion memory
  std::uint64_t improved = 0;  // ... where the tier made training faster
  std::uint64_t enabled = 0;   // ... where only the tier made training possible at all
  double max_gain = 0, median_gain = 0;
  RowRef max_without, max_with;  // the rows behind max_gain
};

// One value of a swept stack setting against the setting's best value in each group of points
// equal in every other axis.
struct SettingValue {
  std::string value;
  std::uint64_t groups = 0;  // groups where this value was feasible
  std::uint64_t best = 0;    // ... where it was the fastest (ties count for each tied value)
  double median_ratio = 0, max_ratio = 0;  // its target / the group's best target
};

// A stack setting (estimator/stack.h) the store sweeps with more than one value. In a store that
// keeps every point (or the feasible ones) a group is the points equal but for this setting, and
// `groups` counts those with at least two feasible values. A best-per-design or pareto-per-design
// store keeps no such pairs: there a group is a design, `best` counts the designs whose kept plans
// use the value, and the ratios stay 0.
struct StackSettingWorth {
  std::string axis;
  std::uint64_t groups = 0;
  std::vector<SettingValue> values;  // the most often best first, then by median ratio
};

struct Summary {
  std::string target;  // the minimized column, time_to_train_s by default
  std::uint64_t rows = 0, selected = 0, feasible = 0;
  std::vector<SweptAxis> axes;
  std::vector<std::pair<std::string, std::uint64_t>> infeasible_reasons;  // most common first
  std::map<std::string, RowRef> best_per_accelerator;  // by gpu label ("all" without a gpu axis)
  std::vector<Spread> spreads;                         // one per workload
  std::vector<Spread> spreads_at_equal_gpus;           // one per workload and num_gpus value
  bool has_expansion_axis = false;
  ExpansionGain expansion;
  std::vector<std::string> constant_axes;  // axes with one value among the selected rows
  bool stack_by_design = false;  // the store kept chosen plans only: `stack` counts the choices
  std::vector<StackSettingWorth> stack;  // in axis order
  // The stack's settings with one value in the store, (setting, value) in axis order: what every
  // answer assumed, the spec's choice or its default.
  std::vector<std::pair<std::string, std::string>> fixed_stack;
};

inline constexpr std::size_t kMaxListedValues = 24;

// One chunked pass. Designs are recognised as runs of rows with equal design axes (the store keeps
// rows in point-id order, where a design's plans are contiguous); expansion groups are kept in a
// map, one entry per cluster swept with expansion memory. The stack's settings are the least
// significant digits of a point id, so the points equal but for one setting lie in a run of rows
// equal in every other axis; each run's groups are folded into the totals when it ends.
Summary summarize(const Dataset& data, const std::string& target, ScanOptions options);

void print_summary(std::ostream& out, const Dataset& data, const Summary& summary);
// The swept axes with their role and values, as print_summary and the report show them.
struct TextTable;
TextTable swept_axes_table(const Summary& summary);

// "dispatcher (84 groups): hybridep best in 80; deepep 1.04x (max 1.10x), alltoall 1.31x (max
// 1.52x)": the values after the one most often best, by median ratio; a value compared in fewer
// groups than the setting says in how many. With `by_design`: "dispatcher (12 kept plans):
// hybridep in 10, deepep in 2".
std::string describe_stack_setting(const StackSettingWorth& setting, bool by_design);
// "the same at every point: framework any, cuda_graph none, ...": Summary::fixed_stack.
std::string describe_fixed_stack(const Summary& summary);

// "gpu=H100-SXM5-80GB num_nodes=64 ... | tp=8 pp=4 ..." for one row: design axes, then plan axes,
// leaving out the axes named in `skip` (e.g. those with one value in the whole sweep).
std::string describe_design(const Dataset& data, std::uint64_t row,
                            const std::vector<std::string>& skip = {});

}  // namespace clustersweep::analysis
