#include "slurm/scheduler.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "base/error.h"
#include "tests/slurm/test_util.h"

namespace clustersweep::slurm {
namespace {

using Argv = std::vector<std::string>;

// Records every command and answers each with the next canned result.
struct FakeCommandRunner {
  std::vector<Argv> calls;
  std::vector<ProcessResult> answers;
  CommandRunner runner() {
    return [this](const Argv& argv) {
      calls.push_back(argv);
      if (answers.empty()) return ProcessResult{1, "", "unexpected call"};
      auto r = answers.front();
      answers.erase(answers.begin());
      return r;
    };
  }
};

// The client commands must look present on PATH for SlurmScheduler to call the runner.
class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* tool : {"sbatch", "squeue", "sacct", "scontrol"})
      testing::write_text(dir_ / tool, "#!/bin/sh\nexit 1\n", true);
    old_path_ = std::getenv("PATH");
    ::setenv("PATH", dir_.path().c_str(), 1);
  }
  void TearDown() override { ::setenv("PATH", old_path_.c_str(), 1); }
  testing::ScratchDir dir_;
  std::string old_path_;
};

TEST_F(SchedulerTest, SubmitPassesArgumentsAndReadsTheParsableId) {
  FakeCommandRunner fake;
  fake.answers = {{0, "4242;cluster1\n", ""}};
  SlurmScheduler slurm(fake.runner());
  EXPECT_EQ(slurm.submit({"--dependency=afterok:7"}, "/d/x.sbatch"), "4242");
  EXPECT_EQ(fake.calls,
            (std::vector<Argv>{{"sbatch", "--parsable", "--dependency=afterok:7", "/d/x.sbatch"}}));
}

TEST_F(SchedulerTest, ARefusedSubmissionCarriesSlurmsMessage) {
  FakeCommandRunner fake;
  fake.answers = {
      {1, "",
       "sbatch: error: invalid partition specified: nosuch\n"
       "sbatch: error: Batch job submission failed: Invalid partition name specified\n"}};
  SlurmScheduler slurm(fake.runner());
  try {
    slurm.submit({}, "/d/x.sbatch");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(
        e.what(),
        "Slurm refused the job: sbatch: error: invalid partition specified: nosuch / sbatch: "
        "error: Batch job submission failed: Invalid partition name specified");
  }
}

TEST_F(SchedulerTest, AMissingClientIsNamed) {
  std::filesystem::remove(dir_ / "sbatch");
  SlurmScheduler slurm(FakeCommandRunner{}.runner());
  try {
    slurm.submit({}, "/d/x.sbatch");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "Slurm's client is missing: sbatch not found on PATH");
  }
}

TEST_F(SchedulerTest, QueryAsksSqueueThenTheAccountingForForgottenJobs) {
  FakeCommandRunner fake;
  fake.answers = {
      {0, "7_0|cs-r|RUNNING|None|1:02|10:00|0|node1|\n7_1|cs-r|PENDING|BeginTime|0:00|10:00|1||\n",
       ""},
      {1, "", "Slurm accounting storage is disabled\n"},
      {0, "5|cs-old|PENDING|00:00:21|1|vm|0:0\n5|cs-old|COMPLETED|00:00:40|1|vm|0:0\n", ""},
  };
  SlurmScheduler slurm(fake.runner());
  const auto jobs = slurm.query({"7", "5"});
  ASSERT_EQ(fake.calls.size(), 3u);
  EXPECT_EQ(fake.calls[0], (Argv{"squeue", "--noheader", "--array", "--states=all", "--jobs=7,5",
                                 std::string("--Format=") + kSqueueFormat}));
  EXPECT_EQ(fake.calls[1], (Argv{"sacct", "--allocations", "--noheader", "--parsable2", "--jobs=5",
                                 std::string("--format=") + kSacctFormat}));
  EXPECT_EQ(fake.calls[2][1], "--completion");
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].id, "7_0");
  EXPECT_EQ(jobs[0].state, "RUNNING");
  EXPECT_EQ(jobs[0].reason, "");
  EXPECT_EQ(jobs[0].elapsed, "1:02");
  EXPECT_EQ(jobs[0].nodes, "node1");
  EXPECT_EQ(jobs[1].reason, "BeginTime");
  EXPECT_EQ(jobs[1].restarts, 1u);
  EXPECT_EQ(jobs[2].id, "5");
  EXPECT_EQ(jobs[2].state, "COMPLETED");  // the last record of a requeued job
  EXPECT_EQ(jobs[2].exit_code, "0:0");
}

TEST_F(SchedulerTest, QueryToleratesJobsSqueueNoLongerKnows) {
  FakeCommandRunner fake;
  fake.answers = {{1, "", "slurm_load_jobs error: Invalid job id specified\n"},
                  {0, "9|cs|CANCELLED by 0|00:01:00|00:10:00|n1|0:15\n", ""}};
  SlurmScheduler slurm(fake.runner());
  const auto jobs = slurm.query({"9"});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].state, "CANCELLED");
  EXPECT_EQ(fake.calls.size(), 2u);
}

TEST_F(SchedulerTest, StartNowUpdatesTheBeginTime) {
  FakeCommandRunner fake;
  fake.answers = {{0, "", ""}};
  SlurmScheduler slurm(fake.runner());
  slurm.start_now("12");
  EXPECT_EQ(fake.calls, (std::vector<Argv>{{"scontrol", "update", "JobId=12", "StartTime=now"}}));
}

TEST(ParseJobId, RefusesOutputWithoutAnId) {
  EXPECT_EQ(parse_job_id("123\n"), "123");
  EXPECT_THROW(parse_job_id("Submitted batch job 123\n"), Error);
  EXPECT_THROW(parse_job_id(""), Error);
}

}  // namespace
}  // namespace clustersweep::slurm
