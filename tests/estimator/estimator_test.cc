// The estimator against closed forms (Narayanan et al. SC'21 for FLOPs, Korthikanti et al. 2022
// for activation memory) and the laws every point must obey.
#include "estimator/estimator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "h100_like_cluster.h"

namespace clustersweep::estimator {
namespace {

using test::cluster;
using test::gpt;
using test::gpt3_175b;

Plan plan(int tp, int pp, int dp, int micro_batch = 1) {
  Plan p;
  p.tp = tp;
  p.pp = pp;
  p.dp = dp;
  p.micro_batch = micro_batch;
  return p;
}

// --- FLOPs: Narayanan et al. SC'21, eq. 3 and its no-recompute counterpart ----------------------

TEST(Flops, FullRecomputeEqualsNarayananEquation3) {
  for (const Model& m : {gpt(96, 12288, 96, 51200), gpt(40, 6144, 48, 51200),
                         gpt(128, 25600, 160, 51200), gpt(24, 2304, 24, 50257)}) {
    for (int s : {1024, 2048, 8192}) {
      const Workload w{m, s, 512, Precision::bf16};
      const double B = 512, l = m.layers, h = m.hidden, V = m.vocab;
      const double expected = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
      EXPECT_NEAR(training_flops_per_step(w, Recompute::full) / expected, 1.0, 1e-12);
    }
  }
}

TEST(Flops, NoRecomputeIsThreeForwardPasses) {
  const Model m = gpt(96, 12288, 96, 51200);
  const Workload w{m, 2048, 1536, Precision::bf16};
  const double B = 1536, s = 2048, l = 96, h = 12288, V = 51200;
  // Forward: 24 B s l h^2 (1 + s/(6h) + V/(12 l h)); backward twice that.
  const double forward = 24 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(training_flops_per_step(w, Recompute::none) / (3 * forward), 1.0, 1e-12);
  // Selective recompute adds the attention-score forward: 4 B s^2 h per layer.
  EXPECT_NEAR(
      (training_flops_per_step(w, Recompute::selective) - 3 * forward) / (4 * B * s * s * h * l),
      1.0, 1e-12);
}

TEST(Flops, GqaAndSwigluCountTheirMatrices) {
  Model m = gpt(32, 4096, 32, 128256);
  m.kv_heads = 8;
  m.ffn_hidden = 14336;
  m.mlp = Mlp::swiglu;
  const Workload w{m, 8192, 1, Precision::bf16};
  const double h = 4096, f = 14336, s = 8192, V = 128256;
  const double layer = 2 * (h * (h + 2 * h * 8 / 32) + h * h + 3 * h * f) + 4 * s * h;
  EXPECT_NEAR(training_flops_per_step(w, Recompute::none) / (3 * s * (32 * layer + 2 * h * V)), 1.0,
              1e-12);
}

TEST(Flops, EstimateReportsModelFlopsWithoutRecompute) {
  Plan p = plan(8, 8, 16);
  p.recompute = Recompute::full;
  const Estimate e = estimate(gpt3_175b(), cluster(), p, Calibration{});
  EXPECT_DOUBLE_EQ(e.model_flops_per_step, training_flops_per_step(gpt3_175b(), Recompute::none));
}

TEST(Params, Gpt3Has175BillionParameters) {
  // Narayanan et al.: P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)) counts biases and position
  // embeddings that we leave out, and one (tied) embedding where we count two.
  const double p = total_params(gpt(96, 12288, 96, 51200));
  EXPECT_NEAR(p / 175e9, 1.0, 0.01);
}

// --- Activation memory: Korthikanti et al. 2022, Table 2 ---------------------------------------

class Activations : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(Activations, EqualKorthikantiClosedForms) {
  const auto [t, s, b] = GetParam();
  const Model m = gpt(96, 12288, 96, 51200);
  const double h = m.hidden, a = m.heads;
  const double sbh = static_cast<double>(s) * b * h;
  auto act = [&](bool sp, Recompute r) {
    return activation_bytes_per_layer(m, s, b, t, sp, r, /*flash_attention=*/false,
                                      /*dropout_masks=*/true);
  };
  // No parallelism / tensor parallelism only / tensor + sequence parallelism.
  if (t == 1) {
    EXPECT_NEAR(act(false, Recompute::none) / (sbh * (34 + 5 * a * s / h)), 1, 1e-12);
  }
  EXPECT_NEAR(act(false, Recompute::none) / (sbh * (10 + 24.0 / t + 5 * a * s / (h * t))), 1,
              1e-12);
  EXPECT_NEAR(act(true, Recompute::none) / (sbh / t * (34 + 5 * a * s / h)), 1, 1e-12);
  // Selective recompute: the attention core is not stored.
  EXPECT_NEAR(act(true, Recompute::selective) / (34 * sbh / t), 1, 1e-12);
  EXPECT_NEAR(act(false, Recompute::selective) / (sbh * (10 + 24.0 / t)), 1, 1e-12);
  // Full recompute: only the layer input (2 s b h, split by sequence parallelism).
  EXPECT_NEAR(act(false, Recompute::full) / (2 * sbh), 1, 1e-12);
  EXPECT_NEAR(act(true, Recompute::full) / (2 * sbh / t), 1, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Korthikanti, Activations,
                         ::testing::Combine(::testing::Values(1, 2, 4, 8),
                                            ::testing::Values(2048, 4096),
                                            ::testing::Values(1, 4)));

TEST(ActivationsVariants, FusedAttentionDropsTheScoreTerm) {
  const Model m = gpt(96, 12288, 96, 51200);
  EXPECT_DOUBLE_EQ(
      activation_bytes_per_layer(m, 2048, 1, 8, true, Recompute::none, true, true),
      activation_bytes_per_layer(m, 2048, 1, 8, true, Recompute::selective, false, true));
}

TEST(ActivationsVariants, NoDropoutAndFp8InputsStoreLess) {
  const Model m = gpt(32, 4096, 32, 50000);
  const double sbh = 2048.0 * 4096;
  const double base = activation_bytes_per_layer(m, 2048, 1, 1, false, Recompute::none, true, true);
  // Two 1-byte masks; four GEMM inputs (h, h, h and f = 4h elements) at 1 byte instead of 2.
  EXPECT_DOUBLE_EQ(
      base - activation_bytes_per_layer(m, 2048, 1, 1, false, Recompute::none, true, false),
      2 * sbh);
  EXPECT_DOUBLE_EQ(
      base - activation_bytes_per_layer(m, 2048, 1, 1, false, Recompute::none, true, true, true),
      7 * sbh);
}

// --- Feasibility ----------------------------------------------------------------------------

// The structural rules are spaces::check_plan()'s (tests/spaces/rules_test.cc); the estimator only
// refuses plans that would make it divide by zero, and reports memory and precision.
TEST(Feasibility, EstimatorReasons) {
  const Workload w = gpt3_175b();
  const Calibration cal;
  auto reason = [&](const Plan& p, const Cluster& c = cluster()) {
    return estimate(w, c, p, cal).reason;
  };
  EXPECT_EQ(reason(plan(8, 8, 16)), Infeasible::none);
  EXPECT_EQ(reason(plan(1, 2, 512)), Infeasible::out_of_memory);
  Workload fp4 = w;
  fp4.precision = Precision::fp4;
  EXPECT_EQ(estimate(fp4, cluster(), plan(8, 8, 16), cal).reason,
            Infeasible::precision_unsupported);
  // Ill-formed plans: degrees not multiplying to the GPUs, a zero degree, ZeRO stage 4, more
  // pipeline chunks than layer slots, offload without a tier.
  EXPECT_EQ(reason(plan(8, 8, 8)), Infeasible::invalid_plan);
  EXPECT_EQ(reason(plan(8, 0, 16)), Infeasible::invalid_plan);
  Plan zero = plan(8, 8, 16);
  zero.zero = 4;
  EXPECT_EQ(reason(zero), Infeasible::invalid_plan);
  EXPECT_EQ(reason(plan(1, 128, 8)), Infeasible::invalid_plan);
  Plan offload = plan(8, 8, 16);
  offload.offload = Offload::optimizer;  // no expansion tier
  EXPECT_EQ(reason(offload), Infeasible::invalid_plan);
  Cluster no_network = cluster();
  no_network.inter_node_bytes_per_s = 0;  // the pipeline and DP groups must cross nodes
  const Estimate cut = estimate(w, no_network, plan(8, 8, 16), cal);
  EXPECT_EQ(cut.reason, Infeasible::invalid_plan);
  EXPECT_EQ(cut.time.total_s, 0);
  EXPECT_STREQ(to_string(Infeasible::out_of_memory), "out_of_memory");
}

TEST(Feasibility, EmbeddingAndLossCountAsPipelineLayers) {
  // Llama 3.1 405B recipes: 126 layers + embedding + loss = 128 slots over pp*vp = 64.
  Model m = gpt(126, 16384, 128, 128256);
  m.kv_heads = 8;
  m.ffn_hidden = 53248;
  m.mlp = Mlp::swiglu;
  Plan p = plan(8, 8, 8);
  p.vp = 8;
  p.sequence_parallel = true;
  p.pipeline_split = PipelineSplit::embedding_loss;
  const Workload w{m, 8192, 512, Precision::bf16};
  const Estimate e = estimate(w, cluster(512), p, Calibration{});
  EXPECT_NE(e.reason, Infeasible::invalid_plan);
  EXPECT_GT(e.time.total_s, 0);
  // The last stage holds 15 layers and the loss, where an uneven split of the same 126 layers
  // puts 16 layers (ceil(126/64) a chunk) beside the loss.
  p.pipeline_split = PipelineSplit::uneven;
  EXPECT_LT(e.time.total_s, estimate(w, cluster(512), p, Calibration{}).time.total_s);
}

TEST(Feasibility, UnevenPipeline) {
  const Workload w = gpt3_175b();  // 96 layers
  const Cluster c = cluster(640);
  Plan p = plan(8, 5, 16);
  p.pipeline_split = PipelineSplit::uneven;
  const Estimate uneven = estimate(w, c, p, Calibration{});
  ASSERT_NE(uneven.reason, Infeasible::invalid_plan);
  // The critical stage holds ceil(96/5) = 20 layers, as every stage of a 100-layer model does.
  Workload hundred = w;
  hundred.model.layers = 100;
  const Estimate even = estimate(hundred, c, plan(8, 5, 16), Calibration{});
  EXPECT_DOUBLE_EQ(uneven.time.compute_s, even.time.compute_s);
  EXPECT_DOUBLE_EQ(uneven.time.pp_bubble_s, even.time.pp_bubble_s);
}

// --- Structure of the result ------------------------------------------------------------------

TEST(Breakdown, PartsAddUpToTheStepTime) {
  Plan p = plan(4, 8, 32, 1);
  p.vp = 3;
  p.zero = 1;
  p.sequence_parallel = true;
  p.recompute = Recompute::selective;
  const Estimate e = estimate(gpt3_175b(), cluster(), p, Calibration{});
  const StepTime& t = e.time;
  EXPECT_NEAR(t.compute_s + t.memory_bound_s + t.tp_comm_s + t.cp_comm_s + t.pp_p2p_s +
                  t.pp_bubble_s + t.ep_a2a_s + t.dp_exposed_s + t.edp_exposed_s + t.optimizer_s +
                  t.offload_s + t.overhead_s,
              t.total_s, 1e-9 * t.total_s);
  EXPECT_GT(t.compute_s, 0);
  EXPECT_GT(t.tp_comm_s, 0);
  EXPECT_GT(t.pp_bubble_s, 0);
  EXPECT_NEAR(e.tokens_per_s, 1536.0 * 2048 / t.total_s, 1e-6 * e.tokens_per_s);
  EXPECT_NEAR(e.mfu, e.model_flops_per_step / (t.total_s * 1024 * 989e12), 1e-12);
  const Memory& m = e.memory;
  EXPECT_NEAR(m.hbm_bytes + m.expansion_bytes,
              m.weights_bytes + m.gradients_bytes + m.optimizer_bytes + m.activations_bytes +
                  m.workspace_bytes,
              1.0);
}

TEST(Breakdown, InterleavingShrinksTheBubble) {
  Plan p = plan(8, 8, 16);
  const double bubble1 = estimate(gpt3_175b(), cluster(), p, Calibration{}).time.pp_bubble_s;
  p.vp = 2;
  const double bubble2 = estimate(gpt3_175b(), cluster(), p, Calibration{}).time.pp_bubble_s;
  EXPECT_LT(bubble2, 0.6 * bubble1);
}

TEST(Breakdown, TensorParallelismAcrossNodesCostsMore) {
  Calibration cal;
  cal.tp_overlap = 0;
  const Workload w = gpt3_175b();
  const double inside = estimate(w, cluster(), plan(8, 8, 16), cal).time.tp_comm_s;
  Cluster small_domain = cluster();
  small_domain.nvlink_domain = 4;
  const double across = estimate(w, small_domain, plan(8, 8, 16), cal).time.tp_comm_s;
  EXPECT_GT(across, 2 * inside);
}

TEST(Memory, ZeroShardsStateOverDataParallelRanks) {
  const Workload w = gpt3_175b();
  const Memory z0 = estimate(w, cluster(), plan(8, 8, 16), Calibration{}).memory;
  Plan p = plan(8, 8, 16);
  p.zero = 1;
  const Memory z1 = estimate(w, cluster(), p, Calibration{}).memory;
  p.zero = 2;
  const Memory z2 = estimate(w, cluster(), p, Calibration{}).memory;
  p.zero = 3;
  const Memory z3 = estimate(w, cluster(), p, Calibration{}).memory;
  EXPECT_DOUBLE_EQ(z1.optimizer_bytes, z0.optimizer_bytes / 16);
  EXPECT_DOUBLE_EQ(z1.gradients_bytes, z0.gradients_bytes);
  EXPECT_DOUBLE_EQ(z2.gradients_bytes, z0.gradients_bytes / 16);
  EXPECT_DOUBLE_EQ(z2.weights_bytes, z0.weights_bytes);
  EXPECT_DOUBLE_EQ(z3.weights_bytes, z0.weights_bytes / 16);
  // Mixed precision Adam: 16-bit weights and gradients, fp32 master + two moments.
  EXPECT_DOUBLE_EQ(z0.optimizer_bytes, 6 * z0.weights_bytes);
}

TEST(Memory, OffloadingMovesStateToTheExpansionTier) {
  const Workload w = gpt3_175b();
  Cluster c = cluster();
  c.expansion_bytes = 512e9;
  c.expansion_bytes_per_s = 64e9;
  Plan p = plan(8, 4, 32);
  const Estimate in_hbm = estimate(w, c, p, Calibration{});
  p.offload = Offload::optimizer;
  const Estimate offloaded = estimate(w, c, p, Calibration{});
  EXPECT_DOUBLE_EQ(offloaded.memory.expansion_bytes, in_hbm.memory.optimizer_bytes);
  EXPECT_DOUBLE_EQ(offloaded.memory.hbm_bytes,
                   in_hbm.memory.hbm_bytes - in_hbm.memory.optimizer_bytes);
  EXPECT_GE(offloaded.time.total_s, in_hbm.time.total_s);
  EXPECT_GT(offloaded.time.offload_s, 0);
  // COMET's point: the tier can make a plan fit that does not fit HBM alone.
  c.hbm_bytes = offloaded.memory.hbm_bytes + 1e9;
  EXPECT_FALSE(estimate(w, c, plan(8, 4, 32), Calibration{}).feasible);
  EXPECT_TRUE(estimate(w, c, p, Calibration{}).feasible);
  c.expansion_bytes = offloaded.memory.expansion_bytes / 2;
  EXPECT_EQ(estimate(w, c, p, Calibration{}).reason, Infeasible::out_of_memory);
}

TEST(Estimator, OneShotEqualsPrecomputed) {
  const Calibration cal;
  const Estimator estimator(gpt3_175b(), cluster(), cal);
  const Plan p = plan(4, 16, 16, 2);
  const Estimate a = estimator.estimate(p);
  const Estimate b = estimate(gpt3_175b(), cluster(), p, cal);
  EXPECT_EQ(a.time.total_s, b.time.total_s);
  EXPECT_EQ(a.memory.hbm_bytes, b.memory.hbm_bytes);
  EXPECT_EQ(a.energy_per_step_j, b.energy_per_step_j);
}

TEST(Names, RoundTrip) {
  for (int i = 0; i < kNumPrecisions; ++i) {
    Precision p{};
    ASSERT_TRUE(parse_precision(to_string(static_cast<Precision>(i)), p));
    EXPECT_EQ(static_cast<int>(p), i);
  }
  Offload o{};
  EXPECT_TRUE(parse_offload("optimizer_activations", o));
  EXPECT_EQ(o, Offload::optimizer_activations);
  Recompute r = Recompute::none;
  EXPECT_FALSE(parse_recompute("partial", r));
  EXPECT_EQ(r, Recompute::none);
}

// --- Laws over random points --------------------------------------------------------------------

struct Point {
  Workload workload;
  Cluster cluster;
  Plan plan;
};

// Random but structurally valid points: models from small to large, every plan dimension.
Point random_point(std::mt19937_64& rng) {
  auto pick = [&rng](std::initializer_list<int> values) {
    std::uniform_int_distribution<std::size_t> d(0, values.size() - 1);
    return *(values.begin() + d(rng));
  };
  Point pt;
  const int heads = pick({16, 32, 64, 96, 128});
  Model m = gpt(pick({16, 24, 32, 48, 96}), heads * 128, heads, pick({32000, 51200, 128256}));
  m.kv_heads = pick({1, 2}) == 1 ? heads : 8;
  if (pick({0, 1})) {
    m.mlp = Mlp::swiglu;
    m.ffn_hidden = m.hidden * 7 / 2;
  }
  pt.workload = {m, pick({1024, 2048, 4096, 8192}), 0, static_cast<Precision>(pick({0, 2, 3, 4}))};
  Plan& p = pt.plan;
  p.tp = pick({1, 2, 4, 8});
  p.pp = pick({1, 2, 4, 8});
  p.cp = pick({1, 1, 2});
  p.vp = p.pp > 1 ? pick({1, 2}) : 1;
  if (m.layers % (p.pp * p.vp) != 0) p.vp = 1;
  if (m.layers % p.pp != 0) {
    p.pp = 1;
    p.vp = 1;
  }
  p.dp = pick({1, 2, 4, 16, 64});
  p.micro_batch = pick({1, 2, 4});
  p.zero = pick({0, 1, 2, 3});
  p.recompute = static_cast<Recompute>(pick({0, 1, 2}));
  p.sequence_parallel = pick({0, 1}) == 1;
  p.offload = static_cast<Offload>(pick({0, 0, 1, 2, 3}));
  pt.workload.global_batch = static_cast<std::int64_t>(p.dp) * p.micro_batch * pick({1, 4, 16});
  Cluster& c = pt.cluster;
  c = cluster(p.tp * p.pp * p.dp * p.cp);
  c.gpus_per_node = pick({4, 8});
  c.nvlink_domain = pick({4, 8, 72});
  c.nvlink_bytes_per_s = pick({150, 450, 900}) * 1e9;
  c.inter_node_bytes_per_s = pick({12, 25, 50, 100}) * 1e9;
  c.gpu.hbm_bytes_per_s = pick({1555, 3350, 8000}) * 1e9;
  c.hbm_bytes = pick({40, 80, 192}) * 1e9;
  c.expansion_bytes = pick({0, 256, 1024}) * 1e9;
  c.expansion_bytes_per_s = pick({32, 64, 128}) * 1e9;
  c.fabric = static_cast<Fabric>(pick({0, 1, 2}));
  if (c.fabric == Fabric::torus) c.torus = balanced_torus(c.nvlink_domain, pick({2, 3}));
  return pt;
}

double step(const Point& pt, const Calibration& cal) {
  return estimate(pt.workload, pt.cluster, pt.plan, cal).time.total_s;
}

TEST(Laws, MoreBandwidthOrAFasterAcceleratorNeverSlowsAStep) {
  std::mt19937_64 rng(20240601);
  const Calibration cal;
  int checked = 0;
  for (int i = 0; i < 3000; ++i) {
    const Point pt = random_point(rng);
    const Estimate base = estimate(pt.workload, pt.cluster, pt.plan, cal);
    if (base.reason != Infeasible::none && base.reason != Infeasible::out_of_memory) continue;
    ++checked;
    const double t = base.time.total_s;
    ASSERT_TRUE(std::isfinite(t) && t > 0);
    const double slack = 1e-12 * t;
    for (double k : {1.01, 1.5, 4.0}) {
      Point more = pt;
      more.cluster.nvlink_bytes_per_s *= k;
      EXPECT_LE(step(more, cal), t + slack) << "NVLink x" << k << " at point " << i;
      more = pt;
      more.cluster.inter_node_bytes_per_s *= k;
      EXPECT_LE(step(more, cal), t + slack) << "scale-out x" << k << " at point " << i;
      more = pt;
      more.cluster.gpu.hbm_bytes_per_s *= k;
      EXPECT_LE(step(more, cal), t + slack) << "HBM bandwidth x" << k << " at point " << i;
      more = pt;
      more.cluster.expansion_bytes_per_s *= k;
      EXPECT_LE(step(more, cal), t + slack) << "expansion bandwidth x" << k << " at point " << i;
      more = pt;
      for (double& peak : more.cluster.gpu.peak_flops) peak *= k;
      EXPECT_LE(step(more, cal), t + slack) << "peak x" << k << " at point " << i;
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(Laws, MoreHbmNeverMakesAFeasiblePointInfeasible) {
  std::mt19937_64 rng(7);
  const Calibration cal;
  int feasible = 0;
  for (int i = 0; i < 3000; ++i) {
    const Point pt = random_point(rng);
    const Estimate base = estimate(pt.workload, pt.cluster, pt.plan, cal);
    if (!base.feasible) continue;
    ++feasible;
    for (double k : {1.1, 2.0, 10.0}) {
      Point more = pt;
      more.cluster.hbm_bytes *= k;
      const Estimate e = estimate(more.workload, more.cluster, more.plan, cal);
      EXPECT_TRUE(e.feasible) << "HBM x" << k << " at point " << i;
      EXPECT_EQ(e.time.total_s, base.time.total_s);
      more = pt;
      more.cluster.expansion_bytes *= k;
      EXPECT_TRUE(estimate(more.workload, more.cluster, more.plan, cal).feasible);
    }
  }
  EXPECT_GT(feasible, 200);
}

TEST(Laws, EnergyMemoryAndTimesAreNonNegative) {
  std::mt19937_64 rng(99);
  const Calibration cal;
  for (int i = 0; i < 3000; ++i) {
    const Point pt = random_point(rng);
    const Estimate e = estimate(pt.workload, pt.cluster, pt.plan, cal);
    if (e.reason != Infeasible::none && e.reason != Infeasible::out_of_memory) continue;
    const StepTime& t = e.time;
    for (double x : {t.compute_s,
                     t.memory_bound_s,
                     t.tp_comm_s,
                     t.cp_comm_s,
                     t.pp_p2p_s,
                     t.pp_bubble_s,
                     t.dp_exposed_s,
                     t.optimizer_s,
                     t.offload_s,
                     t.overhead_s,
                     e.energy_per_step_j,
                     e.memory.weights_bytes,
                     e.memory.gradients_bytes,
                     e.memory.optimizer_bytes,
                     e.memory.activations_bytes,
                     e.memory.workspace_bytes,
                     e.memory.hbm_bytes,
                     e.memory.expansion_bytes,
                     e.tokens_per_s,
                     e.mfu})
      ASSERT_TRUE(std::isfinite(x) && x >= 0) << "point " << i;
    EXPECT_GT(e.energy_per_step_j, 0);
    EXPECT_LT(e.mfu, 1.0);
  }
}

}  // namespace
}  // namespace clustersweep::estimator
