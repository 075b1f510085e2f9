// Every spec error is one line "file:line:column: key: message" naming what would be valid.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "spaces/space.h"

namespace clustersweep::spaces {
namespace {

constexpr const char* kGood = R"([workload]
model = "gpt3-1.3b"
[cluster]
gpu = "H100-SXM5-80GB"
nodes = [1, 2]
)";

// Replaces the first occurrence of `from` in kGood by `to`.
std::string edit(const std::string& from, const std::string& to) {
  std::string s = kGood;
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

std::string error_of(const std::string& text) {
  try {
    Space::parse(text, "bad.toml");
  } catch (const InputError& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    return e.what();
  }
  return "(no error)";
}

TEST(SpecErrors, GoodSpecParses) { EXPECT_EQ(error_of(kGood), "(no error)"); }

TEST(SpecErrors, TomlSyntax) {
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = [1, 2")),
            "bad.toml:5:15: Error while parsing array: encountered end-of-file");
}

TEST(SpecErrors, UnknownKeys) {
  EXPECT_EQ(error_of(edit("nodes =", "nodez =")),
            "bad.toml:5:1: cluster.nodez: unknown key; did you mean 'nodes'?");
  EXPECT_EQ(error_of(edit("[cluster]", "[clustr]")),
            "bad.toml:3:2: clustr: unknown key; did you mean 'cluster'?");
  EXPECT_EQ(error_of(std::string(kGood) + "[plan]\nconstraints = [\"tp <= 8\"]\n"),
            "bad.toml:7:1: plan.constraints: unknown key; 'constraints' is a top-level key: put it "
            "before the "
            "first [table]");
  EXPECT_EQ(error_of(std::string(kGood) + "[output]\nxyzzy = 1\n"),
            "bad.toml:7:1: output.xyzzy: unknown key; valid keys are: keep, objective, columns, "
            "compression");
}

TEST(SpecErrors, OutputColumnsAndCompression) {
  const std::string output = std::string(kGood) + "[output]\n";
  EXPECT_EQ(error_of(output + "columns = 3\n"),
            "bad.toml:7:11: output.columns: must be \"all\", \"summary\" or an array of column "
            "names, got integer 3");
  EXPECT_EQ(error_of(output + "columns = \"some\"\n"),
            "bad.toml:7:11: output.columns: must be \"all\", \"summary\" or an array of column "
            "names, got string \"some\"");
  EXPECT_EQ(error_of(output + "columns = []\n"),
            "bad.toml:7:11: output.columns: an empty list keeps nothing but point_id, design_id "
            "and feasible: name the columns to keep, or use \"summary\"");
  EXPECT_EQ(error_of(output + "columns = [\"tp\", 4]\n"),
            "bad.toml:7:18: output.columns: must name columns as strings, got integer 4");
  EXPECT_EQ(error_of(output + "columns = [\"tp\", \"pp\", \"tp\"]\n"),
            "bad.toml:7:24: output.columns: names 'tp' twice");
  EXPECT_EQ(error_of(output + "compression = \"zstd\"\n"),
            "bad.toml:7:15: output.compression: must be one of \"none\", \"fast\", \"small\", "
            "got string \"zstd\"");
  // The default keeps the summary of every point, every column of a row per design.
  EXPECT_EQ(spaces::Space::parse(kGood, "good.toml").output_columns().kind,
            spaces::OutputColumns::Kind::summary);
  EXPECT_EQ(spaces::Space::parse(output + "keep = \"best-per-design\"\n", "good.toml")
                .output_columns()
                .text(),
            "all");
  const auto listed =
      spaces::Space::parse(output + "columns = [\"tp\", \"step_time_s\"]\n", "good.toml");
  EXPECT_EQ(listed.output_columns().text(), "[\"tp\", \"step_time_s\"]");
  EXPECT_EQ(listed.output_columns().where,
            (std::vector<std::string>{"good.toml:7:12", "good.toml:7:18"}));
}

TEST(SpecErrors, MissingTablesAndKeys) {
  EXPECT_EQ(error_of("[workload]\nmodel = \"gpt3-1.3b\"\n"),
            "bad.toml:1:1: cluster: missing table [cluster]; give at least: gpu = "
            "\"<accelerator>\" and nodes = "
            "<count>");
  EXPECT_EQ(error_of(edit("model = \"gpt3-1.3b\"", "")),
            "bad.toml:1:1: workload: missing 'model' (a catalog model such as \"gpt3-175b\", a "
            "[models.NAME] "
            "table, or a list)");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "")),
            "bad.toml:3:1: cluster: missing 'nodes' (or 'gpus'): the cluster size to sweep, e.g. "
            "nodes = [16, "
            "32, 64]");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = 1\ngpus = 8")),
            "bad.toml:6:8: cluster.gpus: give either 'nodes' or 'gpus', not both");
}

