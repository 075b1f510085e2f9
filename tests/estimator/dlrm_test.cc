// The DLRM model and its sharding planner: the laws every point must obey, and the planner
// against an exhaustive search written here, independently of the planner's own.
#include "estimator/dlrm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

namespace clustersweep::estimator {
namespace {

// An A100-like part in nodes of `per_node` (the numbers only need to be plausible here).
Cluster cluster(int gpus, int per_node = 8, double hbm = 80e9) {
  Cluster c;
  c.gpu.peak_flops[static_cast<int>(Precision::fp32)] = 19.5e12;
  c.gpu.peak_flops[static_cast<int>(Precision::tf32)] = 156e12;
  c.gpu.peak_flops[static_cast<int>(Precision::fp16)] = 312e12;
  c.gpu.hbm_bytes = hbm;
  c.gpu.hbm_bytes_per_s = 2.0e12;
  c.gpu.tdp_w = 400;
  c.gpu.idle_w = 55;
  c.num_gpus = gpus;
  c.gpus_per_node = per_node;
  c.nvlink_domain = per_node;
  c.nvlink_bytes_per_s = 300e9;
  c.inter_node_bytes_per_s = 25e9;
  c.hbm_bytes = hbm;
  c.node_overhead_w = 3000;
  return c;
}

DlrmWorkload workload(int tables, std::mt19937& rng, Interaction interaction = Interaction::dot) {
  DlrmWorkload w;
  DlrmModel& m = w.model;
  m.num_tables = tables;
  m.embedding_dim = 128;
  std::uniform_real_distribution<double> log_rows(2, 7.6);
  std::uniform_int_distribution<int> pooling(1, 20);
  for (int t = 0; t < tables; ++t) {
    m.rows[t] = std::round(std::pow(10.0, log_rows(rng)));
    m.pooling[t] = pooling(rng);
  }
  m.bottom_mlp = {512, 256, 128};
  m.top_mlp = {1024, 1024, 512, 256, 1};
  m.interaction = interaction;
  m.optimizer = SparseOptimizer::rowwise_adagrad;
  w.global_batch = 65536;
  w.precision = Precision::fp16;
  return w;
}

Calibration calibration() { return Calibration{}; }

// Every placement, GPUs and nodes by index (no symmetry taken out).
DlrmEstimate exhaustive(const DlrmEstimator& e) {
  const int tables = e.workload().model.num_tables;
  const int gpus = e.cluster().num_gpus;
  const int nodes = e.num_nodes();
  DlrmPlan plan;
  DlrmEstimate best;
  bool found = false;
  std::function<void(int)> visit = [&](int t) {
    if (t == tables) {
      const DlrmEstimate est = e.estimate(plan);
      if (!found || (est.feasible && !best.feasible) ||
          (est.feasible == best.feasible && est.time.total_s < best.time.total_s)) {
        best = est;
        found = true;
      }
      return;
    }
    for (int g = 0; g < gpus; ++g) {
      plan.sharding[t] = Sharding::table_wise;
      plan.device[t] = g;
      visit(t + 1);
    }
    for (Sharding s : {Sharding::row_wise, Sharding::column_wise, Sharding::data, Sharding::hybrid,
                       Sharding::fused_row}) {
      plan.sharding[t] = s;
      plan.device[t] = 0;
      visit(t + 1);
    }
    for (int n = 0; n < nodes; ++n) {
      plan.sharding[t] = Sharding::table_row_wise;
      plan.device[t] = n;
      visit(t + 1);
    }
  };
  visit(0);
  return best;
}

TEST(Dlrm, ZipfHitShareRisesWithTheCacheAndTheSkew) {
  EXPECT_DOUBLE_EQ(zipf_hit_share(0, 1e6, 1.05), 0);
  EXPECT_DOUBLE_EQ(zipf_hit_share(1e6, 1e6, 1.05), 1);
  EXPECT_NEAR(zipf_hit_share(1e4, 1e6, 0), 0.01, 1e-12);  // uniform: the cached fraction
  double previous = 0;
  for (double cached : {1e2, 1e3, 1e4, 1e5, 1e6}) {
    const double share = zipf_hit_share(cached, 1e6, 1.05);
    EXPECT_GT(share, previous);
    previous = share;
  }
  previous = 0;
  for (double skew : {0.0, 0.5, 0.9, 1.0, 1.05, 1.2, 1.5}) {
    const double share = zipf_hit_share(1e4, 4e7, skew);
    EXPECT_GT(share, previous) << skew;
    previous = share;
  }
}

TEST(Dlrm, ForwardFlopsMatchTheLayerCount) {
  std::mt19937 rng(1);
  DlrmWorkload w = workload(26, rng);
  // Bottom 13-512-256-128, the 27 x 128 x 27 dot, top 479-1024-1024-512-256-1.
  const double bottom = 13 * 512 + 512 * 256 + 256 * 128;
  const double dot = 27.0 * 128 * 27;
  const double top = 479.0 * 1024 + 1024 * 1024 + 1024 * 512 + 512 * 256 + 256 * 1;
  EXPECT_DOUBLE_EQ(dlrm_forward_flops_per_sample(w.model), 2 * (bottom + dot + top));
  w.model.interaction = Interaction::dcnv2;
  const double x0 = 27.0 * 128;
  const double cross = 3 * (x0 * 512 + 512 * x0);
  const double top_dcn = x0 * 1024 + 1024 * 1024 + 1024 * 512 + 512 * 256 + 256 * 1;
  EXPECT_DOUBLE_EQ(dlrm_forward_flops_per_sample(w.model), 2 * (bottom + cross + top_dcn));
}

TEST(Dlrm, LookupCostFallsAsReuseRises) {
  std::mt19937 rng(2);
  for (int trial = 0; trial < 20; ++trial) {
    DlrmWorkload w = workload(8, rng);
    // Every table larger than the cache, so that every lookup depends on the reuse.
    for (int t = 0; t < 8; ++t) w.model.rows[t] = std::max(w.model.rows[t], 2e6);
    const Cluster c = cluster(8);
    double previous_lookups = INFINITY, previous_total = INFINITY;
    for (double skew : {0.0, 0.5, 0.9, 1.05, 1.2, 1.6}) {
      w.model.index_skew = skew;
      const DlrmEstimator e(w, c, calibration());
      const DlrmEstimate est = e.estimate(plan_sharding(e, Sharding::table_wise));
      const double lookups = est.time.embedding_fwd_s + est.time.embedding_bwd_s;
      EXPECT_LT(lookups, previous_lookups) << trial << " skew " << skew;
      EXPECT_LE(est.time.total_s, previous_total) << trial << " skew " << skew;
      previous_lookups = lookups;
      previous_total = est.time.total_s;
    }
  }
}

TEST(Dlrm, MoreBandwidthNeverSlowsAStep) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 30; ++trial) {
    const DlrmWorkload w =
        workload(4 + trial % 20, rng, trial % 2 ? Interaction::dcnv2 : Interaction::dot);
    const int gpus = 8 << (trial % 4);
    const auto sharding = static_cast<Sharding>(trial % kNumShardings);
    double previous = INFINITY;
    for (double scale : {0.25, 0.5, 1.0, 2.0, 4.0}) {
      Cluster c = cluster(gpus);
      c.inter_node_bytes_per_s *= scale;
      c.nvlink_bytes_per_s *= scale;
      c.gpu.hbm_bytes_per_s *= scale;
      const DlrmEstimator e(w, c, calibration());
      // The same placement at every bandwidth, then the planner's own.
      const DlrmEstimate fixed =
          e.estimate(plan_sharding(DlrmEstimator(w, cluster(gpus), calibration()), sharding));
      EXPECT_LE(fixed.time.total_s, previous * (1 + 1e-12)) << trial << " x" << scale;
      previous = fixed.time.total_s;
    }
  }
}

