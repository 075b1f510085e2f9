#pragma once
// The sbatch scripts `clustersweep submit` writes next to the store. They are meant to be read
// (and resubmitted by hand): every choice is spelled out in #SBATCH lines and commented shell.
#include <cstdint>
#include <string>
#include <vector>

#include "slurm/options.h"

namespace clustersweep::slurm {

enum class Launcher { srun, mpirun };

// How a sweep outlives its time limit.
enum class Continuation {
  requeue,   // on the time-limit signal the job checkpoints and requeues itself
  segments,  // a chain of jobs (afterany), each resuming where the last stopped
};

// One sweep job: what to run, where, and on which resources. Paths are absolute.
struct SweepJob {
  std::string clustersweep;   // the clustersweep binary the job runs
  std::string spec;           // the frozen copy the jobs run (STORE.spec.toml)
  std::string original_spec;  // the spec it was frozen from, named in the scripts' header only
  std::string store;
  std::string job_name;
  std::uint32_t nodes = 1;
  std::uint32_t ntasks_per_node = 1;
  std::uint64_t time_limit_s = 3600;
  std::uint64_t signal_margin_s = 300;    // SIGUSR1 this long before the time limit
  std::uint64_t then_time_limit_s = 900;  // of each analysis job (one task: it reads the store)
  std::string partition, account, qos, mem, constraint;
  std::vector<std::string> sbatch_args;  // extra options, one #SBATCH line each
  Launcher launcher = Launcher::srun;
  Continuation continuation = Continuation::requeue;
  std::uint32_t max_requeues = 50;
  ArrayShape array;          // array.tasks > 0: one shard per array task
  std::string submitted_by;  // the command line that wrote the script, for its header
};

// The default SIGUSR1 margin for a time limit: a tenth of it, from 30 s to 10 min.
std::uint64_t default_signal_margin(std::uint64_t time_limit_s);

// The frozen copies of a store's spec and of the calibration file it names, next to the store.
std::string frozen_spec_path(const std::string& store);
std::string frozen_calibration_path(const std::string& store);

// Shard `index` of `count` of `store`: "dir/results.h5" -> "dir/results.shard-03-of-16.h5".
std::string shard_path(const std::string& store, std::uint32_t index, std::uint32_t count);

// The batch script of the sweep (or of its array tasks).
std::string sweep_script(const SweepJob& job);
// A one-task job that merges the array's shards into job.store.
std::string merge_script(const SweepJob& job);
// A one-task job running `clustersweep WORDS[0] STORE WORDS[1...]` in the store's folder, so
// the files it writes land next to the store.
std::string analysis_script(const SweepJob& job, const std::vector<std::string>& words);

}  // namespace clustersweep::slurm
