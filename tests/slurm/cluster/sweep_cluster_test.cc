// `clustersweep submit` against a real single-node Slurm: complete runs, time-limit requeues and
// sharded arrays all end with the data of a plain mpirun run of the same spec.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "slurm/submit.h"
#include "tests/slurm/cluster/cluster_util.h"
#include "tests/slurm/cluster/local_slurm.h"
#include "tests/slurm/test_util.h"

namespace clustersweep::slurm {
namespace {

using testing::clustersweep;
using testing::contains;
using testing::first_line;
using testing::jobs_text;
using testing::logs;
using testing::read_text;
using testing::ScratchDir;
namespace fs = std::filesystem;

const std::string kQuick = testing::kSource + "/examples/quick.toml";
const std::string kRequeue = testing::kSource + "/tests/slurm/requeue.toml";

TEST(SubmitToSlurm, ASweepRunsToCompletionWithTheDataOfAnMpirunRun) {
  REQUIRE_LOCAL_SLURM();
  ScratchDir dir;
  const auto reference = testing::mpirun_sweep(kQuick, dir / "reference.h5", 2);
  ASSERT_EQ(reference.exit_code, 0) << reference.err;

  const auto submitted =
      clustersweep({"submit", kQuick, "-o", dir / "results.h5", "--nodes", "1", "--ntasks-per-node",
                    "2", "--time", "00:05:00", "--then",
                    "pareto --objectives time_to_train_s,energy_to_train_j --svg front.svg"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const auto record = read_job_record(dir / "results.h5");
  ASSERT_EQ(record.size(), 1u);
  ASSERT_EQ(record[0].jobs.size(), 2u);
  EXPECT_EQ(first_line(submitted.out), record[0].jobs[0].id);
  EXPECT_TRUE(std::filesystem::exists(dir / "results.h5.sbatch"));

  const auto waited = testing::wait_for_jobs({record[0].jobs[0].id, record[0].jobs[1].id}, 240);
  ASSERT_FALSE(waited.timed_out) << jobs_text(waited) << logs(dir.path());
  for (const auto& j : waited.jobs)
    EXPECT_EQ(j.state, "COMPLETED") << jobs_text(waited) << logs(dir.path());
  EXPECT_EQ(testing::store_difference(dir / "reference.h5", dir / "results.h5"), "")
      << logs(dir.path());
  // The analysis job ran after the sweep, in the store's folder.
  EXPECT_TRUE(std::filesystem::exists(dir / "front.svg")) << logs(dir.path());

  const auto status = clustersweep({"status", dir / "results.h5"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_TRUE(contains(status.out, "points: 147,456 of 147,456 (100.0%)")) << status.out;
  EXPECT_TRUE(contains(status.out, "; complete\n")) << status.out;
  EXPECT_TRUE(contains(status.out, fmt::format("  sweep   {:<14}COMPLETED", record[0].jobs[0].id)))
      << status.out;
  EXPECT_TRUE(contains(status.out, fmt::format("  then    {:<14}COMPLETED", record[0].jobs[1].id)))
      << status.out;
}

TEST(SubmitToSlurm, AJobPastItsTimeLimitCheckpointsRequeuesAndCompletesWithTheSameData) {
  REQUIRE_LOCAL_SLURM();
  ScratchDir dir;
  // The reference runs alongside the Slurm job (one core each), which keeps the test short.
  ProcessResult reference;
  std::thread reference_run(
      [&] { reference = testing::mpirun_sweep(kRequeue, dir / "reference.h5", 1); });

  // One minute (sbatch's minutes form), and SIGUSR1 55 s before its end: slurmctld checks time
  // limits every 30 s, so the signal comes 5 to 35 s into each run, well before this sweep could
  // finish. The spec is a copy deleted right after submit: the job and its requeues run the
  // frozen copy next to the store.
  const std::string spec = dir / "requeue.toml";
  fs::copy_file(kRequeue, spec);
  const auto submitted =
      clustersweep({"submit", spec, "-o", dir / "results.h5", "--nodes", "1", "--ntasks-per-node",
                    "1", "--time", "1", "--signal-margin", "55"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  fs::remove(spec);
  const std::string id = first_line(submitted.out);
  const auto waited = testing::wait_for_jobs({id}, 480);
  reference_run.join();
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  ASSERT_FALSE(waited.timed_out) << jobs_text(waited) << logs(dir.path());
  ASSERT_EQ(waited.jobs.size(), 1u);
  EXPECT_EQ(waited.jobs[0].state, "COMPLETED") << logs(dir.path());
  EXPECT_GE(waited.jobs[0].restarts, 1u) << "the sweep finished before its time-limit signal: this "
                                            "machine is faster than the test assumes "
                                            "(tests/slurm/requeue.toml should keep one core busy "
                                            "for well over 35 s); enlarge the spec\n"
                                         << logs(dir.path());
  EXPECT_GE(waited.releases, 1);
  const std::string log = read_text(dir / fmt::format("results.h5.slurm-{}.out", id));
  EXPECT_TRUE(contains(log, "SIGUSR1")) << log;
  EXPECT_TRUE(contains(log, fmt::format("requeueing job {} to resume", id))) << log;
  EXPECT_TRUE(contains(log, "sweep complete")) << log;
  EXPECT_EQ(testing::store_difference(dir / "reference.h5", dir / "results.h5"), "")
      << logs(dir.path());
  std::fprintf(stderr, "requeue test: %u restart(s), %.0f s from submission to completion\n",
               waited.jobs[0].restarts, waited.seconds);
}

TEST(SubmitToSlurm, ShardsOfAJobArrayMergeIntoTheSingleRunsData) {
  REQUIRE_LOCAL_SLURM();
  ScratchDir dir;
  const auto reference = testing::mpirun_sweep(kQuick, dir / "reference.h5", 2);
  ASSERT_EQ(reference.exit_code, 0) << reference.err;

  const auto submitted =
      clustersweep({"submit", kQuick, "-o", dir / "results.h5", "--nodes", "1", "--ntasks-per-node",
                    "1", "--time", "00:05:00", "--array", "3%2", "--launcher", "mpirun"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const auto record = read_job_record(dir / "results.h5");
  ASSERT_EQ(record.size(), 1u);
  ASSERT_EQ(record[0].jobs.size(), 2u);
  EXPECT_EQ(record[0].shards, 3u);
  EXPECT_EQ(record[0].jobs[1].role, "merge");
  const auto waited = testing::wait_for_jobs({record[0].jobs[0].id, record[0].jobs[1].id}, 240);
  ASSERT_FALSE(waited.timed_out) << jobs_text(waited) << logs(dir.path());
  EXPECT_EQ(waited.jobs.size(), 4u) << jobs_text(waited);  // three array tasks and the merge
  for (const auto& j : waited.jobs)
    EXPECT_EQ(j.state, "COMPLETED") << jobs_text(waited) << logs(dir.path());
  for (const char* shard :
       {"results.shard-0-of-3.h5", "results.shard-1-of-3.h5", "results.shard-2-of-3.h5"})
    EXPECT_TRUE(std::filesystem::exists(dir / shard)) << shard;
  EXPECT_EQ(testing::store_difference(dir / "reference.h5", dir / "results.h5"), "")
      << logs(dir.path());
}

TEST(SubmitToSlurm, SegmentsRunOneAfterAnotherAndEachResumes) {
  REQUIRE_LOCAL_SLURM();
  ScratchDir dir;
  const auto reference = testing::mpirun_sweep(kQuick, dir / "reference.h5", 2);
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  const auto submitted =
      clustersweep({"submit", kQuick, "-o", dir / "results.h5", "--nodes", "1", "--ntasks-per-node",
                    "2", "--time", "00:05:00", "--segments", "2"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const auto record = read_job_record(dir / "results.h5");
  ASSERT_EQ(record.size(), 1u);
  ASSERT_EQ(record[0].jobs.size(), 2u);
  const auto waited = testing::wait_for_jobs({record[0].jobs[0].id, record[0].jobs[1].id}, 240);
  ASSERT_FALSE(waited.timed_out) << jobs_text(waited) << logs(dir.path());
  for (const auto& j : waited.jobs)
    EXPECT_EQ(j.state, "COMPLETED") << jobs_text(waited) << logs(dir.path());
  EXPECT_EQ(testing::store_difference(dir / "reference.h5", dir / "results.h5"), "")
      << logs(dir.path());
  // The first segment finished the sweep; the second found the store complete.
  const std::string second =
      read_text(dir / fmt::format("results.h5.slurm-{}.out", record[0].jobs[1].id));
  EXPECT_TRUE(contains(second, "already complete")) << second;
}

TEST(SubmitToSlurm, ASubmissionSlurmRefusesShowsSlurmsMessage) {
  REQUIRE_LOCAL_SLURM();
  ScratchDir dir;
  const auto r =
      clustersweep({"submit", kQuick, "-o", dir / "results.h5", "--nodes", "1", "--ntasks-per-node",
                    "1", "--time", "00:05:00", "--partition", "nosuch"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(
      r.err,
      "clustersweep submit: error: Slurm refused the job: sbatch: error: invalid partition "
      "specified: "
      "nosuch / sbatch: error: Batch job submission failed: Invalid partition name specified\n");
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(std::filesystem::exists(dir / "results.h5.slurm-jobs"));
}

}  // namespace
}  // namespace clustersweep::slurm
