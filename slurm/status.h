#pragma once
// What `clustersweep status` reports about a sweep (docs/slurm.md, "status"): gathered once into
// a StatusReport, then printed as text or as one JSON object, so both say the same thing.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "slurm/scheduler.h"
#include "slurm/submit.h"

namespace clustersweep::slurm {

struct StatusReport {
  std::string store;
  // The store's progress, or its shards' summed until they are merged.
  std::uint64_t points = 0, points_done = 0, chunks = 0, chunks_done = 0;
  std::uint32_t stores = 0, complete = 0, unfinished = 0;
  std::uint32_t shards = 0;  // > 0: the progress is that of this many shards, not merged yet
  // The rate: of the run that finished the store, or measured over `rate_window_s` while one of
  // its jobs runs (nullopt: not measured).
  std::optional<double> points_per_s;
  double rate_window_s = 0;
  bool rate_of_finished_run = false;
  double finished_wall_time_s = 0;
  std::uint32_t finished_mpi_size = 0;

  std::optional<Submission> submission;  // the newest recorded, if any
  std::string job_record;                // its path
  std::string slurm_problem;             // why Slurm could not be asked ("" if it could)
  struct Job {
    std::string role, id;           // id: the job's, or an array task's
    std::optional<JobState> state;  // nullopt: Slurm does not know it
  };
  std::vector<Job> jobs;
  std::string log, log_line;  // the sweep's log and its newest line that says something

  bool started() const { return complete + unfinished > 0; }
  bool is_complete() const { return started() && complete == stores; }
};

// Looks at the store (its shards, its job record and Slurm through `scheduler`); watches an
// unfinished store for `interval` seconds to measure its rate while one of its jobs runs.
StatusReport status_of(const std::string& store, double interval, Scheduler& scheduler);

std::string status_text(const StatusReport& report);
// "schema": "clustersweep-status/1"; numbers unformatted, seconds in keys ending _s.
nlohmann::ordered_json status_json(const StatusReport& report);

}  // namespace clustersweep::slurm
