#include "slurm/submit.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "tests/slurm/fake_scheduler.h"
#include "tests/slurm/test_util.h"

namespace clustersweep::slurm {
namespace {

using testing::FakeScheduler;
using testing::ScratchDir;
using Args = std::vector<std::string>;

SubmitRequest request_in(const ScratchDir& dir) {
  SubmitRequest r;
  r.job.clustersweep = "/opt/bin/clustersweep";
  r.job.spec = dir / "spec.toml";
  r.job.store = dir / "results.h5";
  r.job.job_name = "cs";
  return r;
}

TEST(Submit, OneJobWritesItsScriptAndRecordsTheId) {
  ScratchDir dir;
  FakeScheduler slurm;
  const auto submission = submit(request_in(dir), slurm);
  ASSERT_EQ(slurm.submitted.size(), 1u);
  EXPECT_EQ(slurm.submitted[0].args, Args{});
  EXPECT_EQ(slurm.submitted[0].script, dir / "results.h5.sbatch");
  EXPECT_EQ(testing::read_text(dir / "results.h5.sbatch"), sweep_script(request_in(dir).job));
  ASSERT_EQ(submission.jobs.size(), 1u);
  EXPECT_EQ(submission.jobs[0].id, "100");

  const auto record = read_job_record(dir / "results.h5");
  ASSERT_EQ(record.size(), 1u);
  EXPECT_EQ(record[0].time, submission.time);
  ASSERT_EQ(record[0].jobs.size(), 1u);
  EXPECT_EQ(record[0].jobs[0].role, "sweep");
  EXPECT_EQ(record[0].jobs[0].id, "100");
  EXPECT_EQ(record[0].jobs[0].script, dir / "results.h5.sbatch");
}

TEST(Submit, SegmentsChainAfteranyAndAnalysisWaitsForTheLast) {
  ScratchDir dir;
  auto request = request_in(dir);
  request.segments = 3;
  request.then = {{"pareto", "--objectives", "a,b"}, {"top", "-n", "3"}};
  FakeScheduler slurm;
  submit(request, slurm);
  ASSERT_EQ(slurm.submitted.size(), 5u);
  EXPECT_EQ(slurm.submitted[0].args, Args{});
  EXPECT_EQ(slurm.submitted[1].args, Args{"--dependency=afterany:100"});
  EXPECT_EQ(slurm.submitted[2].args, Args{"--dependency=afterany:101"});
  EXPECT_EQ(slurm.submitted[3].args,
            (Args{"--dependency=afterok:102", "--kill-on-invalid-dep=yes"}));
  EXPECT_EQ(slurm.submitted[4].args,
            (Args{"--dependency=afterok:102", "--kill-on-invalid-dep=yes"}));
  EXPECT_EQ(slurm.submitted[3].script, dir / "results.h5.then-1.sbatch");
  EXPECT_EQ(slurm.submitted[4].script, dir / "results.h5.then-2.sbatch");
  EXPECT_NE(testing::read_text(dir / "results.h5.sbatch").find("requeue=0\n"), std::string::npos);
  const auto record = read_job_record(dir / "results.h5");
  ASSERT_EQ(record.back().jobs.size(), 5u);
  EXPECT_EQ(record.back().jobs[0].role, "segment");
  EXPECT_EQ(record.back().jobs[4].role, "then");
}

TEST(Submit, AnArrayIsMergedBeforeTheAnalysis) {
  ScratchDir dir;
  auto request = request_in(dir);
  request.job.array = {4, 2};
  request.then = {{"summary"}};
  FakeScheduler slurm;
  const auto submission = submit(request, slurm);
  ASSERT_EQ(slurm.submitted.size(), 3u);
  EXPECT_EQ(slurm.submitted[1].script, dir / "results.h5.merge.sbatch");
  EXPECT_EQ(slurm.submitted[1].args,
            (Args{"--dependency=afterok:100", "--kill-on-invalid-dep=yes"}));
  EXPECT_EQ(slurm.submitted[2].args,
            (Args{"--dependency=afterok:101", "--kill-on-invalid-dep=yes"}));
  EXPECT_EQ(submission.shards, 4u);
  EXPECT_EQ(read_job_record(dir / "results.h5").back().shards, 4u);
}

TEST(Submit, ARefusalMidwayNamesTheJobsAlreadySubmitted) {
  ScratchDir dir;
  auto request = request_in(dir);
  request.then = {{"summary"}};
  FakeScheduler slurm;
  slurm.refuse_at = 1;
  try {
    submit(request, slurm);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "Slurm refused the job: sbatch: error: Batch job submission failed: Invalid account "
              "(while submitting " +
                  (dir / "results.h5.then-1.sbatch") +
                  "; already submitted: job 100; cancel them with scancel 100)");
  }
  // The job that did go in is recorded, so `status` still finds it.
  ASSERT_EQ(read_job_record(dir / "results.h5").size(), 1u);
  EXPECT_EQ(read_job_record(dir / "results.h5")[0].jobs.size(), 1u);
}

TEST(Submit, ARefusedFirstJobIsReportedAsSlurmSaidIt) {
  ScratchDir dir;
  FakeScheduler slurm;
  slurm.refuse_at = 0;
  try {
    submit(request_in(dir), slurm);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(
        e.what(),
        "Slurm refused the job: sbatch: error: Batch job submission failed: Invalid account");
  }
  EXPECT_TRUE(read_job_record(dir / "results.h5").empty());
}

TEST(JobRecord, SubmissionsAccumulate) {
  ScratchDir dir;
  FakeScheduler slurm;
  submit(request_in(dir), slurm);
  submit(request_in(dir), slurm);
  const auto record = read_job_record(dir / "results.h5");
  ASSERT_EQ(record.size(), 2u);
  EXPECT_EQ(record[1].jobs[0].id, "101");
}

TEST(JobRecord, RefusesUnknownFormats) {
  ScratchDir dir;
  testing::write_text(dir / "results.h5.slurm-jobs", "clustersweep-slurm-jobs 9\n");
  try {
    read_job_record(dir / "results.h5");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              dir / "results.h5.slurm-jobs" +
                  ":1: job record format 9 is not supported; this clustersweep reads format 1");
  }
  testing::write_text(dir / "results.h5.slurm-jobs", "hello\n");
  try {
    read_job_record(dir / "results.h5");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              dir / "results.h5.slurm-jobs" +
                  ":1: not a clustersweep job record (expected 'clustersweep-slurm-jobs 1')");
  }
}

}  // namespace
}  // namespace clustersweep::slurm
