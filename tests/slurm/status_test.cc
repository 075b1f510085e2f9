// slurm::status_of and its two renderings, with a fake scheduler: array tasks are matched to their
// job, Slurm's times become seconds, and the text and the JSON say the same thing.
#include "slurm/status.h"

#include <gtest/gtest.h>

#include "tests/slurm/fake_scheduler.h"
#include "tests/slurm/test_util.h"

namespace clustersweep::slurm {
namespace {

using testing::ScratchDir;

TEST(Status, MatchesArrayTasksToTheirJobAndConvertsSlurmTimes) {
  ScratchDir dir;
  const std::string store = dir / "results.h5";
  testing::write_text(store + ".slurm-jobs",
                      "clustersweep-slurm-jobs 1\nsubmission 2026-11-22T10:00:00Z 2\n"
                      "job array 100 /a.sbatch\njob merge 101 /m.sbatch\njob then 102 /t.sbatch\n");
  testing::write_text(store + ".slurm-100_0.out",
                      "starting\nprogress: 50.0%\r  progress: 75.0%\n\n");
  // Slurm answers a job array's id with its tasks.
  struct ArrayScheduler : testing::FakeScheduler {
    std::vector<JobState> query(const std::vector<std::string>&) override {
      return {{"100_0", "cs", "RUNNING", "", "1-02:03:04", "2-00:00:00", 1, "node1", ""},
              {"100_1", "cs", "PENDING", "Resources", "0:00", "2-00:00:00", 0, "", ""},
              {"101", "cs", "PENDING", "Dependency", "", "UNLIMITED", 0, "", ""}};
    }
  } array;
  const auto r = status_of(store, 0, array);
  ASSERT_EQ(r.jobs.size(), 4u);
  EXPECT_EQ(r.shards, 2u);
  EXPECT_FALSE(r.started());
  EXPECT_EQ(status_text(r),
            fmt::format("store:  {0}\n        not started: no store (or unfinished run of it) yet\n"
                        "jobs:   submitted 2026-11-22T10:00:00Z ({0}.slurm-jobs)\n"
                        "  array   100_0         RUNNING     1-02:03:04 of 2-00:00:00 on node1, "
                        "requeued 1 time\n"
                        "  array   100_1         PENDING     waiting for Resources\n"
                        "  merge   101           PENDING     waiting for Dependency\n"
                        "  then    102           unknown to Slurm (finished before MinJobAge and "
                        "no accounting?)\n"
                        "log:    {0}.slurm-100_0.out:   progress: 75.0%\n",
                        store));
  const auto json = status_json(r);
  EXPECT_EQ(json["schema"], "clustersweep-status/1");
  EXPECT_EQ(json["state"], "not started");
  EXPECT_EQ(json["shards"], 2);
  EXPECT_EQ(json["jobs"][0]["id"], "100_0");
  EXPECT_EQ(json["jobs"][0]["elapsed_s"], 93784);
  EXPECT_EQ(json["jobs"][0]["time_limit_s"], 172800);
  EXPECT_EQ(json["jobs"][0]["restarts"], 1);
  EXPECT_EQ(json["jobs"][1]["elapsed_s"], 0);
  EXPECT_TRUE(json["jobs"][2]["elapsed_s"].is_null());
  EXPECT_TRUE(json["jobs"][2]["time_limit_s"].is_null());
  EXPECT_EQ(json["jobs"][3]["role"], "then");
  EXPECT_TRUE(json["jobs"][3]["state"].is_null());
  EXPECT_EQ(json["log"]["last_line"], "  progress: 75.0%");
  EXPECT_TRUE(json["rate"].is_null());
}

TEST(Status, SaysWhySlurmCouldNotBeAsked) {
  ScratchDir dir;
  const std::string store = dir / "results.h5";
  testing::write_text(store + ".slurm-jobs",
                      "clustersweep-slurm-jobs 1\nsubmission 2026-11-22T10:00:00Z 0\n"
                      "job sweep 12 /x.sbatch\n");
  struct Broken : testing::FakeScheduler {
    std::vector<JobState> query(const std::vector<std::string>&) override {
      throw InputError("Slurm's client is missing: squeue not found on PATH");
    }
  } broken;
  const auto r = status_of(store, 0, broken);
  EXPECT_EQ(status_json(r)["slurm_problem"], "Slurm's client is missing: squeue not found on PATH");
  EXPECT_NE(status_text(r).find("  sweep   12            state unknown\n"), std::string::npos);
}

}  // namespace
}  // namespace clustersweep::slurm
