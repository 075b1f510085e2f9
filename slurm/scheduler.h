#pragma once
// The Slurm client commands behind a small interface (ninja's CommandRunner idea): the submit and
// status logic talk to a Scheduler; SlurmScheduler runs sbatch/squeue/sacct/scontrol, tests use a
// fake that records what it was asked.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "slurm/process.h"

namespace clustersweep::slurm {

// What Slurm says about one job (or one task of a job array, id "1234_7").
struct JobState {
  std::string id;
  std::string name;
  std::string state;           // PENDING, RUNNING, COMPLETED, FAILED, TIMEOUT, CANCELLED, ...
  std::string reason;          // why it waits: Dependency, BeginTime, Resources... ("" if none)
  std::string elapsed;         // run time so far, as Slurm prints it
  std::string time_limit;      // as Slurm prints it
  std::uint32_t restarts = 0;  // times it was requeued (squeue only; 0 from sacct)
  std::string nodes;
  std::string exit_code;  // "0:0" (sacct only)
};

// True while a job may still run: pending, running, requeued, suspended, completing...; false
// once it ended (COMPLETED, FAILED, CANCELLED, TIMEOUT, ...).
bool is_active(const std::string& state);

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // Submits `script` with `sbatch --parsable ARGS SCRIPT` and returns the job id. Throws
  // InputError carrying Slurm's own message when sbatch refuses the job.
  virtual std::string submit(const std::vector<std::string>& sbatch_args,
                             const std::string& script) = 0;
  // The state of each job (job arrays expand to their tasks); jobs Slurm no longer knows are
  // left out.
  virtual std::vector<JobState> query(const std::vector<std::string>& job_ids) = 0;
  // Lets a pending job start now, e.g. a requeued job waiting for its begin time.
  virtual void start_now(const std::string& job_id) = 0;
};

// Runs a program and returns what it printed; the default runs it for real (run_process).
using CommandRunner = std::function<ProcessResult(const std::vector<std::string>& argv)>;

class SlurmScheduler : public Scheduler {
 public:
  explicit SlurmScheduler(CommandRunner runner = run_process);

  std::string submit(const std::vector<std::string>& sbatch_args,
                     const std::string& script) override;
  // `squeue` for the jobs the controller still knows, then `sacct` (or, without accounting,
  // `sacct -c` reading the job completion log) for the others.
  std::vector<JobState> query(const std::vector<std::string>& job_ids) override;
  void start_now(const std::string& job_id) override;

 private:
  ProcessResult run(const std::vector<std::string>& argv);
  CommandRunner runner_;
};

// "Slurm's client is missing: sbatch not found on PATH" unless `program` is on $PATH.
void require_client(const std::string& program);

// Parsers of the client commands' output, exposed for tests.
std::vector<JobState> parse_squeue(const std::string& text);  // the -O format squeue_format()
std::vector<JobState> parse_sacct(const std::string& text);   // -P -o sacct_format()
std::string parse_job_id(const std::string& sbatch_parsable_output);
extern const char* const kSqueueFormat;
extern const char* const kSacctFormat;

}  // namespace clustersweep::slurm
