// clustersweep bench: evaluations per second of the estimator on one core, on a fixed set of
// GPT-3 175B plans for a 1024-GPU H100 cluster (the engine's inner loop: one Estimator per design,
// many plans).
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <vector>

#include "apps/commands.h"
#include "base/error.h"
#include "estimator/dlrm.h"
#include "estimator/estimator.h"
#include "spaces/catalog.h"

namespace clustersweep::cli {
namespace {

namespace est = estimator;

// Every combination of tp, pp, cp, vp, micro-batch, ZeRO stage, recompute and sequence
// parallelism whose degrees multiply to a divisor of the GPU count (dp takes the rest).
std::vector<est::Plan> bench_plans(int num_gpus) {
  std::vector<est::Plan> plans;
  for (int tp : {1, 2, 4, 8})
    for (int pp : {1, 2, 4, 8, 16})
      for (int cp : {1, 2})
        for (int vp : {1, 2, 3})
          for (int micro_batch : {1, 2, 4})
            for (int zero = 0; zero <= 3; ++zero)
              for (int recompute = 0; recompute < 3; ++recompute)
                for (bool sp : {false, true}) {
                  if (num_gpus % (tp * pp * cp) != 0 || (pp == 1 && vp > 1)) continue;
                  est::Plan p;
                  p.tp = tp;
                  p.pp = pp;
                  p.cp = cp;
                  p.vp = vp;
                  p.dp = num_gpus / (tp * pp * cp);
                  p.micro_batch = micro_batch;
                  p.zero = zero;
                  p.recompute = static_cast<est::Recompute>(recompute);
                  p.sequence_parallel = sp;
                  plans.push_back(p);
                }
  return plans;
}

// The time loop: repeats `pass` (which evaluates `per_pass` points) for at least `seconds`.
template <class Pass>
void time_passes(double seconds, std::size_t per_pass, Pass pass, std::string_view what) {
  using clock = std::chrono::steady_clock;
  std::size_t evaluations = 0, feasible = 0;
  double checksum = 0;
  const auto start = clock::now();
  double elapsed = 0;
  do {
    pass(feasible, checksum);
    evaluations += per_pass;
    elapsed = std::chrono::duration<double>(clock::now() - start).count();
  } while (elapsed < seconds);
  std::cout << fmt::format("plans: {} ({}), feasible per pass: {}\n", per_pass, what,
                           feasible * per_pass / evaluations);
  std::cout << fmt::format("evaluations: {} in {:.3f} s (checksum {:.6g})\n", evaluations, elapsed,
                           checksum / static_cast<double>(evaluations / per_pass));
  std::cout << fmt::format("evaluations_per_second: {:.0f}\n", evaluations / elapsed);
}

// MLPerf DLRMv2 on 128 H100 (16 nodes of 8): every table's sharding rotated through the five
// shardings, table-wise tables on every GPU in turn: the DLRM estimator's inner loop.
void bench_dlrm(double seconds, const est::Cluster& cluster) {
  const auto& catalog = spaces::Catalog::builtin();
  const auto& model = catalog.dlrm_model("dlrmv2-dcnv2", "bench");
  const est::DlrmWorkload workload{model.model, model.global_batch, est::Precision::fp16};
  const est::DlrmEstimator estimator(workload, cluster, spaces::builtin_calibration());
  std::vector<est::DlrmPlan> plans;
  for (int variant = 0; variant < 200; ++variant) {
    est::DlrmPlan plan;
    for (int t = 0; t < workload.model.num_tables; ++t) {
      plan.sharding[t] = static_cast<est::Sharding>((t + variant) % est::kNumShardings);
      plan.device[t] = plan.sharding[t] == est::Sharding::table_row_wise
                           ? (t + variant) % estimator.num_nodes()
                           : (t * 7 + variant) % cluster.num_gpus;
    }
    plans.push_back(plan);
  }
  time_passes(
      seconds, plans.size(),
      [&](std::size_t& feasible, double& checksum) {
        for (const est::DlrmPlan& plan : plans) {
          const est::DlrmEstimate e = estimator.estimate(plan);
          feasible += e.feasible;
          checksum += e.time.total_s;
        }
      },
      fmt::format("DLRMv2 placements of 26 tables on {} x H100-SXM5-80GB", cluster.num_gpus));
}

}  // namespace

int bench(const Args& args) {
  po::options_description options("Options");
  options.add_options()("seconds", real_value(RealDomain::above(0))->default_value(2.0),
                        "minimum measuring time in seconds")(
      "workload", po::value<std::string>()->default_value("transformer"),
      "transformer (GPT-3 175B plans) or dlrm (DLRMv2 table placements)");
  const auto vm =
      parse(args, options, {}, "bench [--seconds S] [--workload transformer|dlrm]",
            "Times the estimator on a fixed built-in set of GPT-3 175B plans on one core\n"
            "(1024 x H100-SXM5-80GB, 128 nodes of 8, 400 Gbit/s per GPU), or with --workload\n"
            "dlrm on 200 placements of MLPerf DLRMv2's 26 tables on 128 of them, and prints\n"
            "`evaluations_per_second: N` as its last line.");
  if (!vm) return kExitOk;
  const double seconds = (*vm)["seconds"].as<double>();
  const std::string workload_name = (*vm)["workload"].as<std::string>();
  if (workload_name != "transformer" && workload_name != "dlrm")
    throw InputError(
        fmt::format("--workload: must be transformer or dlrm, got '{}'", workload_name));

  const auto& catalog = spaces::Catalog::builtin();
  const auto& gpu = catalog.accelerator("H100-SXM5-80GB", "bench");
  const auto& model = catalog.model("gpt3-175b", "bench");
  est::Workload workload{model.model, model.seq_len, model.global_batch, est::Precision::bf16};
  est::Cluster cluster;
  cluster.gpu = gpu.accelerator;
  cluster.num_gpus = 1024;
  cluster.gpus_per_node = 8;
  cluster.nvlink_domain = 8;
  cluster.nvlink_bytes_per_s = gpu.accelerator.nvlink_bytes_per_s;
  cluster.inter_node_bytes_per_s = 400e9 / 8;
  cluster.hbm_bytes = gpu.accelerator.hbm_bytes;
  cluster.node_overhead_w = gpu.default_node_overhead_w;
  if (workload_name == "dlrm") {
    cluster.num_gpus = 128;
    bench_dlrm(seconds, cluster);
    return kExitOk;
  }
  const est::Estimator estimator(workload, cluster, spaces::builtin_calibration());
  const std::vector<est::Plan> plans = bench_plans(cluster.num_gpus);
  time_passes(
      seconds, plans.size(),
      [&](std::size_t& feasible, double& checksum) {
        for (const est::Plan& plan : plans) {
          const est::Estimate e = estimator.estimate(plan);
          feasible += e.feasible;
          checksum += e.time.total_s;
        }
      },
      "GPT-3 175B on 1024 x H100-SXM5-80GB");
  return kExitOk;
}

}  // namespace clustersweep::cli
