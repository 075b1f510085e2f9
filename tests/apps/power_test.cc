// Power as a design axis, end to end: a sweep over GPU power caps, its store, the time-energy
// Pareto front, the facility power constraint, and estimate's power and energy by scope.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/apps/run.h"

namespace clustersweep::apps_test {
namespace {

const std::string kSpec = R"(
[workload]
model = "llama3-70b"
global_batch = 512
training_tokens = 1e11
[cluster]
gpu = "H100-SXM5-80GB"
nodes = 16
power_cap_w = [0, 600, 500, 400, 300]
[plan]
tp = 8
pp = [2, 4]
micro_batch = 1
zero = 1
recompute = "all"
sequence_parallel = true
[output]
keep = "best-per-design"
objective = "time_to_train"
)";

nlohmann::json json_of(const Result& r) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(PowerCap, ASweepOverCapsTradesTimeForEnergyOnTheParetoFront) {
  TempDir dir;
  const std::string spec = dir.file("caps.toml", kSpec);
  const std::string store = (dir.path() / "caps.h5").string();
  ASSERT_EQ(run({"run", spec, "-o", store, "--progress", "none", "--no-summary"}).exit_code, 0);
  auto rows = json_of(run({"top", store, "--by", "power_cap_w", "-n", "10", "--json", "--columns",
                           "power_cap_w,time_to_train_s,energy_kwh,gpu_power_w"}))["rows"];
  ASSERT_EQ(rows.size(), 5u);
  // By cap, lowest first after none (0): a lower cap is never faster and never draws more.
  std::vector<nlohmann::json> by_cap(rows.begin(), rows.end());
  std::sort(by_cap.begin(), by_cap.end(), [](const auto& a, const auto& b) {
    const double x = a["power_cap_w"], y = b["power_cap_w"];
    return (x == 0 ? 1e9 : x) > (y == 0 ? 1e9 : y);
  });
  for (std::size_t i = 1; i < by_cap.size(); ++i) {
    EXPECT_GE(by_cap[i]["time_to_train_s"].get<double>(),
              by_cap[i - 1]["time_to_train_s"].get<double>());
    EXPECT_LE(by_cap[i]["gpu_power_w"].get<double>(), by_cap[i - 1]["gpu_power_w"].get<double>());
  }
  // A cap saves energy for time: the front holds the uncapped design and at least one capped one.
  const auto front = json_of(run({"pareto", store, "--objectives", "time_to_train_s,energy_kwh",
                                  "--json"}))["fronts"][0]["rows"];
  ASSERT_GE(front.size(), 2u);
  bool uncapped = false;
  for (const auto& r : front) uncapped |= r["power_cap_w"].get<double>() == 0;
  EXPECT_TRUE(uncapped);
  EXPECT_LT(by_cap[1]["energy_kwh"].get<double>(), by_cap[0]["energy_kwh"].get<double>());
}

TEST(PowerCap, AFacilityBudgetRemovesTheDesignsThatDrawMore) {
  TempDir dir;
  // 16 nodes of 8 H100 at their peak: 128 x 700 W + 16 x 4,600 W + 8 leaf switches x 1,700 W,
  // times PUE 1.2, is 0.212 MW uncapped; capped at 600 W it is 0.197 MW.
  std::string text = kSpec;
  text.insert(0, "constraints = [\"facility_mw <= 0.2\"]\n");
  const std::string store = (dir.path() / "budget.h5").string();
  ASSERT_EQ(
      run({"run", dir.file("budget.toml", text), "-o", store, "--progress", "none", "--no-summary"})
          .exit_code,
      0);
  const auto rows = json_of(run({"top", store, "--by", "power_cap_w", "-n", "10", "--json",
                                 "--columns", "power_cap_w"}))["rows"];
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) EXPECT_NE(r["power_cap_w"].get<double>(), 0);
  EXPECT_LT(rows.size(), 5u);
}

TEST(PowerCap, ACapAtOrBelowIdleIsOneErrorNamingTheKey) {
  TempDir dir;
  std::string text = kSpec;
  text.replace(text.find("[0, 600"), 7, "[0, 60");
  const std::string spec = dir.file("low.toml", text);
  const Result r = run({"plan", spec});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cluster.power_cap_w: 60 W is not above H100-SXM5-80GB's idle power"),
            std::string::npos)
      << r.err;
  const Result flag = run({"estimate", "--model", "llama3-70b", "--gpu", "H100-SXM5-80GB", "--gpus",
                           "8", "--tp", "8", "--power-cap-w", "50"});
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_NE(flag.err.find("--power-cap-w: 50 W is not above H100-SXM5-80GB's idle power"),
            std::string::npos)
      << flag.err;
}

TEST(PowerCap, EstimateGivesPowerAndEnergyByScopeInOrder) {
  const auto e =
      json_of(run({"estimate", "--model", "llama3-70b", "--gpu", "H100-SXM5-80GB", "--gpus", "64",
                   "--tp", "8", "--pp", "2", "--global-batch", "256", "--json"}));
  const auto& scopes = e["power"]["energy_per_step_j"];
  EXPECT_LE(scopes["gpu"].get<double>(), scopes["node"].get<double>());
  EXPECT_LE(scopes["node"].get<double>(), scopes["node_plus_network"].get<double>());
  EXPECT_LE(scopes["node_plus_network"].get<double>(), scopes["facility"].get<double>());
  EXPECT_EQ(e["energy_per_step_j"].get<double>(), scopes["node_plus_network"].get<double>());
  EXPECT_GT(e["power"]["gpu_w"].get<double>(), 0);
  EXPECT_LE(e["power"]["gpu_w"].get<double>(), 700);
}

TEST(Lora, ASpecsLoraRankFineTunesEveryPointFasterThanFullTraining) {
  TempDir dir;
  auto best_step = [&](const std::string& name, const std::string& text) {
    const std::string store = (dir.path() / (name + ".h5")).string();
    EXPECT_EQ(run({"run", dir.file(name + ".toml", text), "-o", store, "--progress", "none",
                   "--no-summary"})
                  .exit_code,
              0);
    return json_of(run({"top", store, "--by", "step_time_s", "-n", "1", "--json"}))["rows"][0];
  };
  std::string lora = kSpec;
  lora.insert(lora.find("[cluster]"), "lora_rank = 16\n");
  const auto full = best_step("full", kSpec);
  const auto tuned = best_step("lora", lora);
  EXPECT_LT(tuned["step_time_s"].get<double>(), full["step_time_s"].get<double>());
  EXPECT_LT(tuned["mem_per_gpu_bytes"].get<double>(), full["mem_per_gpu_bytes"].get<double>());
  std::string negative = kSpec;
  negative.insert(negative.find("[cluster]"), "lora_rank = -1\n");
  const Result r = run({"plan", dir.file("negative.toml", negative)});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("workload.lora_rank"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace clustersweep::apps_test
