#include "spaces/space.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "base/error.h"

namespace clustersweep::spaces {
namespace {

// A small inline model so the tests do not depend on catalog model numbers.
constexpr const char* kTiny = R"(
[models.tiny]
layers = 8
hidden = 1024
heads = 16
kv_heads = 4
ffn_hidden = 4096
vocab = 32000
seq_len = 2048
global_batch = 64
)";

// Top-level keys (constraints, calibration) must precede the first table.
std::string spec(const std::string& body, const std::string& top = "") {
  return top + kTiny + body;
}

constexpr const char* kSmall = R"(
[workload]
model = "tiny"

[cluster]
gpu = "H100-SXM5-80GB"
nodes = [1, 2]
gpus_per_node = 8
nvlink_domain = 8
inter_node_gbps_per_gpu = [200, 400]

[plan]
tp = "all"
pp = "all"
micro_batch = [1, 2]
zero = [0, 1]
)";

TEST(Space, AxesInFixedOrderWithPlanAxesLast) {
  const Space s = Space::parse(spec(kSmall), "small.toml");
  ASSERT_EQ(s.axes().size(), std::size_t(kNumAxes));
  const char* names[] = {"model",
                         "seq_len",
                         "global_batch",
                         "precision",
                         "gpu",
                         "num_nodes",
                         "gpus_per_node",
                         "nvlink_domain",
                         "nvlink_gbytes_per_s",
                         "inter_node_gbps_per_gpu",
                         "hbm_gb",
                         "expansion_gb",
                         "expansion_gbytes_per_s",
                         "power_cap_w",
                         "fabric",
                         "network",
                         "oversubscription",
                         "pod_gpus",
                         "planes",
                         "group_gpus",
                         "global_taper",
                         "tp",
                         "pp",
                         "cp",
                         "vp",
                         "micro_batch",
                         "zero",
                         "recompute",
                         "sequence_parallel",
                         "offload",
                         "pipeline_split",
                         "ep",
                         "etp",
                         "framework",
                         "cuda_graph",
                         "dispatcher",
                         "token_routing",
                         "a2a_overlap",
                         "fp8_attention",
                         "tp_comm_overlap",
                         "dp_overlap",
                         "param_gather_overlap",
                         "pp_comm_overlap",
                         "fp8_recipe",
                         "attention_kernel",
                         "rank_order",
                         "grad_reduce_fp32"};
  static_assert(std::size(names) == kNumAxes);
  for (int i = 0; i < kNumAxes; ++i) {
    EXPECT_EQ(s.axes()[i].name, names[i]);
    EXPECT_EQ(s.axes()[i].is_plan, i >= kTp) << names[i];
  }
  // The stack's axes, unswept: the default of each setting, one label.
  for (int i = kFirstStackAxis; i < kNumAxes; ++i) {
    EXPECT_TRUE(s.axes()[i].is_label) << names[i];
    EXPECT_EQ(s.axes()[i].size(), 1u) << names[i];
  }
  EXPECT_EQ(s.axes()[kFirstStackAxis].labels, (std::vector<std::string>{"any"}));
  EXPECT_EQ(s.axes()[kFirstStackAxis + 1].labels, (std::vector<std::string>{"none"}));
  EXPECT_EQ(s.axes()[kFirstStackAxis + 6].labels, (std::vector<std::string>{"on"}));
  EXPECT_TRUE(s.axes()[kGpu].is_label);
  EXPECT_TRUE(s.axes()[kRecompute].is_label);
  EXPECT_FALSE(s.axes()[kTp].is_label);
  EXPECT_EQ(s.axes()[kInterNodeGbpsPerGpu].unit, "Gbit/s");
  EXPECT_EQ(s.axes()[kHbmGb].unit, "GB");
}

TEST(Space, SizesAreProductsOfAxisSizes) {
  const Space s = Space::parse(spec(kSmall), "small.toml");
  // tp "all": divisors of 16 heads compatible with 4 KV heads that divide the 8-GPU NVLink domain.
  EXPECT_EQ(s.axes()[kTp].numbers, (std::vector<double>{1, 2, 4, 8}));
  // pp "all": divisors of 8 layers that divide some GPU count (8, 16).
  EXPECT_EQ(s.axes()[kPp].numbers, (std::vector<double>{1, 2, 4, 8}));
  // pipeline_split: even, and embedding_loss, which places the 8 layers + 2 on pp = 2; no
  // pipeline leaves the 8 layers to an uneven split.
  EXPECT_EQ(s.axes()[kPipelineSplit].labels, (std::vector<std::string>{"even", "embedding_loss"}));
  EXPECT_EQ(s.designs(), 4u);
  EXPECT_EQ(s.plan_points(), 4u * 4 * 2 * 2 * 2);
  EXPECT_EQ(s.size(), s.designs() * s.plan_points());
}

TEST(Space, DesignBuildsWorkloadAndCluster) {
  const Space s = Space::parse(spec(kSmall), "small.toml");
  Design d;
  ASSERT_TRUE(s.design(3, d));  // num_nodes = 2 (digit 1), 400 Gbit/s (digit 1)
  EXPECT_EQ(d.id, 3u);
  EXPECT_EQ(d.axis_index[kClusterSize], 1u);
  EXPECT_EQ(d.axis_index[kInterNodeGbpsPerGpu], 1u);
  EXPECT_EQ(d.cluster.num_gpus, 16);
  EXPECT_EQ(d.cluster.gpus_per_node, 8);
  EXPECT_EQ(d.cluster.nvlink_domain, 8);
  EXPECT_DOUBLE_EQ(d.cluster.inter_node_bytes_per_s, 400e9 / 8);
  EXPECT_DOUBLE_EQ(d.value[kInterNodeGbpsPerGpu], 400);
  EXPECT_EQ(d.workload.model.layers, 8);
  EXPECT_EQ(d.workload.seq_len, 2048);
  EXPECT_EQ(d.workload.global_batch, 64);
  EXPECT_EQ(d.workload.precision, estimator::Precision::bf16);
  EXPECT_GT(d.cluster.hbm_bytes, 0);
  EXPECT_GT(d.cluster.nvlink_bytes_per_s, 0);
  EXPECT_DOUBLE_EQ(d.value[kHbmGb], d.cluster.hbm_bytes / 1e9);
}

