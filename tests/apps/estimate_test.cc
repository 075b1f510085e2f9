// clustersweep estimate end to end: output, JSON, TOML input, and every input error pinned.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "spaces/catalog.h"
#include "spaces/resolve.h"
#include "tests/apps/run.h"

namespace clustersweep::apps_test {
namespace {

const std::vector<std::string> kBase = {"estimate",       "--model", "gpt3-175b", "--gpu",
                                        "H100-SXM5-80GB", "--nodes", "8"};

TEST(Estimate, PrintsTheBreakdown) {
  const Result r = run(with(kBase, {"--tp", "8", "--pp", "8", "--recompute", "selective",
                                    "--sequence-parallel", "--attention-kernel", "flash3"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  for (const char* line :
       {"model     gpt3-175b: 96 layers, hidden 12288, 96 heads (96 kv), ffn 49152 gelu, vocab "
        "50257",
        "plan      tp 8 pp 8 dp 1 cp 1 vp 1 (even pipeline split), sequence parallel on, ZeRO 0, "
        "recompute selective",
        "stack     framework any, cuda_graph none, dispatcher alltoall, token_routing dropless, "
        "a2a_overlap "
        "off, fp8_attention off, tp_comm_overlap on, dp_overlap on, param_gather_overlap "
        "on, pp_comm_overlap on, fp8_recipe delayed, attention_kernel flash3, rank_order "
        "tp-cp-ep-dp-pp, grad_reduce_fp32 on\n",
        "step time", "pipeline bubble", "memory per GPU", "activations (in flight)", "feasible",
        "MFU", "energy per step"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
}

// The scale-out network's bill: 64 H100 on 8 nodes fit one 64-port QM9700 leaf (a fat tree by
// default), each GPU's link optical; 1,024 on 32 leaves and 16 spines; one node has none.
TEST(Estimate, PrintsTheNetworksBillOfMaterials) {
  Result r = run(with(kBase, {"--tp", "8", "--pp", "8"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line :
       {"scale-out network           1 tier, 400 Gbit/s links, 1 NIC per GPU\n"
        "  tier     switches  radix    links   optics   cables    NICs          USD         W\n"
        "  leaf            1     64       64      128       64      64      245,920     3,438\n"
        "  total           1      -       64      128       64      64      245,920     3,438\n",
        "network power               1.8 kW (scale-out switches and transceivers)\n"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  r = run({"estimate", "--model", "gpt3-175b", "--gpu", "H100-SXM5-80GB", "--nodes", "128", "--tp",
           "8", "--pp", "8", "--dp", "16", "--sequence-parallel", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto network = nlohmann::json::parse(r.out)["network"];
  EXPECT_EQ(network["tiers"], 2);
  EXPECT_EQ(network["rows"][0]["tier"], "leaf");
  EXPECT_EQ(network["rows"][0]["switches"], 32);
  EXPECT_EQ(network["rows"][1]["switches"], 16);
  EXPECT_EQ(network["rows"][1]["medium"], "optical");
  EXPECT_EQ(network["transceivers"], 4096);
  EXPECT_EQ(network["network_capex_usd"], 6397440);
  EXPECT_EQ(network["network_power_w"], 96416);
  r = run(
      {"estimate", "--model", "llama3-8b", "--gpu", "H100-SXM5-80GB", "--gpus", "8", "--tp", "8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("scale-out network"), std::string::npos) << r.out;
}

TEST(Estimate, JsonMatchesTheLibrary) {
  const Result r = run(with(kBase, {"--tp", "8", "--pp", "8", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  spaces::Settings settings;
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"model", "gpt3-175b"},
                                                        {"gpu", "H100-SXM5-80GB"},
                                                        {"nodes", "8"},
                                                        {"tp", "8"},
                                                        {"pp", "8"}})
    settings.set(name, value, "--" + name);
  const spaces::Point pt = spaces::resolve(settings);
  const auto e = estimator::estimate(pt.workload, pt.cluster, pt.plan, pt.calibration);
  EXPECT_EQ(json["plan"], nlohmann::json::parse(R"({"tp": 8, "pp": 8, "dp": 1, "cp": 1, "vp": 1,
      "pipeline_split": "even", "sequence_parallel": false, "zero": 0, "recompute": "none",
      "micro_batch": 1, "offload": "none", "ep": 1, "etp": 1, "capacity_factor": 0,
      "cuda_graph": "none", "dispatcher": "alltoall", "token_routing": "dropless",
      "framework": "any", "a2a_overlap": false, "fp8_attention": false, "tp_comm_overlap": true, "dp_overlap": true,
      "param_gather_overlap": true, "pp_comm_overlap": true, "fp8_recipe": "delayed",
      "attention_kernel": "cudnn", "rank_order": "tp-cp-ep-dp-pp", "grad_reduce_fp32": true})"));
  EXPECT_EQ(json["feasible"], e.feasible);
  EXPECT_EQ(json["reason"], estimator::to_string(e.reason));
  // Every number round-trips to the very double the library computed.
  EXPECT_EQ(json["step_time_s"]["total"].get<double>(), e.time.total_s);
  EXPECT_EQ(json["step_time_s"]["pp_bubble"].get<double>(), e.time.pp_bubble_s);
  EXPECT_EQ(json["memory_bytes"]["activations"].get<double>(), e.memory.activations_bytes);
  EXPECT_EQ(json["memory_bytes"]["hbm"].get<double>(), e.memory.hbm_bytes);
  EXPECT_EQ(json["tokens_per_s"].get<double>(), e.tokens_per_s);
  EXPECT_EQ(json["mfu"].get<double>(), e.mfu);
  EXPECT_EQ(json["energy_per_step_j"].get<double>(), e.energy_per_step_j);
  // What was not given says where it came from.
  EXPECT_EQ(json["defaults"]["hbm_gb"], "catalog");
  EXPECT_EQ(json["defaults"]["inter_node_gbps_per_gpu"], "calibration");
  EXPECT_EQ(json["defaults"]["dp"], "rule");
  EXPECT_EQ(json["defaults"]["zero"], "fallback");
  EXPECT_FALSE(json["defaults"].contains("tp"));
}

// Llama 3.1 405B on 16,384 H100 with Meta's plan (TP8 PP16 CP1 DP128, seq 8192, batch 2048; its
// FSDP shards the gradients, which it reduces in fp32: ZeRO-2) and 15.6T tokens: the job loses a
// few percent to failures, checkpoints and restarts (Meta reports more than 90% of the time
// training); more GPUs fail more often, faster storage saves sooner.
std::vector<std::string> llama405(const std::string& gpus, std::vector<std::string> more = {},
                                  const std::string& vp = "8") {
  std::istringstream words("estimate --model llama3.1-405b --gpu H100-SXM5-80GB --gpus " + gpus +
                           " --tp 8 --pp 16 --vp " + vp +
                           " --cp 1 --seq-len 8192 --global-batch 2048 --sequence-parallel --zero 2"
                           " --training-tokens 15.6e12");
  std::vector<std::string> flags;
  for (std::string word; words >> word;) flags.push_back(word);
  return with(flags, more);
}

double goodput_of(const std::vector<std::string>& flags) {
  const Result r = run(with(flags, {"--json"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out)["job"]["goodput"].get<double>();
}

TEST(Estimate, DenseStepsWithTheDefaultStackAreTheModelsOfBefore) {
  // The step times these points had before the software stack's settings existed, under the
  // calibration of then: the stack's defaults (no CUDA graphs, every overlap on, delayed fp8
  // scaling, cuDNN attention) are what the dense model's calibrated efficiencies described; its
  // gradients were reduced in 16 bits.
  const std::string before = source_path("tests/apps/data/calibration_before_stack.toml");
  const std::vector<std::pair<std::vector<std::string>, double>> points = {
      {{"--model", "gpt3-175b", "--gpu", "H100-SXM5-80GB", "--nodes", "128", "--tp", "8", "--pp",
        "8", "--dp", "16", "--sequence-parallel", "--micro-batch", "1", "--global-batch", "1536",
        "--recompute", "selective"},
       7.948885737808461},
      {{"--model", "llama3-70b", "--gpu", "H100-SXM5-80GB", "--gpus", "64", "--tp", "4", "--pp",
        "4", "--vp", "5", "--zero", "1", "--precision", "fp8", "--global-batch", "128"},
       12.838177877528237},
      {{"--model", "llama3-8b", "--gpu", "A100-SXM4-80GB", "--gpus", "16", "--tp", "1", "--zero",
        "3", "--micro-batch", "2", "--global-batch", "256", "--recompute", "full"},
       49.146894445958},
      {{"--model", "llama3.1-405b", "--gpu", "GB200-186GB", "--gpus", "512", "--tp", "4", "--pp",
        "8", "--cp", "2", "--sequence-parallel", "--zero", "1", "--global-batch", "256"},
       8.907974235120909}};
  for (const auto& [flags, step_s] : points) {
    std::vector<std::string> args = {"estimate",           "--json", "--calibration", before,
                                     "--grad-reduce-fp32", "false"};
    args.insert(args.end(), flags.begin(), flags.end());
    const Result r = run(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto json = nlohmann::json::parse(r.out);
    EXPECT_NEAR(json["step_time_s"]["total"].get<double>() / step_s, 1.0, 1e-12) << flags[1];
  }
}

TEST(Estimate, TheTrainingJobOfLlama3_405B) {
  const Result text = run(llama405("16384"));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const char* line : {"training job                15.6T tokens, 929,833 steps\n",
                           "  failures                  7.76 per day (one every 3.09 h)\n",
                           "  checkpoint                5.7 TB, every 4.16 min of training, "
                           "stalls 2.84 s\n",
                           "  goodput                   92.6%\n"})
    EXPECT_NE(text.out.find(line), std::string::npos) << line << "\n" << text.out;

  const Result r = run(llama405("16384", {"--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  const auto& job = json["job"];
  EXPECT_GT(job["goodput"].get<double>(), 0.85);
  EXPECT_LT(job["goodput"].get<double>(), 0.97);
  EXPECT_EQ(job["training_tokens"].get<double>(), 15.6e12);
  EXPECT_EQ(job["time_to_train_failure_free_s"].get<double>(),
            json["step_time_s"]["total"].get<double>() * job["steps"].get<double>());
  EXPECT_EQ(job["time_to_train_s"].get<double>(),
            job["time_to_train_failure_free_s"].get<double>() / job["goodput"].get<double>());
  EXPECT_EQ(json["defaults"]["gpu_mtbf_hours"], "fallback");

  // One plan that fits on all three sizes.
  const std::vector<std::string> full = {"--recompute", "full"};
  const double at_8k = goodput_of(llama405("8192", full, "1"));
  const double at_16k = goodput_of(llama405("16384", full, "1"));
  const double at_32k = goodput_of(llama405("32768", full, "1"));
  EXPECT_GT(at_8k, at_16k);
  EXPECT_GT(at_16k, at_32k);
  const double goodput = job["goodput"].get<double>();
  EXPECT_GT(goodput_of(llama405("16384", {"--storage-gbytes-per-s-per-node", "20",
                                          "--storage-gbytes-per-s", "20000"})),
            goodput);
  EXPECT_GT(goodput_of(llama405("16384", {"--async-snapshot-gbytes-per-s", "25"})), goodput);
  EXPECT_EQ(goodput_of(llama405("16384", {"--gpu-mtbf-hours", "inf"})), 1);
}

// A point like many calibration runs keeps its family's interval; one like none (every B200 run
// in the data is fp8) is flagged and gets it widened by interval_widening.
TEST(Estimate, CalibrationSupportFlagsAndWidens) {
  const std::vector<std::string> point = {"estimate", "--model", "llama3.1-70b", "--gpus", "64",
                                          "--tp",     "8",       "--precision",  "bf16"};
  auto with_gpu = [&point](const char* gpu, std::vector<std::string> more = {}) {
    std::vector<std::string> args = point;
    args.insert(args.end(), {"--gpu", gpu});
    args.insert(args.end(), more.begin(), more.end());
    return run(args);
  };
  const Result text = with_gpu("B200-180GB");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("  calibration support             0 runs\n"
                          "  note: few calibration runs are like this point (no dense runs on "
                          "B200-180GB in bf16);\n"
                          "  its interval is widened (docs/calibration.md, \"Calibration "
                          "support\")\n"),
            std::string::npos)
      << text.out;
  const estimator::Calibration& c = spaces::builtin_calibration();
  auto ratios = [](const Result& r) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto json = nlohmann::json::parse(r.out);
    const double step = json["step_time_s"]["total"].get<double>();
    return std::tuple(json["calibration_support"].get<int>(),
                      json["step_time_lo_s"].get<double>() / step,
                      json["step_time_hi_s"].get<double>() / step);
  };
  const auto [few, few_lo, few_hi] = ratios(with_gpu("B200-180GB", {"--json"}));
  EXPECT_EQ(few, 0);
  EXPECT_NEAR(few_lo, std::pow(c.interval_lo, c.interval_widening), 1e-12);
  EXPECT_NEAR(few_hi, std::pow(c.interval_hi, c.interval_widening), 1e-12);
  const auto [many, lo, hi] = ratios(with_gpu("H100-SXM5-80GB", {"--json"}));
  EXPECT_EQ(many, 63);
  EXPECT_NEAR(lo, c.interval_lo, 1e-12);
  EXPECT_NEAR(hi, c.interval_hi, 1e-12);
  EXPECT_EQ(with_gpu("H100-SXM5-80GB").out.find("note: few"), std::string::npos);
}

TEST(Estimate, TomlFileEqualsFlagsAndFlagsOverrideIt) {
  TempDir dir;
  const std::string file =
      dir.file("plan.toml",
               "model = \"gpt3-175b\"\ngpu = \"H100-SXM5-80GB\"\nnodes = 8\ntp = 8\npp = 4\n"
               "sequence_parallel = true\nrecompute = \"full\"\n");
  const Result from_file = run({"estimate", file, "--json"});
  const Result from_flags = run(with(
      kBase, {"--tp", "8", "--pp", "4", "--sequence-parallel", "--recompute", "full", "--json"}));
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_EQ(from_file.out, from_flags.out);
  const Result overridden = run({"estimate", file, "--pp", "8", "--json"});
  EXPECT_NE(overridden.out.find("\"pp\": 8"), std::string::npos);
}

TEST(Estimate, ShippedExampleRuns) {
  const Result r = run({"estimate", source_path("examples/estimate-gpt3-175b.toml")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("feasible                    yes"), std::string::npos) << r.out;
}

TEST(Estimate, InlineArchitecture) {
  const Result r = run({"estimate",     "--layers",   "32",
                        "--hidden",     "4096",       "--heads",
                        "32",           "--kv-heads", "8",
                        "--ffn-hidden", "14336",      "--mlp",
                        "swiglu",       "--vocab",    "128256",
                        "--seq-len",    "8192",       "--global-batch",
                        "128",          "--gpu",      "H100-SXM5-80GB",
                        "--nodes",      "1",          "--precision",
                        "fp8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.out.find("model     custom: 32 layers, hidden 4096, 32 heads (8 kv), ffn 14336 swiglu"),
      std::string::npos);
}

TEST(EstimateErrors, UnknownModelSuggestsClosestNames) {
  expect_error(
      {"estimate", "--model", "gpt3-175", "--gpu", "H100-SXM5-80GB", "--nodes", "8"},
      "--model: unknown model 'gpt3-175'; did you mean 'gpt3-175b', 'gpt3-125m' or 'gpt3-13b'?");
}

TEST(EstimateErrors, UnknownGpuSuggestsClosestNames) {
  expect_error({"estimate", "--model", "gpt3-175b", "--gpu", "H100", "--nodes", "8"},
               "--gpu: unknown accelerator 'H100'; did you mean 'H100-SXM5-80GB'?");
  expect_error({"estimate", "--model", "gpt3-175b", "--gpu", "A100-80GB", "--nodes", "8"},
               "--gpu: unknown accelerator 'A100-80GB'; did you mean 'A100-SXM4-80GB', "
               "'B200-180GB' or 'B300-288GB'?");
}

TEST(EstimateErrors, TpMustDivideHeads) {
  expect_error(with(kBase, {"--tp", "5"}), "--tp: 5 does not divide the 96 attention heads");
  expect_error({"estimate", "--model", "nemotron4-15b", "--gpu", "H100-SXM5-80GB", "--nodes", "3",
                "--tp", "6"},
               "--tp: 6 and the 8 key/value heads do not divide one another");
}

TEST(EstimateErrors, DegreesMustMultiplyToTheGpuCount) {
  expect_error(with(kBase, {"--tp", "8", "--pp", "4", "--dp", "3"}),
               "--dp: tp*pp*cp*dp = 8*4*1*3 = 96 does not equal the 64 GPUs");
  expect_error(with(kBase, {"--tp", "8", "--pp", "3"}),
               "--tp: tp*pp*cp = 8*3*1 = 24 does not divide the 64 GPUs");
}

TEST(EstimateErrors, RankOrderNamesTheFlag) {
  expect_error(with(kBase, {"--tp", "8", "--pp", "4", "--cp", "2", "--rank-order", "tp-pp-dp"}),
               "--rank-order: tp-pp-dp needs cp = 1 and ep = 1, not cp 2 and ep 1");
  expect_error(with(kBase, {"--tp", "8", "--rank-order", "tp-pp-dp"}),
               "--rank-order: with pp 1 and dp 8 tp-pp-dp numbers the ranks as tp-cp-ep-dp-pp "
               "does: it is the plan with that order");
  expect_error(with(kBase, {"--rank-order", "pp-first"}),
               "--rank-order: must be tp-cp-ep-dp-pp or tp-pp-dp, got 'pp-first'");
}

TEST(EstimateErrors, NegativeBandwidthNamesTheFlag) {
  expect_error(with(kBase, {"--tp", "8", "--inter-node-gbps-per-gpu", "-100"}),
               "--inter-node-gbps-per-gpu: must be a positive number, got '-100'");
  expect_error(with(kBase, {"--tp", "8", "--nvlink-gbytes-per-s=-5"}),
               "--nvlink-gbytes-per-s: must be a positive number, got '-5'");
  expect_error(with(kBase, {"--tp", "8", "--expansion-gbytes-per-s=-1"}),
               "--expansion-gbytes-per-s: must be a non-negative number, got '-1'");
}

TEST(EstimateErrors, ScaleOutNetworkNamesTheFlag) {
  expect_error(with(kBase, {"--tp", "8", "--network", "clos"}),
               "--network: must be fat_tree, rail_optimized, rail_only or dragonfly, got 'clos'");
  expect_error(with(kBase, {"--tp", "8", "--oversubscription", "0.5"}),
               "--oversubscription: must be at least 1 (downlinks per uplink; 1 is non-blocking), "
               "got 0.5");
  expect_error(with(kBase, {"--tp", "8", "--global-taper", "0.5"}),
               "--global-taper: must be at least 1 (a dragonfly group's injection over its global "
               "bandwidth; 1 is untapered), got 0.5");
  expect_error(with(kBase, {"--tp", "8", "--planes", "0"}),
               "--planes: must be a positive integer, got '0'");
  expect_error(with(kBase, {"--tp", "8", "--pod-gpus", "20"}),
               "--pod-gpus: a pod of 20 GPUs is not whole nodes of 8 GPUs; give a multiple of 8");
  expect_error(with(kBase, {"--tp", "8", "--pod-gpus", "24"}),
               "--pod-gpus: a pod of 24 GPUs does not divide the cluster's 64 GPUs; give a "
               "divisor of 64");
  expect_error(with(kBase, {"--tp", "8", "--network", "dragonfly", "--group-gpus", "128"}),
               "--group-gpus: a dragonfly group of 128 GPUs is larger than the cluster's 64 GPUs; "
               "give at most 64");
  expect_error({"estimate", "--model", "gpt3-175b", "--gpu", "H100-SXM5-80GB", "--nodes", "4096",
                "--tp", "8", "--network", "rail_only"},
               "--network: a rail-only network's rail reaches at most 2048 nodes (a two-tier rail "
               "of 64-port switches), not the cluster's 4096; give more planes or another network");
}

TEST(EstimateErrors, OtherPlanErrors) {
  const std::vector<std::string> eighty = {"estimate",       "--model", "gpt3-175b", "--gpu",
                                           "H100-SXM5-80GB", "--gpus",  "80"};
  expect_error(with(eighty, {"--nodes", "10"}), "--gpus: give either nodes or gpus, not both");
  expect_error(with(eighty, {"--tp", "8", "--pp", "5", "--pipeline-split", "even"}),
               "--pp: pp*vp = 5*1 = 5 does not divide the 96 layer slots");
  expect_error(with(kBase, {"--tp", "8", "--pp", "4", "--pipeline-split", "uneven"}),
               "--pipeline-split: pp*vp = 4 divides the 96 layers (use \"even\") or exceeds them");
  expect_error(with(kBase, {"--tp", "8", "--pipeline-split", "zigzag"}),
               "--pipeline-split: must be even, embedding_loss or uneven, got 'zigzag'");
  expect_error(with(kBase, {"--tp", "1", "--sequence-parallel"}),
               "--sequence-parallel: needs tp > 1");
  expect_error(with(kBase, {"--tp", "8", "--vp", "2"}), "--vp: interleaving (vp 2) needs pp > 1");
  expect_error(with(kBase, {"--tp", "8", "--global-batch", "1001"}),
               "--global-batch: 1001 is not a multiple of dp*micro_batch = 8*1");
  expect_error(with(kBase, {"--tp", "8", "--zero", "4"}), "--zero: must be 0, 1, 2 or 3, got '4'");
  expect_error(with(kBase, {"--tp", "8", "--recompute", "some"}),
               "--recompute: must be none, selective, full or selective:MODULE+MODULE... of "
               "core_attn, layernorm, mla_up_proj, mlp, moe_act, moe, shared_experts, got 'some'");
  // The software stack's settings: a value not among theirs, and the rules they break.
  expect_error(with(kBase, {"--tp", "8", "--dispatcher", "nccl"}),
               "--dispatcher: must be alltoall, allgather, deepep, hybridep or einsum, got 'nccl'");
  expect_error(with(kBase, {"--tp", "8", "--a2a-overlap", "maybe"}),
               "--a2a-overlap: must be true or false, got 'maybe'");
  expect_error(with(kBase, {"--tp", "8", "--dispatcher", "deepep"}),
               "--dispatcher: the deepep dispatcher needs ep > 1");
  expect_error({"estimate", "--model", "mixtral-8x7b", "--gpu", "H100-SXM5-80GB", "--gpus", "8",
                "--dispatcher", "einsum"},
               "--dispatcher: the einsum dispatcher needs token_routing = capacity (its one-hot "
               "masks have a capacity per expert), not dropless");
  expect_error(with(kBase, {"--tp", "8", "--token-routing", "balanced"}),
               "--token-routing: a dense model routes no tokens: token_routing must be dropless");
  expect_error(with(kBase, {"--tp", "8", "--fp8-attention", "true"}),
               "--fp8-attention: fp8_attention needs fp8 or fp4 training, not bf16");
  expect_error(with(kBase, {"--tp", "8", "--precision", "fp8", "--fp8-recipe", "mxfp8"}),
               "--fp8-recipe: mxfp8 needs an accelerator with MX formats (Blackwell: B200, GB200, "
               "GB300)");
  expect_error(with(kBase, {"--tp", "8", "--offload", "optimizer"}),
               "--offload: needs an expansion tier (expansion_gb and expansion_gbytes_per_s)");
  expect_error(
      {"estimate", "--model", "gpt3-175b", "--gpu", "V100-SXM2-32GB", "--nodes", "8", "--tp", "8"},
      "--precision: V100-SXM2-32GB has no bf16 peak; it supports fp32, fp16");
  expect_error({"estimate", "--gpu", "H100-SXM5-80GB", "--nodes", "1", "--layers", "2"},
               "--hidden: required without --model (or give --model with a catalog name)");
  expect_error({"estimate", "--model", "gpt3-175b", "--nodes", "1"},
               "--gpu: required (an accelerator of the catalog, e.g. H100-SXM5-80GB)");
  expect_error(with(kBase, {"--tp", "eight"}), "--tp: must be a positive integer, got 'eight'");
}

TEST(EstimateErrors, NumbersAreTheWholeTextAndFitAnInt) {
  // Degrees are ints in the estimator: 2^31 and past would wrap, so they are refused as given.
  for (const char* bad : {"2147483648", "99999999999", "18446744073709551617", "+8", " 8", "8 ",
                          "8.0", "1e3", "0x8", "-0"})
    expect_error(with(kBase, {"--tp", bad}),
                 fmt::format("--tp: must be a positive integer, got '{}'", bad));
  expect_error(with(kBase, {"--zero", "-1"}), "--zero: must be an integer >= 0, got '-1'");
  for (const char* bad : {"nan", "1e400", "+100", "0x10", "100 "})
    expect_error(
        with(kBase, {"--tp", "8", "--inter-node-gbps-per-gpu", bad}),
        fmt::format("--inter-node-gbps-per-gpu: must be a positive number, got '{}'", bad));
  expect_error(with(kBase, {"--gpu-mtbf-hours", "nan"}),
               "--gpu-mtbf-hours: must be a positive number or inf, got 'nan'");
  // A settings file's integer is read the same way.
  TempDir dir;
  const std::string big =
      dir.file("big.toml", "model = \"gpt3-175b\"\ngpu = \"H100-SXM5-80GB\"\nnodes = 3000000000\n");
  expect_error({"estimate", big},
               fmt::format("{}:3:1: nodes: must be a positive integer, got '3000000000'", big));
}

TEST(EstimateErrors, TomlErrorsNameFileLineAndColumn) {
  TempDir dir;
  const std::string bad_key =
      dir.file("bad.toml",
               "model = \"gpt3-175b\"\ngpu = \"H100-SXM5-80GB\"\nnodes = 8\n"
               "tensor_parallel = 8\n");
  expect_error(
      {"estimate", bad_key},
      fmt::format("{}:4:1: tensor_parallel: unknown key; did you mean 'sequence_parallel'?",
                  bad_key));
  const std::string bad_value = dir.file("value.toml",
                                         "model = \"gpt3-175b\"\ngpu = \"H100-SXM5-80GB\"\n"
                                         "nodes = 8\ntp = -8\n");
  expect_error({"estimate", bad_value},
               fmt::format("{}:4:1: tp: must be a positive integer, got '-8'", bad_value));
  const std::string bad_model = dir.file("model.toml", "model = \"llama-70b\"\n");
  expect_error(
      {"estimate", bad_model},
      fmt::format(
          "{}:1:1: model: unknown model 'llama-70b'; did you mean 'llama2-70b', 'llama3-70b' or "
          "'llama2-7b'?",
          bad_model));
}

TEST(Estimate, HelpExitsZero) {
  const Result r = run({"estimate", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Usage: clustersweep estimate [FILE.toml] [options]"), std::string::npos);
  EXPECT_NE(r.out.find("--inter-node-gbps-per-gpu"), std::string::npos);
}

const std::vector<std::string> kDlrm = {
    "estimate", "--model", "dlrmv2-dcnv2", "--gpu", "H100-SXM5-80GB", "--gpus", "16"};

TEST(Estimate, RecommendationModelsPrintThePlacementOfEveryTable) {
  const Result r = run(with(kDlrm, {"--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["model"], "dlrmv2-dcnv2");
  EXPECT_EQ(json["sharding"], "best");
  ASSERT_EQ(json["tables"].size(), 26u);
  EXPECT_EQ(json["tables"][20]["pooling"], 100);
  EXPECT_EQ(json["feasible"], true);
  EXPECT_GT(json["samples_per_s"].get<double>(), 0);
  const double total = json["step_time_s"]["total"];
  double parts = 0;
  for (const auto& [name, value] : json["step_time_s"].items())
    if (name != "total") parts += value.get<double>();
  EXPECT_NEAR(parts, total, 1e-12 * total);

  const Result rows = run(with(kDlrm, {"--sharding", "row", "--json"}));
  ASSERT_EQ(rows.exit_code, 0) << rows.err;
  for (const auto& table : nlohmann::json::parse(rows.out)["tables"])
    EXPECT_EQ(table["sharding"], "row");

  const Result text = run(with(kDlrm, {"--sharding", "table"}));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const char* line :
       {"sharding  table (table)", "  table 20       40000000 rows x 100  table on GPU",
        "all-to-all (exposed)", "memory on the busiest GPU", "samples/s"})
    EXPECT_NE(text.out.find(line), std::string::npos) << line << "\n" << text.out;
}

TEST(Estimate, RecommendationModelsReadATomlFileToo) {
  const Result file = run({"estimate", source_path("examples/estimate-dlrmv2.toml"), "--json"});
  ASSERT_EQ(file.exit_code, 0) << file.err;
  const Result flags = run({"estimate", "--model", "dlrmv2-dcnv2", "--precision", "fp16",
                            "--global-batch", "65536", "--gpu", "H100-SXM5-80GB", "--gpus", "16",
                            "--inter-node-gbps-per-gpu", "400", "--sharding", "best", "--json"});
  ASSERT_EQ(flags.exit_code, 0) << flags.err;
  EXPECT_EQ(nlohmann::json::parse(file.out), nlohmann::json::parse(flags.out));
}

TEST(Estimate, TransformersRejectRecommendationModelSettings) {
  expect_error(with(kBase, {"--tp", "8", "--sharding", "row"}),
               "--sharding: not a setting of transformer models");
  expect_error(with(kBase, {"--embedding-dim", "64"}),
               "--embedding-dim: not a setting of transformer models");
}

TEST(Estimate, RecommendationModelsRejectTransformerSettings) {
  expect_error(with(kDlrm, {"--tp", "2"}), "--tp: not a setting of recommendation models");
  expect_error(
      with(kDlrm, {"--sharding", "rows"}),
      "--sharding: must be table, row, column, table_row, data, hybrid, fused_row or best, "
      "got 'rows'");
  expect_error(with(kDlrm, {"--framework", "megatron-core"}),
               "--framework: a recommendation model's framework must be any, hugectr or torchrec, "
               "got 'megatron-core'");
  expect_error(with(kDlrm, {"--bottom-mlp", "512-x"}),
               "--bottom-mlp: must be up to 8 layer widths joined by '-', e.g. 512-256-128, got "
               "'512-x'");
  expect_error(with(kDlrm, {"--num-tables", "20"}),
               "--num-tables: 20 tables, but the model 'dlrmv2-dcnv2' has 26");
}

TEST(EstimateErrors, ReliabilityFlagsTakeWhatTheSpecKeysTake) {
  expect_error(with(kBase, {"--gpu-mtbf-hours", "0"}),
               "--gpu-mtbf-hours: must be a positive number or inf, got '0'");
  expect_error(with(kBase, {"--restart-s", "inf"}),
               "--restart-s: must be a non-negative number, got 'inf'");
  expect_error(with(kBase, {"--storage-gbytes-per-s", "0"}),
               "--storage-gbytes-per-s: must be a positive number, got '0'");
  expect_error(with(kBase, {"--training-tokens", "many"}),
               "--training-tokens: must be a positive number, got 'many'");
  expect_error(with(kDlrm, {"--training-tokens", "1e9"}),
               "--training-tokens: not a setting of recommendation models");
}

}  // namespace
}  // namespace clustersweep::apps_test
