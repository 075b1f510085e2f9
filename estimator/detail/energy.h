#pragma once
// Energy of a step (docs/estimator.md, "Energy per step"):
//   E = GPUs x (busy x TDP x busy_power_fraction + (step - busy) x idle)
//       + nodes x node_overhead x step
// with busy = compute + memory-bound + optimizer, the seconds kernels run; the rest of the step
// (waiting on communication, the bubble) draws idle power. node_overhead_w covers what a node
// draws beyond its GPUs (CPUs, NICs, fans), from the catalog. Defined inline: estimate() calls it
// per plan. Not part of the estimator's API.
#include <algorithm>

#include "estimator/estimator.h"

namespace clustersweep::estimator {

inline double Estimator::step_energy_j(double total_s, double busy_s) const noexcept {
  busy_s = std::min(total_s, busy_s);
  const double gpu_j = busy_s * cluster_.gpu.tdp_w * calibration_.busy_power_fraction +
                       (total_s - busy_s) * cluster_.gpu.idle_w;
  return cluster_.num_gpus * gpu_j + num_nodes_ * cluster_.node_overhead_w * total_s;
}

}  // namespace clustersweep::estimator
