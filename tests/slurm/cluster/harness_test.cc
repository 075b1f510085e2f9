// The local Slurm of scripts/local-slurm.sh runs batch jobs, MPI included.
#include <gtest/gtest.h>

#include "slurm/process.h"
#include "tests/slurm/cluster/cluster_util.h"
#include "tests/slurm/cluster/local_slurm.h"
#include "tests/slurm/test_util.h"

namespace clustersweep::slurm {
namespace {

TEST(LocalSlurm, RunsABatchJobWithMpiRanks) {
  REQUIRE_LOCAL_SLURM();
  testing::ScratchDir dir;
  testing::write_text(dir / "job.sh",
                      "#!/bin/bash\n#SBATCH --ntasks=2\n#SBATCH --time=00:01:00\n"
                      "srun --mpi=pmix printenv PMIX_RANK | sort\n");
  const auto r = run_process({"sbatch", "--parsable", "--output=" + (dir / "out"), dir / "job.sh"});
  ASSERT_EQ(r.exit_code, 0) << r.err << testing::LocalSlurm::get()->log("slurmctld");
  const auto waited = testing::wait_for_jobs({parse_job_id(r.out)}, 60);
  ASSERT_FALSE(waited.timed_out) << testing::LocalSlurm::get()->log("slurmctld");
  ASSERT_EQ(waited.jobs.size(), 1u);
  EXPECT_EQ(waited.jobs[0].state, "COMPLETED");
  EXPECT_EQ(testing::read_text(dir / "out"), "0\n1\n");
}

}  // namespace
}  // namespace clustersweep::slurm
