// `clustersweep submit`, `status` and `merge` end to end, without a Slurm cluster: everything they
// must refuse before submitting, and what they print.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/format.h"
#include "slurm/process.h"
#include "tests/slurm/test_util.h"

namespace clustersweep::slurm {
namespace {

using testing::ScratchDir;
namespace fs = std::filesystem;

const std::string kSource = CLUSTERSWEEP_SOURCE_DIR;
const std::string kTiny = kSource + "/tests/slurm/tiny.toml";

// `clustersweep ARGS...` with PATH set to `path` (the Slurm clients are looked up there).
ProcessResult clustersweep(std::vector<std::string> args,
                           const std::string& path = "/usr/bin:/bin") {
  args.insert(args.begin(), {"env", "PATH=" + path, CLUSTERSWEEP_BINARY});
  return run_process(args);
}

// submit with the required options, of which `extra` may replace some.
std::vector<std::string> submit_args(const ScratchDir& dir, std::vector<std::string> extra) {
  std::vector<std::string> args = {"submit", kTiny, "-o", dir / "results.h5"};
  for (const auto& [flag, value] :
       {std::pair{"--nodes", "1"}, {"--ntasks-per-node", "2"}, {"--time", "00:10:00"}})
    if (std::find(extra.begin(), extra.end(), flag) == extra.end())
      args.insert(args.end(), {flag, value});
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// A fake sbatch that records its arguments and prints a job id (or refuses, for `refuse`).
std::string fake_slurm(const ScratchDir& dir, bool refuse = false) {
  const std::string bin = dir / "fakebin";
  fs::create_directory(bin);
  // squeue says the job it was asked about runs.
  testing::write_text(bin + "/squeue", "#!/bin/sh\necho '77|cs|RUNNING|None|0:10|10:00|0|vm|'\n",
                      true);
  testing::write_text(
      bin + "/sbatch",
      refuse ? "#!/bin/sh\necho 'sbatch: error: Batch job submission failed: Invalid account "
               "or account/partition combination specified' >&2\nexit 1\n"
             : fmt::format("#!/bin/sh\necho \"$@\" >> {}\necho 77\n", dir / "sbatch.calls"),
      true);
  return bin + ":/usr/bin:/bin";
}

struct Refusal {
  std::vector<std::string> extra;
  std::string message;
};

TEST(SubmitCli, RefusesBadInputBeforeWritingOrSubmittingAnything) {
  const std::vector<Refusal> cases = {
      {{"--time", "2h"},
       "--time: expected one of sbatch's forms MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS "
       "(for example 90, 02:30:00 or 1-12), with minutes and seconds below 60 and hours below 24 "
       "after a day count, got '2h'"},
      {{"--time", "00:61:00"},
       "--time: expected one of sbatch's forms MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS "
       "(for example 90, 02:30:00 or 1-12), with minutes and seconds below 60 and hours below 24 "
       "after a day count, got '00:61:00'"},
      {{"--time", "0"},
       "--time: a job of clustersweep needs a time limit; got '0' (to Slurm, no limit at all)"},
      {{"--then", "summary", "--then-time", "soon"},
       "--then-time: expected one of sbatch's forms MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or "
       "D-HH:MM:SS (for example 90, 02:30:00 or 1-12), with minutes and seconds below 60 and "
       "hours below 24 after a day count, got 'soon'"},
      {{"--nodes", "0"}, "--nodes: expected a whole number from 1 to 1048576, got '0'"},
      {{"--nodes", "two"}, "--nodes: expected a whole number from 1 to 1048576, got 'two'"},
      {{"--ntasks-per-node", "-1"},
       "--ntasks-per-node: expected a whole number from 1 to 1048576, got '-1'"},
      {{"--launcher", "aprun"}, "--launcher: expected srun or mpirun, got 'aprun'"},
      {{"--mem", "lots"}, "--mem: expected a size such as 64G or 4000M, got 'lots'"},
      {{"--signal-margin", "600"},
       "--signal-margin: 600 s must be shorter than the time limit (00:10:00)"},
      {{"--sbatch-arg", "exclusive"},
       "--sbatch-arg: expected one sbatch option such as --exclusive or --gres=gpu:4, got "
       "'exclusive'"},
      {{"--array", "4", "--segments", "2"},
       "--segments and --array cannot be combined: array tasks requeue themselves"},
      {{"--array", "9"},
       "--array: 9 shards for 8 designs; a shard is a range of designs, so use at most 8"},
      {{"--array", "4%0"},
       "--array: expected K or K%T, K shards of which at most T run at once (for example 16%4), "
       "got '4%0'"},
      {{"--then", "pareto 'x"}, "--then: unterminated single quote in 'pareto 'x'"},
      {{"--resume", "--force"}, "--resume and --force cannot be combined"},
  };
  for (const auto& c : cases) {
    ScratchDir dir;
    const auto r = clustersweep(submit_args(dir, c.extra), fake_slurm(dir));
    EXPECT_EQ(r.exit_code, 2) << c.message;
    EXPECT_EQ(r.err, "clustersweep submit: error: " + c.message + "\n");
    EXPECT_FALSE(fs::exists(dir / "results.h5.sbatch")) << c.message;
    EXPECT_FALSE(fs::exists(dir / "sbatch.calls")) << c.message;
  }
}

TEST(SubmitCli, RefusesABadSpecWithTheSpecsOwnError) {
  ScratchDir dir;
  testing::write_text(dir / "bad.toml", "[cluster]\ngpu = \"H100-SXM5-80GB\"\nnodes = [1]\n");
  auto args = submit_args(dir, {});
  args[1] = dir / "bad.toml";
  const auto r = clustersweep(args, fake_slurm(dir));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.err.starts_with("clustersweep submit: error: " + (dir / "bad.toml") + ":"))
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "results.h5.sbatch"));
}

