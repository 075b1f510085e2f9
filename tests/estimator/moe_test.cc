// The Mixture-of-Experts model: its FLOP count against Megatron-LM's formula, its reduction to the
// dense model, and the laws an expert-parallel step must obey.
#include <gtest/gtest.h>

#include <cmath>

#include "estimator/estimator.h"
#include "estimator/routing.h"
#include "h100_like_cluster.h"

namespace clustersweep::estimator {
namespace {

// The architectures of the published configs (DeepSeek-V3 report Table/config.json, Qwen3,
// GPT-OSS and Mixtral config.json), as the MoE runs files of ../shared/validation give them.
Model deepseek_v3(int mtp_layers) {
  Model m;
  m.layers = 61;
  m.dense_layers = 3;
  m.hidden = 7168;
  m.heads = 128;
  m.kv_heads = 128;
  m.q_lora_rank = 1536;
  m.kv_lora_rank = 512;
  m.qk_head_dim = 192;
  m.qk_rope_head_dim = 64;
  m.v_head_dim = 128;
  m.ffn_hidden = 18432;
  m.num_experts = 256;
  m.top_k = 8;
  m.moe_ffn_hidden = 2048;
  m.shared_ffn_hidden = 2048;
  m.mtp_layers = mtp_layers;
  m.mlp = Mlp::swiglu;
  m.vocab = 129280;
  return m;
}

Model qwen3_235b() {
  Model m;
  m.layers = 94;
  m.hidden = 4096;
  m.heads = 64;
  m.kv_heads = 4;
  m.qk_head_dim = 128;
  m.v_head_dim = 128;
  m.num_experts = 128;
  m.top_k = 8;
  m.moe_ffn_hidden = 1536;
  m.mlp = Mlp::swiglu;
  m.vocab = 151936;
  return m;
}

Model gpt_oss_120b() {
  Model m;
  m.layers = 36;
  m.hidden = 2880;
  m.heads = 64;
  m.kv_heads = 8;
  m.qk_head_dim = 64;
  m.v_head_dim = 64;
  m.num_experts = 128;
  m.top_k = 4;
  m.moe_ffn_hidden = 2880;
  m.mlp = Mlp::swiglu;
  m.vocab = 201088;
  m.sliding_window = 128;  // every other layer
  m.sliding_window_layers = 18;
  return m;
}

Model mixtral_8x7b() {
  Model m;
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.num_experts = 8;
  m.top_k = 2;
  m.moe_ffn_hidden = 14336;
  m.mlp = Mlp::swiglu;
  m.vocab = 32000;
  return m;
}

using test::cluster;

// --- FLOPs: Megatron-LM's num_floating_point_operations -----------------------------------------
// The reference values are what Megatron-LM's formula gives for these architectures at seq 4096,
// as the published runs report them (moe_runs.csv notes: "TFLOPS/token").

TEST(MoeFlops, DeepSeekV3MatchesMegatronWithAndWithoutMtp) {
  EXPECT_NEAR(megatron_flops_per_token(deepseek_v3(0), 4096) / 1e9, 249.8, 0.05);
  EXPECT_NEAR(megatron_flops_per_token(deepseek_v3(1), 4096) / 1e9, 260.0, 0.05);
}

TEST(MoeFlops, Qwen3AndGptOssMatchMegatron) {
  EXPECT_NEAR(megatron_flops_per_token(qwen3_235b(), 4096) / 1e9, 148.0, 0.05);
  EXPECT_NEAR(megatron_flops_per_token(gpt_oss_120b(), 4096) / 1e9, 32.6, 0.05);
}

TEST(MoeFlops, ADenseModelIsMegatronsDenseCount) {
  // GPT-3 175B: attention 12 l h^2 (2 + s/2h), MLP 12 l h 4h, logits 6 h V per token.
  Model m;
  m.layers = 96;
  m.hidden = 12288;
  m.heads = 96;
  m.kv_heads = 96;
  m.ffn_hidden = 4 * 12288;
  m.vocab = 51200;
  const double h = m.hidden, s = 2048, l = m.layers;
  const double megatron = 72.0 * l * h * h + 6.0 * l * s * h + 6.0 * h * m.vocab;
  EXPECT_NEAR(megatron_flops_per_token(m, 2048), megatron, 1e-9 * megatron);
}

TEST(MoeFlops, ModelFlopsCountActiveParametersOnly) {
  // Twice the experts at the same top-k: the same FLOPs per step, twice the expert parameters.
  Workload w{qwen3_235b(), 4096, 1024, Precision::bf16};
  Workload wide = w;
  wide.model.num_experts *= 2;
  EXPECT_DOUBLE_EQ(training_flops_per_step(wide, Recompute::none),
                   training_flops_per_step(w, Recompute::none));
  EXPECT_GT(total_params(wide.model), 1.9 * total_params(w.model) - 1e9);
  EXPECT_DOUBLE_EQ(active_params(wide.model), active_params(w.model));
  // Qwen3-235B-A22B: about 22B active of 235B.
  EXPECT_NEAR(active_params(w.model) / 1e9, 22, 1.0);
  EXPECT_NEAR(total_params(w.model) / 1e9, 235, 2.0);
}

// --- The dense model is the special case of one expert -----------------------------------------

TEST(MoeModel, OneExpertTopOneEqualsTheDenseModel) {
  Model dense;
  dense.layers = 32;
  dense.hidden = 4096;
  dense.heads = 32;
  dense.kv_heads = 8;
  dense.ffn_hidden = 14336;
  dense.mlp = Mlp::swiglu;
  dense.vocab = 128256;
  Model moe = dense;
  moe.num_experts = 1;
  moe.top_k = 1;
  moe.moe_ffn_hidden = dense.ffn_hidden;
  moe.ffn_hidden = 0;  // no dense layers: the dense width is unused

  for (int tp : {1, 2, 8}) {
    for (int zero : {0, 1, 3}) {
      Plan p;
      p.tp = tp;
      p.pp = 2;
      p.dp = 64 / (2 * tp);
      p.zero = zero;
      p.micro_batch = 2;
      p.sequence_parallel = tp > 1;
      p.etp = tp;  // the expert part split like the dense MLP
      const Calibration c;
      const Estimate a = estimate({dense, 4096, 256, Precision::bf16}, cluster(64), p, c);
      const Estimate b = estimate({moe, 4096, 256, Precision::bf16}, cluster(64), p, c);
      SCOPED_TRACE(testing::Message() << "tp " << tp << " zero " << zero);
      ASSERT_TRUE(a.feasible || a.reason == Infeasible::out_of_memory);
      EXPECT_NEAR(b.time.total_s, a.time.total_s, 1e-9 * a.time.total_s);
      EXPECT_NEAR(b.memory.hbm_bytes, a.memory.hbm_bytes, 1e-6 * a.memory.hbm_bytes);
      EXPECT_DOUBLE_EQ(b.model_flops_per_step, a.model_flops_per_step);
      EXPECT_EQ(b.time.ep_a2a_s, 0);
    }
  }
}

// --- Laws of an expert-parallel step
// --------------------------------------------------------------

Plan ep_plan(int ep, int dp, int pp = 8) {
  Plan p;
  p.tp = 1;
  p.pp = pp;
  p.dp = dp;
  p.ep = ep;
  p.zero = 1;
  p.recompute = Recompute::selective;
  p.pipeline_split = PipelineSplit::uneven;
  return p;
}

TEST(MoeModel, MoreScaleOutBandwidthNeverSlowsAnExpertParallelStep) {
  const Workload w{deepseek_v3(1), 4096, 4096, Precision::fp8};
  for (int ep : {8, 16, 32, 64}) {
    double previous = INFINITY;
    for (double gbps : {50.0, 100.0, 200.0, 400.0, 800.0, 1600.0, 3200.0}) {
      const Estimate e = estimate(w, cluster(512, gbps), ep_plan(ep, 64), Calibration{});
      SCOPED_TRACE(testing::Message() << "ep " << ep << " at " << gbps << " Gbit/s");
      EXPECT_LE(e.time.total_s, previous * (1 + 1e-12));
      if (ep > 8) {
        EXPECT_GT(e.time.ep_a2a_s, 0);
      }
      previous = e.time.total_s;
    }
  }
}

TEST(MoeModel, MemoryPerGpuFallsAsExpertParallelismGrows) {
  const Workload w{deepseek_v3(1), 4096, 4096, Precision::fp8};
  double previous = INFINITY;
  for (int ep : {1, 2, 4, 8, 16, 32, 64}) {
    const Estimate e = estimate(w, cluster(1024), ep_plan(ep, 128), Calibration{});
    SCOPED_TRACE(testing::Message() << "ep " << ep);
    EXPECT_LT(e.memory.hbm_bytes, previous);
    EXPECT_LT(e.memory.expert_weights_bytes + e.memory.expert_optimizer_bytes,
              previous);  // the expert state itself shrinks with ep
    previous = e.memory.hbm_bytes;
  }
}

TEST(MoeModel, ExpertStateIsShardedOverEpEtpAndEdp) {
  const Workload w{qwen3_235b(), 4096, 1024, Precision::bf16};
  Plan p = ep_plan(8, 32, 8);
  p.pipeline_split = PipelineSplit::uneven;
  p.zero = 0;
  const Estimate e8 = estimate(w, cluster(256), p, Calibration{});
  p.ep = 16;
  const Estimate e16 = estimate(w, cluster(256), p, Calibration{});
  EXPECT_NEAR(e16.memory.expert_weights_bytes, e8.memory.expert_weights_bytes / 2,
              1e-9 * e8.memory.expert_weights_bytes);
  EXPECT_DOUBLE_EQ(e16.memory.weights_bytes, e8.memory.weights_bytes);
  // The distributed optimizer shards the expert state over edp = 32/8 = 4 and 32/16 = 2 ranks.
  p.zero = 1;
  const Estimate z8 = estimate(w, cluster(256), ep_plan(8, 32, 8), Calibration{});
  const Estimate z16 = estimate(w, cluster(256), ep_plan(16, 32, 8), Calibration{});
  EXPECT_NEAR(z8.memory.expert_optimizer_bytes, z16.memory.expert_optimizer_bytes,
              1e-9 * z8.memory.expert_optimizer_bytes);
}

TEST(MoeModel, CapacityRoutingPadsToTheCapacityAndLearnedRoutingWaitsForTheBusiestRank) {
  const Workload w{qwen3_235b(), 4096, 1024, Precision::bf16};
  Calibration c;
  c.moe_load_cv = 0.2;
  Plan p = ep_plan(32, 32, 8);
  const Estimate dropless = estimate(w, cluster(256), p, c);
  p.stack.token_routing = TokenRouting::balanced;
  const Estimate balanced = estimate(w, cluster(256), p, c);
  p.stack.token_routing = TokenRouting::capacity;
  p.capacity_factor = 1.0;
  const Estimate capacity1 = estimate(w, cluster(256), p, c);
  p.capacity_factor = 1.5;
  const Estimate capacity15 = estimate(w, cluster(256), p, c);
  EXPECT_LT(balanced.time.total_s, dropless.time.total_s);
  EXPECT_LT(balanced.time.ep_a2a_s, dropless.time.ep_a2a_s);
  EXPECT_DOUBLE_EQ(capacity1.time.total_s, balanced.time.total_s);
  EXPECT_GT(capacity15.time.total_s, capacity1.time.total_s);
}

TEST(MoeModel, MoreCapacityNeverDropsMoreTokens) {
  for (double cv : {0.0, 0.05, 0.2, 0.6}) {
    double previous = 1.0;
    for (double c = 0.25; c <= 3.0; c += 0.25) {
      const double dropped = dropped_token_fraction(c, cv);
      EXPECT_GE(dropped, 0.0);
      EXPECT_LE(dropped, previous) << "cv " << cv << " capacity " << c;
      previous = dropped;
    }
  }
  // No spread: a capacity of one share drops nothing, half a share half the tokens.
  EXPECT_EQ(dropped_token_fraction(1.0, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(dropped_token_fraction(0.5, 0.0), 0.5);
  // With spread a capacity of one share drops E[max(0, L - 1)] = cv / sqrt(2 pi).
  EXPECT_NEAR(dropped_token_fraction(1.0, 0.2), 0.2 / std::sqrt(2 * M_PI), 1e-12);
  EXPECT_EQ(dropped_token_fraction(0.0, 0.2), 0.0);  // no capacity: dropless
}

TEST(MoeModel, EachStackSettingMovesTheStepTheWayItsMechanismDoes) {
  const Workload w{qwen3_235b(), 4096, 1024, Precision::fp8};
  Calibration c;
  c.launch_s = 2e-5;
  c.moe_layer_overhead_s = 1e-3;
  c.pp_overlap = 0.5;
  const Cluster cl = cluster(256);
  const Plan base = ep_plan(32, 32, 8);
  const double step = estimate(w, cl, base, c).time.total_s;
  auto with = [&](auto change) {
    Plan p = base;
    change(p.stack);
    return estimate(w, cl, p, c).time.total_s;
  };
  // Graphs never slow a step; overlap never exposes more time.
  Plan balanced = base;
  balanced.stack.token_routing = TokenRouting::balanced;
  const double none = estimate(w, cl, balanced, c).time.total_s;
  balanced.stack.cuda_graph = CudaGraph::partial;
  const double partial = estimate(w, cl, balanced, c).time.total_s;
  balanced.stack.cuda_graph = CudaGraph::full;
  const double full = estimate(w, cl, balanced, c).time.total_s;
  EXPECT_LE(partial, none);
  EXPECT_LT(full, partial);
  EXPECT_LE(with([](Stack& s) { s.a2a_overlap = true; }), step);
  EXPECT_GE(with([](Stack& s) { s.tp_comm_overlap = false; }), step);
  EXPECT_GE(with([](Stack& s) { s.dp_overlap = false; }), step);
  EXPECT_GE(with([](Stack& s) { s.param_gather_overlap = false; }), step);
  EXPECT_GE(with([](Stack& s) { s.pp_comm_overlap = false; }), step);
  // FP8 attention runs at the 8-bit rate; current scaling reads each operand once more.
  EXPECT_LT(with([](Stack& s) { s.fp8_attention = true; }), step);
  EXPECT_GT(with([](Stack& s) { s.fp8_recipe = Fp8Recipe::current; }), step);
  c.triton_attention_eff = 0.7;  // a kernel slower than cuDNN's makes a slower step
  EXPECT_GT(with([](Stack& s) { s.attention_kernel = AttentionKernel::triton; }), step);
  // The fused dispatchers send a token once per remote domain and permute inside their kernels.
  EXPECT_LT(with([](Stack& s) { s.dispatcher = Dispatcher::hybridep; }), step);
}

TEST(MoeModel, TheEinsumDispatchAddsMatmulsQuadraticInTheSequence) {
  // Its experts local (ep 1), a capacity of 1.25 shares.
  const Model m = mixtral_8x7b();
  Calibration c;
  c.moe_permute_passes = 0;  // what the einsums replace, left out of the comparison
  Plan p;
  p.dp = 64;
  p.stack.token_routing = TokenRouting::capacity;
  p.capacity_factor = 1.25;
  // The extra compute per token of the einsums, against the sorted tokens of alltoall.
  auto extra_per_token = [&](int seq) {
    const Workload w{m, seq, 64 * 8192 / seq, Precision::bf16};
    p.stack.dispatcher = Dispatcher::alltoall;
    const Estimate sorted = estimate(w, cluster(64), p, c);
    p.stack.dispatcher = Dispatcher::einsum;
    const Estimate einsum = estimate(w, cluster(64), p, c);
    EXPECT_GT(einsum.time.memory_bound_s, sorted.time.memory_bound_s);  // the masks
    EXPECT_DOUBLE_EQ(einsum.time.ep_a2a_s, 0);                          // ep 1: every expert local
    return (einsum.time.compute_s - sorted.time.compute_s) /
           static_cast<double>(w.global_batch * seq);
  };
  const double short_seq = extra_per_token(2048), long_seq = extra_per_token(8192);
  EXPECT_GT(short_seq, 0);
  // 2 S (E C) h FLOPs per sequence, E C = S k x capacity: per token linear in S.
  EXPECT_NEAR(long_seq / short_seq, 4.0, 0.4);
}

TEST(MoeModel, AllToAllInsideTheNvlinkDomainIsCheaperThanAcrossIt) {
  const Workload w{deepseek_v3(0), 4096, 4096, Precision::bf16};
  // The 64 ranks of an ep group in one rack-scale domain, or in 8 nodes of 8.
  Cluster rack = cluster(512);
  rack.nvlink_domain = 64;
  rack.gpus_per_node = 4;
  const Estimate inside = estimate(w, rack, ep_plan(64, 64), Calibration{});
  const Estimate across = estimate(w, cluster(512), ep_plan(64, 64), Calibration{});
  EXPECT_GT(inside.time.ep_a2a_s, 0);
  EXPECT_LT(inside.time.ep_a2a_s, across.time.ep_a2a_s);
}

// Megatron-Core's recompute modules: each drops what its module keeps and repeats its forward,
// so adding one never needs more memory and never takes less time; none is the default, the
// attention core.
TEST(RecomputeModules, EachSavesMemoryAndCostsTime) {
  const Workload w{deepseek_v3(0), 4096, 1024, Precision::bf16};
  const Cluster c = cluster(256);
  Plan p;
  p.pp = 4;
  p.dp = 64;
  p.ep = 16;
  p.zero = 1;
  p.recompute = Recompute::selective;
  Calibration cal;
  const Estimate base = estimate(w, c, p, cal);
  const Estimate same = [&] {
    Plan q = p;
    q.recompute_modules = kRecomputeCoreAttn;  // the default, named
    return estimate(w, c, q, cal);
  }();
  EXPECT_EQ(base.memory.hbm_bytes, same.memory.hbm_bytes);
  EXPECT_EQ(base.time.total_s, same.time.total_s);
  for (int bit = 1; bit < kNumRecomputeModules; ++bit) {
    Plan q = p;
    q.recompute_modules = static_cast<std::uint8_t>(kRecomputeCoreAttn | (1u << bit));
    const Estimate e = estimate(w, c, q, cal);
    SCOPED_TRACE(recompute_label(q.recompute, q.recompute_modules));
    EXPECT_LT(e.memory.activations_bytes + e.memory.expert_activations_bytes,
              base.memory.activations_bytes + base.memory.expert_activations_bytes);
    EXPECT_GE(e.time.total_s, base.time.total_s);
  }
  Recompute r{};
  std::uint8_t modules = 0;
  ASSERT_TRUE(parse_recompute_label("selective:moe+mla_up_proj", r, modules));
  EXPECT_EQ(recompute_label(r, modules), "selective:mla_up_proj+moe");
  EXPECT_FALSE(parse_recompute_label("selective:mlp+mlp", r, modules));
  EXPECT_FALSE(parse_recompute_label("full:mlp", r, modules));
  EXPECT_FALSE(parse_recompute_label("selective:", r, modules));
}

}  // namespace
}  // namespace clustersweep::estimator
