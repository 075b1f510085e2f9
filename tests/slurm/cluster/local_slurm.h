#pragma once
// A private Slurm cluster for the duration of a test process: scripts/local-slurm.sh starts
// munged, slurmctld and slurmd in a scratch folder; SLURM_CONF then points every Slurm client this
// process starts (sbatch, squeue, and clustersweep's) at it.
#include <string>

namespace clustersweep::slurm::testing {

class LocalSlurm {
 public:
  // The cluster of this process, started on first use; nullptr when Slurm cannot run here, with
  // the reason in skip_reason(). A start that fails for another reason fails the test.
  static LocalSlurm* get();
  static const std::string& skip_reason();

  const std::string& dir() const { return dir_; }
  std::string log(const std::string& daemon) const;  // the tail of slurmctld/slurmd's log

  ~LocalSlurm();

 private:
  explicit LocalSlurm(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

// GTEST_SKIP()s the test with the reason when there is no cluster.
#define REQUIRE_LOCAL_SLURM()                                                    \
  do {                                                                           \
    if (::clustersweep::slurm::testing::LocalSlurm::get() == nullptr)            \
      GTEST_SKIP() << ::clustersweep::slurm::testing::LocalSlurm::skip_reason(); \
  } while (0)

}  // namespace clustersweep::slurm::testing
