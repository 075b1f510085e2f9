#pragma once
// The training job on top of the step: failures, checkpoints and restarts (docs/estimator.md,
// "The job model"). Pure and allocation-free like the step model. A job of N GPUs on M nodes
// fails at rate N/gpu_mtbf + M/node_mtbf (independent, exponential); it saves its training state
// every checkpoint interval, at a cost that stops training (a synchronous save, or an asynchronous
// save's snapshot); a failure costs the restart and the work since the last complete checkpoint.
// The expected wall time is Daly's for exponential failures (2006); the checkpoint interval is
// the one that minimises it, at least one step and never shorter than an asynchronous save's
// write.
#include <limits>
#include <string_view>

#include "estimator/estimator.h"

namespace clustersweep::estimator {

// The reliability of the cluster and its storage ([reliability] in a spec; flags of estimate and
// best). Every field is a plain number; infinity disables what it describes.
struct Reliability {
  // Mean time between job-interrupting failures of one GPU (with its share of the host and the
  // network), hours: Llama 3's 16,384 H100 x 54 days / 419 unexpected interruptions
  // (Dubey et al. 2024, sec. 3.3.4) = 50,677 GPU-hours.
  double gpu_mtbf_hours = 16384.0 * 54 * 24 / 419;
  // Of one node beyond its GPUs' share (power, host, NIC), hours; infinity: in the GPUs' figure.
  double node_mtbf_hours = std::numeric_limits<double>::infinity();
  // Checkpoint write (and restart read) bandwidth of one node, and of the whole storage system.
  double storage_gbytes_per_s_per_node = 2;
  double storage_gbytes_per_s = 2000;  // Llama 3's Tectonic: 2 TB/s sustained (sec. 3.3.1)
  // An asynchronous save stops training only to copy the state to host memory at this rate per
  // GPU, then writes it in the background (0: synchronous saves).
  double async_snapshot_gbytes_per_s = 0;
  // Scheduler requeue, process start, collective set-up and warm-up of a restart, beyond reading
  // the checkpoint back.
  double restart_s = 600;

  // Visits every parameter as (name, field): the names of the spec's [reliability] keys, of the
  // store's root attributes and (with - for _) of the flags.
  template <class Self, class Visit>
  static void for_each(Self& r, Visit&& visit) {
    visit("gpu_mtbf_hours", r.gpu_mtbf_hours);
    visit("node_mtbf_hours", r.node_mtbf_hours);
    visit("storage_gbytes_per_s_per_node", r.storage_gbytes_per_s_per_node);
    visit("storage_gbytes_per_s", r.storage_gbytes_per_s);
    visit("async_snapshot_gbytes_per_s", r.async_snapshot_gbytes_per_s);
    visit("restart_s", r.restart_s);
  }
  // The values a parameter takes, beyond positive finite numbers: a mean time between failures
  // may be infinite (that part never fails); an asynchronous snapshot rate (0: synchronous) and
  // the restart time may be 0.
  static bool allows_infinity(std::string_view name) noexcept {
    return name.ends_with("_mtbf_hours");
  }
  static bool allows_zero(std::string_view name) noexcept {
    return name == "async_snapshot_gbytes_per_s" || name == "restart_s";
  }
};

// What the job model needs of one design: the cluster's size and the training state to save.
struct JobDesign {
  double failures_per_s = 0;
  double checkpoint_stall_s = 0;  // training stops this long for each checkpoint
  double checkpoint_write_s = 0;  // until the checkpoint is complete on storage
  double restart_s = 0;           // restart and reading the checkpoint back
  double best_interval_s = 0;     // the checkpoint interval of the most goodput (infinity: none)
};
// `state_bytes`: one copy of everything a restart needs (weights, optimizer state), written in
// parallel by every node (fully parallel distributed checkpointing), each GPU its 1/N share.
JobDesign job_design(const Reliability& r, double num_gpus, double num_nodes,
                     double state_bytes) noexcept;
// The same for a cluster: its GPUs on its nodes.
JobDesign job_design(const Reliability& r, const Cluster& cluster, double state_bytes) noexcept;

struct JobOutcome {
  double goodput = 1;                // useful training time / wall time
  double checkpoint_interval_s = 0;  // of training between checkpoints (infinity: none)
  double wall_s = 0;                 // expected wall time to train, failures included
};
// The job of `steps` steps of `step_s` seconds. goodput is non-increasing in step_s, so the wall
// time (step_s * steps / goodput) is increasing in it: the plan search's bounds hold.
JobOutcome job_outcome(const JobDesign& design, double step_s, double steps) noexcept;
// The wall time of the job of `outcome` (job_outcome(design, step_s, steps)) with a step `ratio`
// times as long: an end of the step's prediction interval. Where the checkpoint interval does not
// depend on the step, the goodput is the same and the wall time scales.
double wall_at_ratio(const JobDesign& design, const JobOutcome& outcome, double step_s,
                     double steps, double ratio) noexcept;

// Everything the job of `steps` steps of `step_s` seconds and `energy_per_step_j` gives, as a
// sweep's job columns and `estimate` show it: the outcome, the failure-free time, the energy with
// the lost work, and the step's 90% prediction `interval` with the wall time at its ends.
struct JobFigures {
  JobOutcome outcome;
  double failure_free_s = 0;
  double energy_j = 0;
  double step_lo_s = 0, step_hi_s = 0;
  double wall_lo_s = 0, wall_hi_s = 0;
};
JobFigures job_figures(const JobDesign& design, double step_s, double energy_per_step_j,
                       double steps, const StepInterval& interval) noexcept;

}  // namespace clustersweep::estimator
