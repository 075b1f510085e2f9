// clustersweep status: how far a sweep's store is, and what its Slurm jobs are doing
// (docs/slurm.md).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "apps/commands.h"
#include "base/error.h"
#include "base/format.h"
#include "engine/run.h"
#include "engine/store_reader.h"
#include "slurm/process.h"
#include "slurm/scheduler.h"
#include "slurm/script.h"
#include "slurm/submit.h"

namespace clustersweep::cli {
namespace {

namespace fs = std::filesystem;

// The progress of the sweep's store, or of its shards while they are not merged yet.
struct Progress {
  std::uint64_t points = 0, points_done = 0, chunks = 0, chunks_done = 0;
  std::uint32_t stores = 0, complete = 0, unfinished = 0;
};

Progress progress_of(const std::vector<std::string>& stores) {
  Progress p;
  for (const auto& path : stores) {
    const auto s = engine::store_state(path);
    ++p.stores;
    if (s.kind == engine::StoreState::complete) ++p.complete;
    if (s.kind == engine::StoreState::unfinished) ++p.unfinished;
    p.points += s.points;
    p.chunks += s.chunks;
    p.chunks_done += s.chunks_done;
    p.points_done += s.kind == engine::StoreState::complete ? s.points : s.points_done;
  }
  return p;
}

// The last line of a job's log that says something, for a glance at what the job is doing.
std::string last_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (const auto cr = line.rfind('\r'); cr != std::string::npos) line = line.substr(cr + 1);
    if (line.find_first_not_of(" \t") != std::string::npos) last = line;
  }
  return last;
}

std::string describe(const slurm::JobState& j) {
  std::string text = fmt::format("{:<11}", j.state);
  if (j.state == "PENDING") {
    text += j.reason.empty() ? "" : fmt::format(" waiting for {}", j.reason);
    if (j.reason == "BeginTime")
      text += " (a requeued job starts about 2 minutes after its requeue)";
  } else if (!j.elapsed.empty()) {
    text += fmt::format(" {} of {}", j.elapsed, j.time_limit.empty() ? "?" : j.time_limit);
    if (!j.nodes.empty() && j.nodes != "(null)") text += fmt::format(" on {}", j.nodes);
  }
  if (j.restarts > 0)
    text += fmt::format(", requeued {} time{}", j.restarts, j.restarts == 1 ? "" : "s");
  if (!j.exit_code.empty() && j.exit_code != "0:0")
    text += fmt::format(", exit code {}", j.exit_code);
  return text;
}

// Prints the store's (or its shards') progress; measures the rate over `interval` seconds while
// the sweep is unfinished (0: not at all).
void print_progress(const std::string& store, const std::vector<std::string>& stores,
                    std::uint32_t shards, double interval) {
  const auto before = progress_of(stores);
  const auto t0 = std::chrono::steady_clock::now();
  std::cout << fmt::format("store:  {}\n", store);
  if (before.complete == 0 && before.unfinished == 0) {
    std::cout << "        not started: no store (or unfinished run of it) yet\n";
    return;
  }
  const double share = before.points ? 100.0 * static_cast<double>(before.points_done) /
                                           static_cast<double>(before.points)
                                     : 0;
  std::string state = before.complete == before.stores ? "complete" : "unfinished";
  if (shards > 0)
    state += fmt::format("; {} of {} shards complete, not merged yet", before.complete, shards);
  std::cout << fmt::format("points: {} of {} ({:.1f}%), {} of {} chunks; {}\n",
                           with_commas(before.points_done), with_commas(before.points), share,
                           with_commas(before.chunks_done), with_commas(before.chunks), state);
  if (before.complete == before.stores && shards == 0) {
    const engine::StoreReader reader(store);
    std::cout << fmt::format(
        "rate:   {} points/s over {} on {} ranks (the run that finished it)\n",
        with_commas(static_cast<std::uint64_t>(reader.run_stats().points_per_s)),
        format_clock(reader.run_stats().wall_time_s), reader.run_stats().mpi_size);
    return;
  }
  if (interval <= 0) return;
  std::this_thread::sleep_for(std::chrono::duration<double>(interval));
  const auto after = progress_of(stores);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double rate =
      static_cast<double>(after.points_done - std::min(after.points_done, before.points_done)) /
      seconds;
  if (rate > 0)
    std::cout << fmt::format(
        "rate:   {} points/s over the last {:.1f} s; ETA {}\n",
        with_commas(static_cast<std::uint64_t>(rate)), seconds,
        format_clock(static_cast<double>(after.points - after.points_done) / rate));
  else
    std::cout << fmt::format("rate:   no chunk finished in the last {:.1f} s\n", seconds);
}

}  // namespace

