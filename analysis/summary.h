#pragma once
// `clustersweep summary`: what was swept, how much was feasible, the best design per accelerator,
// the spread of the target (time to train) across cluster configurations, and the gain of the
// memory-expansion tier at an otherwise equal cluster (the two headline numbers of COMET).
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
};

inline constexpr std::size_t kMaxListedValues = 24;

// One chunked pass. Designs are recognised as runs of rows with equal design axes (the store keeps
// rows in point-id order, where a design's plans are contiguous); expansion groups are kept in a
// map, one entry per cluster swept with expansion memory.
Summary summarize(const Dataset& data, const std::string& target, ScanOptions options);

void print_summary(std::ostream& out, const Dataset& data, const Summary& summary);
// The swept axes with their role and values, as print_summary and the report show them.
struct TextTable;
TextTable swept_axes_table(const Summary& summary);

// "gpu=H100-SXM5-80GB num_nodes=64 ... | tp=8 pp=4 ..." for one row: design axes, then plan axes,
// leaving out the axes named in `skip` (e.g. those with one value in the whole sweep).
std::string describe_design(const Dataset& data, std::uint64_t row,
                            const std::vector<std::string>& skip = {});

}  // namespace clustersweep::analysis
