// Every shipped example parses, and `clustersweep plan` accepts good specs and rejects bad ones.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "spaces/space.h"

namespace clustersweep::spaces {
namespace {

namespace fs = std::filesystem;

const fs::path kExamples = fs::path(CLUSTERSWEEP_SOURCE_DIR) / "examples";

TEST(Examples, EveryExampleParses) {
  int count = 0;
  for (const auto& entry : fs::directory_iterator(kExamples)) {
    if (entry.path().extension() != ".toml") continue;
    // estimate-*.toml are `clustersweep estimate` inputs, not sweep specs.
    if (entry.path().filename().string().rfind("estimate-", 0) == 0) continue;
    SCOPED_TRACE(entry.path().string());
    const Space s = Space::load(entry.path().string());
    EXPECT_GT(s.size(), 0u);
    ++count;
  }
  EXPECT_GE(count, 6);
}

TEST(Examples, Sizes) {
  EXPECT_GE(Space::load((kExamples / "stress-10m.toml").string()).size(), 10'000'000u);
  const Space huge = Space::load((kExamples / "huge-100m.toml").string());
  EXPECT_GE(huge.size(), 100'000'000u);
  EXPECT_EQ(huge.keep(), Keep::best_per_design);
  const Space quick = Space::load((kExamples / "quick.toml").string());
  EXPECT_GE(quick.size(), 10'000u);
  EXPECT_LE(quick.size(), 1'000'000u);
  EXPECT_GT(quick.valid_points(), 0u);
}

struct Output {
  int exit_code = -1;
  std::string out;  // stdout and stderr
};

Output run(const std::string& args) {
  Output r;
  const std::string command = std::string(CLUSTERSWEEP_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buffer;
  while (std::fgets(buffer.data(), buffer.size(), pipe)) r.out += buffer.data();
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(PlanCommand, PrintsAxesCountsAndForecast) {
  const Output r =
      run("plan " + (kExamples / "quick.toml").string() + " --sample-seconds 0 --ranks 2");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const Space s = Space::load((kExamples / "quick.toml").string());
  EXPECT_NE(r.out.find("(valid)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  inter_node_gbps_per_gpu  design      2  Gbit/s    200, 400\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  tp                       plan        4  -         1, 2, 4, 8\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("points: 147,456 = 16 designs x 9,216 plans\n"), std::string::npos) << r.out;
  EXPECT_EQ(s.size(), 147'456u);
  EXPECT_NE(r.out.find("run time:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on 2 ranks"), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find("store:      keep = all, columns = summary (60 columns), compression = none\n"
                 "              147,456 rows x "),
      std::string::npos)
      << r.out;
}

TEST(PlanCommand, BadSpecExitsTwoWithOneLine) {
  const fs::path dir = fs::temp_directory_path() / "clustersweep_plan_test";
  fs::create_directories(dir);
  const fs::path bad = dir / "bad.toml";
  std::ofstream(bad)
      << "[workload]\nmodel = \"gpt3-13b\"\n[cluster]\ngpu = \"H100-SXM5-80GB\"\nnodes = -4\n";
  const Output r = run("plan " + bad.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "clustersweep plan: error: " + bad.string() +
                       ":5:9: cluster.nodes: must be a positive integer, got -4\n");
  const Output missing = run("plan " + (dir / "none.toml").string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.out, "clustersweep plan: error: cannot read spec '" +
                             (dir / "none.toml").string() + "': No such file or directory\n");
  fs::remove_all(dir);
}

TEST(PlanCommand, LongValueListsAreShortened) {
  const fs::path dir = fs::temp_directory_path() / "clustersweep_plan_long";
  fs::create_directories(dir);
  const fs::path spec = dir / "long.toml";
  std::ofstream(spec) << "[workload]\nmodel = \"gpt3-13b\"\n[cluster]\ngpu = \"H100-SXM5-80GB\"\n"
                         "nodes = {start = 1, stop = 20, step = 1}\n";
  const Output r = run("plan " + spec.string() + " --sample-seconds 0");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find(
                "  num_nodes                design     20  -         1, 2, 3, 4, 5, ... (10 more), "
                "16, 17, 18, 19, 20\n"),
            std::string::npos)
      << r.out;
  fs::remove_all(dir);
}

// The stack's axes are listed with the others, and the points their rules remove are counted
// under each rule.
TEST(PlanCommand, CountsTheStackRules) {
  const fs::path dir = fs::temp_directory_path() / "clustersweep_plan_stack";
  fs::create_directories(dir);
  const fs::path spec = dir / "stack.toml";
  // A dense model routes no tokens: token_routing other than dropless breaks a rule there.
  std::ofstream(spec) << "[workload]\nmodel = [\"qwen3-30b-a3b\", \"llama3-8b\"]\n"
                         "global_batch = 64\n"
                         "[cluster]\ngpu = \"H100-SXM5-80GB\"\ngpus = 8\n"
                         "[plan]\nep = [1, 8]\ndispatcher = \"all\"\ntoken_routing = \"all\"\n"
                         "cuda_graph = [\"none\", \"full\"]\nfp8_attention = \"all\"\n";
  const Output r = run("plan " + spec.string() + " --sample-seconds 0");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("  dispatcher               plan        5  -         alltoall, allgather, "
                       "deepep, hybridep, einsum\n"),
            std::string::npos)
      << r.out;
  const Space s = Space::load(spec.string());
  const auto counts = s.count_by_rule();
  const auto removed = r.out.find("removed before evaluation:");
  ASSERT_NE(removed, std::string::npos) << r.out;
  for (Rule rule : {Rule::token_routing, Rule::dispatcher_needs_ep, Rule::fp8_settings}) {
    const auto n = counts[static_cast<int>(rule)];
    EXPECT_GT(n, 0u) << to_string(rule);
    EXPECT_NE(r.out.find(fmt::format("  {} ", to_string(rule)), removed), std::string::npos)
        << to_string(rule) << "\n"
        << r.out;
  }
  fs::remove_all(dir);
}

TEST(PlanCommand, Help) {
  const Output r = run("plan --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("Usage: clustersweep plan SPEC.toml [options]", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("--sample-seconds"), std::string::npos);
}

}  // namespace
}  // namespace clustersweep::spaces
