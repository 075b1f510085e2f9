#pragma once
// A small sweep in memory, shaped like a results store (docs/store-format.md): design axes (gpu,
// num_nodes, gpus_per_node, hbm_gb, expansion_gb, expansion_gbytes_per_s), plan axes (tp, pp,
// recompute), and metrics from a made-up but monotone model, in point-id order.
#include <cmath>
#include <vector>

#include "analysis/source.h"

namespace clustersweep::analysis::testing {

struct SweepRow {
  double gpu, nodes, hbm, expansion, tp, pp, recompute;
  bool feasible;
  double time_s, energy_j, num_gpus;
};

inline std::vector<SweepRow> sweep_rows() {
  std::vector<SweepRow> rows;
  for (double gpu : {0.0, 1.0})
    for (double nodes : {8.0, 16.0, 32.0})
      for (double hbm : {40.0, 80.0})
        for (double expansion : {0.0, 256.0})
          for (double tp : {1.0, 2.0, 4.0, 8.0})
            for (double pp : {1.0, 2.0, 4.0})
              for (double recompute : {0.0, 1.0}) {
                SweepRow r{gpu,       nodes, hbm, expansion, tp,       pp,
                           recompute, false, NAN, NAN,       nodes * 8};
                const double memory_gb = 600 / (tp * pp) * (recompute ? 0.4 : 1.0);
                // The expansion tier holds up to 60 GB of optimizer state, slower to reach.
                const double spill = std::max(0.0, memory_gb - hbm);
                r.feasible = spill == 0 || (expansion > 0 && spill <= 60);
                if (r.feasible) {
                  const double speed = gpu == 1 ? 3.0 : 1.0;
                  r.time_s = 4e7 / (r.num_gpus * speed) * (1 + 0.15 * std::log2(tp)) *
                             (1 + 0.1 * pp) * (recompute ? 1.33 : 1.0) * (spill > 0 ? 1.05 : 1.0);
                  r.energy_j = r.time_s * r.num_gpus * (gpu == 1 ? 700 : 400) * (1 + 0.02 * tp);
                }
                rows.push_back(r);
              }
  return rows;
}

inline MemoryTable sweep_table() {
  const auto rows = sweep_rows();
  MemoryTable t("sweep.h5");
  std::vector<double> id, gpu, nodes, gpn, gpus, hbm, expansion, expansion_bw, tp, pp, recompute,
      feasible, reason, time, energy, step;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    id.push_back(static_cast<double>(i));
    gpu.push_back(r.gpu);
    nodes.push_back(r.nodes);
    gpn.push_back(8);
    gpus.push_back(r.num_gpus);
    hbm.push_back(r.hbm);
    expansion.push_back(r.expansion);
    expansion_bw.push_back(64);
    tp.push_back(r.tp);
    pp.push_back(r.pp);
    recompute.push_back(r.recompute);
    feasible.push_back(r.feasible ? 1 : 0);
    reason.push_back(r.feasible ? 0 : 1);
    time.push_back(r.time_s);
    energy.push_back(r.energy_j);
    step.push_back(r.time_s / 1e4);
  }
  t.add({"point_id", "", false, {}, "id"}, id);
  t.add({"gpu", "", true, {"A100-SXM4-80GB", "H100-SXM5-80GB"}, "design_axis"}, gpu);
  t.add({"num_nodes", "", false, {}, "design_axis"}, nodes);
  t.add({"gpus_per_node", "", false, {}, "design_axis"}, gpn);
  t.add({"hbm_gb", "GB", false, {}, "design_axis"}, hbm);
  t.add({"expansion_gb", "GB", false, {}, "design_axis"}, expansion);
  t.add({"expansion_gbytes_per_s", "GB/s", false, {}, "design_axis"}, expansion_bw);
  t.add({"tp", "", false, {}, "plan_axis"}, tp);
  t.add({"pp", "", false, {}, "plan_axis"}, pp);
  t.add({"recompute", "", true, {"none", "full"}, "plan_axis"}, recompute);
  t.add({"num_gpus", "", false, {}, "metric"}, gpus);
  t.add({"feasible", "", false, {}, "metric"}, feasible);
  t.add({"infeasible_reason", "", true, {"none", "out_of_memory"}, "metric"}, reason);
  t.add({"step_time_s", "s", false, {}, "metric"}, step);
  t.add({"time_to_train_s", "s", false, {}, "metric"}, time);
  t.add({"energy_to_train_j", "J", false, {}, "metric"}, energy);
  t.set_attribute("pue", 1.5);
  t.set_attribute("usd_per_kwh", 0.2);
  t.set_attribute("carbon_g_per_kwh", 300.0);
  t.set_attribute("gpu_hour_usd", 2.0);
  t.set_attribute("training_tokens", 3e11);
  t.set_attribute("tool_version", std::string("test"));
  return t;
}

}  // namespace clustersweep::analysis::testing