TEST(Dlrm, ALargerNvlinkDomainNeverSlowsAStep) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 24; ++trial) {
    const DlrmWorkload w =
        workload(4 + trial % 23, rng, trial % 2 ? Interaction::dcnv2 : Interaction::dot);
    const int gpus = 8 << (trial % 4);  // 8..64 GPUs in trays of 4
    const auto sharding = static_cast<Sharding>(trial % kNumShardings);
    double previous = INFINITY, previous_best = INFINITY;
    for (int domain : {4, 8, 16, 36, 72}) {
      Cluster c = cluster(gpus, 4);
      c.nvlink_domain = domain;
      const DlrmEstimator e(w, c, calibration());
      // The same placement in every domain, then the planner's own.
      const DlrmEstimate fixed =
          e.estimate(plan_sharding(DlrmEstimator(w, cluster(gpus, 4), calibration()), sharding));
      EXPECT_LE(fixed.time.total_s, previous * (1 + 1e-12))
          << trial << " " << to_string(sharding) << " domain " << domain;
      previous = fixed.time.total_s;
      const double best = e.estimate(plan_best_sharding(e)).time.total_s;
      EXPECT_LE(best, previous_best * (1 + 1e-12)) << trial << " best, domain " << domain;
      previous_best = best;
    }
    // One domain over every GPU: no byte leaves NVLink, so scale-out bandwidth does not matter.
    Cluster one = cluster(gpus, 4);
    one.nvlink_domain = gpus;
    Cluster slow = one;
    slow.inter_node_bytes_per_s /= 100;
    const DlrmEstimator a(w, one, calibration()), b(w, slow, calibration());
    EXPECT_DOUBLE_EQ(a.estimate(plan_sharding(a, sharding)).time.total_s,
                     b.estimate(plan_sharding(b, sharding)).time.total_s)
        << trial;
  }
}

