// Numeric flags end to end: each kind (a count, a 64-bit count, a duration, a real with a domain)
// refuses what is not a number in its range with one line quoting the text, and exit code 2,
// before anything runs or is written. The analysis commands' flags are pinned in
// tests/analysis/cli_test.cc, against a real store.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/apps/run.h"

namespace clustersweep::apps_test {
namespace {

const std::string kSpec = source_path("examples/quick.toml");

TEST(NumberFlags, PlanRanksIsAPositive32BitCount) {
  const std::string message = "--ranks: expected a whole number from 1 to 4294967295, got '{}'";
  // Boost alone wrapped -1 to 4294967295 ranks.
  for (const char* bad : {"-1", "0", "4294967296", "+4", "4.0", "four", ""})
    expect_error({"plan", kSpec, "--ranks", bad}, fmt::format(fmt::runtime(message), bad));
  expect_error({"plan", kSpec, "-n", "-1"}, fmt::format(fmt::runtime(message), "-1"));
  expect_error({"plan", kSpec, "--ranks=-1"}, fmt::format(fmt::runtime(message), "-1"));
}

TEST(NumberFlags, PlanSampleSecondsIsFinite) {
  // Boost alone took inf, and the forecast sampled forever.
  for (const char* bad : {"inf", "nan", "-0.5", "1e400", "0.5s"})
    expect_error({"plan", kSpec, "--sample-seconds", bad},
                 fmt::format("--sample-seconds: expected a finite number >= 0, got '{}'", bad));
}

TEST(NumberFlags, RunChunkPointsIsA64BitCountAndWritesNothing) {
  TempDir dir;
  const std::string store = (dir.path() / "x.h5").string();
  // Boost alone stored -1 as 18446744073709551615.
  for (const char* bad : {"-1", "18446744073709551616", "1e6", " 5"})
    expect_error({"run", kSpec, "-o", store, "--chunk-points", bad},
                 fmt::format("--chunk-points: expected a whole number from 0 to "
                             "18446744073709551615, got '{}'",
                             bad));
  expect_error({"run", kSpec, "-o", store, "--progress-interval", "0"},
               "--progress-interval: expected a finite number > 0, got '0'");
  expect_error({"run", kSpec, "-o", store, "--progress-interval", "inf"},
               "--progress-interval: expected a finite number > 0, got 'inf'");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(NumberFlags, StatusIntervalIsBounded) {
  for (const char* bad : {"600.5", "-1", "nan", "inf"})
    expect_error({"status", "/nonexistent/results.h5", "--interval", bad},
                 fmt::format("--interval: expected a number from 0 to 600, got '{}'", bad));
}

TEST(NumberFlags, BenchSecondsIsPositive) {
  for (const char* bad : {"0", "-1", "inf", "nan"})
    expect_error({"bench", "--seconds", bad},
                 fmt::format("--seconds: expected a finite number > 0, got '{}'", bad));
}

TEST(NumberFlags, ValidateFitSweepsIsABoundedCount) {
  // Checked whatever else is given: --held-out reads it too.
  for (const char* bad : {"0", "-3", "1001", "99999999999", "12.5"})
    expect_error(
        {"validate", source_path("tests/apps/data/transformer_runs.csv"), "--held-out",
         "--fit-sweeps", bad},
        fmt::format("--fit-sweeps: expected a whole number from 1 to 1000, got '{}'", bad));
}

TEST(NumberFlags, HelpShowsTheDefaults) {
  const Result plan = run({"plan", "--help"});
  EXPECT_EQ(plan.exit_code, 0);
  EXPECT_NE(plan.out.find("--sample-seconds arg (=0.5)"), std::string::npos) << plan.out;
  const Result run_help = run({"run", "--help"});
  EXPECT_NE(run_help.out.find("--chunk-points arg (=0)"), std::string::npos) << run_help.out;
  EXPECT_NE(run_help.out.find("--progress-interval arg (=5)"), std::string::npos) << run_help.out;
  const Result top = run({"top", "--help"});
  EXPECT_NE(top.out.find("-n arg (=20)"), std::string::npos) << top.out;
}

}  // namespace
}  // namespace clustersweep::apps_test
