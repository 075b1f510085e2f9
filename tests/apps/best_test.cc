// clustersweep best end to end: the search's answer equals exhaustive enumeration, each plan it
// prints is the one estimate computes, the spec it searches is a sweep spec, and its input errors.
// A recommendation model's answer: every sharding, ranked, each the one estimate computes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/apps/run.h"

namespace clustersweep::apps_test {
namespace {

const std::vector<std::string> kBase = {"best",           "--model", "gpt3-175b", "--gpu",
                                        "H100-SXM5-80GB", "--nodes", "64"};

nlohmann::json run_json(const std::vector<std::string>& args) {
  const Result r = run(with(args, {"--json"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// The flags of estimate that set a printed plan's settings.
std::vector<std::string> plan_flags(const nlohmann::json& plan) {
  std::vector<std::string> flags;
  for (const char* name : {"tp", "pp", "dp", "cp", "vp", "zero", "micro_batch", "ep", "etp"})
    flags.insert(flags.end(),
                 {"--" + std::string(name == std::string("micro_batch") ? "micro-batch" : name),
                  std::to_string(plan[name].get<int>())});
  flags.insert(flags.end(), {"--recompute", plan["recompute"], "--offload", plan["offload"],
                             "--pipeline-split", plan["pipeline_split"], "--sequence-parallel",
                             plan["sequence_parallel"].get<bool>() ? "true" : "false",
                             "--rank-order", plan["rank_order"]});
  return flags;
}

TEST(Best, SearchEqualsExhaustiveForEveryObjective) {
  for (const char* objective : {"step_time", "time_to_train", "energy", "cost"}) {
    for (const auto& cluster : std::vector<std::vector<std::string>>{
             {"--nodes", "64"},
             {"--nodes", "16", "--hbm-gb", "40"},
             {"--nodes", "32", "--inter-node-gbps-per-gpu", "100"}}) {
      auto args = with({"best", "--model", "gpt3-175b", "--gpu", "H100-SXM5-80GB", "--top", "4",
                        "--objective", objective, "--gpu-hour-usd", "2.5"},
                       cluster);
      const auto searched = run_json(args);
      const auto exhaustive = run_json(with(args, {"--exhaustive"}));
      SCOPED_TRACE(fmt::format("{} {}", objective, fmt::join(cluster, " ")));
      EXPECT_EQ(searched["plans"], exhaustive["plans"]);
      EXPECT_EQ(searched["stats"]["plans"], exhaustive["stats"]["plans"]);
      EXPECT_LT(searched["stats"]["plans_evaluated"], exhaustive["stats"]["plans_evaluated"]);
      EXPECT_EQ(exhaustive["stats"]["plans_pruned"], 0);
    }
  }
}

TEST(Best, EachPlanIsTheOneEstimateComputes) {
  const auto json = run_json(with(kBase, {"--top", "3"}));
  ASSERT_EQ(json["plans"].size(), 3u);
  double previous = 0;
  for (const auto& plan : json["plans"]) {
    EXPECT_GE(plan["objective"].get<double>(), previous);  // best first
    previous = plan["objective"].get<double>();
    EXPECT_EQ(plan["objective"], plan["step_time_s"]["total"]);
    auto flags = plan_flags(plan);
    flags.insert(flags.begin(), kBase.begin() + 1, kBase.end());
    flags.insert(flags.begin(), "estimate");
    const auto one = run_json(flags);
    EXPECT_EQ(one["step_time_s"], plan["step_time_s"]);
    EXPECT_EQ(one["memory_bytes"], plan["memory_bytes"]);
    EXPECT_EQ(one["energy_per_step_j"], plan["energy_per_step_j"]);
  }
}

TEST(Best, APlanFlagFixesThatSetting) {
  const auto json = run_json(with(kBase, {"--tp", "4", "--recompute", "full", "--top", "5"}));
  ASSERT_FALSE(json["plans"].empty());
  for (const auto& plan : json["plans"]) {
    EXPECT_EQ(plan["tp"], 4);
    EXPECT_EQ(plan["recompute"], "full");
  }
  const auto dp = run_json(with(kBase, {"--dp", "16"}));
  for (const auto& plan : dp["plans"]) EXPECT_EQ(plan["dp"], 16);
}

// The rank order is searched with the degrees: on a fat tree tapered above its 32-GPU leaves, a
// pipeline of tp 8 x pp 4 kept inside a leaf (tp-pp-dp) beats sending every micro-batch's
// activations across the taper. --rank-order fixes it like any plan flag.
TEST(Best, TheRankOrderIsSearchedUnlessGiven) {
  const std::vector<std::string> flags = {"best",
                                          "--model",
                                          "llama3-8b",
                                          "--gpu",
                                          "H100-SXM5-80GB",
                                          "--gpus",
                                          "1024",
                                          "--seq-len",
                                          "8192",
                                          "--network",
                                          "fat_tree",
                                          "--oversubscription",
                                          "7",
                                          "--tp",
                                          "8",
                                          "--pp",
                                          "4",
                                          "--top",
                                          "3"};
  const auto json = run_json(flags);
  ASSERT_FALSE(json["plans"].empty());
  EXPECT_EQ(json["plans"][0]["rank_order"], "tp-pp-dp");
  const Result text = run(flags);
  EXPECT_NE(text.out.find(" rank order "), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("rank_order"), std::string::npos) << text.out;  // not the stack's
  const auto fixed = run_json(with(flags, {"--rank-order", "tp-cp-ep-dp-pp"}));
  ASSERT_FALSE(fixed["plans"].empty());
  for (const auto& plan : fixed["plans"]) EXPECT_EQ(plan["rank_order"], "tp-cp-ep-dp-pp");
  EXPECT_GT(fixed["plans"][0]["step_time_s"]["total"].get<double>(),
            json["plans"][0]["step_time_s"]["total"].get<double>());
}

// The stack is the flags', fixed: every plan runs on it, and the searched spec holds it.
TEST(Best, TheStackIsKeptAsGiven) {
  const std::vector<std::string> flags = {
      "--attention-kernel", "flash2", "--dp-overlap", "false", "--top", "3"};
  const auto json = run_json(with(kBase, flags));
  ASSERT_FALSE(json["plans"].empty());
  for (const auto& plan : json["plans"]) {
    EXPECT_EQ(plan["attention_kernel"], "flash2");
    EXPECT_EQ(plan["dp_overlap"], false);
    EXPECT_EQ(plan["cuda_graph"], "none");
  }
  const Result spec = run(with(kBase, with(flags, {"--print-spec"})));
  ASSERT_EQ(spec.exit_code, 0) << spec.err;
  EXPECT_NE(spec.out.find("attention_kernel = 'flash2'"), std::string::npos) << spec.out;
  EXPECT_NE(spec.out.find("dp_overlap = false"), std::string::npos) << spec.out;
  EXPECT_EQ(spec.out.find("cuda_graph"), std::string::npos) << spec.out;  // the default
  const Result text = run(with(kBase, flags));
  EXPECT_NE(text.out.find("stack framework any, cuda_graph none, dispatcher alltoall, "),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("dp_overlap off"), std::string::npos) << text.out;
}

TEST(Best, TheSearchedSpecIsASweepSpec) {
  TempDir dir;
  const Result spec = run(
      with(kBase, {"--print-spec", "--objective", "time_to_train", "--training-tokens", "1e12"}));
  ASSERT_EQ(spec.exit_code, 0) << spec.err;
  EXPECT_NE(spec.out.find("keep = 'best-per-design'"), std::string::npos) << spec.out;
  EXPECT_NE(spec.out.find("tp = 'all'"), std::string::npos) << spec.out;
  EXPECT_NE(spec.out.find("training_tokens = 1"), std::string::npos) << spec.out;
  const Result plan = run({"plan", dir.file("best.toml", spec.out)});
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
}

TEST(Best, InlineArchitectureIsSearchedAsEstimateResolvesIt) {
  const std::vector<std::string> model = {
      "--layers",       "32",     "--hidden",   "4096",
      "--heads",        "32",     "--kv-heads", "8",
      "--ffn-hidden",   "14336",  "--mlp",      "swiglu",
      "--vocab",        "128256", "--seq-len",  "8192",
      "--global-batch", "128",    "--gpu",      "H100-SXM5-80GB",
      "--nodes",        "4"};
  const auto json = run_json(with(with({"best"}, model), {"--top", "1"}));
  ASSERT_EQ(json["plans"].size(), 1u);
  EXPECT_EQ(json["model"], "custom");
  auto flags = with(with({"estimate"}, model), plan_flags(json["plans"][0]));
  EXPECT_EQ(run_json(flags)["step_time_s"], json["plans"][0]["step_time_s"]);
}

TEST(Best, PrintsTheRankedPlansAndTheirBreakdown) {
  const Result r = run(with(kBase, {"--top", "2", "--stats"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line :
       {"best plans of gpt3-175b on 512 x H100-SXM5-80GB (64 nodes), by step_time\nsearched ",
        " evaluated, ", " pruned by bounds (", " boxes bounded), ", "step time (s)",
        "pipeline bubble", "memory per GPU (GB)", "in HBM (of 80)"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
}

// The job of the best plan: the time to train with failures is what --objective time_to_train
// ranks by, and the reliability flags reach the searched spec.
TEST(Best, PrintsTheTrainingJobOfTheBestPlans) {
  const std::vector<std::string> flags = {"--objective", "time_to_train", "--training-tokens",
                                          "1e12",        "--top",         "2"};
  const Result r = run(with(kBase, flags));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line : {"training job of #1          1T tokens, ", "  failures  ",
                           " per day (one every ", "  goodput  ", " without failures)"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  const auto json = run_json(with(kBase, flags));
  for (const auto& plan : json["plans"]) {
    EXPECT_EQ(plan["job"]["training_tokens"].get<double>(), 1e12);
    EXPECT_EQ(plan["job"]["time_to_train_s"], plan["objective"]);
    EXPECT_LT(plan["job"]["goodput"].get<double>(), 1);
  }
  const auto never_fails = run_json(with(kBase, with(flags, {"--gpu-mtbf-hours", "inf"})));
  const auto& job = never_fails["plans"][0]["job"];
  EXPECT_EQ(job["goodput"].get<double>(), 1);
  EXPECT_EQ(job["time_to_train_s"], job["time_to_train_failure_free_s"]);
  const Result spec = run(with(kBase, {"--print-spec", "--restart-s", "120"}));
  EXPECT_NE(spec.out.find("restart_s = 120"), std::string::npos) << spec.out;
}

// Within a framework every plan is one it runs, with its support and interval; without one,
// each plan says which frameworks run it.
TEST(Best, WithinAFrameworkEachPlanIsOneItRunsWithItsSupport) {
  const std::vector<std::string> deepseek = {
      "best", "--model", "deepseek-v3", "--gpu", "H800-SXM5-80GB", "--gpus", "2048", "--top", "3"};
  const auto megatron = run_json(with(deepseek, {"--framework", "megatron-core"}));
  ASSERT_EQ(megatron["plans"].size(), 3u);
  for (const auto& plan : megatron["plans"]) {
    EXPECT_EQ(plan["framework"], "megatron-core");
    // The distributed optimizer with any pipeline, Megatron-FSDP without one.
    EXPECT_TRUE(plan["zero"] == 0 || plan["zero"] == 1 || (plan["zero"] == 3 && plan["pp"] == 1))
        << plan;
    EXPECT_EQ(plan["frameworks"].at(0), "megatron-core");
    EXPECT_LT(plan["step_time_lo_s"], plan["step_time_s"]["total"]);
    EXPECT_GT(plan["step_time_hi_s"], plan["step_time_s"]["total"]);
    EXPECT_EQ(plan["low_support"], plan["calibration_support"] < 3);
  }
  const auto fsdp = run_json(with(deepseek, {"--framework", "fsdp2"}));
  for (const auto& plan : fsdp["plans"]) {
    EXPECT_NE(plan["zero"], 1) << plan;
    EXPECT_EQ(plan["etp"], 1);
    EXPECT_EQ(plan["cuda_graph"], "none");
    EXPECT_EQ(plan["tp_comm_overlap"], false);  // its default
  }
  const Result text = run(with(deepseek, {"--framework", "fsdp2"}));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("  #  90% interval      support   frameworks\n"), std::string::npos)
      << text.out;
  // No bf16 MoE run on H800 in the calibration: every plan is marked, and the line says why.
  EXPECT_NE(text.out.find("0 runs !  megatron-core, fsdp2"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("! few calibration runs are like the plan (#1: no moe runs on "
                          "H800-SXM5-80GB in bf16)"),
            std::string::npos)
      << text.out;
  // Without a framework: which of them run each plan.
  const auto any = run_json(with(kBase, {"--top", "2"}));
  for (const auto& plan : any["plans"]) EXPECT_FALSE(plan["frameworks"].empty());
}

// --robust ranks by the interval's upper end: the search still equals every plan evaluated, and
// the objective is the upper end.
TEST(Best, RobustRanksByTheIntervalsUpperEnd) {
  auto args = with({"best", "--model", "qwen3-30b-a3b", "--gpu", "H100-SXM5-80GB", "--nodes", "4",
                    "--top", "4", "--robust"},
                   {});
  const auto searched = run_json(args);
  const auto exhaustive = run_json(with(args, {"--exhaustive"}));
  EXPECT_EQ(searched["plans"], exhaustive["plans"]);
  EXPECT_TRUE(searched["robust"].get<bool>());
  for (const auto& plan : searched["plans"])
    EXPECT_NEAR(plan["objective"].get<double>() / plan["step_time_hi_s"].get<double>(), 1, 1e-6);
  const Result text = run(args);
  EXPECT_NE(text.out.find("by step_time at the upper end of its 90% interval (--robust)"),
            std::string::npos)
      << text.out;
}

TEST(BestErrors, NameTheFlag) {
  expect_error(with(kBase, {"--objective", "speed"}),
               "--objective: must be step_time, time_to_train, energy or cost, got 'speed'");
  expect_error(with(kBase, {"--top", "0"}),
               "--top: expected a whole number from 1 to 18446744073709551615, got '0'");
  expect_error(with(kBase, {"--top", "-1"}),
               "--top: expected a whole number from 1 to 18446744073709551615, got '-1'");
  expect_error(with(kBase, {"--training-tokens", "-1"}),
               "--training-tokens: must be a positive number, got '-1'");
  expect_error(with(kBase, {"--gpu-mtbf-hours", "0"}),
               "--gpu-mtbf-hours: must be a positive number or inf, got '0'");
  expect_error(with(kBase, {"--capacity-factor", "1.25"}),
               "--capacity-factor: not a plan axis of a sweep (sweeps route dropless); estimate "
               "takes it for one plan");
  expect_error(with(kBase, {"--tp", "5"}), "--tp: 5 does not divide the 96 attention heads");
  expect_error(with(kBase, {"--pue", "0.5"}), "--pue: expected a finite number >= 1, got '0.5'");
  expect_error(with(kBase, {"--price-per-kwh", "nan"}),
               "--price-per-kwh: expected a finite number >= 0, got 'nan'");
  expect_error(with(kBase, {"--gpu-hour-usd", "B200-180GB=5"}),
               "--gpu-hour-usd: 'B200-180GB' is not an accelerator of --gpu (H100-SXM5-80GB)");
  expect_error({"best", "--model", "gpt3-175b", "--nodes", "8"},
               "--gpu: required (an accelerator of the catalog, e.g. H100-SXM5-80GB)");
  expect_error(
      with(kBase, {"--framework", "jax"}),
      "--framework: must be any, megatron-core, fsdp2, deepspeed, maxtext, neuronx or primus, "
      "got 'jax'");
  expect_error(with(kBase, {"--framework", "deepspeed", "--cp", "2"}),
               "--framework: deepspeed has no context parallelism (degree 2)");
  expect_error(with(kBase, {"--framework", "fsdp2", "--zero", "1"}),
               "--framework: fsdp2 does not run ZeRO stage 1 (it runs zero 0, 2 or 3)");
  expect_error(with(kBase, {"--recompute", "selective:attention"}),
               "--recompute: must be none, selective, full or selective:MODULE+MODULE... of "
               "core_attn, layernorm, mla_up_proj, mlp, moe_act, moe, shared_experts, got "
               "'selective:attention'");
}

// ---- Recommendation models: the planner's best placement and every sharding, ranked

const std::vector<std::string> kDlrm = {
    "best", "--model", "dlrmv2-dcnv2", "--gpu", "H100-SXM5-80GB", "--gpus", "16"};

// Every sharding once (table_row only with two nodes or more), those that fit first, each group
// fastest first; "best" is at least as fast as every sharding that fits, and each row is the
// point `estimate --sharding NAME` computes.
TEST(BestDlrm, RanksEverySharding) {
  for (const char* gpus : {"16", "8"}) {
    SCOPED_TRACE(fmt::format("{} GPUs", gpus));
    const std::vector<std::string> point = {"--model",        "dlrmv2-dcnv2", "--gpu",
                                            "H100-SXM5-80GB", "--gpus",       gpus};
    const auto json = run_json(with(with({"best"}, point), {"--top", "20"}));
    EXPECT_EQ(json["model"], "dlrmv2-dcnv2");
    EXPECT_EQ(json["num_gpus"], std::stoi(gpus));
    std::multiset<std::string> names;
    for (const auto& row : json["shardings"]) names.insert(row["sharding"].get<std::string>());
    std::multiset<std::string> want = {"best", "table",  "row",      "column",
                                       "data", "hybrid", "fused_row"};
    if (std::string(gpus) == "16") want.insert("table_row");  // 2 nodes of 8
    EXPECT_EQ(names, want);
    const auto& rows = json["shardings"];
    bool any_fits = false;
    double best_step = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i]["rank"], i + 1);
      if (rows[i]["fits"].get<bool>()) any_fits = true;
      if (rows[i]["sharding"] == "best") best_step = rows[i]["step_time_s"].get<double>();
      if (i == 0) continue;
      const auto& prev = rows[i - 1];
      EXPECT_FALSE(rows[i]["fits"].get<bool>() && !prev["fits"].get<bool>()) << rows;
      if (rows[i]["fits"] == prev["fits"]) {
        EXPECT_GE(rows[i]["step_time_s"].get<double>(), prev["step_time_s"].get<double>()) << rows;
      }
    }
    ASSERT_TRUE(any_fits);
    for (const auto& row : rows) {
      if (row["sharding"] == "best") {
        EXPECT_TRUE(row["fits"].get<bool>()) << row;  // the planner's fits where any placement does
        continue;
      }
      if (row["fits"].get<bool>()) {
        EXPECT_LE(best_step, row["step_time_s"].get<double>()) << row;
      }
    }
    for (const auto& row : rows) {
      auto flags = with({"estimate"}, point);
      if (row["sharding"] != "best") flags = with(flags, {"--sharding", row["sharding"]});
      const auto one = run_json(flags);
      EXPECT_EQ(one["step_time_s"]["total"], row["step_time_s"]) << row;
      EXPECT_EQ(one["samples_per_s"], row["samples_per_s"]) << row;
      EXPECT_EQ(one["feasible"], row["fits"]) << row;
    }
  }
}

// The table and the JSON rank the same shardings in the same order, the JSON's step in the
// table's; --top (5 by default) keeps the first.
TEST(BestDlrm, TheTableIsTheJsonsRanking) {
  for (const std::vector<std::string>& top :
       std::vector<std::vector<std::string>>{{}, {"--top", "3"}, {"--top", "20"}}) {
    SCOPED_TRACE(fmt::format("{}", fmt::join(top, " ")));
    const auto json = run_json(with(kDlrm, top));
    const Result text = run(with(kDlrm, top));
    ASSERT_EQ(text.exit_code, 0) << text.err;
    const std::size_t want = top.empty() ? 5 : std::min<std::size_t>(std::stoul(top[1]), 8);
    ASSERT_EQ(json["shardings"].size(), want);
    EXPECT_NE(
        text.out.find("best shardings of dlrmv2-dcnv2 on 16 x H100-SXM5-80GB (2 nodes), "
                      "global batch 65536, framework hugectr (assumed: the fastest H100-SXM5-80GB "
                      "runs; --framework to choose), by step_time\n"),
        std::string::npos)
        << text.out;
    EXPECT_EQ(text.out.find("(--top)") != std::string::npos, want < 8) << text.out;
    // The rows: after the header line, up to the blank line.
    std::istringstream lines(text.out.substr(text.out.find("  #  sharding")));
    std::string line;
    std::getline(lines, line);
    std::vector<std::string> rows;
    while (std::getline(lines, line) && !line.empty()) rows.push_back(line);
    ASSERT_EQ(rows.size(), json["shardings"].size()) << text.out;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& row = json["shardings"][i];
      std::istringstream fields(rows[i]);
      std::size_t rank = 0;
      std::string name;
      fields >> rank >> name;
      EXPECT_EQ(rank, i + 1) << rows[i];
      EXPECT_EQ(name, row["sharding"].get<std::string>()) << rows[i];
      if (name == "best") {
        EXPECT_NE(rows[i].find(fmt::format("best ({})", row["placement"].get<std::string>())),
                  std::string::npos)
            << rows[i];
      }
      EXPECT_NE(rows[i].find(fmt::format(" {:.4g} s ", row["step_time_s"].get<double>())),
                std::string::npos)
          << rows[i];
      EXPECT_NE(rows[i].find(row["fits"].get<bool>() ? "  yes" : "  out of memory"),
                std::string::npos)
          << rows[i];
    }
  }
}

TEST(BestErrors, ADlrmModelNamesTheFlag) {
  expect_error(with(kDlrm, {"--sharding", "row"}),
               "--sharding: best ranks every sharding; leave it out");
  expect_error(with(kDlrm, {"--objective", "energy"}),
               "--objective: must be step_time for a recommendation model (best ranks its "
               "shardings by step time), got 'energy'");
  expect_error(with(kDlrm, {"--robust"}),
               "--robust: for a transformer's plan search; best ranks a recommendation model's "
               "every sharding, leave it out");
}

TEST(Best, HelpExitsZero) {
  const Result r = run({"best", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Usage: clustersweep best"), std::string::npos);
  EXPECT_NE(r.out.find("--objective"), std::string::npos);
  EXPECT_NE(r.out.find("--exhaustive"), std::string::npos);
  EXPECT_NE(r.out.find("A recommendation model (DLRM, DCNv2) has no parallel plan: best ranks"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace clustersweep::apps_test