TEST(SpecErrors, Fabric) {
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = [1, 2]\nfabric = \"ring\"")),
            "bad.toml:6:10: cluster.fabric: must be one of \"switch\", \"mesh\", \"torus\", "
            "\"default\", got "
            "\"ring\"");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = [1, 2]\nfabric = \"torus\"\ntorus = \"4x4\"")),
            "bad.toml:7:9: cluster.torus: 4x4 is 16 chips, but the scale-up domain (nvlink_domain) "
            "is 8; give dimensions whose product is the domain");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = [1, 2]\ntorus = \"2x4\"")),
            "bad.toml:6:9: cluster.torus: a torus's dimensions need a torus fabric: set "
            "cluster.fabric = \"torus\" or use an accelerator with one");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = [1, 2]\nfabric = \"torus\"\ntorus = \"2x0\"")),
            "bad.toml:7:9: cluster.torus: must be 1 to 3 positive chip counts joined by 'x' (e.g. "
            "16x16, 4x4x8), got '2x0'");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = [1, 2]\nfabric = \"torus\"\ntorus = 8")),
            "bad.toml:7:9: cluster.torus: must be a string of chip counts joined by 'x' (e.g. "
            "\"16x16\"), got integer 8");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = [1, 2]\nfabric = \"torus\"\ntorus = \"2x4\"")),
            "(no error)");
}

TEST(SpecErrors, Network) {
  auto with = [](const std::string& keys) {
    return edit("nodes = [1, 2]", "nodes = [1, 2]\n" + keys);
  };
  EXPECT_EQ(error_of(with("network = \"fat_tre\"")),
            "bad.toml:6:11: cluster.network: must be one of \"fat_tree\", \"rail_optimized\", "
            "\"rail_only\", \"dragonfly\", got \"fat_tre\"");
  EXPECT_EQ(error_of(with("oversubscription = [1, 0.5]")),
            "bad.toml:6:20: cluster.oversubscription: must be at least 1 (downlinks per uplink; 1 "
            "is non-blocking), got 0.5");
  EXPECT_EQ(error_of(with("global_taper = 0.9")),
            "bad.toml:6:16: cluster.global_taper: must be at least 1 (a dragonfly group's "
            "injection over its global bandwidth; 1 is untapered), got 0.9");
  EXPECT_EQ(error_of(with("planes = 0")),
            "bad.toml:6:10: cluster.planes: must be a positive integer, got 0");
  EXPECT_EQ(error_of(with("pod_gpus = 12")),
            "bad.toml:6:12: cluster.pod_gpus: a pod of 12 GPUs is not whole nodes of 8 GPUs; give "
            "a multiple of 8");
  EXPECT_EQ(error_of(with("pod_gpus = [8, 16]")),
            "bad.toml:6:12: cluster.pod_gpus: a pod of 16 GPUs does not divide the cluster's 8 "
            "GPUs; give a divisor of 8");
  EXPECT_EQ(error_of(with("network = [\"fat_tree\", \"dragonfly\"]\ngroup_gpus = 16")),
            "bad.toml:7:14: cluster.group_gpus: a dragonfly group of 16 GPUs is larger than the "
            "cluster's 8 GPUs; give at most 8");
  // A swept scale-out speed may take the largest switch of the parts (144 ports at 800 Gbit/s).
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = [1, 16384]\nnetwork = \"rail_only\"")),
            "bad.toml:6:11: cluster.network: a rail-only network's rail reaches at most 10368 "
            "nodes (a two-tier rail of 144-port switches), not the cluster's 16384; give more "
            "planes or another network");
  EXPECT_EQ(
      error_of(edit("nodes = [1, 2]", "nodes = [1, 4096]\nnetwork = \"rail_only\"\nplanes = 2")),
      "(no error)");
  EXPECT_EQ(error_of(with("network = [\"rail_only\", \"dragonfly\"]\noversubscription = [1, 7]\n"
                          "pod_gpus = 8\nplanes = [1, 2]\ngroup_gpus = 8\nglobal_taper = 2")),
            "(no error)");
}

