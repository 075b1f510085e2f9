#pragma once
// The Pareto fronts of a dataset: one chunked pass (or one pass per MPI rank over its share of
// the rows, merged on rank 0), optionally one front per value of a group-by column, plus a
// bounded random sample of all selected points for plots.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "analysis/dataset.h"
#include "analysis/pareto.h"
#include "analysis/svg.h"

namespace clustersweep::engine {
class MpiShare;
}

namespace clustersweep::analysis {

// At most this many groups (one front each) with --group-by: memory stays bounded.
inline constexpr std::size_t kMaxGroups = 10000;

struct FrontRequest {
  std::vector<Objective> objectives;
  std::string group_by;            // empty: one front over all selected rows
  ScanOptions scan;                // filter and chunk size; begin/end are set per rank
  std::size_t sample_size = 4000;  // background points kept for plots
  bool all_ties = false;           // keep every row of equal objectives, not one for them all
};

struct Front {
  double group = std::numeric_limits<double>::quiet_NaN();  // the group-by value
  std::vector<std::uint64_t> rows;                          // store rows, ascending
  std::vector<double> values;  // objectives.size() per row, as stored (not negated)
  // Per row, the other rows of the same objective values it stands for (ascending): a front
  // holds one row per objective vector unless FrontRequest::all_ties.
  std::vector<std::vector<std::uint64_t>> ties;
};

struct FrontResult {
  std::vector<Front> fronts;        // ordered by group value
  std::uint64_t rows_selected = 0;  // rows that passed the filter with finite objectives
  std::vector<double> sample;       // objectives.size() values per sampled point
};

// Rows whose objectives are all finite and that pass the filter are candidates; feasibility is
// the caller's choice (scan.feasible_only). Rows of equal objective values are one front row: the
// one on the fewest GPUs, then with the least memory per GPU, then the first. Under MPI
// (mpi->size() > 1) the result is complete on rank 0 only.
FrontResult compute_fronts(const Dataset& data, const FrontRequest& request,
                           const engine::MpiShare* mpi = nullptr);

// The fronts as tables (at most `limit` rows each, by the first objective), one per group, each
// row that stands for tied rows followed by the settings they differ in.
void print_fronts(std::ostream& out, const Dataset& data, const FrontRequest& request,
                  const FrontResult& result, std::size_t limit);
// Every column (stored and priced) of every front row, with point_id first and the number of
// rows each stands for (`ties`) last.
void write_fronts_csv(const std::string& path, const Dataset& data, const FrontRequest& request,
                      const FrontResult& result);
// The first two objectives: the sampled points in grey, each front in colour (a step line for 2
// objectives; the projection of the front for 3 or 4).
ScatterPlot front_plot(const Dataset& data, const FrontRequest& request, const FrontResult& result);

}  // namespace clustersweep::analysis
