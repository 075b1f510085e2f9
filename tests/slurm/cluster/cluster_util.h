#pragma once
// Helpers of the real-Slurm tests: running clustersweep, waiting for jobs, comparing stores.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "slurm/process.h"
#include "slurm/scheduler.h"

namespace clustersweep::slurm::testing {

inline const std::string kSource = CLUSTERSWEEP_SOURCE_DIR;

// `clustersweep ARGS...`
inline ProcessResult clustersweep(std::vector<std::string> args) {
  args.insert(args.begin(), CLUSTERSWEEP_BINARY);
  return run_process(args);
}

// The reference: `mpirun -n RANKS clustersweep run SPEC -o STORE`, outside Slurm. Under ctest the
// real-Slurm tests of one run share their references (CLUSTERSWEEP_SLURM_REFERENCES, a folder the
// fixture SlurmReferences empties before the run and deletes after it): the first test that needs
// a spec's reference at a rank count computes it there, under a lock, and the others copy it. The
// requeue spec's reference is a minute of one core, and three tests compare against it.
ProcessResult mpirun_sweep(const std::string& spec, const std::string& store, int ranks);

// Empty when the stores hold the same data, else the difference (compare_stores.py, h5py).
inline std::string store_difference(const std::string& a, const std::string& b) {
  const auto r =
      run_process({"/usr/bin/python3", kSource + "/tests/slurm/cluster/compare_stores.py", a, b});
  return r.exit_code == 0 ? "" : r.err + r.out;
}

struct Waited {
  std::vector<JobState> jobs;  // the final states (array jobs: one per task)
  int releases = 0;            // requeued runs started early with scontrol update StartTime=now
  double seconds = 0;
  bool timed_out = false;
  bool stopped = false;  // `stop` said so before the jobs finished
};

// Polls squeue until every job (and every task of an array) finished. A requeued job waits about
// two minutes for its begin time; this releases it after a few seconds (scontrol update JobId=ID
// StartTime=now). A `stop` that returns true ends the wait early (Waited::stopped).
Waited wait_for_jobs(const std::vector<std::string>& ids, double timeout_s,
                     const std::function<bool()>& stop = nullptr);

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}
inline std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }
// The jobs' final states, a line each, for a failed test's message.
std::string jobs_text(const Waited& w);
// Everything a failed test should show: the job logs in `folder` and the controller's log.
std::string logs(const std::string& folder);

}  // namespace clustersweep::slurm::testing