// The host's launches are a cost per step: throughput grows with the batch and saturates, most
// steeply where the host syncs every step (TorchRec), not at all in a CUDA graph (HugeCTR).
TEST(Dlrm, TheFixedPerStepCostMakesThroughputGrowWithTheBatchAndSaturate) {
  std::mt19937 rng(12);
  Calibration c = calibration();
  c.dlrm.launch_s = 2e-5;
  c.dlrm.per_step_overhead_s = 1e-3;
  for (DlrmFramework f : {DlrmFramework::any, DlrmFramework::hugectr, DlrmFramework::torchrec}) {
    DlrmWorkload w = workload(26, rng);
    w.framework = f;
    std::vector<double> rate;
    for (std::int64_t batch = 256; batch <= (std::int64_t{1} << 20); batch *= 2) {
      w.global_batch = batch;
      const DlrmEstimator e(w, cluster(8), c);
      rate.push_back(e.estimate(plan_sharding(e, Sharding::table_wise)).samples_per_s);
    }
    for (std::size_t i = 1; i < rate.size(); ++i)
      EXPECT_GT(rate[i], rate[i - 1]) << to_string(f) << " at batch " << (256 << i);
    // Doubling a small batch nearly doubles throughput; doubling a large one barely helps.
    EXPECT_GT(rate[1] / rate[0], 1.5) << to_string(f);
    EXPECT_LT(rate.back() / rate[rate.size() - 2], 1.1) << to_string(f);
    EXPECT_LT(rate.back() / rate[rate.size() - 2], rate[1] / rate[0]) << to_string(f);
  }
  // At a small batch the sync exposes every launch; a CUDA graph none. (In tf32 every framework
  // exchanges the same bytes: HugeCTR's half-precision exchange does not apply.)
  DlrmWorkload w = workload(26, rng);
  w.global_batch = 2048;
  w.precision = Precision::tf32;
  double step[kNumDlrmFrameworks];
  for (int f = 0; f < kNumDlrmFrameworks; ++f) {
    w.framework = static_cast<DlrmFramework>(f);
    const DlrmEstimator e(w, cluster(8), c);
    const DlrmPlan plan = plan_sharding(e, Sharding::table_wise);
    step[f] = e.estimate(plan).time.total_s;
    if (w.framework == DlrmFramework::torchrec) {
      EXPECT_NEAR(step[f] - step[static_cast<int>(DlrmFramework::hugectr)],
                  e.launches_per_step(plan) * c.dlrm.launch_s, 1e-12);
    }
  }
  EXPECT_LE(step[static_cast<int>(DlrmFramework::hugectr)], step[0]);
  EXPECT_LE(step[0], step[static_cast<int>(DlrmFramework::torchrec)]);
}

TEST(Dlrm, ThePlannerNeverPicksAPlacementThatDoesNotFitWhenOneDoes) {
  std::mt19937 rng(4);
  int tight = 0;
  for (int trial = 0; trial < 40; ++trial) {
    DlrmWorkload w = workload(4, rng);
    // Tables of 40M rows x 128 x 2 B = 10 GB: tight on 12-24 GB GPUs.
    for (int t = 0; t < 4; ++t) w.model.rows[t] = t < 2 ? 4e7 : 1e5;
    const double hbm = 12e9 + 1e9 * (trial % 13);
    const DlrmEstimator e(w, cluster(4, 4, hbm), calibration());
    const DlrmEstimate reference = exhaustive(e);
    const DlrmEstimate planned = e.estimate(plan_best_sharding(e));
    EXPECT_EQ(planned.feasible, reference.feasible) << trial;
    for (int s = 0; s < kNumShardings; ++s)
      if (!e.estimate(plan_sharding(e, static_cast<Sharding>(s))).feasible) ++tight;
  }
  EXPECT_GT(tight, 0);  // the cases do exercise placements that do not fit
}