TEST(Space, PlanDerivesDpAndAppliesRules) {
  const Space s = Space::parse(spec(kSmall), "small.toml");
  Design d;
  ASSERT_TRUE(s.design(3, d));  // 16 GPUs
  estimator::Plan p;
  estimator::Infeasible why;
  ASSERT_TRUE(s.plan(d, 0, p, why));  // tp=1 pp=1 mb=1 zero=0
  EXPECT_EQ(p.dp, 16);
  EXPECT_EQ(why, estimator::Infeasible::none);
  // Digits (tp, pp, cp, vp, mb, zero, recompute, sp, offload, pipeline_split) with radices
  // (4, 4, 1, 1, 2, 2, 1, 1, 1, 2); the even split.
  auto plan_index = [](int tp, int pp, int mb, int zero) {
    return std::uint64_t((((tp * 4 + pp) * 2 + mb) * 2 + zero) * 2);
  };
  ASSERT_TRUE(s.plan(d, plan_index(3, 1, 1, 0), p, why));  // tp=8 pp=2 mb=2 zero=0 -> dp=1
  EXPECT_EQ(p.tp, 8);
  EXPECT_EQ(p.pp, 2);
  EXPECT_EQ(p.micro_batch, 2);
  EXPECT_EQ(p.zero, 0);
  EXPECT_EQ(p.dp, 1);
  Violation v;
  EXPECT_FALSE(s.plan(d, plan_index(3, 1, 1, 1), p, v));  // zero=1 with dp=1 repeats zero=0
  EXPECT_EQ(v.rule, Rule::zero_needs_dp);
  EXPECT_FALSE(s.plan(d, plan_index(3, 1, 1, 1), p, why));
  EXPECT_EQ(why, estimator::Infeasible::invalid_plan);
  EXPECT_FALSE(s.plan(d, plan_index(3, 3, 0, 0), p, v));  // tp=8 pp=8: 64 GPUs > 16
  EXPECT_EQ(v.rule, Rule::degrees);
  EXPECT_FALSE(s.plan(d, plan_index(3, 3, 0, 0), p, why));
  EXPECT_EQ(why, estimator::Infeasible::degrees_mismatch);
}

TEST(Space, DecodeEncodeRoundTripAndDesignMajorLayout) {
  const Space s = Space::parse(spec(R"(
[workload]
model = "tiny"
seq_len = [1024, 2048]
precision = ["bf16", "fp8"]
[cluster]
gpu = ["H100-SXM5-80GB", "A100-SXM4-80GB"]
nodes = [1, 2, 3]
hbm_gb = [40, 80]
[plan]
tp = [1, 2, 4]
pp = [1, 2]
recompute = "all"
offload = "none"
)"),
                               "rt.toml");
  std::uint32_t index[kNumAxes];
  std::set<std::vector<std::uint32_t>> seen;
  for (std::uint64_t id = 0; id < s.size(); ++id) {
    s.decode(id, index);
    for (int a = 0; a < kNumAxes; ++a) ASSERT_LT(index[a], s.axes()[a].size());
    ASSERT_EQ(s.encode(index), id);
    seen.insert(std::vector<std::uint32_t>(index, index + kNumAxes));
    // Plan digits are the least significant: the design of id is id / plan_points().
    Design d;
    s.design(id / s.plan_points(), d);
    for (int a = 0; a < kNumDesignAxes; ++a) ASSERT_EQ(d.axis_index[a], index[a]);
  }
  EXPECT_EQ(seen.size(), s.size());
  // The last axis (the pipeline split: even, embedding_loss for pp = 2) varies fastest.
  s.decode(1, index);
  EXPECT_EQ(index[kPipelineSplit], 1u);
  s.decode(s.plan_points(), index);
  EXPECT_EQ(index[kHbmGb], 1u);
  EXPECT_EQ(index[kTp], 0u);
}

// Brute force: check every point with plan() and compare with the memoized counts.
void expect_counts_match_brute_force(const Space& s) {
  std::array<std::uint64_t, kNumRules> brute{};
  Design d;
  estimator::Plan p;
  for (std::uint64_t design = 0; design < s.designs(); ++design) {
    Violation why;
    if (!s.design(design, d, why)) {
      brute[static_cast<int>(why.rule)] += s.plan_points();
      EXPECT_EQ(s.valid_plans(design), 0u);
      continue;
    }
    std::uint64_t valid = 0;
    for (std::uint64_t plan = 0; plan < s.plan_points(); ++plan) {
      s.plan(d, plan, p, why);
      ++brute[static_cast<int>(why.rule)];
      // plan_from_digits() agrees with plan().
      std::uint32_t index[kNumAxes];
      s.decode(design * s.plan_points() + plan, index);
      estimator::Plan q;
      estimator::Infeasible reason;
      EXPECT_EQ(s.plan_from_digits(d, index + kTp, q, reason), !why);
      EXPECT_EQ(reason, to_infeasible(why.rule));
      EXPECT_EQ(q.tp, p.tp);
      EXPECT_EQ(q.dp, p.dp);
      EXPECT_EQ(q.offload, p.offload);
      if (!why) {
        ++valid;
        // A valid plan satisfies the structural rules.
        EXPECT_EQ(d.workload.model.heads % p.tp, 0);
        EXPECT_EQ(p.tp * p.pp * p.cp * p.dp, d.cluster.num_gpus);
        const int slots = d.workload.model.layers +
                          (p.pipeline_split == estimator::PipelineSplit::embedding_loss ? 2 : 0);
        if (p.pipeline_split != estimator::PipelineSplit::uneven) {
          EXPECT_EQ(slots % (p.pp * p.vp), 0);
        }
        EXPECT_EQ(d.workload.global_batch % (std::int64_t{p.dp} * p.micro_batch), 0);
      }
    }
    EXPECT_EQ(s.valid_plans(design), valid);
  }
  EXPECT_EQ(s.count_by_rule(), brute);
  EXPECT_EQ(s.valid_points(), brute[0]);
  std::uint64_t sum = 0;
  for (auto c : brute) sum += c;
  EXPECT_EQ(sum, s.size());
}