TEST(SpecErrors, Numbers) {
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = -4")),
            "bad.toml:5:9: cluster.nodes: must be a positive integer, got -4");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = [1, 2.5]")),
            "bad.toml:5:13: cluster.nodes[1]: must be a positive integer, got 2.5");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = [1, 2, 1]")),
            "bad.toml:5:16: cluster.nodes[2]: duplicate value 1");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = []")),
            "bad.toml:5:9: cluster.nodes: empty list; give a positive integer, a list, {start, "
            "stop, step}, "
            "{start, stop, factor} or \"pow2:A..B\"");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = \"lots\"")),
            "bad.toml:5:9: cluster.nodes: must be a positive integer, a list, {start, stop, step}, "
            "{start, stop, "
            "factor} or \"pow2:A..B\", got string \"lots\"");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = \"all\"")),
            "bad.toml:5:9: cluster.nodes: must be a positive integer, a list, {start, stop, step}, "
            "{start, stop, "
            "factor} or \"pow2:A..B\", got string \"all\"");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = [1, 1000000000]")),
            "bad.toml:5:9: cluster.nodes: 1000000000 nodes of 8 GPUs exceed 2^31 GPUs");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = 1\nhbm_gb = 0")),
            "bad.toml:6:10: cluster.hbm_gb: must be a positive number, got 0");
}

TEST(SpecErrors, IntegersPastAnIntAreRefusedAsWritten) {
  // Counts and degrees are ints: a value past 2^31 - 1 would wrap, and past 2^53 its double is
  // another number, so the message quotes the integer as written.
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = 2147483648")),
            "bad.toml:5:9: cluster.nodes: must be a whole number from 1 to 2147483647, got "
            "2147483648");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = [1, 9223372036854775807]")),
            "bad.toml:5:13: cluster.nodes[1]: must be a whole number from 1 to 2147483647, got "
            "9223372036854775807");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = -9223372036854775808")),
            "bad.toml:5:9: cluster.nodes: must be a positive integer, got -9223372036854775808");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = 3e9")),
            "bad.toml:5:9: cluster.nodes: must be a whole number from 1 to 2147483647, got "
            "3000000000");
  EXPECT_EQ(error_of(std::string(kGood) + "[plan]\ntp = [1, 4294967297]\n"),
            "bad.toml:7:10: plan.tp[1]: must be a whole number from 1 to 2147483647, got "
            "4294967297");
  EXPECT_EQ(error_of(std::string(kGood) + "[plan]\nzero = 4294967296\n"),
            "bad.toml:7:8: plan.zero: must be a whole number from 0 to 2147483647, got "
            "4294967296");
  EXPECT_EQ(error_of(edit("model = \"gpt3-1.3b\"", "model = \"gpt3-1.3b\"\nseq_len = 2147483648")),
            "bad.toml:3:11: workload.seq_len: must be a whole number from 1 to 2147483647, got "
            "2147483648");
  // The ends of "pow2:A..B" are whole numbers: no sign or blank.
  for (const char* bad : {"pow2:-1..4", "pow2: 1..4", "pow2:+1..4", "pow2:1..4 ", "pow2:1..1e3"})
    EXPECT_EQ(error_of(edit("nodes = [1, 2]", fmt::format("nodes = \"{}\"", bad))),
              fmt::format("bad.toml:5:9: cluster.nodes: must be a positive integer, a list, "
                          "{{start, stop, step}}, {{start, stop, factor}} or \"pow2:A..B\", got "
                          "string \"{}\"",
                          bad))
        << bad;
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = \"pow2:1..4\"")), "(no error)");
}

