// The dispatcher: help, version, and an unknown command.
#include <gtest/gtest.h>

#include "tests/apps/run.h"

namespace clustersweep::apps_test {
namespace {

TEST(Main, UnknownCommandSuggestsTheClosestOne) {
  const auto r = run({"pareo"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "clustersweep: error: unknown command 'pareo' (did you mean 'pareto'?); run "
            "'clustersweep --help'\n");
}

TEST(Main, NoCommandSaysWhatToDo) {
  const auto r = run({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "clustersweep: error: no command given; run 'clustersweep <command>' with one of the "
            "commands above, e.g. 'clustersweep run --help'\n");
  EXPECT_EQ(r.out, run({"--help"}).out);  // the command list, as --help prints it
}

TEST(Main, VersionNamesTheGitRevision) {
  const auto r = run({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("clustersweep 0.1.0 (git ", 0), 0u) << r.out;
}

TEST(Main, HelpListsEveryCommand) {
  const auto r = run({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* command :
       {"run", "estimate", "validate", "calibrate", "bench", "plan", "summary", "pareto", "top",
        "energy", "sensitivity", "report", "submit", "merge", "status"})
    EXPECT_NE(r.out.find(fmt::format("\n  {} ", command)), std::string::npos) << command;
}

TEST(Main, EveryCommandHasHelp) {
  for (const char* command :
       {"run", "estimate", "validate", "calibrate", "bench", "plan", "summary", "pareto", "top",
        "energy", "sensitivity", "report", "submit", "merge", "status"}) {
    const auto r = run({command, "--help"});
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_EQ(r.out.rfind(fmt::format("Usage: clustersweep {}", command), 0), 0u) << r.out;
  }
}

}  // namespace
}  // namespace clustersweep::apps_test
