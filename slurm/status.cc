#include "slurm/status.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "base/error.h"
#include "base/format.h"
#include "engine/run.h"
#include "engine/store_reader.h"
#include "slurm/script.h"

namespace clustersweep::slurm {
namespace {

namespace fs = std::filesystem;

void add_progress(StatusReport& r, const std::vector<std::string>& stores) {
  r.points = r.points_done = r.chunks = r.chunks_done = 0;
  r.stores = r.complete = r.unfinished = 0;
  for (const auto& path : stores) {
    const auto s = engine::store_state(path);
    ++r.stores;
    if (s.kind == engine::StoreState::complete) ++r.complete;
    if (s.kind == engine::StoreState::unfinished) ++r.unfinished;
    r.points += s.points;
    r.chunks += s.chunks;
    r.chunks_done += s.chunks_done;
    r.points_done += s.kind == engine::StoreState::complete ? s.points : s.points_done;
  }
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

std::string describe(const JobState& j) {
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

// Slurm's durations in seconds; "UNLIMITED" and the like have none.
nlohmann::ordered_json slurm_seconds(const std::string& text) {
  const auto seconds = slurm_duration(text);
  return seconds ? nlohmann::ordered_json(*seconds) : nlohmann::ordered_json(nullptr);
}

}  // namespace

StatusReport status_of(const std::string& store, double interval, Scheduler& scheduler) {
  StatusReport r;
  r.store = store;
  r.job_record = job_record_path(store);
  if (auto submissions = read_job_record(store); !submissions.empty())
    r.submission = std::move(submissions.back());

  // The jobs first: the rate is worth measuring only while one of them runs.
  std::vector<JobState> states;
  if (r.submission) {
    std::vector<std::string> ids;
    for (const auto& j : r.submission->jobs) ids.push_back(j.id);
    try {
      states = scheduler.query(ids);
    } catch (const Error& e) {
      r.slurm_problem = e.what();
    }
    for (const auto& j : r.submission->jobs) {
      bool known = false;
      for (const auto& s : states)
        if (s.id == j.id || s.id.starts_with(j.id + "_")) {
          r.jobs.push_back({j.role, s.id, s});
          known = true;
        }
      if (!known) r.jobs.push_back({j.role, j.id, std::nullopt});
    }
    const auto& main = r.submission->jobs.front();
    const std::string log =
        fmt::format("{}.slurm-{}{}.out", store, main.id, main.role == "array" ? "_0" : "");
    if (fs::exists(log)) {
      r.log = log;
      r.log_line = last_line(log);
    }
  }
  const bool running =
      std::any_of(states.begin(), states.end(), [](const auto& j) { return j.state == "RUNNING"; });

  // Which stores hold the progress: the store, or its shards until they are merged.
  std::vector<std::string> stores = {store};
  if (r.submission && r.submission->shards > 0 &&
      engine::store_state(store).kind != engine::StoreState::complete) {
    r.shards = r.submission->shards;
    stores.clear();
    for (std::uint32_t i = 0; i < r.shards; ++i) stores.push_back(shard_path(store, i, r.shards));
  }
  add_progress(r, stores);
  if (r.is_complete() && r.shards == 0) {
    const engine::StoreReader reader(store);
    r.rate_of_finished_run = true;
    r.points_per_s = reader.run_stats().points_per_s;
    r.finished_wall_time_s = reader.run_stats().wall_time_s;
    r.finished_mpi_size = reader.run_stats().mpi_size;
  } else if (r.started() && interval > 0 && (!r.submission || running)) {
    const auto before = r.points_done;
    const auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(interval));
    add_progress(r, stores);
    r.rate_window_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.points_per_s =
        static_cast<double>(r.points_done - std::min(r.points_done, before)) / r.rate_window_s;
  }
  return r;
}

std::string status_text(const StatusReport& r) {
  std::string out = fmt::format("store:  {}\n", r.store);
  if (!r.started()) {
    out += "        not started: no store (or unfinished run of it) yet\n";
  } else {
    const double share =
        r.points ? 100.0 * static_cast<double>(r.points_done) / static_cast<double>(r.points) : 0;
    std::string state = r.is_complete() ? "complete" : "unfinished";
    if (r.shards > 0)
      state += fmt::format("; {} of {} shards complete, not merged yet", r.complete, r.shards);
    out += fmt::format("points: {} of {} ({:.1f}%), {} of {} chunks; {}\n",
                       with_commas(r.points_done), with_commas(r.points), share,
                       with_commas(r.chunks_done), with_commas(r.chunks), state);
    if (r.rate_of_finished_run)
      out += fmt::format("rate:   {} points/s over {} on {} ranks (the run that finished it)\n",
                         with_commas(static_cast<std::uint64_t>(*r.points_per_s)),
                         format_clock(r.finished_wall_time_s), r.finished_mpi_size);
    else if (r.points_per_s && *r.points_per_s > 0)
      out += fmt::format(
          "rate:   {} points/s over the last {:.1f} s; ETA {}\n",
          with_commas(static_cast<std::uint64_t>(*r.points_per_s)), r.rate_window_s,
          format_clock(static_cast<double>(r.points - r.points_done) / *r.points_per_s));
    else if (r.points_per_s)
      out += fmt::format("rate:   no chunk finished in the last {:.1f} s\n", r.rate_window_s);
  }

  if (!r.submission)
    return out + fmt::format("jobs:   none recorded ({} does not exist)\n", r.job_record);
  out += fmt::format("jobs:   submitted {} ({})\n", r.submission->time, r.job_record);
  if (!r.slurm_problem.empty())
    out += fmt::format("        cannot ask Slurm: {}\n", r.slurm_problem);
  for (const auto& j : r.jobs)
    out += fmt::format("  {:<8}{:<14}{}\n", j.role, j.id,
                       j.state ? describe(*j.state)
                       : r.slurm_problem.empty()
                           ? "unknown to Slurm (finished before MinJobAge and no accounting?)"
                           : "state unknown");
  // The newest line of the sweep's log, e.g. its progress line.
  if (!r.log.empty()) out += fmt::format("log:    {}: {}\n", r.log, r.log_line);
  return out;
}

nlohmann::ordered_json status_json(const StatusReport& r) {
  using Json = nlohmann::ordered_json;
  Json out = {{"schema", "clustersweep-status/1"}, {"store", r.store}};
  out["state"] = !r.started() ? "not started" : r.is_complete() ? "complete" : "unfinished";
  out["points"] = r.points;
  out["points_done"] = r.points_done;
  out["chunks"] = r.chunks;
  out["chunks_done"] = r.chunks_done;
  out["shards"] = r.shards;
  out["shards_complete"] = r.shards ? r.complete : 0;
  Json rate = nullptr;
  if (r.points_per_s) {
    rate = {{"points_per_s", *r.points_per_s}};
    if (r.rate_of_finished_run) {
      rate["measured"] = "the run that finished the store";
      rate["wall_time_s"] = r.finished_wall_time_s;
      rate["mpi_size"] = r.finished_mpi_size;
    } else {
      rate["measured"] = "watching the store";
      rate["window_s"] = r.rate_window_s;
      rate["eta_s"] = *r.points_per_s > 0
                          ? Json(static_cast<double>(r.points - r.points_done) / *r.points_per_s)
                          : Json(nullptr);
    }
  }
  out["rate"] = rate;
  out["job_record"] = r.job_record;
  out["submitted"] = r.submission ? Json(r.submission->time) : Json(nullptr);
  out["slurm_problem"] = r.slurm_problem.empty() ? Json(nullptr) : Json(r.slurm_problem);
  Json jobs = Json::array();
  for (const auto& j : r.jobs) {
    Json job = {{"role", j.role}, {"id", j.id}};
    if (j.state) {
      job["state"] = j.state->state;
      job["reason"] = j.state->reason;
      job["elapsed_s"] = slurm_seconds(j.state->elapsed);
      job["time_limit_s"] = slurm_seconds(j.state->time_limit);
      job["nodes"] = j.state->nodes;
      job["restarts"] = j.state->restarts;
      job["exit_code"] = j.state->exit_code;
    } else {
      job["state"] = nullptr;
    }
    jobs.push_back(std::move(job));
  }
  out["jobs"] = std::move(jobs);
  out["log"] = r.log.empty() ? Json(nullptr) : Json{{"path", r.log}, {"last_line", r.log_line}};
  return out;
}

}  // namespace clustersweep::slurm