TEST(Space, CountsEqualBruteForce) {
  expect_counts_match_brute_force(Space::parse(spec(kSmall), "small.toml"));
  expect_counts_match_brute_force(Space::parse(
      spec(R"(
[workload]
model = ["tiny", "gpt3-1.3b"]
global_batch = [64, 96]
precision = ["bf16", "fp8"]
[cluster]
gpu = ["A100-SXM4-80GB", "H100-SXM5-80GB"]
gpus = [4, 12, 16]
inter_node_gbps_per_gpu = [200, 400]
expansion_gb = [0, 256]
expansion_gbytes_per_s = [64, 128]
[plan]
tp = "all"
pp = "all"
cp = [1, 2]
vp = "all"
micro_batch = [1, 2, 3]
zero = "all"
recompute = ["none", "full"]
sequence_parallel = "all"
offload = "all"
)",
           R"(constraints = ["tp * pp <= 8 or inter_node_gbps_per_gpu >= 400", "num_gpus >= 8"])"),
      "many.toml"));
  // The torus rule: designs that differ only in their fabric count their plans apart (a domain of
  // 12 is a 3x4 torus, which tp 2 does not split).
  expect_counts_match_brute_force(Space::parse(spec(R"(
[workload]
model = "gpt3-1.3b"
global_batch = 96
[cluster]
gpu = "H100-SXM5-80GB"
gpus = [12, 24]
gpus_per_node = 4
nvlink_domain = 12
fabric = ["switch", "torus", "mesh"]
[plan]
tp = "all"
pp = "all"
cp = [1, 2]
micro_batch = [1, 3]
)"),
                                               "torus.toml"));
}

// The bandwidth and HBM axes no rule reads are counted once for all their values, unless a
// constraint reads them; valid_designs() counts the same way.
TEST(Space, AxesNoRuleReadsAreCountedOnceAndStillExactly) {
  const std::string body = R"(
[workload]
model = ["tiny", "gpt3-1.3b"]
[cluster]
gpu = ["A100-SXM4-80GB", "H100-SXM5-80GB"]
gpus = [4, 12, 16]
nvlink_gbytes_per_s = [300, 450, 900]
inter_node_gbps_per_gpu = [100, 200, 400]
hbm_gb = [40, 80]
[plan]
tp = "all"
pp = "all"
micro_batch = [1, 2]
)";
  for (const std::string top : {"", R"(constraints = ["hbm_gb > 50 or nvlink_gbytes_per_s < 400"])",
                                R"(constraints = ["inter_node_gbps_per_gpu * tp >= 800"])"}) {
    const Space s = Space::parse(spec(body, top), "free.toml");
    expect_counts_match_brute_force(s);
    Design d;
    std::uint64_t valid = 0;
    for (std::uint64_t i = 0; i < s.designs(); ++i) valid += s.design(i, d);
    EXPECT_EQ(s.valid_designs(), valid) << top;
  }
}

TEST(Space, CountingIsBoundedAndSaysSo) {
  // 10^14 designs, of which 20,000 differ in what the rules read: counted at once.
  const std::string body = R"(
[workload]
model = "tiny"
[cluster]
gpu = ["A100-SXM4-80GB", "H100-SXM5-80GB"]
gpus = {start = 1, stop = 10000, step = 1}
inter_node_gbps_per_gpu = {start = 100, stop = 10000, step = 1}
hbm_gb = {start = 40, stop = 1040, step = 1}
nvlink_gbytes_per_s = {start = 100, stop = 1100, step = 1}
)";
  const Space wide = Space::parse(spec(body), "wide.toml");
  EXPECT_GT(wide.designs(), 100'000'000'000'000u);
  EXPECT_GT(wide.valid_points(), 0u);
  // A constraint on them makes 2 x 10^4 x 10^3 x 10^3 designs differ: past the bound.
  const Space bound = Space::parse(
      spec(body, R"(constraints = ["hbm_gb * nvlink_gbytes_per_s > 1"])"), "bound.toml");
  try {
    bound.count_by_rule();
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "bound.toml:1:1: space: 20040020000 designs differ in what the structural rules or "
              "the constraints read, more than the 20000000 that can be counted in reasonable "
              "time; sweep fewer values of model, precision, gpu, the cluster size and shape, the "
              "expansion tiers or what the constraints read");
  }
}

TEST(Space, UserConstraintsOnDesignAndPlanAxes) {
  const std::string top =
      R"(constraints = ["tp * pp <= 4", "num_nodes >= 2", "gpu == \"H100-SXM5-80GB\" or dp >= 4"])";
  const std::string body = R"(
[workload]
model = "tiny"
[cluster]
gpu = ["A100-SXM4-80GB", "H100-SXM5-80GB"]
nodes = [1, 2, 4]
[plan]
tp = "all"
pp = "all"
)";
  const Space s = Space::parse(spec(body, top + "\n"), "c.toml");
  ASSERT_EQ(s.constraints().size(), 3u);
  Design d;
  Violation why;
  EXPECT_FALSE(s.design(0, d, why));  // A100, 1 node
  EXPECT_EQ(why.rule, Rule::user_constraint);
  ASSERT_TRUE(s.design(1, d, why));  // A100, 2 nodes
  estimator::Plan p;
  std::uint64_t valid = 0;
  for (std::uint64_t plan = 0; plan < s.plan_points(); ++plan) {
    if (!s.plan(d, plan, p, why)) continue;
    ++valid;
    EXPECT_LE(p.tp * p.pp, 4);
    EXPECT_GE(p.dp, 4);
  }
  EXPECT_GT(valid, 0u);
  expect_counts_match_brute_force(s);
}

