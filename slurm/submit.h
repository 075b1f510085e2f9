#pragma once
// `clustersweep submit`: writes the batch scripts next to the store, submits them with their
// dependencies, and records the job ids next to the store for `clustersweep status`.
#include <cstdint>
#include <string>
#include <vector>

#include "slurm/scheduler.h"
#include "slurm/script.h"

namespace clustersweep::slurm {

struct SubmitRequest {
  SweepJob job;
  // The frozen spec the jobs run (job.spec), and the text of the calibration file it names
  // (written to frozen_calibration_path(job.store); empty: none).
  std::string spec_text;
  std::string calibration_text;
  std::uint32_t segments = 1;  // > 1: a chain of this many jobs (Continuation::segments)
  std::vector<std::vector<std::string>> then;  // analysis commands run after the sweep, split
};

// One job to submit: its script and how it depends on jobs submitted before it.
struct PlannedJob {
  std::string role;    // "sweep", "segment", "array", "merge" or "then"
  std::string script;  // path of the script
  std::string text;    // the script itself
  // Index into the plan of the job this one waits for (-1: none), and how: "afterany" (a chain
  // segment runs whatever the last one did) or "afterok" (analysis runs only on complete data).
  int after = -1;
  std::string dependency;
};

// The jobs of a submission in submission order, scripts included; writes nothing.
std::vector<PlannedJob> plan_jobs(const SubmitRequest& request);

// The sbatch arguments of planned job `index` once the ids of the jobs before it are known.
std::vector<std::string> sbatch_args(const std::vector<PlannedJob>& plan, std::size_t index,
                                     const std::vector<std::string>& ids);

struct SubmittedJob {
  std::string role;
  std::string id;
  std::string script;
};

// What one submission sent to Slurm, as recorded next to the store.
struct Submission {
  std::string time;          // UTC, ISO 8601
  std::uint32_t shards = 0;  // > 0: the array's shard count
  std::vector<SubmittedJob> jobs;
};

// Writes the frozen spec (read-only) and the scripts, submits them in order with their
// dependencies, and appends the submission to the job record. When Slurm refuses the first job
// the files this submission created are removed again; when it refuses a later one the message
// says which jobs were already submitted (their files stay: they run).
Submission submit(const SubmitRequest& request, Scheduler& scheduler);

// The job record of a store: "<store>.slurm-jobs".
std::string job_record_path(const std::string& store);
// Submissions recorded for `store`, oldest first; empty when there is no record. InputError for
// a record of an unknown format.
std::vector<Submission> read_job_record(const std::string& store);
void append_job_record(const std::string& store, const Submission& submission);

}  // namespace clustersweep::slurm
