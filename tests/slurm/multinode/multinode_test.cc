// `clustersweep submit --nodes 3` on a real Slurm cluster of three nodes, each in its own network
// and UTS namespace (scripts/multinode-slurm.sh), Open MPI between them over TCP: whole runs in
// every keep mode, a node that dies mid-run and returns, a time-limit signal that must reach the
// ranks on every node, and an array of shards on different nodes; each ends with the data of a
// one-host mpirun run.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
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
using testing::LocalSlurm;
using testing::logs;
using testing::read_text;
using testing::ScratchDir;
namespace fs = std::filesystem;

const std::string kQuick = testing::kSource + "/examples/quick.toml";
const std::string kRequeue = testing::kSource + "/tests/slurm/requeue.toml";

// A copy of `spec` in `dir` with `[output]` as given.
std::string with_output(const ScratchDir& dir, const std::string& spec, const std::string& name,
                        const std::string& output) {
  std::string text = read_text(spec);
  const auto at = text.find("[output]");
  if (at != std::string::npos) text.erase(at);
  const std::string path = dir / name;
  std::ofstream(path) << text << "\n[output]\n" << output << "\n";
  return path;
}

// Submits `spec` on the three nodes, one rank each, ranks started by srun (PMIx).
ProcessResult submit(const ScratchDir& dir, const std::string& spec,
                     std::vector<std::string> more = {}) {
  std::vector<std::string> args = {
      "submit", spec,         "-o",  dir / "results.h5", "--nodes", "3", "--ntasks-per-node",
      "1",      "--launcher", "srun"};
  if (std::find(more.begin(), more.end(), "--time") == more.end())
    more.insert(more.end(), {"--time", "00:10:00"});
  args.insert(args.end(), more.begin(), more.end());
  return clustersweep(args);
}