TEST(SpecErrors, Ranges) {
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = {start = 8, stop = 2, step = 1}")),
            "bad.toml:5:28: cluster.nodes.stop: must be >= start (8), got 2");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = {start = 1, stop = 8, step = 1, factor = 2}")),
            "bad.toml:5:9: cluster.nodes: a range needs exactly one of 'step' (linear) or 'factor' "
            "(geometric)");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = {start = 1, stop = 8}")),
            "bad.toml:5:9: cluster.nodes: a range needs exactly one of 'step' (linear) or 'factor' "
            "(geometric)");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = {start = 1, stop = 8, factor = 1}")),
            "bad.toml:5:40: cluster.nodes.factor: must be a number > 1, got 1");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = {start = 1, stop = 8, stepp = 1}")),
            "bad.toml:5:31: cluster.nodes.stepp: unknown key; did you mean 'step'?");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = {start = 1, stop = 8, step = 0.5}")),
            "bad.toml:5:38: cluster.nodes.step: must be a positive integer, got 0.5");
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = \"pow2:8..4\"")),
            "bad.toml:5:9: cluster.nodes: must be a positive integer, a list, {start, stop, step}, "
            "{start, stop, "
            "factor} or \"pow2:A..B\", got string \"pow2:8..4\"");
  EXPECT_EQ(
      error_of(edit("nodes = [1, 2]", "nodes = {start = 3, stop = 30, factor = 1.5}")),
      "bad.toml:5:9: cluster.nodes: the geometric range reaches 4.5, which is not an integer");
}

TEST(SpecErrors, Catalog) {
  EXPECT_EQ(error_of(edit("\"H100-SXM5-80GB\"", "\"H100\"")).substr(0, 51),
            "bad.toml:4:7: cluster.gpu: unknown accelerator 'H10");
  EXPECT_EQ(error_of(edit("\"gpt3-1.3b\"", "[\"gpt3-1.3b\", \"gpt4\"]")).substr(0, 51),
            "bad.toml:2:23: workload.model: unknown model 'gpt4'");
  EXPECT_EQ(error_of(edit("\"gpt3-1.3b\"", "[\"gpt3-1.3b\", \"gpt3-1.3b\"]")),
            "bad.toml:2:23: workload.model[1]: duplicate value \"gpt3-1.3b\"");
}