TEST(Space, RangeForms) {
  auto values = [](const std::string& tp_value) {
    return Space::parse(spec(R"(
[workload]
model = "tiny"
[cluster]
gpu = "H100-SXM5-80GB"
nodes = )" + tp_value + "\n"),
                        "r.toml")
        .axes()[kClusterSize]
        .numbers;
  };
  EXPECT_EQ(values("4"), (std::vector<double>{4}));
  EXPECT_EQ(values("[3, 1, 2]"), (std::vector<double>{3, 1, 2}));
  EXPECT_EQ(values("{start = 2, stop = 10, step = 3}"), (std::vector<double>{2, 5, 8}));
  EXPECT_EQ(values("{start = 2, stop = 8, step = 2}"), (std::vector<double>{2, 4, 6, 8}));
  EXPECT_EQ(values("{start = 1, stop = 100, factor = 3}"), (std::vector<double>{1, 3, 9, 27, 81}));
  EXPECT_EQ(values("{start = 4, stop = 32, factor = 2}"), (std::vector<double>{4, 8, 16, 32}));
  EXPECT_EQ(values("\"pow2:1..64\""), (std::vector<double>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(values("\"pow2:3..20\""), (std::vector<double>{4, 8, 16}));

  const Space real = Space::parse(spec(R"(
[workload]
model = "tiny"
[cluster]
gpu = "H100-SXM5-80GB"
nodes = 1
inter_node_gbps_per_gpu = {start = 100, stop = 200, step = 25}
hbm_gb = {start = 40, stop = 160, factor = 2}
)"),
                                  "r.toml");
  EXPECT_EQ(real.axes()[kInterNodeGbpsPerGpu].numbers,
            (std::vector<double>{100, 125, 150, 175, 200}));
  EXPECT_EQ(real.axes()[kHbmGb].numbers, (std::vector<double>{40, 80, 160}));

  const Space decimal = Space::parse(spec(R"(
[workload]
model = "tiny"
[cluster]
gpu = "H100-SXM5-80GB"
nodes = 1
hbm_gb = {start = 0.1, stop = 0.5, step = 0.1}
)"),
                                     "r.toml");
  EXPECT_EQ(decimal.axes()[kHbmGb].numbers, (std::vector<double>{0.1, 0.2, 0.3, 0.4, 0.5}));
  EXPECT_EQ(decimal.axes()[kHbmGb].value_text(2), "0.3");
}

TEST(Space, AllForPlanAxes) {
  const Space s = Space::parse(spec(R"(
[workload]
model = "tiny"
[cluster]
gpu = "H100-SXM5-80GB"
nodes = [1, 2]
expansion_gb = [0, 512]
expansion_gbytes_per_s = 64
[plan]
tp = "all"
pp = "all"
cp = "all"
vp = "all"
micro_batch = "all"
zero = "all"
recompute = "all"
sequence_parallel = "all"
offload = "all"
)"),
                               "all.toml");
  const auto& a = s.axes();
  EXPECT_EQ(a[kCp].numbers, (std::vector<double>{1, 2, 4, 8, 16}));  // 2*cp | 2048, cp | 8 or 16
  // pp >= 2 with pp*vp | 8 layers, or | 10 slots with the embedding and the loss (pp 2, vp 5).
  EXPECT_EQ(a[kVp].numbers, (std::vector<double>{1, 2, 4, 5}));
  EXPECT_EQ(a[kPipelineSplit].labels, (std::vector<std::string>{"even", "embedding_loss"}));
  EXPECT_EQ(a[kMicroBatch].numbers,
            (std::vector<double>{1, 2, 4, 8, 16, 32, 64}));  // divisors of 64
  EXPECT_EQ(a[kZero].numbers, (std::vector<double>{0, 1, 2, 3}));
  EXPECT_EQ(a[kRecompute].labels, (std::vector<std::string>{"none", "selective", "full"}));
  EXPECT_EQ(a[kSequenceParallel].numbers, (std::vector<double>{0, 1}));
  EXPECT_EQ(a[kOffload].labels,
            (std::vector<std::string>{"none", "optimizer", "optimizer_activations", "all"}));
  expect_counts_match_brute_force(s);
}

TEST(Space, AllowTpAcrossNodes) {
  const std::string body = R"(
[workload]
model = "tiny"
[cluster]
gpu = "H100-SXM5-80GB"
nodes = 2
gpus_per_node = 4
[plan]
tp = [4, 8, 16]
)";
  const Space within = Space::parse(spec(body), "a.toml");
  EXPECT_EQ(within.axes()[kNvlinkDomain].numbers,
            (std::vector<double>{4}));   // node-local NVLink follows
  EXPECT_EQ(within.valid_points(), 1u);  // only tp=4
  const Space across = Space::parse(spec(body + "allow_tp_across_nodes = true\n"), "a.toml");
  EXPECT_TRUE(across.rule_options().allow_tp_across_nodes);
  EXPECT_EQ(across.valid_points(), 2u);  // tp=4 and tp=8 (16 does not divide 8 GPUs)
}

TEST(Space, CatalogDefaultsDifferingBetweenAcceleratorsResolvePerDesign) {
  const Space s = Space::parse(spec(R"(
[workload]
model = "tiny"
[cluster]
gpu = ["H100-SXM5-80GB", "GB200-186GB"]
nodes = 18
)"),
                               "d.toml");
  const Axis& hbm = s.axes()[kHbmGb];
  EXPECT_TRUE(hbm.zero_means_default);
  EXPECT_EQ(hbm.numbers, (std::vector<double>{0}));
  EXPECT_EQ(hbm.value_text(0), "default");
  Design h100;
  Design gb200;
  ASSERT_TRUE(s.design(0, h100));
  ASSERT_TRUE(s.design(1, gb200));
  EXPECT_EQ(h100.cluster.gpus_per_node, 8);
  EXPECT_EQ(h100.cluster.nvlink_domain, 8);
  EXPECT_EQ(h100.cluster.num_gpus, 144);
  EXPECT_EQ(gb200.cluster.nvlink_domain, 72);
  EXPECT_GT(gb200.value[kHbmGb], h100.value[kHbmGb]);
  EXPECT_EQ(gb200.value[kNvlinkDomain], 72);
}

TEST(Space, ClusterShapeAndPrecisionRules) {
  const Space s = Space::parse(spec(R"(
[workload]
model = "tiny"
precision = ["bf16", "fp8"]
[cluster]
gpu = ["V100-SXM2-32GB", "H100-SXM5-80GB"]
gpus = [4, 12, 16]
)"),
                               "shape.toml");
  EXPECT_EQ(s.axes()[kClusterSize].name, "num_gpus");
  Design d;
  Violation why;
  // bf16 on V100 is unsupported.
  EXPECT_FALSE(s.design(0, d, why));
  EXPECT_EQ(why.rule, Rule::precision_unsupported);
  // H100, bf16: 4 GPUs (part of one node) fine, 12 GPUs is not whole nodes of 8.
  EXPECT_TRUE(s.design(3, d, why));
  EXPECT_EQ(d.cluster.num_gpus, 4);
  EXPECT_FALSE(s.design(4, d, why));
  EXPECT_EQ(why.rule, Rule::cluster_shape);
  EXPECT_TRUE(s.design(5, d, why));
}

// int8 (AQT's 8-bit integer training on TPU) is a precision label like the others, run at the
// part's int8 peak; a part without one refuses it by the precision rule.
TEST(Space, Int8IsAPrecisionOfThePartsThatHaveAnInt8Peak) {
  const Space s = Space::parse(spec(R"(
[workload]
model = "tiny"
precision = ["bf16", "int8"]
[cluster]
gpu = ["TPUv6e", "H100-SXM5-80GB"]
gpus = 8
)"),
                               "int8.toml");
  EXPECT_EQ(s.axes()[kPrecision].labels, (std::vector<std::string>{"bf16", "int8"}));
  Design d;
  Violation why;
  // Design ids: the later axis (gpu) varies fastest.
  ASSERT_TRUE(s.design(2, d, why)) << message(why);
  EXPECT_EQ(d.workload.precision, estimator::Precision::int8);
  EXPECT_DOUBLE_EQ(d.cluster.gpu.peak_flops[static_cast<int>(estimator::Precision::int8)], 1836e12);
  EXPECT_FALSE(s.design(3, d, why));
  EXPECT_EQ(why.rule, Rule::precision_unsupported);
  EXPECT_EQ(message(why), "has no int8 peak; it supports fp32, tf32, fp16, bf16, fp8");
}

TEST(Space, StoredParameters) {
  const Space s = Space::parse(spec(R"(
[workload]
model = "tiny"
training_tokens = 1e12
[cluster]
gpu = "H100-SXM5-80GB"
nodes = 1
[pricing]
pue = 1.4
usd_per_kwh = 0.2
carbon_g_per_kwh = 100
capex_usd_per_gpu = 30000
amortize_years = 5
[output]
keep = "pareto-per-design"
objective = "energy"
)"),
                               "p.toml");
  EXPECT_DOUBLE_EQ(s.training_tokens(), 1e12);
  EXPECT_DOUBLE_EQ(s.pricing().pue, 1.4);
  EXPECT_DOUBLE_EQ(s.pricing().usd_per_kwh, 0.2);
  EXPECT_DOUBLE_EQ(s.pricing().carbon_g_per_kwh, 100);
  EXPECT_DOUBLE_EQ(s.pricing().capex_usd_per_gpu.all, 30000);
  EXPECT_DOUBLE_EQ(s.pricing().amortize_years, 5);
  EXPECT_EQ(s.keep(), Keep::pareto_per_design);
  EXPECT_EQ(s.objective(), Objective::energy);
  EXPECT_EQ(std::string(to_string(s.keep())), "pareto-per-design");
  EXPECT_EQ(std::string(to_string(s.objective())), "energy");
  EXPECT_NE(s.text().find("pareto-per-design"), std::string::npos);
  EXPECT_EQ(s.filename(), "p.toml");
}

TEST(Space, DefaultsWhenLeftOut) {
  const Space s = Space::parse(R"(
[workload]
model = "gpt3-175b"
[cluster]
gpu = "H100-SXM5-80GB"
nodes = 64
)",
                               "min.toml");
  EXPECT_EQ(s.plan_points(), 1u);
  EXPECT_EQ(s.keep(), Keep::all);
  EXPECT_EQ(s.objective(), Objective::step_time);
  EXPECT_DOUBLE_EQ(s.training_tokens(), 300e9);
  Design d;
  ASSERT_TRUE(s.design(0, d));
  EXPECT_EQ(d.workload.seq_len, 2048);
  EXPECT_EQ(d.workload.global_batch, 1536);
  estimator::Plan p;
  Violation why;
  EXPECT_TRUE(s.plan(d, 0, p, why));
  EXPECT_EQ(p.dp, 512);
  EXPECT_EQ(p.tp, 1);
  EXPECT_EQ(p.recompute, estimator::Recompute::none);
  EXPECT_EQ(p.offload, estimator::Offload::none);
  EXPECT_EQ(s.describe_point(0).substr(0, 40), "model=gpt3-175b seq_len=2048 global_batc");
}