// Submits the sweep's own script (`dir`/results.h5.sbatch) again, the documented way on after a
// failed job: the new job's id, or "" (a test failure) when sbatch refuses it.
std::string resubmit(const ScratchDir& dir) {
  const auto again = run_process({"sbatch", "--parsable", dir / "results.h5.sbatch"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  return again.exit_code == 0 ? first_line(again.out) : std::string();
}

// Waits at most `timeout_s` for sweep job `id`, submitted by submit() from `dir`. A rank can die
// inside MPI_Init here, before any clustersweep code runs: a peer on another node left MPI_Init
// and sent its first message while this rank still waited in Open MPI's first PMIx fence, and ob1
// had no handler for it yet (Open MPI 4.1.4 over TCP, Slurm 22.05's mpi/pmix, a loaded machine;
// docs/slurm.md, "Across nodes"). Its segmentation fault shows in the job's log while the other
// ranks wait for it until the time limit. Such a job is cancelled and its script submitted again,
// once, the documented way on (it resumes from the store); `id` becomes that job.
testing::Waited wait_for_sweep(const ScratchDir& dir, std::string& id, double timeout_s) {
  const auto crashed = [&] {
    return contains(read_text(dir / fmt::format("results.h5.slurm-{}.out", id)),
                    "Segmentation fault");
  };
  testing::Waited waited = testing::wait_for_jobs({id}, timeout_s, crashed);
  if (waited.timed_out || !crashed() ||
      (!waited.stopped && !waited.jobs.empty() && waited.jobs[0].state == "COMPLETED"))
    return waited;
  std::fprintf(stderr, "a rank of job %s died inside MPI_Init; resubmitting its script\n",
               id.c_str());
  run_process({"scancel", id});
  testing::wait_for_jobs({id}, 120);
  const std::string again = resubmit(dir);
  if (again.empty()) return waited;
  id = again;
  return testing::wait_for_jobs({id}, timeout_s);
}

#define REQUIRE_MULTINODE_SLURM()                                                \
  do {                                                                           \
    if (LocalSlurm::get() == nullptr) GTEST_SKIP() << LocalSlurm::skip_reason(); \
  } while (0)

TEST(AcrossNodes, EveryKeepModeEndsWithTheDataOfAOneHostRun) {
  REQUIRE_MULTINODE_SLURM();
  const std::pair<const char*, const char*> modes[] = {
      {"all", "keep = \"all\""},
      {"compressed", "keep = \"all\"\ncompression = \"fast\""},
      {"best", "keep = \"best-per-design\"\nobjective = \"time_to_train\""}};
  for (const auto& [name, output] : modes) {
    SCOPED_TRACE(name);
    ScratchDir dir;
    const std::string spec = with_output(dir, kQuick, "spec.toml", output);
    const auto reference = testing::mpirun_sweep(spec, dir / "reference.h5", 3);
    ASSERT_EQ(reference.exit_code, 0) << reference.err;
    const auto submitted = submit(dir, spec);
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    std::string id = first_line(submitted.out);
    const auto waited = wait_for_sweep(dir, id, 300);
    ASSERT_FALSE(waited.timed_out) << jobs_text(waited) << logs(dir.path());
    ASSERT_EQ(waited.jobs.size(), 1u);
    EXPECT_EQ(waited.jobs[0].state, "COMPLETED") << jobs_text(waited) << logs(dir.path());
    const std::string log = read_text(dir / fmt::format("results.h5.slurm-{}.out", id));
    // Three ranks on three hosts.
    EXPECT_TRUE(contains(log, "on n[1-3]")) << log;
    EXPECT_TRUE(contains(log, "on 3 ranks")) << log;
    EXPECT_EQ(testing::store_difference(dir / "reference.h5", dir / "results.h5"), "")
        << logs(dir.path());
  }
}

// Waits until the job runs and its store has some chunks done, reporting `status` then.
std::string wait_until_under_way(const std::string& store) {
  for (int i = 0; i < 600; ++i) {
    const auto status = clustersweep({"status", store, "--interval", "0"});
    if (contains(status.out, "RUNNING") && contains(status.out, "unfinished") &&
        !contains(status.out, "points: 0 of"))
      return status.out;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return "";
}

// Whether Slurm marks `node` down within `timeout_s`.
bool node_down(const std::string& node, int timeout_s) {
  for (int i = 0; i < timeout_s * 2; ++i) {
    const auto state = run_process({"sinfo", "-h", "-n", node, "-o", "%t"}).out;
    // "down*", not only "*" (not responding): a node back before Slurm declared it down leaves
    // the job running with ranks that wait for their lost peer.
    if (contains(state, "down")) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return false;
}

// The reference run of `spec` on one rank, alongside the Slurm job (one core each); joined
// however the test ends.
class ReferenceRun {
 public:
  ReferenceRun(const std::string& spec, const std::string& store)
      : thread_([this, spec, store] { result_ = testing::mpirun_sweep(spec, store, 1); }) {}
  ~ReferenceRun() {
    if (thread_.joinable()) thread_.join();
  }
  const ProcessResult& result() {
    if (thread_.joinable()) thread_.join();
    return result_;
  }

 private:
  ProcessResult result_;
  std::thread thread_;
};

TEST(AcrossNodes, ANodeThatDiesMidRunEndsWithTheDataOfAnUninterruptedRun) {
  REQUIRE_MULTINODE_SLURM();
  ScratchDir dir;
  const std::string spec = dir / "requeue.toml";
  fs::copy_file(kRequeue, spec);
  ReferenceRun reference(spec, dir / "reference.h5");
  const auto began = std::chrono::steady_clock::now();
  const auto submitted = submit(dir, spec);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const std::string id = first_line(submitted.out);
  // `status` while it runs: the job on the three nodes and the store's progress.
  const std::string status = wait_until_under_way(dir / "results.h5");
  ASSERT_FALSE(status.empty()) << logs(dir.path());
  EXPECT_TRUE(contains(status, "on n[1-3]")) << status;

  // Node n2 dies: its slurmd and its rank, SIGKILL. Slurm either requeues the job (it marks the
  // node down first) or the job fails with the MPI job's exit; the documented path for the
  // second is to submit the job's script again (docs/slurm.md, "Across nodes").
  const auto killed = LocalSlurm::get()->script("kill-node", "2");
  ASSERT_EQ(killed.exit_code, 0) << killed.err;
  // The node returns once Slurm has seen it die (SlurmdTimeout, 10 s here): a node back before
  // that would leave the controller believing the job still runs there.
  ASSERT_TRUE(node_down("n2", 120))
      << run_process({"scontrol", "show", "node", "n2"}).out << logs(dir.path());
  const auto revived = LocalSlurm::get()->script("revive-node", "2");
  ASSERT_EQ(revived.exit_code, 0) << revived.err;
  auto waited = testing::wait_for_jobs({id}, 300);
  ASSERT_FALSE(waited.timed_out) << jobs_text(waited) << logs(dir.path());
  std::string last = id;
  const std::string first_end = waited.jobs.at(0).state;
  const char* path = waited.jobs.at(0).restarts > 0 ? "requeued by Slurm" : "finished";
  if (waited.jobs.at(0).state != "COMPLETED") {
    path = "resubmitted (sbatch results.h5.sbatch)";
    last = resubmit(dir);
    ASSERT_FALSE(last.empty());
    waited = testing::wait_for_jobs({last}, 300);
    ASSERT_FALSE(waited.timed_out) << jobs_text(waited) << logs(dir.path());
  }
  EXPECT_EQ(waited.jobs.at(0).state, "COMPLETED") << jobs_text(waited) << logs(dir.path());
  ASSERT_EQ(reference.result().exit_code, 0) << reference.result().err;
  EXPECT_EQ(testing::store_difference(dir / "reference.h5", dir / "results.h5"), "")
      << logs(dir.path());
  std::fprintf(stderr, "node-death test: the job ended %s, %s; %.0f s\n", first_end.c_str(), path,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count());
}

TEST(AcrossNodes, ATimeLimitSignalReachesTheRanksOnEveryNode) {
  REQUIRE_MULTINODE_SLURM();
  ScratchDir dir;
  const std::string spec = dir / "requeue.toml";
  fs::copy_file(kRequeue, spec);
  ReferenceRun reference(spec, dir / "reference.h5");
  // As the single-node requeue test: one minute, SIGUSR1 55 s before its end.
  const auto submitted = submit(dir, spec, {"--time", "1", "--signal-margin", "55"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  std::string id = first_line(submitted.out);
  const auto waited = wait_for_sweep(dir, id, 480);
  ASSERT_FALSE(waited.timed_out) << jobs_text(waited) << logs(dir.path());
  ASSERT_EQ(reference.result().exit_code, 0) << reference.result().err;
  EXPECT_EQ(waited.jobs.at(0).state, "COMPLETED") << logs(dir.path());
  const std::string log = read_text(dir / fmt::format("results.h5.slurm-{}.out", id));
  // Every rank stopped for the signal: the sweep checkpointed (exit 75) rather than failing, which
  // it would if a rank on another node had missed it.
  if (waited.jobs.at(0).restarts > 0) {
    EXPECT_TRUE(contains(log, "SIGUSR1")) << log;
    EXPECT_TRUE(contains(log, fmt::format("requeueing job {} to resume", id))) << log;
  }
  EXPECT_FALSE(contains(log, "sweep failed")) << log;
  EXPECT_EQ(testing::store_difference(dir / "reference.h5", dir / "results.h5"), "")
      << logs(dir.path());
}

TEST(AcrossNodes, ShardsOnDifferentNodesMergeIntoTheSingleRunsData) {
  REQUIRE_MULTINODE_SLURM();
  ScratchDir dir;
  const auto reference = testing::mpirun_sweep(kQuick, dir / "reference.h5", 3);
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  const auto submitted =
      clustersweep({"submit", kQuick, "-o", dir / "results.h5", "--nodes", "1", "--ntasks-per-node",
                    "1", "--time", "00:05:00", "--array", "3", "--launcher", "srun"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const auto record = read_job_record(dir / "results.h5");
  ASSERT_EQ(record.size(), 1u);
  ASSERT_EQ(record[0].jobs.size(), 2u);
  const auto waited = testing::wait_for_jobs({record[0].jobs[0].id, record[0].jobs[1].id}, 300);
  ASSERT_FALSE(waited.timed_out) << jobs_text(waited) << logs(dir.path());
  for (const auto& j : waited.jobs)
    EXPECT_EQ(j.state, "COMPLETED") << jobs_text(waited) << logs(dir.path());
  EXPECT_EQ(testing::store_difference(dir / "reference.h5", dir / "results.h5"), "")
      << logs(dir.path());
  // Each shard's log names the node it ran on: the three ran on more than one.
  std::set<std::string> hosts;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    const std::string text = read_text(entry.path().string());
    for (const char* host : {"on n1\n", "on n2\n", "on n3\n"})
      if (entry.path().extension() == ".out" && contains(text, host)) hosts.insert(host);
  }
  EXPECT_GE(hosts.size(), 2u) << logs(dir.path());
}

}  // namespace
}  // namespace clustersweep::slurm