int status(const Args& args) {
  po::options_description options("Options");
  options.add_options()("store", po::value<std::string>(),
                        "the store a sweep writes (as given to run/submit -o)")(
      "interval", po::value<double>()->default_value(2.0),
      "seconds to watch an unfinished store to measure its rate (0: do not measure)");
  po::positional_options_description positional;
  positional.add("store", 1);
  const auto vm =
      parse(args, options, positional, "status STORE [--interval S]",
            "Shows how many points of the sweep writing STORE are done, its rate and ETA, and "
            "the state of the\nSlurm jobs `clustersweep submit` started for it (squeue, or "
            "sacct once Slurm forgot them).");
  if (!vm) return kExitOk;
  const std::string store =
      fs::absolute(required<std::string>(*vm, "store")).lexically_normal().string();
  const double interval = (*vm)["interval"].as<double>();
  if (interval < 0 || interval > 600)
    throw InputError(fmt::format("--interval: expected seconds from 0 to 600, got {}", interval));

  const auto submissions = slurm::read_job_record(store);
  const slurm::Submission* last = submissions.empty() ? nullptr : &submissions.back();

  // The jobs first: the rate is worth measuring only while one of them runs.
  std::vector<slurm::JobState> states;
  std::string slurm_problem;
  if (last) {
    std::vector<std::string> ids;
    for (const auto& j : last->jobs) ids.push_back(j.id);
    try {
      slurm::SlurmScheduler scheduler;
      states = scheduler.query(ids);
    } catch (const Error& e) {
      slurm_problem = e.what();
    }
  }
  const bool running =
      std::any_of(states.begin(), states.end(), [](const auto& j) { return j.state == "RUNNING"; });

  // Which stores hold the progress: the store, or its shards until they are merged.
  std::vector<std::string> stores = {store};
  const bool sharded =
      last && last->shards > 0 && engine::store_state(store).kind != engine::StoreState::complete;
  if (sharded) {
    stores.clear();
    for (std::uint32_t i = 0; i < last->shards; ++i)
      stores.push_back(slurm::shard_path(store, i, last->shards));
  }
  print_progress(store, stores, sharded ? last->shards : 0, (!last || running) ? interval : 0);

  if (!last) {
    std::cout << fmt::format("jobs:   none recorded ({} does not exist)\n",
                             slurm::job_record_path(store));
    return kExitOk;
  }
  std::cout << fmt::format("jobs:   submitted {} ({})\n", last->time,
                           slurm::job_record_path(store));
  if (!slurm_problem.empty())
    std::cout << fmt::format("        cannot ask Slurm: {}\n", slurm_problem);
  for (const auto& j : last->jobs) {
    bool shown = false;
    for (const auto& s : states) {
      if (s.id != j.id && !s.id.starts_with(j.id + "_")) continue;
      std::cout << fmt::format("  {:<8}{:<14}{}\n", j.role, s.id, describe(s));
      shown = true;
    }
    if (!shown)
      std::cout << fmt::format(
          "  {:<8}{:<14}{}\n", j.role, j.id,
          slurm_problem.empty() ? "unknown to Slurm (finished before MinJobAge and no accounting?)"
                                : "state unknown");
  }
  // The newest line of the sweep's log, e.g. its progress line.
  const auto& main = last->jobs.front();
  const std::string log =
      fmt::format("{}.slurm-{}{}.out", store, main.id, main.role == "array" ? "_0" : "");
  if (fs::exists(log)) std::cout << fmt::format("log:    {}: {}\n", log, last_line(log));
  return kExitOk;
}

}  // namespace clustersweep::cli