TEST(SpecErrors, Labels) {
  EXPECT_EQ(error_of(std::string(kGood) + "[plan]\nrecompute = \"some\"\n"),
            "bad.toml:7:13: plan.recompute: must be none, selective, full or "
            "selective:MODULE+MODULE... of core_attn, layernorm, mla_up_proj, mlp, moe_act, moe, "
            "shared_experts, a list of them or \"all\", got string \"some\"");
  EXPECT_EQ(
      error_of(std::string(kGood) + "[plan]\nrecompute = [\"selective:mlp\", \"selective:mlp\"]\n"),
      "bad.toml:7:31: plan.recompute[1]: duplicate value \"selective:mlp\"");
  EXPECT_EQ(error_of(std::string(kGood) + "[plan]\nframework = \"jax\"\n"),
            "bad.toml:7:13: plan.framework: must be any, megatron-core, fsdp2, deepspeed, maxtext, "
            "neuronx or primus, a list of them or \"all\", got string \"jax\"");
  EXPECT_EQ(error_of(edit("model = \"gpt3-1.3b\"",
                          "model = \"gpt3-1.3b\"\nprecision = [\"bf16\", \"int4\"]")),
            "bad.toml:3:22: workload.precision[1]: must be one of \"fp32\", \"tf32\", \"fp16\", "
            "\"bf16\", \"fp8\", \"fp4\", \"int8\", got \"int4\"");
  EXPECT_EQ(error_of(std::string(kGood) + "[plan]\nsequence_parallel = 1\n"),
            "bad.toml:7:21: plan.sequence_parallel: must be true, false, a list of them or "
            "\"all\", got integer 1");
  // The stack's settings: their values named by stack_values().
  EXPECT_EQ(
      error_of(std::string(kGood) + "[plan]\ndispatcher = \"nccl\"\n"),
      "bad.toml:7:14: plan.dispatcher: must be alltoall, allgather, deepep, hybridep or einsum, a "
      "list of them or \"all\", got string \"nccl\"");
  EXPECT_EQ(error_of(std::string(kGood) + "[plan]\ncuda_graph = [\"none\", \"whole\"]\n"),
            "bad.toml:7:23: plan.cuda_graph[1]: must be none, partial or full, a list of them or "
            "\"all\", got string \"whole\"");
  EXPECT_EQ(error_of(std::string(kGood) + "[plan]\na2a_overlap = 1\n"),
            "bad.toml:7:15: plan.a2a_overlap: must be true or false, a list of them or \"all\", "
            "got integer 1");
  EXPECT_EQ(error_of(std::string(kGood) + "[plan]\ndp_overlap = [true, true]\n"),
            "bad.toml:7:21: plan.dp_overlap[1]: duplicate value true");
  EXPECT_EQ(error_of(std::string(kGood) + "[plan]\nfp8_recipe = []\n"),
            "bad.toml:7:14: plan.fp8_recipe: empty list; give one or more of delayed, current, "
            "mxfp8 or blockwise");
  EXPECT_EQ(error_of(std::string(kGood) + "[plan]\ndispatch = \"deepep\"\n"),
            "bad.toml:7:1: plan.dispatch: unknown key; did you mean 'dispatcher'?");
  EXPECT_EQ(error_of(std::string(kGood) + "[plan]\nzero = [0, 4]\n"),
            "bad.toml:7:12: plan.zero[1]: must be 0, 1, 2 or 3 (ZeRO stage), got 4");
  EXPECT_EQ(error_of(std::string(kGood) + "[output]\nkeep = \"best\"\n"),
            "bad.toml:7:8: output.keep: must be one of \"all\", \"feasible\", \"best-per-design\", "
            "\"pareto-per-design\", got string \"best\"");
  EXPECT_EQ(error_of(std::string(kGood) + "[output]\nobjective = \"speed\"\n"),
            "bad.toml:7:13: output.objective: must be one of \"step_time\", \"time_to_train\", "
            "\"energy\", "
            "\"cost\", got string \"speed\"");
}

