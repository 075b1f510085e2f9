#include "slurm/sizing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/format.h"

namespace clustersweep::slurm {

namespace {

// The forecast is an order of magnitude (a short timed sample, compute only): a request within
// this factor of it is as good as the forecast can tell.
constexpr double kTolerance = 10;

// How fast an analysis job reads the store: `report`, the slowest command, reads the 2.29 GB
// keep = "all" store of examples/stress-10m.toml in 4.6 s from a cold cache on a local disk
// (500 MB/s, 2-core development machine); a fifth of that allows for a busy shared filesystem.
constexpr double kAnalysisBytesPerSecond = 100e6;

// Whole minutes, as sbatch counts them, of at least one.
std::uint64_t whole_minutes(double seconds) {
  const double minutes = std::ceil(std::max(seconds, 1.0) / 60);
  return static_cast<std::uint64_t>(std::min(minutes, 1e9)) * 60;
}

std::string ranks_text(std::uint64_t ranks) {
  return fmt::format("{} rank{}", ranks, ranks == 1 ? "" : "s");
}

}  // namespace

std::string allocation_warning(const SubmitRequest& request, const SweepNeed& need) {
  const SweepJob& job = request.job;
  const std::uint64_t ranks = std::uint64_t{job.nodes} * job.ntasks_per_node;
  // An array task sweeps its shard of the designs; every other job the whole space.
  const double share = need.core_seconds / std::max<std::uint32_t>(1, job.array.tasks);
  const double wall = share / static_cast<double>(ranks);
  const std::string asked =
      fmt::format("{} node{} x {} x {}", job.nodes, job.nodes == 1 ? "" : "s",
                  ranks_text(job.ntasks_per_node), format_time_limit(job.time_limit_s));
  const std::string each = job.array.tasks > 0 ? "each array task's shard" : "this sweep";

  const double allocated = static_cast<double>(ranks) * static_cast<double>(job.time_limit_s);
  const double needed = std::max(share, static_cast<double>(kShortestJob_s));
  if (allocated > kTolerance * needed) {
    // Twice the forecast run, in whole minutes, and the ranks that fill that limit.
    const std::uint64_t limit = whole_minutes(2 * wall);
    std::string enough = fmt::format("--time {}", format_time_limit(limit));
    if (static_cast<double>(ranks * limit) > kTolerance * needed)
      enough += fmt::format(" on {}", ranks_text(static_cast<std::uint64_t>(std::max(
                                          1.0, std::ceil(share / static_cast<double>(limit))))));
    return fmt::format(
        "warning: the forecast puts {} at {} of compute on one core ({} on {}): {} is over {:g}x "
        "that; {} would do (--quiet silences this)",
        each, format_duration(share), format_duration(wall), ranks_text(ranks), asked, kTolerance,
        enough);
  }

  // The sweep checkpoints at the signal, so a job computes until then; a chain of segments or a
  // requeueing job gets that many turns.
  const std::uint64_t turns = job.continuation == Continuation::segments
                                  ? request.segments
                                  : std::uint64_t{job.max_requeues} + 1;
  const double usable = static_cast<double>(turns * (job.time_limit_s - job.signal_margin_s));
  if (wall > usable)
    return fmt::format(
        "warning: the forecast puts {} at {} on {}, more than the {} x {} before the checkpoint "
        "signal that {} allow: it would stop unfinished; ask for a longer --time, more ranks or "
        "more {} (--quiet silences this)",
        each, format_duration(wall), ranks_text(ranks), turns,
        format_duration(static_cast<double>(job.time_limit_s - job.signal_margin_s)),
        job.continuation == Continuation::segments ? "the segments" : "the requeues",
        job.continuation == Continuation::segments ? "--segments" : "--max-requeues");
  return "";
}

std::uint64_t default_then_time_limit(const SweepNeed& need, std::uint64_t sweep_time_limit_s) {
  const double read_s = need.store_bytes / kAnalysisBytesPerSecond;
  return std::min(sweep_time_limit_s,
                  std::max<std::uint64_t>(300, whole_minutes(kTolerance * read_s)));
}

}  // namespace clustersweep::slurm
