// The one structural rule check: each rule with its case, the values it reports, its message.
#include "spaces/rules.h"

#include <gtest/gtest.h>

#include "spaces/catalog.h"

namespace clustersweep::spaces {
namespace {

namespace est = estimator;

est::Workload gpt3() {
  est::Workload w;
  w.model = Catalog::builtin().find_model("gpt3-175b")->model;  // 96 layers, 96 heads
  w.seq_len = 2048;
  w.global_batch = 1536;
  return w;
}

est::Cluster h100(int gpus) {
  est::Cluster c;
  c.gpu = Catalog::builtin().find_accelerator("H100-SXM5-80GB")->accelerator;
  c.num_gpus = gpus;
  c.gpus_per_node = 8;
  c.nvlink_domain = 8;
  return c;
}

est::Plan plan(int tp, int pp, int dp) {
  est::Plan p;
  p.tp = tp;
  p.pp = pp;
  p.dp = dp;
  return p;
}

Violation check(const est::Plan& p, const est::Workload& w = gpt3(),
                const est::Cluster& c = h100(1024)) {
  return check_plan(w, c, p, RuleOptions{});
}

TEST(Rules, EachRuleHasItsCaseAndMessage) {
  EXPECT_FALSE(check(plan(8, 8, 16)));
  auto expect = [](const Violation& v, Rule rule, const std::string& text) {
    EXPECT_EQ(v.rule, rule) << to_string(v.rule);
    EXPECT_EQ(message(v), text);
  };
  expect(check(plan(5, 8, 16)), Rule::tp_heads, "5 does not divide the 96 attention heads");
  est::Workload gqa = gpt3();
  gqa.model.kv_heads = 8;
  gqa.model.heads = 48;
  expect(check(plan(6, 8, 16), gqa), Rule::tp_heads,
         "6 and the 8 key/value heads do not divide one another");
  expect(check(plan(16, 4, 16)), Rule::tp_nvlink_domain,
         "16 does not divide the NVLink domain of 8 GPUs (a spec's plan.allow_tp_across_nodes "
         "lifts this)");
  expect(check(plan(8, 8, 8)), Rule::degrees,
         "tp*pp*cp*dp = 8*8*1*8 = 512 does not equal the 1024 GPUs");
  expect(check(plan(8, 3, 42)), Rule::degrees,
         "tp*pp*cp = 8*3*1 = 24 does not divide the 1024 GPUs");
  expect(check(plan(8, 128, 1)), Rule::pp_vp_layers,
         "pp*vp = 128*1 = 128 does not divide the 96 layer slots");
  est::Plan vp = plan(8, 1, 128);
  vp.vp = 5;
  expect(check(vp), Rule::pp_vp_layers, "pp*vp = 1*5 = 5 does not divide the 96 layer slots");
  vp.vp = 2;
  expect(check(vp), Rule::vp_needs_pp, "interleaving (vp 2) needs pp > 1");
  est::Plan cp = plan(8, 8, 4);
  cp.cp = 4;
  est::Workload odd = gpt3();
  odd.seq_len = 2052;
  expect(check(cp, odd), Rule::cp_seq, "2*cp = 8 does not divide the sequence length 2052");
  est::Plan mb = plan(8, 8, 16);
  mb.micro_batch = 5;
  expect(check(mb), Rule::batch, "1536 is not a multiple of dp*micro_batch = 16*5");
  est::Plan inter = plan(8, 8, 16);
  inter.vp = 2;
  inter.micro_batch = 12;  // 8 micro-batches: fine
  EXPECT_FALSE(check(inter));
  inter.micro_batch = 32;  // 3 micro-batches over 8 stages
  expect(check(inter), Rule::interleave_microbatches,
         "interleaving (vp 2) needs the 3 micro-batches to be a multiple of pp = 8");
  est::Plan sp = plan(1, 8, 128);
  sp.sequence_parallel = true;
  expect(check(sp), Rule::sequence_parallel_needs_tp, "needs tp > 1");
  est::Plan zero = plan(8, 128, 1);
  zero.zero = 1;
  est::Cluster small = h100(8);
  zero.pp = 1;
  expect(check(zero, gpt3(), small), Rule::zero_needs_dp,
         "ZeRO stage 1 with dp*cp = 1 shards over one rank: it is the plan with zero = 0");
  // The ZeRO group is dp*cp: with cp = 2 ZeRO shards over two ranks.
  est::Plan zero_cp = plan(4, 1, 1);
  zero_cp.cp = 2;
  zero_cp.zero = 1;
  EXPECT_FALSE(check(zero_cp, gpt3(), small));
  est::Plan offload = plan(8, 8, 16);
  offload.offload = est::Offload::optimizer;
  expect(check(offload), Rule::offload_needs_expansion,
         "needs an expansion tier (expansion_gb and expansion_gbytes_per_s)");
}

// On a torus every parallel group inside the domain is a box of it: gpt3 on a 4x6 torus of 24
// chips, in one domain of 24.
TEST(Rules, TorusGroupsAreBoxesOfTheTorus) {
  est::Cluster torus = h100(24);
  torus.nvlink_domain = 24;
  torus.gpus_per_node = 8;
  torus.fabric = est::Fabric::torus;
  torus.torus = {4, 6, 1};
  est::Workload w = gpt3();
  w.global_batch = 1536;
  EXPECT_FALSE(check(plan(4, 1, 6), w, torus));   // tp the first dimension, dp the second
  EXPECT_FALSE(check(plan(2, 1, 12), w, torus));  // tp half of it
  EXPECT_FALSE(check(plan(8, 1, 3), w, torus));   // tp the first and a third of the second
  const Violation v = check(plan(3, 1, 8), w, torus);
  EXPECT_EQ(v.rule, Rule::torus_mapping);
  EXPECT_EQ(message(v),
            "tp 3 at stride 1 is not a box of the 4x6 torus: a group's size and stride must fill "
            "whole dimensions or split one evenly");
  // pp 3 at stride 8 spans the second dimension's thirds; dp 3 at stride 1 straddles rows.
  EXPECT_FALSE(check(plan(4, 3, 2), w, torus));
  EXPECT_EQ(check(plan(1, 8, 3), w, torus).rule, Rule::torus_mapping);
  EXPECT_EQ(check(plan(6, 1, 4), w, torus).rule, Rule::torus_mapping);
  // A switch has no such rule.
  torus.fabric = est::Fabric::switched;
  EXPECT_FALSE(check(plan(3, 1, 8), w, torus));
}

TEST(Rules, AFrameworkRunsOnItsProfilesVendors) {
  est::Plan p = plan(8, 8, 16);
  est::Framework neuronx{};
  ASSERT_TRUE(est::parse_framework("neuronx", neuronx));
  p.stack.framework = neuronx;
  const Violation v = check_framework_vendor(p, "nvidia");
  EXPECT_EQ(v.rule, Rule::framework_vendor);
  EXPECT_EQ(message(v), "neuronx runs on aws accelerators");
  EXPECT_FALSE(check_framework_vendor(p, "aws"));
  p.stack.framework = est::Framework::any;  // every vendor
  EXPECT_FALSE(check_framework_vendor(p, "google"));
}

TEST(Rules, HugeDegreesAreADegreesViolationNotAnOverflow) {
  est::Plan p = plan(2, 2'000'000'000, 2'000'000'000);
  p.cp = 2'000'000'000;
  const Violation v = check(p, gpt3(), h100(1024));
  EXPECT_EQ(v.rule, Rule::degrees);
  EXPECT_EQ(message(v), "tp*pp*cp = 2*2000000000*2000000000 = 8e+18 does not divide the 1024 GPUs");
}

TEST(Rules, PipelineSplits) {
  est::Workload llama = gpt3();
  llama.model.layers = 126;
  llama.model.heads = 128;
  llama.model.kv_heads = 8;
  llama.global_batch = 2048;
  est::Plan p = plan(8, 16, 128);  // 16,384 GPUs; 126 layers do not divide over 16 stages
  const est::Cluster big = h100(16384);
  EXPECT_EQ(check(p, llama, big).rule, Rule::pp_vp_layers);
  p.pipeline_split = est::PipelineSplit::embedding_loss;  // 128 slots: 8 a stage
  EXPECT_FALSE(check(p, llama, big));
  p.pipeline_split = est::PipelineSplit::uneven;
  EXPECT_FALSE(check(p, llama, big));
  // Splits that do not apply: uneven where the even split works, any split without a pipeline,
  // more chunks than layers.
  est::Plan even = plan(8, 2, 1024);
  even.pipeline_split = est::PipelineSplit::uneven;
  EXPECT_EQ(check(even, llama, big).rule, Rule::pipeline_split);
  est::Plan flat = plan(8, 1, 2048);
  flat.pipeline_split = est::PipelineSplit::embedding_loss;
  EXPECT_EQ(check(flat, llama, big).rule, Rule::pipeline_split);
  EXPECT_EQ(message(check(flat, llama, big)), "needs pp > 1");
  est::Plan deep = plan(1, 128, 128);
  deep.pipeline_split = est::PipelineSplit::uneven;
  EXPECT_EQ(check(deep, llama, big).rule, Rule::pipeline_split);
  deep.pipeline_split = est::PipelineSplit::embedding_loss;  // 128 slots on 128 stages
  EXPECT_FALSE(check(deep, llama, big));
}

TEST(Rules, DesignRules) {
  est::Workload fp8 = gpt3();
  fp8.precision = est::Precision::fp8;
  est::Cluster v100 = h100(16);
  v100.gpu = Catalog::builtin().find_accelerator("V100-SXM2-32GB")->accelerator;
  const Violation v = check_design(fp8, v100);
  EXPECT_EQ(v.rule, Rule::precision_unsupported);
  EXPECT_EQ(message(v), "has no fp8 peak; it supports fp32, fp16");
  EXPECT_EQ(check_design(gpt3(), h100(12)).rule, Rule::cluster_shape);
  EXPECT_FALSE(check_design(gpt3(), h100(4)));  // part of one node
  est::Cluster odd = h100(16);
  odd.nvlink_domain = 6;
  EXPECT_EQ(message(check_design(gpt3(), odd)),
            "16 GPUs in nodes of 8 with an NVLink domain of 6: the GPUs must fill whole nodes, "
            "and the domain must divide or be a multiple of the node");
}

// Megatron-Core's tp-pp-dp mapping runs without cp and ep; the experts' replicas are then the
// weights' when etp = tp. On a torus the order moves the groups, and with them which are boxes.
TEST(Rules, RankOrderTpPpDp) {
  est::Plan p = plan(8, 8, 16);
  p.stack.rank_order = est::RankOrder::tp_pp_dp;
  EXPECT_FALSE(check(p));
  p.cp = 2;
  p.dp = 8;
  Violation v = check(p);
  EXPECT_EQ(v.rule, Rule::rank_order);
  EXPECT_EQ(message(v), "tp-pp-dp needs cp = 1 and ep = 1, not cp 2 and ep 1");
  est::Workload moe = gpt3();
  moe.model = Catalog::builtin().find_model("mixtral-8x7b")->model;
  moe.global_batch = 1024;
  est::Plan experts = plan(4, 2, 128);
  experts.stack.rank_order = est::RankOrder::tp_pp_dp;
  experts.etp = 4;
  EXPECT_FALSE(check(experts, moe));
  experts.etp = 1;
  v = check(experts, moe);
  EXPECT_EQ(v.rule, Rule::rank_order);
  EXPECT_EQ(message(v),
            "tp-pp-dp on a Mixture-of-Experts model needs etp = tp, not etp 1 with tp 4");
  experts.etp = 4;
  experts.ep = 2;
  EXPECT_EQ(check(experts, moe).rule, Rule::rank_order);

  est::Cluster torus = h100(24);
  torus.nvlink_domain = 24;
  torus.fabric = est::Fabric::torus;
  torus.torus = {4, 6, 1};
  est::Plan box = plan(1, 8, 3);
  EXPECT_EQ(check(box, gpt3(), torus).rule, Rule::torus_mapping);  // pp 8 at stride 3
  box.stack.rank_order = est::RankOrder::tp_pp_dp;
  EXPECT_FALSE(check(box, gpt3(), torus));  // pp 8 at stride 1, dp 3 at stride 8
  // Without a pipeline, or without data parallelism, the orders number the ranks alike.
  v = check(plan(8, 1, 128));
  EXPECT_FALSE(v);
  est::Plan flat = plan(8, 1, 128);
  flat.stack.rank_order = est::RankOrder::tp_pp_dp;
  v = check(flat);
  EXPECT_EQ(v.rule, Rule::rank_order);
  EXPECT_EQ(message(v),
            "with pp 1 and dp 128 tp-pp-dp numbers the ranks as tp-cp-ep-dp-pp does: it is the "
            "plan with that order");
}

TEST(Rules, NamesAndReasonsAreStable) {
  EXPECT_STREQ(to_string(Rule::pp_vp_layers), "pp_vp_layers");
  EXPECT_STREQ(to_string(Rule::offload_needs_expansion), "offload_needs_expansion");
  EXPECT_EQ(to_infeasible(Rule::tp_heads), est::Infeasible::tp_not_dividing_heads);
  EXPECT_EQ(to_infeasible(Rule::degrees), est::Infeasible::degrees_mismatch);
  EXPECT_EQ(to_infeasible(Rule::pipeline_split), est::Infeasible::invalid_plan);
  for (int r = 0; r < kNumRules; ++r) EXPECT_STRNE(describe(static_cast<Rule>(r)), "");
}

}  // namespace
}  // namespace clustersweep::spaces