TEST(Space, CalibrationFileRelativeToSpec) {
  const auto dir = std::filesystem::temp_directory_path() / "clustersweep_space_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "cal.toml") << "format_version = 1\n[calibration]\ngemm_eff_max = 0.5\n";
  const std::string text = spec(R"(
[workload]
model = "tiny"
[cluster]
gpu = "H100-SXM5-80GB"
nodes = 1
)",
                                "calibration = \"cal.toml\"\n");
  std::ofstream(dir / "spec.toml") << text;
  const Space s = Space::load((dir / "spec.toml").string());
  EXPECT_DOUBLE_EQ(s.calibration().gemm_eff_max, 0.5);
  std::filesystem::remove_all(dir);
}

TEST(Space, CopiesShareState) {
  const Space a = Space::parse(spec(kSmall), "small.toml");
  const Space b = a;
  EXPECT_EQ(&a.axes(), &b.axes());
  EXPECT_EQ(b.size(), a.size());
}

TEST(Pricing, CostIsElectricityPlusRentedOrAmortizedGpus) {
  Pricing p;
  p.pue = 1.5;
  p.usd_per_kwh = 0.2;
  p.carbon_g_per_kwh = 400;
  p.gpu_hour_usd.all = 2;
  // 3.6e9 J = 1000 kWh of IT energy -> 1500 kWh at the meter -> $300 and 600 kg CO2e;
  // 10 GPUs x 1 h x $2 = $20.
  EXPECT_DOUBLE_EQ(p.energy_kwh(3.6e9), 1500);
  EXPECT_DOUBLE_EQ(p.co2e_kg(3.6e9), 600);
  EXPECT_DOUBLE_EQ(p.cost_usd(p.usd_per_gpu_s("any"), 10, 3600, 3.6e9), 320);
  // Bought: a capex of one dollar per hour of a year, amortized over one year = $1 per GPU-hour.
  p.gpu_hour_usd = {};
  p.capex_usd_per_gpu.all = 365.25 * 24;
  p.amortize_years = 1;
  EXPECT_DOUBLE_EQ(p.cost_usd(p.usd_per_gpu_s("any"), 10, 3600, 0), 10);
  EXPECT_TRUE(p.prices_gpus());
  EXPECT_FALSE(Pricing{}.prices_gpus());
  // An owned cluster's network of the same capex per GPU doubles the GPUs' share; a rented one
  // (the hourly price holds the network) and an unpriced one pay none.
  EXPECT_DOUBLE_EQ(p.network_usd_per_gpu_s(10 * 365.25 * 24, 10) * 3600, 1);
  EXPECT_DOUBLE_EQ(
      p.cost_usd(p.usd_per_gpu_s("any") + p.network_usd_per_gpu_s(10 * 365.25 * 24, 10), 10, 3600,
                 0),
      20);
  p.capex_usd_per_gpu = {};
  p.gpu_hour_usd.all = 2;
  EXPECT_EQ(p.network_usd_per_gpu_s(1e6, 10), 0);
  EXPECT_EQ(Pricing{}.network_usd_per_gpu_s(1e6, 10), 0);
}

