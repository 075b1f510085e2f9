#pragma once
// A private Slurm cluster for the tests: scripts/local-slurm.sh starts munged, slurmctld and
// slurmd in a scratch folder (or, built with CLUSTERSWEEP_SLURM_SCRIPT, scripts/multinode-slurm.sh
// three nodes in network namespaces); the cluster's DIR/env (SLURM_CONF, the jobs' MPI settings)
// then applies to every Slurm client this process starts (sbatch, squeue, and clustersweep's).
// Under CTest the cluster is the one a fixture started for the whole run (CLUSTERSWEEP_SLURM_DIR);
// a test binary run by hand starts and stops its own.
#include <string>

#include "slurm/process.h"

namespace clustersweep::slurm::testing {

class LocalSlurm {
 public:
  // The cluster of this process, started on first use; nullptr when Slurm cannot run here, with
  // the reason in skip_reason(). A start that fails for another reason fails the test.
  static LocalSlurm* get();
  static const std::string& skip_reason();

  const std::string& dir() const { return dir_; }
  std::string log(const std::string& daemon) const;  // the tail of slurmctld/slurmd's log
  // `SCRIPT ACTION DIR ARG` of the cluster's script (kill-node DIR 2, revive-node DIR 2).
  ProcessResult script(const std::string& action, const std::string& arg) const;

  ~LocalSlurm();

 private:
  LocalSlurm(std::string dir, bool owned) : dir_(std::move(dir)), owned_(owned) {}
  std::string dir_;
  bool owned_;  // started by this process, so stopped by it
};

// GTEST_SKIP()s the test with the reason when there is no cluster.
#define REQUIRE_LOCAL_SLURM()                                                    \
  do {                                                                           \
    if (::clustersweep::slurm::testing::LocalSlurm::get() == nullptr)            \
      GTEST_SKIP() << ::clustersweep::slurm::testing::LocalSlurm::skip_reason(); \
  } while (0)

}  // namespace clustersweep::slurm::testing