TEST(SpecErrors, ExpansionAndPricing) {
  EXPECT_EQ(error_of(edit("nodes = [1, 2]", "nodes = 1\nexpansion_gb = [0, 512]")),
            "bad.toml:6:16: cluster.expansion_gb: an expansion tier needs its bandwidth: set "
            "cluster.expansion_gbytes_per_s");
  EXPECT_EQ(error_of(std::string(kGood) + "[pricing]\npue = 0.9\n"),
            "bad.toml:7:7: pricing.pue: must be >= 1 (facility power / IT power), got 0.9");
  EXPECT_EQ(
      error_of(std::string(kGood) + "[pricing]\ngpu_hour_usd = 2\ncapex_usd_per_gpu = 30000\n"),
      "bad.toml:8:21: pricing.capex_usd_per_gpu: give either gpu_hour_usd (rented) or "
      "capex_usd_per_gpu "
      "(owned), not both");
  // A price per accelerator: each of cluster.gpu, and only those.
  const std::string two =
      edit("gpu = \"H100-SXM5-80GB\"", "gpu = [\"H100-SXM5-80GB\", \"B200-180GB\"]");
  EXPECT_EQ(error_of(two + "[pricing]\ngpu_hour_usd = { \"H100-SXM5-80GB\" = 2.5 }\n"),
            "bad.toml:7:16: pricing.gpu_hour_usd: no price for 'B200-180GB'; give one for each "
            "accelerator of cluster.gpu (H100-SXM5-80GB, B200-180GB)");
  EXPECT_EQ(
      error_of(two +
               "[pricing]\ncapex_usd_per_gpu = { \"H100-SXM5-80GB\" = 3e4, \"B200\" = 5e4 }\n"),
      "bad.toml:7:21: pricing.capex_usd_per_gpu: 'B200' is not an accelerator of "
      "cluster.gpu (H100-SXM5-80GB, B200-180GB); did you mean 'B200-180GB'?");
  EXPECT_EQ(error_of(two + "[pricing]\ngpu_hour_usd = { \"H100-SXM5-80GB\" = -1 }\n"),
            "bad.toml:7:37: pricing.gpu_hour_usd.H100-SXM5-80GB: must be a non-negative number, "
            "got -1");
  EXPECT_EQ(error_of(two + "[pricing]\ngpu_hour_usd = \"2.5\"\n"),
            "bad.toml:7:16: pricing.gpu_hour_usd: must be a non-negative number, or a table of one "
            "per accelerator (e.g. { \"H100-SXM5-80GB\" = 2.5, \"B200-180GB\" = 5.0 }), got "
            "string \"2.5\"");
  EXPECT_EQ(error_of(two + "[pricing]\ngpu_hour_usd = { \"H100-SXM5-80GB\" = 2.5, "
                           "\"B200-180GB\" = 5 }\n"),
            "(no error)");
}

TEST(SpecErrors, InlineModels) {
  const std::string base =
      std::string(kGood) + "[models.mine]\nlayers = 4\nhidden = 256\nheads = 4\nvocab = 1000\n";
  EXPECT_EQ(error_of(edit("\"gpt3-1.3b\"", "\"mine\"") +
                     "[models.mine]\nlayers = 4\nhidden = 256\nheads = 4\n"
                     "vocab = 1000\n"),
            "bad.toml:2:9: workload.model: inline model 'mine' has no default seq_len; set "
            "workload.seq_len or "
            "models.mine.seq_len");
  EXPECT_EQ(error_of(std::string(kGood) +
                     "[models.small]\nlayers = 4\nhidden = 250\nheads = 4\nvocab = 1000\n"),
            "bad.toml:8:10: models.small.hidden: must be divisible by heads (4), got 250");
  EXPECT_EQ(
      error_of(std::string(kGood) + "[models.small]\nlayers = 4\nhidden = 256\nvocab = 1000\n"),
      "bad.toml:6:9: models.small: missing 'heads' (a positive integer)");
  EXPECT_EQ(error_of(std::string(kGood) + "[models.\"gpt3-1.3b\"]\nlayers = 4\n"),
            "bad.toml:6:9: models.gpt3-1.3b: shadows the catalog model 'gpt3-1.3b'; give the "
            "inline model another "
            "name");
}

