#include "estimator/job.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace clustersweep::estimator {

JobDesign job_design(const Reliability& r, double num_gpus, double num_nodes,
                     double state_bytes) noexcept {
  JobDesign d;
  d.failures_per_s = (num_gpus / r.gpu_mtbf_hours + num_nodes / r.node_mtbf_hours) / 3600;
  const double storage =
      std::min(r.storage_gbytes_per_s_per_node * num_nodes, r.storage_gbytes_per_s) * 1e9;
  d.checkpoint_write_s = state_bytes / storage;
  d.checkpoint_stall_s = r.async_snapshot_gbytes_per_s > 0
                             ? state_bytes / num_gpus / (r.async_snapshot_gbytes_per_s * 1e9)
                             : d.checkpoint_write_s;
  d.restart_s = r.restart_s + d.checkpoint_write_s;  // reading back at the write bandwidth
  // A failure during an asynchronous write loses that checkpoint too: charged as a longer
  // restart, the write's length of extra work.
  if (r.async_snapshot_gbytes_per_s > 0) d.restart_s += d.checkpoint_write_s;
  if (!(d.failures_per_s > 0)) {
    d.best_interval_s = std::numeric_limits<double>::infinity();
    return d;
  }
  // The interval that maximises the goodput tau / segment(tau) of Daly's model: its log is
  // concave, so the root of its derivative, tau = M (1 - e^-a) with a = (tau + delta) / M, is the
  // one maximum (Daly's eq. 37 approximates it); found by bisection in log(tau), to the last bit.
  const double mtbf = 1 / d.failures_per_s, delta = d.checkpoint_stall_s;
  auto rising = [&](double tau) { return mtbf * -std::expm1(-(tau + delta) / mtbf) > tau; };
  double lo = 1e-9, hi = 1e-9;
  while (rising(hi) && hi < 1e30) hi *= 2;
  for (int i = 0; i < 200 && lo < hi; ++i) {
    const double mid = std::sqrt(lo * hi);
    if (mid <= lo || mid >= hi) break;
    (rising(mid) ? lo : hi) = mid;
  }
  d.best_interval_s = hi;
  return d;
}

JobOutcome job_outcome(const JobDesign& d, double step_s, double steps) noexcept {
  JobOutcome out;
  const double work = step_s * steps;
  if (!(d.failures_per_s > 0)) {
    out.checkpoint_interval_s = std::numeric_limits<double>::infinity();
    out.wall_s = work;
    return out;
  }
  const double mtbf = 1 / d.failures_per_s;
  const double delta = d.checkpoint_stall_s;
  // The best interval, but at least one step, and no sooner than the previous save is written.
  const double tau = std::max({d.best_interval_s, step_s, d.checkpoint_write_s - delta});
  // Daly's expected wall time for exponential failures (eq. 20): every segment of tau of work and
  // a checkpoint restarts from the last one after each failure, each failure costing a restart.
  const double per_segment = mtbf * std::exp(d.restart_s / mtbf) * std::expm1((tau + delta) / mtbf);
  out.checkpoint_interval_s = tau;
  out.goodput = tau / per_segment;
  out.wall_s = work / out.goodput;
  return out;
}

double wall_at_ratio(const JobDesign& design, const JobOutcome& outcome, double step_s,
                     double steps, double ratio) noexcept {
  // The interval is the largest of the best one, one step and the previous save's write: when it
  // is not the step at either end, it is the same at both.
  if (outcome.checkpoint_interval_s > step_s * std::max(1.0, ratio)) return outcome.wall_s * ratio;
  return job_outcome(design, step_s * ratio, steps).wall_s;
}

JobDesign job_design(const Reliability& r, const Cluster& cluster, double state_bytes) noexcept {
  return job_design(r, cluster.num_gpus, num_nodes(cluster), state_bytes);
}

JobFigures job_figures(const JobDesign& design, double step_s, double energy_per_step_j,
                       double steps, const StepInterval& interval) noexcept {
  JobFigures f;
  f.outcome = job_outcome(design, step_s, steps);
  f.failure_free_s = step_s * steps;
  f.energy_j = energy_per_step_j * steps / f.outcome.goodput;
  f.step_lo_s = step_s * interval.lo;
  f.step_hi_s = step_s * interval.hi;
  f.wall_lo_s = wall_at_ratio(design, f.outcome, step_s, steps, interval.lo);
  f.wall_hi_s = wall_at_ratio(design, f.outcome, step_s, steps, interval.hi);
  return f;
}

}  // namespace clustersweep::estimator
