// The scale-out networks (docs/estimator.md, "Scale-out networks"): where a group's traffic sits on
// the topology, and the laws the step time obeys on tapered, rail-only and dragonfly networks.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <random>

#include "estimator/detail/collectives.h"
#include "estimator/estimator.h"
#include "h100_like_cluster.h"

namespace clustersweep::estimator {
namespace {

ScaleOutLevels levels(Network network, int planes = 1, int pod_gpus = 0, int group_gpus = 0) {
  Cluster c = test::cluster(4096);
  c.scale_out.network = network;
  c.scale_out.planes = planes;
  c.scale_out.pod_gpus = pod_gpus;
  c.scale_out.group_gpus = group_gpus;
  c.scale_out.oversubscription = 2;
  return detail::scale_out_levels(c, NetworkCatalog{});
}

TEST(ScaleOut, ALeafHoldsHalfItsRadixOfGpusOrOfRails) {
  // 64 ports at the NIC's speed: 32 down. A fat-tree leaf holds 4 whole nodes of 8 GPUs; a rail
  // leaf one GPU of each of 32 nodes, so its nodes' 8 rails span 256 GPUs.
  EXPECT_EQ(levels(Network::fat_tree).taper_gpus, 32);
  EXPECT_EQ(levels(Network::rail_optimized).taper_gpus, 256);
  EXPECT_EQ(levels(Network::rail_only).taper_gpus, 256);
  // Two planes: each plane's switches run half the speed with twice the ports.
  EXPECT_EQ(levels(Network::fat_tree, 2).taper_gpus, 64);
  EXPECT_EQ(levels(Network::rail_optimized, 2).taper_gpus, 512);
  // A pod moves the taper up; a dragonfly group defaults to one leaf.
  EXPECT_EQ(levels(Network::fat_tree, 1, 1024).taper_gpus, 1024);
  EXPECT_EQ(levels(Network::dragonfly).group_gpus, 32);
  EXPECT_EQ(levels(Network::dragonfly, 1, 0, 512).group_gpus, 512);
  // Only a taper or a network without a spine between all GPUs leaves today's model.
  EXPECT_FALSE(levels(Network::fat_tree).non_blocking);
  Cluster c = test::cluster(4096);
  c.scale_out.network = Network::rail_optimized;
  EXPECT_TRUE(detail::scale_out_levels(c, NetworkCatalog{}).non_blocking);
  c.scale_out.network = Network::rail_only;
  EXPECT_FALSE(detail::scale_out_levels(c, NetworkCatalog{}).non_blocking);
}

TEST(ScaleOut, AGroupPaysTheNarrowestLevelItCrosses) {
  const double out = 50e9, up = 450e9;
  const ScaleOutLevels fat = levels(Network::fat_tree, 1, 1024);
  // Data parallelism at stride 8 over 128 GPUs stays in its pod; over 256 it crosses the taper.
  EXPECT_EQ(detail::placed_scale_out_bytes_per_s(fat, 8, 128, Traffic::collective, out, up), out);
  EXPECT_EQ(detail::placed_scale_out_bytes_per_s(fat, 8, 129, Traffic::collective, out, up),
            out / 2);
  ScaleOutLevels fly = levels(Network::dragonfly, 1, 0, 512);
  fly.global_taper = 4;
  EXPECT_EQ(detail::placed_scale_out_bytes_per_s(fly, 8, 4, Traffic::collective, out, up), out);
  EXPECT_EQ(detail::placed_scale_out_bytes_per_s(fly, 8, 8, Traffic::collective, out, up), out / 2);
  EXPECT_EQ(detail::placed_scale_out_bytes_per_s(fly, 8, 128, Traffic::collective, out, up),
            out / 4);
  // Rail-only: same-rail groups (stride a multiple or divisor of the node) stay on their rail;
  // other strides and all-to-alls are forwarded over the domain first.
  ScaleOutLevels rails = levels(Network::rail_only);
  rails.oversubscription = 1;
  EXPECT_EQ(detail::placed_scale_out_bytes_per_s(rails, 8, 16, Traffic::collective, out, up), out);
  EXPECT_EQ(detail::placed_scale_out_bytes_per_s(rails, 2, 16, Traffic::collective, out, up), out);
  const double forwarded = 1.0 / (1.0 / out + 1.0 / up);
  EXPECT_DOUBLE_EQ(detail::placed_scale_out_bytes_per_s(rails, 3, 16, Traffic::collective, out, up),
                   forwarded);
  EXPECT_DOUBLE_EQ(detail::placed_scale_out_bytes_per_s(rails, 1, 64, Traffic::all_to_all, out, up),
                   forwarded);
  EXPECT_EQ(detail::placed_scale_out_bytes_per_s(rails, 1, 64, Traffic::all_to_all, out, up, true),
            out);
}

// --- Laws over random points, dense and MoE ----------------------------------------------------

struct Point {
  Workload workload;
  Cluster cluster;
  Plan plan;
};

Point random_point(std::mt19937_64& rng) {
  auto pick = [&rng](std::initializer_list<int> values) {
    std::uniform_int_distribution<std::size_t> d(0, values.size() - 1);
    return *(values.begin() + d(rng));
  };
  Point pt;
  Model& m = pt.workload.model;
  const int heads = pick({16, 32, 64});
  m.layers = pick({16, 32});
  m.heads = heads;
  m.kv_heads = 8;
  m.hidden = heads * 128;
  m.ffn_hidden = m.hidden * 7 / 2;
  m.mlp = Mlp::swiglu;
  m.vocab = 32000;
  Plan& p = pt.plan;
  p.tp = pick({1, 2, 4, 8});
  p.cp = pick({1, 1, 2});
  p.pp = pick({1, 2, 4});
  p.dp = pick({2, 4, 16, 64});
  if (pick({0, 1})) {  // an MoE model, its experts over ep ranks inside tp cp dp
    m.num_experts = 64;
    m.top_k = pick({2, 8});
    m.moe_ffn_hidden = m.hidden / 2;
    p.etp = 1;
    p.ep = pick({8, 16, 32});
    while (p.ep > p.tp * p.cp * p.dp) p.ep /= 2;
    p.stack.dispatcher = static_cast<Dispatcher>(pick({0, 1, 2}));
  }
  // Either rank order where it runs (tp-pp-dp: no cp, no ep).
  if (p.ep == 1 && p.cp == 1) p.stack.rank_order = static_cast<RankOrder>(pick({0, 1}));
  p.micro_batch = pick({1, 2});
  p.zero = pick({0, 1, 3});
  p.sequence_parallel = p.tp > 1;
  pt.workload.seq_len = pick({2048, 8192});
  pt.workload.precision = Precision::bf16;
  pt.workload.global_batch = static_cast<std::int64_t>(p.dp) * p.micro_batch * pick({1, 8});
  Cluster& c = pt.cluster;
  c = test::cluster(p.tp * p.cp * p.dp * p.pp, pick({50, 100, 400}));
  c.gpus_per_node = pick({4, 8});
  c.nvlink_domain = pick({c.gpus_per_node, 72});
  c.scale_out.network = static_cast<Network>(pick({0, 1, 2, 3}));
  c.scale_out.pod_gpus = pick({0, 64, 256});
  c.scale_out.planes = pick({1, 2});
  c.scale_out.group_gpus = pick({0, 128});
  return pt;
}

double step(const Point& pt, const Calibration& cal) {
  return estimate(pt.workload, pt.cluster, pt.plan, cal).time.total_s;
}

bool runs(const Point& pt, const Calibration& cal) {
  const Infeasible r = estimate(pt.workload, pt.cluster, pt.plan, cal).reason;
  return r == Infeasible::none || r == Infeasible::out_of_memory;
}

TEST(ScaleOutLaws, MoreOversubscriptionNeverShortensAStep) {
  std::mt19937_64 rng(47);
  const Calibration cal;
  int checked = 0, slower = 0;
  for (int i = 0; i < 400; ++i) {
    Point pt = random_point(rng);
    if (!runs(pt, cal)) continue;
    ++checked;
    const double open = step(pt, cal);
    double last = open;
    for (const double taper : {1.5, 3.0, 7.0}) {
      pt.cluster.scale_out.oversubscription = taper;
      const double t = step(pt, cal);
      EXPECT_GE(t, last) << "oversubscription " << taper << " at point " << i;
      last = t;
    }
    pt.cluster.scale_out.global_taper = 4;
    EXPECT_GE(step(pt, cal), last) << "global taper at point " << i;
    slower += last > open;
  }
  EXPECT_GT(checked, 200);
  EXPECT_GT(slower, checked / 10);
}

TEST(ScaleOutLaws, TaperOneIsTodaysModelExactly) {
  // Every non-blocking network, and a dragonfly whose global links are not tapered, gives the
  // default fat tree's step to the bit, whatever its pod, planes and groups.
  std::mt19937_64 rng(4701);
  const Calibration cal;
  for (int i = 0; i < 300; ++i) {
    Point pt = random_point(rng);
    if (pt.cluster.scale_out.network == Network::rail_only) continue;
    const ScaleOut chosen = pt.cluster.scale_out;
    pt.cluster.scale_out = ScaleOut{};
    const Estimate today = estimate(pt.workload, pt.cluster, pt.plan, cal);
    pt.cluster.scale_out = chosen;
    const Estimate e = estimate(pt.workload, pt.cluster, pt.plan, cal);
    EXPECT_EQ(e.time.total_s, today.time.total_s) << "point " << i;
    EXPECT_EQ(e.time.dp_exposed_s, today.time.dp_exposed_s) << "point " << i;
    EXPECT_EQ(e.reason, today.reason) << "point " << i;
  }
}

TEST(ScaleOutLaws, APlanWhoseGroupsStayInAPodNeverPaysTheTaper) {
  std::mt19937_64 rng(4702);
  const Calibration cal;
  int checked = 0;
  for (int i = 0; i < 300; ++i) {
    Point pt = random_point(rng);
    if (pt.cluster.scale_out.network == Network::rail_only) continue;
    // Every group lies within the plan's GPUs: a pod of all of them holds every group.
    pt.cluster.scale_out.pod_gpus = pt.cluster.num_gpus;
    pt.cluster.scale_out.group_gpus = pt.cluster.num_gpus;
    const double open = step(pt, cal);
    pt.cluster.scale_out.oversubscription = 7;
    pt.cluster.scale_out.global_taper = 7;
    EXPECT_EQ(step(pt, cal), open) << "point " << i;
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

TEST(ScaleOutLaws, RailOnlyIsNeverFasterThanRailOptimizedWithTheSameLinks) {
  std::mt19937_64 rng(4703);
  const Calibration cal;
  int checked = 0, slower = 0;
  for (int i = 0; i < 400; ++i) {
    Point pt = random_point(rng);
    pt.cluster.scale_out.oversubscription = i % 2 == 0 ? 1.0 : 2.0;
    pt.cluster.scale_out.network = Network::rail_optimized;
    if (!runs(pt, cal)) continue;
    const double optimized = step(pt, cal);
    const double optimized_taper = tapered_gpus(pt.cluster, cal.network);
    pt.cluster.scale_out.network = Network::rail_only;
    // The same links: a taper where both networks place it (a rail's tree may have no tier
    // between the pod and its top, where the optimized tree has one).
    if (tapered_gpus(pt.cluster, cal.network) != optimized_taper) continue;
    const double only = step(pt, cal);
    EXPECT_GE(only, optimized) << "point " << i;
    slower += only > optimized;
    ++checked;
  }
  EXPECT_GT(checked, 200);
  EXPECT_GT(slower, 0);  // the all-to-alls of MoE points cross rails
}

// Without both a pipeline and data parallelism the two rank orders number the same groups alike.
TEST(RankOrder, WithoutBothPipelineAndDataParallelismTheOrdersAgree) {
  std::mt19937_64 rng(4704);
  const Calibration cal;
  int checked = 0;
  for (int i = 0; i < 600; ++i) {
    Point pt = random_point(rng);
    if (pt.plan.ep > 1 || pt.plan.cp > 1) continue;
    if (i % 2 == 0) {
      pt.plan.dp *= pt.plan.pp;
      pt.plan.pp = 1;
    } else {
      pt.plan.pp *= pt.plan.dp;
      pt.plan.dp = 1;
      pt.workload.global_batch = pt.plan.micro_batch * 8;
    }
    pt.plan.stack.rank_order = RankOrder::tp_cp_ep_dp_pp;
    const Estimate megatron = estimate(pt.workload, pt.cluster, pt.plan, cal);
    pt.plan.stack.rank_order = RankOrder::tp_pp_dp;
    const Estimate e = estimate(pt.workload, pt.cluster, pt.plan, cal);
    EXPECT_EQ(e.time.total_s, megatron.time.total_s) << "point " << i;
    EXPECT_EQ(e.reason, megatron.reason) << "point " << i;
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

// tp-pp-dp keeps a pipeline of tp x pp GPUs inside its pod: its sends never pay the taper above
// the pod, and its gradient reduction, which spans the cluster, does; Megatron's order the reverse.
TEST(RankOrder, TheOrderDecidesWhichGroupCrossesTheTaper) {
  Workload w = test::gpt3_175b();
  w.global_batch = 1024;
  Cluster c = test::cluster(4096, 400);  // three tiers: 1,024-GPU pods under the spines
  c.scale_out.network = Network::rail_optimized;
  c.scale_out.pod_gpus = 1024;
  Plan p;
  p.tp = 8;
  p.pp = 8;
  p.dp = 64;
  p.sequence_parallel = true;
  p.recompute = Recompute::full;
  const Calibration cal;
  auto at = [&](RankOrder order, double taper) {
    p.stack.rank_order = order;
    c.scale_out.oversubscription = taper;
    return estimate(w, c, p, cal).time;
  };
  // Megatron's order: dp spans tp x dp = 512 GPUs, inside a pod; the pipeline spans all 4,096.
  EXPECT_EQ(at(RankOrder::tp_cp_ep_dp_pp, 7).dp_exposed_s,
            at(RankOrder::tp_cp_ep_dp_pp, 1).dp_exposed_s);
  EXPECT_GT(at(RankOrder::tp_cp_ep_dp_pp, 7).pp_p2p_s, at(RankOrder::tp_cp_ep_dp_pp, 1).pp_p2p_s);
  // tp-pp-dp: the pipeline spans tp x pp = 64 GPUs, inside a pod; dp spans all 4,096.
  EXPECT_EQ(at(RankOrder::tp_pp_dp, 7).pp_p2p_s, at(RankOrder::tp_pp_dp, 1).pp_p2p_s);
  EXPECT_LT(at(RankOrder::tp_pp_dp, 7).pp_p2p_s, at(RankOrder::tp_cp_ep_dp_pp, 7).pp_p2p_s);
}

}  // namespace
}  // namespace clustersweep::estimator