TEST(SpecErrors, Family) {
  EXPECT_EQ(Space::parse(edit("[workload]\n", "[workload]\nfamily = \"transformer\"\n"), "bad.toml")
                .family(),
            estimator::Family::transformer);
  EXPECT_EQ(Space::parse(kGood, "bad.toml").family(), estimator::Family::transformer);
  EXPECT_EQ(error_of(edit("[workload]\n", "[workload]\nfamily = \"gnn\"\n")),
            "bad.toml:2:10: workload.family: unknown family 'gnn'; families are: transformer, "
            "dlrm");
  EXPECT_EQ(error_of(edit("[workload]\n", "[workload]\nfamily = 3\n")),
            "bad.toml:2:10: workload.family: must be the name of a family (transformer, dlrm), got "
            "integer 3");
}

TEST(SpecErrors, Constraints) {
  const std::string g = kGood;
  // The file column is the culprit's own where the string holds the expression verbatim.
  EXPECT_EQ(error_of("constraints = [\"tpp * pp <= 64\"]\n" + g),
            "bad.toml:1:17: constraints[0]: unknown name 'tpp'; did you mean 'tp'?\n"
            "    tpp * pp <= 64\n"
            "    ^~~");
  EXPECT_EQ(error_of("constraints = [\"tp <= 8\", \"tp * <= 64\"]\n" + g),
            "bad.toml:1:33: constraints[1]: expected a number, a name or '(', got '<='\n"
            "    tp * <= 64\n"
            "         ^~");
  // With escapes in the string, the string's start.
  EXPECT_EQ(error_of("constraints = [\"gpu == \\\"B200\\\"\"]\n" + g),
            "bad.toml:1:16: constraints[0]: 'B200' is not a value of 'gpu'; values are: "
            "H100-SXM5-80GB\n"
            "    gpu == \"B200\"\n"
            "           ^~~~~~");
  EXPECT_EQ(error_of("constraints = ['gpu == 1']\n" + g),
            "bad.toml:1:17: constraints[0]: 'gpu' holds labels; compare it with a quoted label, "
            "e.g. gpu == 'H100-SXM5-80GB'\n"
            "    gpu == 1\n"
            "    ^~~");
  EXPECT_EQ(error_of("constraints = \"tp <= 8\"\n" + g),
            "bad.toml:1:15: constraints: must be a list of expressions like \"tp * pp <= 64\", got "
            "string \"tp "
            "<= 8\"");
  EXPECT_EQ(
      error_of("calibration = \"/nonexistent/cal.toml\"\n" + g),
      "bad.toml:1:15: calibration: cannot read '/nonexistent/cal.toml': No such file or directory");
}

TEST(SpecErrors, UnreadableFile) {
  try {
    Space::load("/nonexistent/spec.toml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "cannot read spec '/nonexistent/spec.toml': No such file or directory");
  }
}

// [reliability]: every key of the job model, an infinite MTBF turns that part's failures off.
TEST(SpecErrors, Reliability) {
  const Space space = Space::parse(std::string(kGood) +
                                       "[reliability]\ngpu_mtbf_hours = inf\nrestart_s = 0\n"
                                       "storage_gbytes_per_s = 500\n",
                                   "good.toml");
  EXPECT_TRUE(std::isinf(space.reliability().gpu_mtbf_hours));
  EXPECT_EQ(space.reliability().restart_s, 0);
  EXPECT_EQ(space.reliability().storage_gbytes_per_s, 500);
  EXPECT_EQ(space.reliability().storage_gbytes_per_s_per_node, 2);
  EXPECT_EQ(error_of(std::string(kGood) + "[reliability]\ngpu_mtbf = 5\n"),
            "bad.toml:7:1: reliability.gpu_mtbf: unknown key; did you mean 'gpu_mtbf_hours'?");
  EXPECT_EQ(error_of(std::string(kGood) + "[reliability]\nstorage_gbytes_per_s = 0\n"),
            "bad.toml:7:24: reliability.storage_gbytes_per_s: must be a positive number, got 0");
  EXPECT_EQ(error_of(std::string(kGood) + "[reliability]\nrestart_s = inf\n"),
            "bad.toml:7:13: reliability.restart_s: must be a non-negative number, got inf");
}

}  // namespace
}  // namespace clustersweep::spaces