TEST(Pricing, APricePerAcceleratorPricesEachOneAndRoundTripsThroughItsText) {
  const GpuPrice price = parse_gpu_price("H100-SXM5-80GB=2.5,B200-180GB=5", "--gpu-hour-usd");
  ASSERT_EQ(price.by_gpu.size(), 2u);
  EXPECT_EQ(price.of("H100-SXM5-80GB"), 2.5);
  EXPECT_EQ(price.of("B200-180GB"), 5);
  EXPECT_EQ(to_string(price), "H100-SXM5-80GB=2.5,B200-180GB=5");
  EXPECT_EQ(parse_gpu_price(to_string(price), "x"), price);
  EXPECT_EQ(parse_gpu_price("2.5", "x").all, 2.5);
  EXPECT_EQ(to_string(parse_gpu_price("2.5", "x")), "2.5");
  Pricing p;
  p.gpu_hour_usd = price;
  EXPECT_DOUBLE_EQ(p.usd_per_gpu_s("B200-180GB") * 3600, 5);
  EXPECT_DOUBLE_EQ(p.usd_per_gpu_s("H100-SXM5-80GB") * 3600, 2.5);

  const std::vector<std::string> gpus = {"H100-SXM5-80GB", "B200-180GB"};
  EXPECT_EQ(gpu_price_problem(price, gpus, "cluster.gpu"), "");
  EXPECT_EQ(gpu_price_problem(parse_gpu_price("H100-SXM5-80GB=2.5", "x"), gpus, "cluster.gpu"),
            "no price for 'B200-180GB'; give one for each accelerator of cluster.gpu "
            "(H100-SXM5-80GB, B200-180GB)");
  EXPECT_EQ(
      gpu_price_problem(parse_gpu_price("H100-SXM5-80G=2.5,B200-180GB=5", "x"), gpus, "the store"),
      "'H100-SXM5-80G' is not an accelerator of the store (H100-SXM5-80GB, B200-180GB); did "
      "you mean 'H100-SXM5-80GB'?");
}

TEST(Pricing, ABadPriceTextIsOneErrorNamingTheFlag) {
  auto error = [](std::string_view text) {
    try {
      parse_gpu_price(text, "--gpu-hour-usd");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("-1"),
            "--gpu-hour-usd: must be a non-negative number, or ACCELERATOR=PRICE,... (e.g. "
            "H100-SXM5-80GB=2.5,B200-180GB=5), got '-1'");
  EXPECT_EQ(error("H100-SXM5-80GB=two"),
            "--gpu-hour-usd: each entry must be ACCELERATOR=PRICE with a non-negative price (e.g. "
            "H100-SXM5-80GB=2.5,B200-180GB=5), got 'H100-SXM5-80GB=two'");
  EXPECT_EQ(error("A=1,A=2"), "--gpu-hour-usd: 'A' is priced twice");
  EXPECT_EQ(error("=1"),
            "--gpu-hour-usd: each entry must be ACCELERATOR=PRICE with a non-negative price (e.g. "
            "H100-SXM5-80GB=2.5,B200-180GB=5), got '=1'");
}

}  // namespace
}  // namespace clustersweep::spaces