TEST(Dlrm, ThePlannerEqualsExhaustiveSearchOnSmallCases) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 24; ++trial) {
    const int tables = 2 + trial % 3;    // 2..4
    const int gpus = trial % 2 ? 8 : 4;  // one or two nodes
    const int per_node = trial % 4 < 2 ? gpus : gpus / 2;
    const DlrmWorkload w = workload(tables, rng, trial % 3 ? Interaction::dot : Interaction::dcnv2);
    const DlrmEstimator e(w, cluster(gpus, per_node), calibration());
    const DlrmEstimate reference = exhaustive(e);
    const DlrmEstimate planned = e.estimate(plan_best_sharding(e));
    EXPECT_EQ(planned.feasible, reference.feasible) << trial;
    EXPECT_NEAR(planned.time.total_s, reference.time.total_s, 1e-12 * reference.time.total_s)
        << trial << ": " << tables << " tables on " << gpus << " GPUs, " << per_node << " per node";
  }
}

TEST(Dlrm, TheGreedyPlannerBeatsEveryUniformSharding) {
  std::mt19937 rng(6);
  for (int trial = 0; trial < 6; ++trial) {
    const DlrmWorkload w = workload(26, rng, trial % 2 ? Interaction::dcnv2 : Interaction::dot);
    const DlrmEstimator e(w, cluster(64 << (trial % 2)), calibration());
    ASSERT_GT(exhaustive_placements(e, kMaxExhaustive), kMaxExhaustive);
    const DlrmEstimate best = e.estimate(plan_best_sharding(e));
    for (int s = 0; s < kNumShardings; ++s) {
      const DlrmEstimate uniform = e.estimate(plan_sharding(e, static_cast<Sharding>(s)));
      if (uniform.feasible) {
        EXPECT_TRUE(best.feasible);
        EXPECT_LE(best.time.total_s, uniform.time.total_s) << trial << " " << s;
      }
    }
  }
}

TEST(Dlrm, TablesThatDoNotFitGoToTheExpansionTierOrAreOutOfMemory) {
  std::mt19937 rng(7);
  DlrmWorkload w = workload(4, rng);
  for (int t = 0; t < 4; ++t) w.model.rows[t] = 2e8;  // 51 GB a table at 128 x 2 B
  Cluster c = cluster(1, 1, 80e9);
  DlrmEstimator without(w, c, calibration());
  DlrmPlan plan = plan_sharding(without, Sharding::table_wise);
  EXPECT_FALSE(without.estimate(plan).feasible);
  EXPECT_EQ(without.estimate(plan).reason, Infeasible::out_of_memory);
  c.expansion_bytes = 512e9;
  c.expansion_bytes_per_s = 64e9;
  const DlrmEstimator with(w, c, calibration());
  const DlrmEstimate est = with.estimate(plan);
  EXPECT_TRUE(est.feasible);
  EXPECT_GT(est.memory.expansion_bytes, 0);
  // The cold rows in the tier cost time: a faster tier is never slower.
  c.expansion_bytes_per_s = 256e9;
  EXPECT_LT(DlrmEstimator(w, c, calibration()).estimate(plan).time.total_s, est.time.total_s);
}

TEST(Dlrm, AnInvalidPlacementIsInvalidNotACrash) {
  std::mt19937 rng(8);
  const DlrmWorkload w = workload(3, rng);
  const DlrmEstimator e(w, cluster(8), calibration());
  DlrmPlan plan = plan_sharding(e, Sharding::table_wise);
  plan.device[1] = 8;  // no such GPU
  EXPECT_EQ(e.estimate(plan).reason, Infeasible::invalid_plan);
  plan = plan_sharding(e, Sharding::table_row_wise);
  plan.device[0] = 1;  // one node only
  EXPECT_EQ(e.estimate(plan).reason, Infeasible::invalid_plan);
}

}  // namespace
}  // namespace clustersweep::estimator
