#include "slurm/script.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/slurm/test_util.h"

namespace clustersweep::slurm {
namespace {

using testing::ScratchDir;

SweepJob example_job() {
  SweepJob job;
  job.clustersweep = "/opt/cs/bin/clustersweep";
  job.spec = "/home/u/spec.toml";
  job.store = "/scratch/u/results.h5";
  job.job_name = "cs-results.h5";
  job.nodes = 2;
  job.ntasks_per_node = 4;
  job.time_limit_s = 2 * 3600;
  job.signal_margin_s = 300;
  job.partition = "gpu";
  job.account = "proj1";
  job.sbatch_args = {"--exclusive"};
  return job;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(SweepScript, AsksForTheSignalRequeueAndResources) {
  const auto s = sweep_script(example_job());
  EXPECT_TRUE(s.starts_with("#!/bin/bash\n"));
  for (const char* line :
       {"#SBATCH --job-name=cs-results.h5\n", "#SBATCH --nodes=2\n",
        "#SBATCH --ntasks-per-node=4\n", "#SBATCH --partition=gpu\n", "#SBATCH --account=proj1\n",
        "#SBATCH --time=02:00:00\n", "#SBATCH --output=/scratch/u/results.h5.slurm-%j.out\n",
        "#SBATCH --open-mode=append\n", "#SBATCH --signal=B:USR1@300\n", "#SBATCH --requeue\n",
        "#SBATCH --exclusive\n", "export HDF5_USE_FILE_LOCKING=FALSE\n", "trap on_usr1 USR1\n",
        "srun --mpi=pmix \"$clustersweep\" run \"$spec\" -o \"$store\" --resume &\n",
        "scontrol requeue \"$SLURM_JOB_ID\"", "clustersweep=/opt/cs/bin/clustersweep\n",
        "spec=/home/u/spec.toml\n", "store=/scratch/u/results.h5\n"})
    EXPECT_TRUE(contains(s, line)) << line << "\n---\n" << s;
  EXPECT_FALSE(contains(s, "--qos"));
  EXPECT_FALSE(contains(s, "--array"));
}

TEST(SweepScript, LaunchesWithMpirunWhenAsked) {
  auto job = example_job();
  job.launcher = Launcher::mpirun;
  const auto s = sweep_script(job);
  EXPECT_TRUE(contains(s, "mpirun \"$clustersweep\" run \"$spec\" -o \"$store\" --resume &\n"));
  EXPECT_FALSE(contains(s, "srun"));
}

TEST(SweepScript, ArrayTasksEachWriteTheirShard) {
  auto job = example_job();
  job.array = {16, 4};
  const auto s = sweep_script(job);
  EXPECT_TRUE(contains(s, "#SBATCH --array=0-15%4\n"));
  EXPECT_TRUE(contains(s, "#SBATCH --output=/scratch/u/results.h5.slurm-%A_%a.out\n"));
  EXPECT_TRUE(contains(s, "shard=\"$SLURM_ARRAY_TASK_ID/16\"\n"));
  EXPECT_TRUE(contains(
      s, "store=$(printf /scratch/u/results.shard-%02d-of-16.h5 \"$SLURM_ARRAY_TASK_ID\")\n"));
  EXPECT_TRUE(contains(s, "--shard \"$shard\" --resume &"));
  job.array = {3, 0};
  EXPECT_TRUE(contains(sweep_script(job), "#SBATCH --array=0-2\n"));
}

TEST(SweepScript, ShardPathsSortAndKeepTheExtension) {
  EXPECT_EQ(shard_path("/d/results.h5", 3, 16), "/d/results.shard-03-of-16.h5");
  EXPECT_EQ(shard_path("/d/results.h5", 0, 2), "/d/results.shard-0-of-2.h5");
  EXPECT_EQ(shard_path("/d/results.h5", 7, 10), "/d/results.shard-7-of-10.h5");
  EXPECT_EQ(shard_path("/d/results.h5", 10, 11), "/d/results.shard-10-of-11.h5");
  EXPECT_EQ(shard_path("/d/results", 1, 2), "/d/results.shard-1-of-2");
}

TEST(SweepScript, SegmentsDoNotRequeue) {
  auto job = example_job();
  job.continuation = Continuation::segments;
  const auto s = sweep_script(job);
  EXPECT_TRUE(contains(s, "#SBATCH --no-requeue\n"));
  EXPECT_TRUE(contains(s, "requeue=0\n"));
}

TEST(SweepScript, QuotesPathsAndEscapesPercentInTheLogName) {
  auto job = example_job();
  job.store = "/scratch/my runs/100%/results.h5";
  const auto s = sweep_script(job);
  EXPECT_TRUE(contains(s, "#SBATCH --output='/scratch/my runs/100%%/results.h5.slurm-%j.out'\n"))
      << s;
  EXPECT_TRUE(contains(s, "store='/scratch/my runs/100%/results.h5'\n"));
}

TEST(SignalMargin, IsATenthOfTheLimitWithinBounds) {
  EXPECT_EQ(default_signal_margin(60), 30u);
  EXPECT_EQ(default_signal_margin(3600), 360u);
  EXPECT_EQ(default_signal_margin(48 * 3600), 600u);
}

TEST(HelperScripts, MergeJoinsEveryShardAndAnalysisRunsNextToTheStore) {
  auto job = example_job();
  job.array = {3, 0};
  const auto merge = merge_script(job);
  EXPECT_TRUE(contains(merge, "#SBATCH --ntasks=1\n"));
  EXPECT_TRUE(contains(merge,
                       "exec /opt/cs/bin/clustersweep merge \\\n"
                       "  /scratch/u/results.shard-0-of-3.h5 \\\n"
                       "  /scratch/u/results.shard-1-of-3.h5 \\\n"
                       "  /scratch/u/results.shard-2-of-3.h5 \\\n"
                       "  -o /scratch/u/results.h5 --force\n"))
      << merge;
  const auto analysis =
      analysis_script(job, {"pareto", "--objectives", "a,b", "--svg", "front svg.svg"});
  EXPECT_TRUE(contains(analysis, "#SBATCH --job-name=cs-results.h5-pareto\n"));
  EXPECT_TRUE(contains(analysis, "#SBATCH --output=/scratch/u/results.h5.pareto-%j.out\n"));
  EXPECT_TRUE(contains(analysis, "cd /scratch/u\n"));
  EXPECT_TRUE(contains(analysis,
                       "exec /opt/cs/bin/clustersweep pareto /scratch/u/results.h5 --objectives "
                       "a,b --svg 'front svg.svg'\n"))
      << analysis;
}

// The generated scripts are valid bash.
TEST(Scripts, PassBashSyntaxCheck) {
  ScratchDir dir;
  auto job = example_job();
  job.store = "/scratch/it's here/results.h5";
  std::vector<std::string> scripts = {sweep_script(job), analysis_script(job, {"top", "-n", "5"})};
  job.array = {4, 2};
  scripts.push_back(sweep_script(job));
  scripts.push_back(merge_script(job));
  for (std::size_t i = 0; i < scripts.size(); ++i) {
    const auto path = dir / fmt::format("s{}.sh", i);
    testing::write_text(path, scripts[i]);
    EXPECT_EQ(testing::shell("bash -n " + path), 0) << scripts[i];
  }
}

// Runs the sweep script under bash with fake srun/scontrol and a fake sweep, sends the batch shell
// SIGUSR1 (as Slurm does near the time limit) when `signal` is set, and returns the script's
// exit code; `calls` receives what scontrol was asked.
struct ScriptRun {
  int exit_code = -1;
  std::string scontrol_calls;
  std::string sweep_args;
  std::string log;
};

ScriptRun run_script(const SweepJob& base, const std::string& sweep_behaviour, bool signal,
                     int restart_count = 0) {
  ScratchDir dir;
  const std::string bin = dir / "bin";
  std::filesystem::create_directory(bin);
  testing::write_text(bin + "/srun",
                      "#!/bin/bash\n[[ $1 == --mpi=pmix ]] || exit 99\nshift\nexec \"$@\"\n", true);
  testing::write_text(bin + "/scontrol",
                      fmt::format("#!/bin/bash\necho \"$*\" >> {}\n", dir / "scontrol.calls"),
                      true);
  // The fake sweep records its arguments, says it started, then behaves as asked; asked for the
  // store's status, it is complete once the behaviour touched `complete`.
  testing::write_text(
      dir / "sweep",
      fmt::format("#!/bin/bash\n"
                  "if [[ $1 == status ]]; then\n"
                  "  [[ -e {0} ]] && echo '  \"state\": \"complete\",'\n  exit 0\nfi\n"
                  "echo \"$*\" > {1}\ntrap 'exit 75' USR1\ntouch {2}\n{3}\n",
                  dir / "complete", dir / "sweep.args", dir / "started", sweep_behaviour),
      true);
  SweepJob job = base;
  job.clustersweep = dir / "sweep";
  job.spec = dir / "spec.toml";
  job.store = dir / "results.h5";
  job.max_requeues = 3;
  testing::write_text(dir / "job.sh", sweep_script(job));
  const std::string driver = fmt::format(
      "cd {0} && export PATH={1}:$PATH SLURM_JOB_ID=42 SLURM_ARRAY_TASK_ID=2 "
      "SLURM_RESTART_COUNT={2}; "
      "bash job.sh > log 2>&1 & pid=$!; "
      "for i in $(seq 200); do [ -e started ] && break; sleep 0.05; done; "
      "{3} wait $pid; echo $? > rc",
      dir.path(), bin, restart_count, signal ? "sleep 0.2; kill -USR1 $pid;" : "");
  EXPECT_EQ(testing::shell("bash -c '" + driver + "'"), 0);
  ScriptRun run;
  run.exit_code = std::stoi(testing::read_text(dir / "rc"));
  run.scontrol_calls = testing::read_text(dir / "scontrol.calls");
  run.sweep_args = testing::read_text(dir / "sweep.args");
  run.log = testing::read_text(dir / "log");
  return run;
}

constexpr const char* kRunsUntilSignalled = "while :; do sleep 0.05; done";

TEST(SweepScriptBehaviour, OnTheTimeLimitSignalCheckpointsAndRequeues) {
  const auto run = run_script(example_job(), kRunsUntilSignalled, true);
  EXPECT_EQ(run.exit_code, 75) << run.log;
  EXPECT_EQ(run.scontrol_calls, "requeue 42\n") << run.log;
  EXPECT_TRUE(run.sweep_args.starts_with("run ")) << run.sweep_args;
  EXPECT_TRUE(run.sweep_args.ends_with(" --resume\n")) << run.sweep_args;
  EXPECT_TRUE(contains(run.log, "time limit near, checkpointing")) << run.log;
  EXPECT_TRUE(contains(run.log, "requeueing job 42 to resume")) << run.log;
}

constexpr const char* kCompletes = "touch complete; exit 0";

TEST(SweepScriptBehaviour, ACompleteSweepEndsTheJob) {
  const auto run = run_script(example_job(), kCompletes, false);
  EXPECT_EQ(run.exit_code, 0) << run.log;
  EXPECT_EQ(run.scontrol_calls, "");
  EXPECT_TRUE(contains(run.log, "sweep complete")) << run.log;
}

// srun exits 0 when a node fails as the step launches and no task runs: the store, not complete,
// says the sweep did not finish, and the job is requeued to resume it.
TEST(SweepScriptBehaviour, ALauncherThatExitsZeroBeforeTheSweepFinishedRequeues) {
  const auto run = run_script(example_job(), "exit 0", false);
  EXPECT_EQ(run.exit_code, 75) << run.log;
  EXPECT_EQ(run.scontrol_calls, "requeue 42\n") << run.log;
  EXPECT_TRUE(contains(run.log,
                       "is not complete (a task that never started?); resuming it as an "
                       "interrupted run"))
      << run.log;
  EXPECT_FALSE(contains(run.log, "sweep complete")) << run.log;
}

TEST(SweepScriptBehaviour, AFailedSweepIsNotRequeued) {
  const auto run = run_script(example_job(), "exit 2", false);
  EXPECT_EQ(run.exit_code, 2) << run.log;
  EXPECT_EQ(run.scontrol_calls, "");
  EXPECT_TRUE(contains(run.log, "sweep failed with exit code 2")) << run.log;
}

TEST(SweepScriptBehaviour, AnInterruptedSweepIsRequeuedEvenWithoutOurSignal) {
  const auto run = run_script(example_job(), "exit 75", false);
  EXPECT_EQ(run.exit_code, 75) << run.log;
  EXPECT_EQ(run.scontrol_calls, "requeue 42\n") << run.log;
}

TEST(SweepScriptBehaviour, SegmentsLeaveTheResumeToTheNextJob) {
  auto job = example_job();
  job.continuation = Continuation::segments;
  const auto run = run_script(job, kRunsUntilSignalled, true);
  EXPECT_EQ(run.exit_code, 75) << run.log;
  EXPECT_EQ(run.scontrol_calls, "");
  EXPECT_TRUE(contains(run.log, "the next job of the chain resumes")) << run.log;
}

TEST(SweepScriptBehaviour, StopsRequeueingAfterTheLimit) {
  const auto run = run_script(example_job(), kRunsUntilSignalled, true, 3);
  EXPECT_EQ(run.exit_code, 75) << run.log;
  EXPECT_EQ(run.scontrol_calls, "");
  EXPECT_TRUE(contains(run.log, "requeued 3 times already; resubmit to continue")) << run.log;
}

TEST(SweepScriptBehaviour, ArrayTaskRunsItsShard) {
  auto job = example_job();
  job.array = {4, 0};
  const auto run = run_script(job, kCompletes, false);
  EXPECT_EQ(run.exit_code, 0) << run.log;
  EXPECT_TRUE(contains(run.sweep_args, "/results.shard-2-of-4.h5 --shard 2/4 --resume\n"))
      << run.sweep_args;
}

}  // namespace
}  // namespace clustersweep::slurm
