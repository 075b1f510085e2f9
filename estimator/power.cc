#include "estimator/power.h"

#include <algorithm>
#include <cmath>

#include "estimator/estimator.h"

namespace clustersweep::estimator {

double network_outside_servers_w(const Cluster& cluster, const Calibration& c) noexcept {
  const NetworkBill bill = network_bill(cluster, c.network);
  return bill.power_w - bill.nic_w;
}

StepPowerModel::StepPowerModel(const Cluster& cluster, const Calibration& c) noexcept {
  const double tdp = cluster.gpu.tdp_w, idle = cluster.gpu.idle_w;
  const double cap = cluster.power_cap_w > 0 ? std::min(cluster.power_cap_w, tdp) : tdp;
  // Every kind draws at least the idle power of a GPU whose clocks are up.
  const auto draw = [&](double fraction) { return std::max(idle, fraction * tdp); };
  const double gemm = draw(c.gemm_power);
  // Dynamic power follows the clock as clock^dvfs_exponent (voltage falls with it): the GEMMs'
  // clock is the one at which they draw the cap.
  if (gemm > cap && gemm > idle && cap > idle && c.dvfs_exponent > 0)
    gemm_clock_ = std::pow((cap - idle) / (gemm - idle), 1.0 / c.dvfs_exponent);
  gemm_w_ = std::min(gemm, cap);
  // Memory-bound kernels and communication are bound by HBM and links, not the SM clock: a cap
  // below their draw lowers their clock, not their speed.
  memory_w_ = std::min(draw(c.memory_power), cap);
  comm_w_ = std::min(draw(c.comm_power), cap);
  wait_w_ = std::min(draw(c.wait_power), cap);
  gpus_ = cluster.num_gpus;
  nodes_ = num_nodes(cluster);
  node_rest_w_ = cluster.node_overhead_w * c.node_power;
  const NetworkBill bill = network_bill(cluster, c.network);
  network_w_ = bill.power_w - bill.nic_w;
  network_capex_usd_ = bill.capex_usd;
  network_power_w_ = bill.power_w;
}

StepPower StepPowerModel::step(const WorkSeconds& s) const noexcept {
  StepPower p;
  p.gpu_clock = gemm_clock_;
  const double total = s.total();
  const double gpu_j =
      s.gemm * gemm_w_ + s.memory * memory_w_ + s.comm * comm_w_ + s.wait * wait_w_;
  p.gpu_j = gpus_ * gpu_j;
  p.node_j = p.gpu_j + nodes_ * node_rest_w_ * total;
  p.it_j = p.node_j + network_w_ * total;
  if (total > 0) p.gpu_w = gpu_j / total;
  if (total > 0 && nodes_ > 0) p.node_w = p.node_j / (nodes_ * total);
  p.network_w = network_w_;
  p.network_capex_usd = network_capex_usd_;
  p.network_power_w = network_power_w_;
  return p;
}

double StepPowerModel::energy_bound_j(double time_s, double busy_s) const noexcept {
  const double busy_w = std::min(gemm_w_, memory_w_), rest_w = std::min(comm_w_, wait_w_);
  busy_s = std::min(busy_s, time_s);
  // Where busy work draws less than the rest, the least energy has every second busy.
  const double gpu_j =
      busy_w >= rest_w ? busy_s * busy_w + (time_s - busy_s) * rest_w : time_s * busy_w;
  return gpus_ * gpu_j + (nodes_ * node_rest_w_ + network_w_) * time_s;
}

double peak_it_power_w(const Cluster& cluster, const Calibration& c) noexcept {
  const double tdp = cluster.gpu.tdp_w;
  const double gpu = cluster.power_cap_w > 0 ? std::min(cluster.power_cap_w, tdp) : tdp;
  return cluster.num_gpus * gpu + num_nodes(cluster) * cluster.node_overhead_w +
         network_outside_servers_w(cluster, c);
}

}  // namespace clustersweep::estimator
