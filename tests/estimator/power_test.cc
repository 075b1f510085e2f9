// The power model (estimator/power.h): energy by kind of work and by scope, the power cap's
// effect on speed and power, the scale-out network's switches, and LoRA's frozen weights.
#include "estimator/power.h"

#include <gtest/gtest.h>

#include <random>

#include "estimator/dlrm.h"
#include "estimator/estimator.h"
#include "h100_like_cluster.h"
#include "spaces/catalog.h"

namespace clustersweep::estimator {
namespace {

using test::cluster;

Workload gpt3_175b() {
  Model m;
  m.layers = 96;
  m.hidden = 12288;
  m.heads = 96;
  m.kv_heads = 96;
  m.ffn_hidden = 4 * 12288;
  m.mlp = Mlp::gelu;
  m.vocab = 51200;
  return {m, 2048, 1536, Precision::bf16};
}

Workload llama2_70b() {
  Model m;
  m.layers = 80;
  m.hidden = 8192;
  m.heads = 64;
  m.kv_heads = 8;
  m.ffn_hidden = 28672;
  m.mlp = Mlp::swiglu;
  m.vocab = 32000;
  return {m, 4096, 512, Precision::bf16};
}

Plan plan(int tp, int pp, int dp, int micro_batch = 1) {
  Plan p;
  p.tp = tp;
  p.pp = pp;
  p.dp = dp;
  p.micro_batch = micro_batch;
  return p;
}

TEST(Power, EachKindOfWorkAtItsFractionOfTdpPlusNodesAndNetwork) {
  Calibration cal;
  cal.network = spaces::builtin_calibration().network;
  const Cluster c = cluster();
  const Estimate e = estimate(gpt3_175b(), c, plan(8, 8, 16), cal);
  const StepTime& t = e.time;
  const double gpu_j =
      t.compute_s * cal.gemm_power * c.gpu.tdp_w +
      (t.memory_bound_s + t.optimizer_s + t.overhead_s) * cal.memory_power * c.gpu.tdp_w +
      (t.tp_comm_s + t.cp_comm_s + t.pp_p2p_s + t.ep_a2a_s + t.dp_exposed_s + t.edp_exposed_s +
       t.offload_s) *
          cal.comm_power * c.gpu.tdp_w +
      (t.pp_bubble_s + t.host_s) * cal.wait_power * c.gpu.tdp_w;
  EXPECT_NEAR(e.power.gpu_j / (1024 * gpu_j), 1.0, 1e-12);
  EXPECT_NEAR(e.power.gpu_w / (gpu_j / t.total_s), 1.0, 1e-12);
  const double node_j = e.power.gpu_j + 128 * c.node_overhead_w * cal.node_power * t.total_s;
  EXPECT_NEAR(e.power.node_j / node_j, 1.0, 1e-12);
  EXPECT_EQ(e.energy_per_step_j, e.power.it_j);
  // 1,024 GPUs on radix-64 switches: two tiers, 3 x 1024 / 64 switches, and 2,048 optical links
  // with a transceiver port at each end; the NICs draw within the servers.
  const NetworkParts& parts = *cal.network.parts_for(400);
  const double network_w = 48 * parts.switch_w + 2 * 2048 * parts.transceiver_w;
  EXPECT_DOUBLE_EQ(e.power.network_w, network_w);
  EXPECT_NEAR(e.power.it_j / (node_j + network_w * t.total_s), 1.0, 1e-12);
  // Without parts, no network is priced.
  EXPECT_EQ(estimate(gpt3_175b(), c, plan(8, 8, 16), Calibration{}).power.network_w, 0);
}

TEST(Power, EnergyScopesAreOrdered) {
  std::mt19937 rng(7);
  const Calibration cal;
  for (int gpus : {8, 64, 512, 4096}) {
    for (int dp : {1, 2}) {
      const Cluster c = cluster(gpus);
      const int tp = 8, pp = gpus / (tp * dp);
      if (pp < 1 || 96 % pp) continue;
      const Estimate e = estimate(gpt3_175b(), c, plan(tp, pp, dp), cal);
      EXPECT_GT(e.power.gpu_j, 0);
      EXPECT_LE(e.power.gpu_j, e.power.node_j) << gpus;
      EXPECT_LE(e.power.node_j, e.power.it_j) << gpus;
      EXPECT_LE(e.power.gpu_w, c.gpu.tdp_w);
      EXPECT_GE(e.power.gpu_w, c.gpu.idle_w);
    }
  }
}

TEST(Power, ALowerCapNeverRaisesPowerNorSpeedsAStep) {
  const Calibration cal;
  for (const Workload& w : {gpt3_175b(), llama2_70b()}) {
    for (const Plan& p : {plan(8, 8, 16), plan(4, 16, 16, 2), plan(8, 4, 32)}) {
      double last_step = 0, last_w = 1e9, last_node = 1e9;
      for (double cap : {700.0, 650.0, 600.0, 500.0, 400.0, 300.0, 200.0}) {
        Cluster c = cluster();
        c.power_cap_w = cap;
        const Estimate e = estimate(w, c, p, cal);
        EXPECT_GE(e.time.total_s, last_step) << cap;
        EXPECT_LE(e.power.gpu_w, last_w + 1e-9) << cap;
        EXPECT_LE(e.power.node_w, last_node + 1e-9) << cap;
        EXPECT_LE(e.power.gpu_w, cap + 1e-9) << cap;
        last_step = e.time.total_s;
        last_w = e.power.gpu_w;
        last_node = e.power.node_w;
      }
    }
  }
}

TEST(Power, ACapAboveWhatTheKernelsDrawChangesNothing) {
  const Calibration cal;
  Cluster capped = cluster();
  capped.power_cap_w = cal.gemm_power * capped.gpu.tdp_w;
  const Estimate a = estimate(gpt3_175b(), cluster(), plan(8, 8, 16), cal);
  const Estimate b = estimate(gpt3_175b(), capped, plan(8, 8, 16), cal);
  EXPECT_EQ(a.time.total_s, b.time.total_s);
  EXPECT_EQ(a.energy_per_step_j, b.energy_per_step_j);
}

TEST(Power, CapSlowsTheGemmsByTheClockAtWhichTheyDrawIt) {
  const Calibration cal;
  Cluster c = cluster();
  c.power_cap_w = 400;
  const StepPowerModel model(c, cal);
  const double gemm_w = cal.gemm_power * c.gpu.tdp_w, idle = c.gpu.idle_w;
  const double clock = model.gemm_clock();
  EXPECT_NEAR(idle + (gemm_w - idle) * std::pow(clock, cal.dvfs_exponent), 400, 1e-9);
  const Estimate free = estimate(gpt3_175b(), cluster(), plan(8, 8, 16), cal);
  const Estimate capped = estimate(gpt3_175b(), c, plan(8, 8, 16), cal);
  EXPECT_NEAR(capped.time.compute_s * clock / free.time.compute_s, 1.0, 1e-9);
  EXPECT_EQ(capped.time.memory_bound_s, free.time.memory_bound_s);
  // MFU stays relative to the uncapped peak.
  EXPECT_LT(capped.mfu, free.mfu);
}

// Zeus's V100 power-limit traces (You et al., NSDI'23; ml-energy/zeus,
// examples/research_reproducibility/zeus_nsdi23/trace/summary_power_v100.csv): BERT-base on SQuAD,
// batch 32, drawing 228 W under the 250 W limit, and its epoch time under lower limits. A
// compute-bound step slows by the clock at which its GEMMs draw the cap.
TEST(Power, TheCapReproducesMeasuredSlowdownsOfComputeBoundTraining) {
  const Calibration cal;
  Cluster c = cluster(8);
  c.gpu.tdp_w = 250;
  c.gpu.idle_w = 40;
  Calibration v100 = cal;
  v100.gemm_power = 228.0 / 250;
  const std::pair<double, double> measured[] = {{200, 1.063}, {175, 1.119}, {150, 1.281}};
  for (const auto& [cap, slowdown] : measured) {
    c.power_cap_w = cap;
    const StepPowerModel model(c, v100);
    EXPECT_NEAR(1 / model.gemm_clock() / slowdown, 1.0, 0.06) << cap;
  }
}

TEST(Power, DlrmSharesTheModelAndTheCap) {
  const Calibration cal;
  DlrmWorkload w;
  w.model.num_tables = 4;
  w.model.embedding_dim = 128;
  for (int i = 0; i < 4; ++i) {
    w.model.rows[i] = 1e6;
    w.model.pooling[i] = 1;
  }
  w.model.bottom_mlp = {512, 256, 128};
  w.model.top_mlp = {1024, 1024, 512, 256, 1};
  w.global_batch = 65536;
  w.precision = Precision::bf16;
  double last_step = 0, last_w = 1e9;
  for (double cap : {0.0, 600.0, 400.0, 250.0}) {
    Cluster c = cluster(16);
    c.power_cap_w = cap;
    const DlrmEstimator estimator(w, c, cal);
    const DlrmEstimate e = estimator.estimate(plan_best_sharding(estimator));
    ASSERT_TRUE(e.feasible);
    EXPECT_GE(e.time.total_s, last_step);
    EXPECT_LE(e.power.gpu_w, last_w + 1e-9);
    EXPECT_LE(e.power.gpu_j, e.power.node_j);
    EXPECT_LE(e.power.node_j, e.power.it_j);
    EXPECT_EQ(e.energy_per_step_j, e.power.it_j);
    last_step = e.time.total_s;
    last_w = e.power.gpu_w;
  }
}

TEST(Lora, FrozenWeightsSkipWeightGradientsAndOptimizerState) {
  const Calibration cal;
  Workload lora = llama2_70b();
  lora.lora_rank = 16;
  const Plan p = plan(8, 1, 8);
  const Cluster c = cluster(64);
  const Estimate full = estimate(llama2_70b(), c, p, cal);
  const Estimate tuned = estimate(lora, c, p, cal);
  // Two GEMM passes (forward, data gradient) instead of three; attention's matmuls unchanged.
  EXPECT_LT(tuned.time.compute_s, full.time.compute_s);
  EXPECT_GT(tuned.time.compute_s, full.time.compute_s * 2.0 / 3.0);
  EXPECT_LT(tuned.memory.gradients_bytes, 0.01 * full.memory.gradients_bytes);
  EXPECT_LT(tuned.memory.optimizer_bytes, 0.01 * full.memory.optimizer_bytes);
  EXPECT_EQ(tuned.memory.weights_bytes, full.memory.weights_bytes);
  EXPECT_LT(tuned.time.optimizer_s, 0.01 * full.time.optimizer_s);
  EXPECT_LT(tuned.time.total_s, full.time.total_s);
  EXPECT_NEAR(tuned.model_flops_per_step / full.model_flops_per_step, 2.0 / 3.0, 1e-12);
}

}  // namespace
}  // namespace clustersweep::estimator