TEST(SubmitCli, SaysWhenSlurmsClientIsMissing) {
  ScratchDir dir;
  const auto r = clustersweep(submit_args(dir, {}), "/nonexistent");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "clustersweep submit: error: Slurm's client is missing: sbatch not found on PATH\n");
  EXPECT_FALSE(fs::exists(dir / "results.h5.sbatch"));
}

TEST(SubmitCli, ShowsSlurmsMessageWhenItRefuses) {
  ScratchDir dir;
  const auto r = clustersweep(submit_args(dir, {"--account", "nobody"}), fake_slurm(dir, true));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "clustersweep submit: error: Slurm refused the job: sbatch: error: Batch job "
            "submission failed: "
            "Invalid account or account/partition combination specified\n");
  EXPECT_EQ(r.out, "");
  // Nothing it wrote stays behind: not the frozen spec, not the script.
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir.path()))
    if (entry.path().filename() != "fakebin") left.push_back(entry.path().filename());
  EXPECT_EQ(left, std::vector<std::string>{}) << fmt::format("{}", fmt::join(left, " "));
}

// The jobs run a frozen, read-only copy of the spec next to the store, and of the calibration file
// it names: the originals may change or go while the sweep waits or requeues.
TEST(SubmitCli, TheJobsRunAFrozenCopyOfTheSpecAndItsCalibration) {
  ScratchDir dir;
  const std::string calibration = dir / "mine.toml";
  testing::write_text(calibration, "format_version = 1\n[calibration]\nhbm_eff = 0.5\n");
  const std::string spec = dir / "spec.toml";
  std::string text = testing::read_text(kTiny);
  text.insert(text.find("[models.tiny]"), "calibration = \"mine.toml\"  # relative to the spec\n");
  testing::write_text(spec, text);
  auto args = submit_args(dir, {});
  args[1] = spec;
  const auto dry = clustersweep(
      [&] {
        auto a = args;
        a.push_back("--dry-run");
        return a;
      }(),
      "/nonexistent");
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find(fmt::format("\nspec={}.spec.toml\n", dir / "results.h5")),
            std::string::npos)
      << dry.out;
  // The original path appears in comments only.
  std::istringstream lines(dry.out);
  for (std::string line; std::getline(lines, line);)
    if (line.find(spec) != std::string::npos) {
      EXPECT_TRUE(line.starts_with("#")) << line;
    }

  const auto r = clustersweep(args, fake_slurm(dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string frozen = dir / "results.h5.spec.toml";
  const std::string frozen_calibration = dir / "results.h5.calibration.toml";
  EXPECT_EQ(testing::read_text(frozen_calibration), testing::read_text(calibration));
  std::string expected = text;
  expected.replace(expected.find("\"mine.toml\""), 11, "'" + frozen_calibration + "'");
  EXPECT_EQ(testing::read_text(frozen), expected);
  for (const auto& path : {frozen, frozen_calibration})
    EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  // The originals gone, the frozen spec still runs, with the frozen calibration.
  fs::remove(spec);
  fs::remove(calibration);
  const auto run = clustersweep({"plan", frozen});
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

TEST(SubmitCli, TimeLimitsInSbatchsFormsAreWrittenNormalisedAndAnalysisHasItsOwn) {
  ScratchDir dir;
  auto dry = [&](std::vector<std::string> extra) {
    extra.push_back("--dry-run");
    const auto r = clustersweep(submit_args(dir, extra), "/nonexistent");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  const std::string minutes = dry({"--time", "90", "--then", "summary"});
  const auto sweep_at = minutes.find("#SBATCH --time=01:30:00\n");
  const auto then_at = minutes.find("#SBATCH --time=00:05:00\n");  // a tiny store: the floor
  EXPECT_NE(sweep_at, std::string::npos) << minutes;
  EXPECT_NE(then_at, std::string::npos) << minutes;
  EXPECT_LT(sweep_at, minutes.find("(then)"));
  EXPECT_GT(then_at, minutes.find("(then)"));
  EXPECT_NE(dry({"--time", "1-00"}).find("#SBATCH --time=1-00:00:00\n"), std::string::npos);
  EXPECT_NE(dry({"--time", "3", "--then", "summary"}).find("#SBATCH --time=00:03:00\n"),
            std::string::npos);  // never longer than the sweep's
  const std::string own = dry({"--then", "summary", "--then-time", "45:00"});
  EXPECT_NE(own.find("#SBATCH --time=00:45:00\n"), std::string::npos) << own;
}

TEST(SubmitCli, WarnsInOneLineWhenTheRequestDwarfsTheForecast) {
  ScratchDir dir;
  const auto big = submit_args(
      dir, {"--nodes", "4", "--ntasks-per-node", "64", "--time", "4:00:00", "--dry-run"});
  const auto r = clustersweep(big, "/nonexistent");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The figures come from a timed sample; what the request is and what would do are fixed.
  EXPECT_TRUE(r.err.starts_with("clustersweep submit: warning: the forecast puts this sweep at "))
      << r.err;
  EXPECT_TRUE(
      r.err.ends_with(" on 256 ranks): 4 nodes x 64 ranks x 04:00:00 is over 10x that; "
                      "--time 00:01:00 on 1 rank would do (--quiet silences this)\n"))
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  auto quiet = big;
  quiet.push_back("--quiet");
  const auto q = clustersweep(quiet, "/nonexistent");
  EXPECT_EQ(q.exit_code, 0);
  EXPECT_EQ(q.err, "");
  EXPECT_NE(q.out.find("#SBATCH --ntasks-per-node=64\n"), std::string::npos);
  // A request the size of the sweep goes through without a word.
  const auto fit = clustersweep(
      submit_args(dir, {"--ntasks-per-node", "1", "--time", "1", "--dry-run"}), "/nonexistent");
  EXPECT_EQ(fit.exit_code, 0);
  EXPECT_EQ(fit.err, "");
}

TEST(SubmitCli, NeverClobbersAnExistingStore) {
  ScratchDir dir;
  testing::write_text(dir / "results.h5", "precious");
  const auto r = clustersweep(submit_args(dir, {}), fake_slurm(dir));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(
      r.err,
      fmt::format("clustersweep submit: error: {} already exists; pass --resume to continue it or "
                  "--force to start over\n",
                  dir / "results.h5"));
  EXPECT_EQ(testing::read_text(dir / "results.h5"), "precious");
  // Nor continues an unfinished run silently: the job always resumes.
  ScratchDir other;
  testing::write_text(other / "results.h5.partial", "unfinished");
  const auto partial = clustersweep(submit_args(other, {}), fake_slurm(other));
  EXPECT_EQ(partial.exit_code, 2);
  EXPECT_EQ(partial.err,
            fmt::format("clustersweep submit: error: {}.partial already exists; pass --resume to "
                        "continue it or --force to start over\n",
                        other / "results.h5"));
  // --force starts over.
  const auto forced = clustersweep(submit_args(other, {"--force"}), fake_slurm(other));
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_FALSE(fs::exists(other / "results.h5.partial"));
  // --resume submits a job that continues the store.
  const auto resumed = clustersweep(submit_args(dir, {"--resume"}), fake_slurm(dir));
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(testing::read_text(dir / "results.h5"), "precious");
}

TEST(SubmitCli, SubmitsWithSbatchParsableAndPrintsTheJobId) {
  ScratchDir dir;
  const auto r = clustersweep(submit_args(dir, {"--then", "summary"}), fake_slurm(dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "77\n");
  EXPECT_EQ(
      testing::read_text(dir / "sbatch.calls"),
      fmt::format(
          "--parsable {0}.sbatch\n--parsable --dependency=afterok:77 --kill-on-invalid-dep=yes "
          "{0}.then-1.sbatch\n",
          dir / "results.h5"));
  EXPECT_NE(testing::read_text(dir / "results.h5.sbatch").find("#SBATCH --signal=B:USR1@60\n"),
            std::string::npos);
  EXPECT_NE(testing::read_text(dir / "results.h5.slurm-jobs").find("job sweep 77 "),
            std::string::npos);
}

TEST(SubmitCli, RefusesWhileAJobOfTheStoreMayStillRun) {
  ScratchDir dir;
  ASSERT_EQ(clustersweep(submit_args(dir, {}), fake_slurm(dir)).exit_code, 0);
  const auto again = clustersweep(submit_args(dir, {"--resume"}), fake_slurm(dir));
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_EQ(
      again.err,
      fmt::format("clustersweep submit: error: {} is still being written by job 77 (RUNNING); wait "
                  "for it or scancel it first\n",
                  dir / "results.h5"));
}

TEST(SubmitCli, DryRunPrintsTheScriptsAndWritesNothing) {
  ScratchDir dir;
  const auto r = clustersweep(submit_args(dir, {"--array", "4%2", "--dry-run"}), "/nonexistent");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with(
      fmt::format("# ---- {0}.sbatch (array): sbatch --parsable {0}.sbatch\n#!/bin/bash\n",
                  dir / "results.h5")))
      << r.out;
  EXPECT_NE(r.out.find("#SBATCH --array=0-3%2\n"), std::string::npos);
  EXPECT_NE(r.out.find(fmt::format(
                "# ---- {0}.merge.sbatch (merge): sbatch --parsable --dependency=afterok:<job 1> "
                "--kill-on-invalid-dep=yes {0}.merge.sbatch\n",
                dir / "results.h5")),
            std::string::npos)
      << r.out;
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

// A complete results.h5 in `dir`, with a job record naming its sweep job `id`.
void complete_store_with_job(const ScratchDir& dir, const std::string& id) {
  const auto run =
      clustersweep({"run", kTiny, "-o", dir / "results.h5", "--progress", "none", "--no-summary"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  testing::write_text(dir / "results.h5.slurm-jobs",
                      "clustersweep-slurm-jobs 1\nsubmission 2026-11-22T10:00:00Z 0\njob sweep " +
                          id + " /x.sbatch\n");
}

TEST(StatusCli, ReportsAStoreWithoutJobs) {
  ScratchDir dir;
  const auto r = clustersweep({"status", dir / "results.h5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            fmt::format("store:  {0}\n        not started: no store (or unfinished run of it) yet\n"
                        "jobs:   none recorded ({0}.slurm-jobs does not exist)\n",
                        dir / "results.h5"));
}

TEST(StatusCli, ReportsACompleteStoreAndSaysWhenSlurmCannotBeAsked) {
  ScratchDir dir;
  ASSERT_NO_FATAL_FAILURE(complete_store_with_job(dir, "12"));
  const auto r = clustersweep({"status", dir / "results.h5"}, "/nonexistent");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("points: 1,024 of 1,024 (100.0%), "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("; complete\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("jobs:   submitted 2026-11-22T10:00:00Z"), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find("        cannot ask Slurm: Slurm's client is missing: squeue not found on PATH\n"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  sweep   12            state unknown\n"), std::string::npos) << r.out;
}

TEST(StatusCli, JsonSaysWhatTheTextSays) {
  ScratchDir dir;
  ASSERT_NO_FATAL_FAILURE(complete_store_with_job(dir, "77"));
  const auto text = clustersweep({"status", dir / "results.h5"}, fake_slurm(dir));
  const auto r = clustersweep({"status", dir / "results.h5", "--json"}, fake_slurm(dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["schema"], "clustersweep-status/1");
  EXPECT_EQ(json["state"], "complete");
  EXPECT_EQ(json["points"], 1024);
  EXPECT_EQ(json["points_done"], 1024);
  EXPECT_EQ(json["rate"]["measured"], "the run that finished the store");
  EXPECT_NE(
      text.out.find(fmt::format(
          "rate:   {} points/s",
          with_commas(static_cast<std::uint64_t>(json["rate"]["points_per_s"].get<double>())))),
      std::string::npos)
      << text.out;
  EXPECT_EQ(json["jobs"][0]["state"], "RUNNING");
  EXPECT_EQ(json["jobs"][0]["elapsed_s"], 10);
  EXPECT_EQ(json["jobs"][0]["time_limit_s"], 600);
  EXPECT_NE(text.out.find("  sweep   77            RUNNING     0:10 of 10:00 on vm\n"),
            std::string::npos)
      << text.out;
}

}  // namespace
}  // namespace clustersweep::slurm