namespace clustersweep::spaces {
namespace {

TEST(Space, ExpertParallelAxesAndTheirRules) {
  // A dense and a Mixture-of-Experts model (128 experts) in one space: "all" offers the ep
  // degrees that divide the experts and a GPU count, the etp degrees that divide a GPU count and
  // the NVLink domain; the rules then keep ep = etp = 1 for the dense model and ep*etp within the
  // GPUs of a pipeline stage for the other.
  const Space s = Space::parse(spec(R"(
[workload]
model = ["tiny", "qwen3-30b-a3b"]
global_batch = 64
[cluster]
gpu = "H100-SXM5-80GB"
gpus = [8, 16]
[plan]
tp = [1, 2]
pp = [1, 2]
ep = "all"
etp = "all"
)"),
                               "moe.toml");
  EXPECT_EQ(s.axes()[kEp].numbers, (std::vector<double>{1, 2, 4, 8, 16}));
  EXPECT_EQ(s.axes()[kEtp].numbers, (std::vector<double>{1, 2, 4, 8}));
  EXPECT_TRUE(s.axes()[kEp].is_plan);
  Design d;
  estimator::Plan p;
  Violation why;
  std::set<std::pair<int, int>> dense, moe;
  for (std::uint64_t design = 0; design < s.designs(); ++design) {
    ASSERT_TRUE(s.design(design, d, why));
    for (std::uint64_t plan = 0; plan < s.plan_points(); ++plan) {
      if (!s.plan(d, plan, p, why)) continue;
      (d.workload.model.num_experts ? moe : dense).insert({p.ep, p.etp});
      EXPECT_EQ(p.tp * p.cp * p.dp % (p.ep * p.etp), 0);
    }
  }
  EXPECT_EQ(dense, (std::set<std::pair<int, int>>{{1, 1}}));
  EXPECT_TRUE(moe.count({16, 1}));  // 16 GPUs, pp 1: ep 16 is one pipeline stage
  EXPECT_TRUE(moe.count({4, 2}));
  EXPECT_FALSE(moe.count({16, 2}));
  expect_counts_match_brute_force(s);
}

// The software stack's settings as plan axes: one value, a list or "all"; the value reaches the
// plan's stack, capacity routing brings its capacity factor, and the stack's rules count.
// framework = "all" sweeps every framework (not `any`); a stack setting the spec leaves out
// takes each swept framework's default, and the framework rules keep each to its own.
TEST(Space, FrameworksAreAnAxisWithTheirDefaults) {
  const Space one = Space::parse(spec(R"(
[workload]
model = "tiny"
[cluster]
gpu = "H100-SXM5-80GB"
gpus = 16
[plan]
tp = [1, 2]
zero = "all"
framework = "deepspeed"
)"),
                                 "one.toml");
  const auto& axes = one.axes();
  EXPECT_EQ(axes[kFirstStackAxis].labels, (std::vector<std::string>{"deepspeed"}));
  EXPECT_EQ(axes[kFirstStackAxis + 6].labels, (std::vector<std::string>{"off"}));  // tp overlap
  EXPECT_EQ(axes[kFirstStackAxis + 11].labels, (std::vector<std::string>{"flash2"}));
  const Space all = Space::parse(spec(R"(
[workload]
model = "tiny"
[cluster]
gpu = "H100-SXM5-80GB"
gpus = 16
[plan]
tp = [1, 2]
zero = "all"
recompute = ["none", "selective:layernorm+mlp"]
framework = "all"
)"),
                                 "all.toml");
  EXPECT_EQ(all.axes()[kFirstStackAxis].labels,
            (std::vector<std::string>{"megatron-core", "fsdp2", "deepspeed", "maxtext", "neuronx",
                                      "primus"}));
  EXPECT_EQ(all.axes()[kFirstStackAxis + 6].labels, (std::vector<std::string>{"off", "on"}));
  EXPECT_EQ(all.axes()[kRecompute].labels,
            (std::vector<std::string>{"none", "selective:layernorm+mlp"}));
  const auto counts = all.count_by_rule();
  EXPECT_GT(counts[static_cast<int>(Rule::framework_memory)], 0u);
  EXPECT_GT(counts[static_cast<int>(Rule::framework_stack)], 0u);
  // Every valid plan keeps to its framework, and its recompute modules are its digit's.
  Design d;
  ASSERT_TRUE(all.design(0, d));
  std::uint32_t index[kNumAxes];
  int valid = 0;
  for (std::uint64_t i = 0; i < all.plan_points(); ++i) {
    all.decode(i, index);
    estimator::Plan p;
    estimator::Infeasible why;
    if (!all.plan_from_digits(d, index + kTp, p, why)) continue;
    ++valid;
    EXPECT_FALSE(check_framework(p));
    EXPECT_EQ(estimator::recompute_label(p.recompute, p.recompute_modules),
              all.axes()[kRecompute].labels[index[kRecompute]]);
  }
  EXPECT_GT(valid, 10);
}

// A framework whose token routing fixes a setting (MaxText's capacity routing runs the einsum
// dispatch) sweeps, with the setting unset, the plans estimate resolves: each routing with its own.
TEST(Space, ARoutingsOwnDispatcherIsSweptWithIt) {
  const Space s = Space::parse(spec(R"(
[workload]
model = "mixtral-8x7b"
global_batch = 256
[cluster]
gpu = "TPUv6e"
gpus = 256
[plan]
zero = 3
framework = "maxtext"
token_routing = ["dropless", "capacity"]
)"),
                               "maxtext.toml");
  const int dispatcher = kFirstStackAxis + 2, routing = kFirstStackAxis + 3;
  EXPECT_EQ(s.axes()[dispatcher].labels, (std::vector<std::string>{"alltoall", "einsum"}));
  Design d;
  ASSERT_TRUE(s.design(0, d));
  std::uint32_t index[kNumAxes];
  std::set<std::string> kept;
  for (std::uint64_t i = 0; i < s.plan_points(); ++i) {
    s.decode(i, index);
    estimator::Plan p;
    estimator::Infeasible why;
    if (!s.plan_from_digits(d, index + kTp, p, why)) continue;
    kept.insert(s.axes()[routing].labels[index[routing]] + " " +
                s.axes()[dispatcher].labels[index[dispatcher]]);
  }
  EXPECT_EQ(kept, (std::set<std::string>{"capacity einsum", "dropless alltoall"}));
  expect_counts_match_brute_force(s);
}

TEST(Space, StackAxesSweepTheSoftwareStack) {
  const Space s = Space::parse(spec(R"(
[workload]
model = ["tiny", "qwen3-30b-a3b"]
global_batch = 64
precision = ["bf16", "fp8"]
[cluster]
gpu = ["H100-SXM5-80GB", "B200-180GB"]
gpus = 8
[plan]
tp = [1, 2]
ep = [1, 8]
cuda_graph = ["none", "full"]
dispatcher = "all"
token_routing = "all"
a2a_overlap = "all"
fp8_attention = [false, true]
tp_comm_overlap = false
fp8_recipe = ["delayed", "mxfp8"]
attention_kernel = "flash3"
)"),
                               "stack.toml");
  const auto& axes = s.axes();
  const int framework = kFirstStackAxis, graph = kFirstStackAxis + 1,
            dispatcher = kFirstStackAxis + 2, routing = kFirstStackAxis + 3,
            overlap = kFirstStackAxis + 4, tp_overlap = kFirstStackAxis + 6,
            kernel = kFirstStackAxis + 11;
  EXPECT_EQ(axes[framework].labels, (std::vector<std::string>{"any"}));
  EXPECT_EQ(axes[graph].labels, (std::vector<std::string>{"none", "full"}));
  EXPECT_EQ(axes[dispatcher].labels,
            (std::vector<std::string>{"alltoall", "allgather", "deepep", "hybridep", "einsum"}));
  EXPECT_EQ(axes[routing].labels, (std::vector<std::string>{"dropless", "balanced", "capacity"}));
  EXPECT_EQ(axes[overlap].labels, (std::vector<std::string>{"off", "on"}));
  EXPECT_EQ(axes[tp_overlap].labels, (std::vector<std::string>{"off"}));
  EXPECT_EQ(axes[kernel].labels, (std::vector<std::string>{"flash3"}));
  EXPECT_EQ(s.plan_points(), 2u * 2 * 2 * 5 * 3 * 2 * 2 * 2);

  // Every plan's stack is its digits' values.
  Design d;
  ASSERT_TRUE(s.design(0, d));
  std::uint32_t index[kNumAxes];
  estimator::Plan p;
  Violation why;
  std::set<int> rules;
  for (std::uint64_t design = 0; design < s.designs(); ++design) {
    ASSERT_TRUE(s.design(design, d));
    for (std::uint64_t plan = 0; plan < s.plan_points(); ++plan) {
      s.decode(design * s.plan_points() + plan, index);
      s.plan(d, plan, p, why);
      rules.insert(static_cast<int>(why.rule));
      const auto settings = stack_settings();
      for (int i = 0; i < kNumStackSettings; ++i)
        ASSERT_EQ(settings[i].value_name(settings[i].get(p.stack)),
                  axes[kFirstStackAxis + i].labels[index[kFirstStackAxis + i]]);
      EXPECT_EQ(p.capacity_factor,
                p.stack.token_routing == estimator::TokenRouting::capacity ? 1.0 : 0.0);
      EXPECT_FALSE(p.stack.tp_comm_overlap);
      EXPECT_EQ(p.stack.attention_kernel, estimator::AttentionKernel::flash3);
    }
  }
  // Capacity routing with its factor breaks no rule; each stack rule removes some plans.
  for (Rule r : {Rule::token_routing, Rule::dispatcher_needs_ep, Rule::fp8_settings})
    EXPECT_TRUE(rules.count(static_cast<int>(r))) << to_string(r);
  EXPECT_TRUE(rules.count(0));
  const auto counts = s.count_by_rule();
  for (Rule r : {Rule::token_routing, Rule::dispatcher_needs_ep, Rule::fp8_settings})
    EXPECT_GT(counts[static_cast<int>(r)], 0u) << to_string(r);
  expect_counts_match_brute_force(s);

  // A constraint names a stack axis and its values.
  const Space constrained = Space::parse(spec(R"(
[workload]
model = "qwen3-30b-a3b"
global_batch = 64
[cluster]
gpu = "H100-SXM5-80GB"
gpus = 8
[plan]
ep = 8
dispatcher = "all"
)",
                                              R"(constraints = ["dispatcher != \"allgather\""])"),
                                         "c.toml");
  EXPECT_EQ(constrained.valid_points(), 3u);
  ASSERT_TRUE(constrained.design(0, d));
  int kept = 0;
  for (std::uint64_t plan = 0; plan < constrained.plan_points(); ++plan)
    if (constrained.plan(d, plan, p, why)) {
      ++kept;
      EXPECT_NE(p.stack.dispatcher, estimator::Dispatcher::allgather);
    }
  EXPECT_EQ(kept, 3);
}

// A spec that sweeps no stack setting keeps the point ids it had before the stack axes existed:
// they have one value each, the last digits of every point.
TEST(Space, UnsweptStackAxesLeaveThePointIds) {
  const Space s = Space::parse(spec(kSmall), "small.toml");
  std::uint32_t index[kNumAxes];
  s.decode(s.size() - 1, index);
  for (int i = kFirstStackAxis; i < kNumAxes; ++i) EXPECT_EQ(index[i], 0u);
  EXPECT_EQ(index[kMicroBatch], 1u);
  EXPECT_EQ(s.plan_points(), 4u * 4 * 2 * 2 * 2);
}

}  // namespace
}  // namespace clustersweep::spaces
