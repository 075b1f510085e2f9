// clustersweep pareto: the non-dominated designs of a store in 2 to 4 objectives.
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <iostream>
#include <optional>

#include "analysis/front.h"
#include "analysis/output.h"
#include "apps/analysis_args.h"
#include "apps/commands.h"
#include "base/error.h"
#include "base/files.h"
#include "engine/mpi_gather.h"

namespace clustersweep::cli {
namespace {

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024;  // ru_maxrss is in KiB on Linux
}

// The hidden --bench-rows N: the same chunked pipeline over N generated rows of 3 uniform
// objectives (docs/analysis.md, "Benchmark").
int bench(std::uint64_t rows, std::size_t objectives, std::size_t chunk_rows,
          const engine::MpiShare& mpi) {
  analysis::SyntheticTable table(rows, objectives);
  analysis::Dataset data(table, analysis::Pricing{});
  analysis::FrontRequest request;
  for (std::size_t j = 0; j < objectives; ++j)
    request.objectives.push_back({fmt::format("obj{}", j), false});
  request.scan.chunk_rows = chunk_rows;
  request.scan.feasible_only = true;
  const auto start = std::chrono::steady_clock::now();
  const auto result = analysis::compute_fronts(data, request, &mpi);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (mpi.rank() != 0) return 0;
  std::cout << fmt::format(
      "pareto bench: {} rows x {} objectives on {} rank(s), chunk {} rows: front {} points, {:.2f} "
      "s, "
      "{:.1f} M rows/s, peak RSS {:.0f} MiB (rank 0)\n",
      rows, objectives, mpi.size(), chunk_rows,
      result.fronts.empty() ? 0 : result.fronts[0].rows.size(), seconds,
      static_cast<double>(rows) / seconds / 1e6, peak_rss_mib());
  return 0;
}

// More grey points make an SVG too large to open; the reservoir holds them all in memory.
constexpr std::size_t kMaxSample = 1'000'000;

}  // namespace

int pareto(const Args& args) {
  StoreArgs store;
  std::string objectives, group_by, csv, svg;
  bool all_ties = false, json = false;
  std::size_t limit = 20, sample = 4000;
  std::uint64_t bench_rows = 0;
  po::options_description options("Options");
  po::positional_options_description positional;
  add_store_options(options, positional, store);
  options.add_options()(
      "objectives", po::value(&objectives),
      "2 to 4 comma-separated columns, each minimized or maximized with max:, e.g. "
      "time_to_train_s,energy_kwh,cost_usd (priced columns allowed)")(
      "group-by", po::value(&group_by), "one front per value of this column (e.g. gpu)")(
      "csv", po::value(&csv),
      "write the front rows with point_id and every column to this CSV file")(
      "svg", po::value(&svg),
      "plot the first two objectives to this SVG file: all points (sampled) in "
      "grey, the front highlighted")("limit", whole_value(&limit, 0)->default_value(20),
                                     "rows of each front shown on the terminal")(
      "sample", whole_value(&sample, 0, kMaxSample)->default_value(4000),
      "points drawn in grey in the SVG")(
      "all-ties", po::bool_switch(&all_ties),
      "every row of equal objectives, not one for them all (the one on the fewest GPUs, then "
      "with the least memory per GPU)");
  add_json_option(options, json);
  // The hidden --bench-rows N (kept out of --help).
  Args rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--bench-rows" && i + 1 < args.size()) {
      bench_rows = parse_uint64("--bench-rows", args[++i], 1);
    } else {
      rest.push_back(args[i]);
    }
  }
  const auto vm =
      parse(rest, options, positional, "pareto results.h5 --objectives A,B[,C[,D]] [options]",
            "The Pareto-optimal (non-dominated) designs of a store: O(n log n) for 2 and 3\n"
            "objectives, read in chunks. Only feasible rows count. Under mpirun each rank\n"
            "takes a share of the rows and rank 0 merges the local fronts.");
  if (!vm) return 0;
  engine::MpiShare mpi;
  if (bench_rows > 0) return bench(bench_rows, 3, store.chunk_rows, mpi);
  // Every rank checks the same flags and opens the same store, so each would fail the same way:
  // rank 0 says it once, with the exit code that becomes the job's; the others leave with 0, since
  // a non-zero exit would let mpiexec stop rank 0 before it printed (as engine::run does).
  std::optional<OpenStore> open;
  analysis::FrontRequest request;
  try {
    read_pricing_flags(*vm, store);
    if (objectives.empty()) throw_missing("objectives");
    refuse_clobbering(store, {{csv, "--csv"}, {svg, "--svg"}});
    open.emplace(store);
    request.objectives = analysis::parse_objectives(objectives, open->data);
    if (!group_by.empty()) request.group_by = open->data.column(group_by, "--group-by").name;
  } catch (const Error& e) {
    if (mpi.rank() != 0) return kExitOk;
    throw;
  }
  request.scan = open->scan();
  request.scan.feasible_only = true;
  request.sample_size = svg.empty() ? 0 : sample;
  request.all_ties = all_ties;
  const auto result = analysis::compute_fronts(open->data, request, &mpi);
  if (mpi.rank() != 0) return 0;
  if (json)
    print_json(analysis::fronts_json(open->data, request, result, store.where));
  else
    analysis::print_fronts(std::cout, open->data, request, result, limit);
  if (!csv.empty()) {
    analysis::write_fronts_csv(csv, open->data, request, result);
    if (!json) std::cout << fmt::format("\nWrote {}\n", csv);
  }
  if (!svg.empty()) {
    write_file_atomically(
        svg, analysis::render_svg(analysis::front_plot(open->data, request, result)), "--svg");
    if (!json) std::cout << fmt::format("Wrote {}\n", svg);
  }
  return 0;
}

}  // namespace clustersweep::cli
