#pragma once
// Power and energy of a training step (docs/estimator.md, "Power and energy"). A GPU draws a
// fraction of its TDP that depends on what its kernels do: tensor-core GEMMs near the limit,
// memory-bound kernels less, communication waits less again, the pipeline bubble and host waits
// little more than idle. A node adds what its CPUs, memory, NICs, NVSwitches, fans and power
// supplies draw while training; the scale-out network adds its switches and transceivers
// (estimator/network.h; the NICs draw within their servers); the facility multiplies
// the IT power by its PUE. A GPU power cap lowers the SM clock of the kernels that would draw more
// than the cap until they draw the cap: compute-bound kernels slow with the clock, memory-bound
// kernels and communication barely do. Pure and allocation-free; the step model of every family
// hands its seconds by kind of work to StepPowerModel::step().
namespace clustersweep::estimator {

struct Cluster;
struct Calibration;

// Seconds of one step by the kind of work the GPUs do.
struct WorkSeconds {
  double gemm = 0;    // tensor-core GEMMs and attention matmuls
  double memory = 0;  // memory-bound kernels, the optimizer, and the framework time the modelled
                      // kernels do not explain (kernels below the model's efficiency)
  double comm = 0;    // exposed communication: the GPU waits on NCCL kernels and links
  double wait = 0;    // the pipeline bubble and host launches: the GPU idles at clock
  double total() const noexcept { return gemm + memory + comm + wait; }
};

// The average power of a step and its energy at each scope (docs/store-format.md, "Energy").
struct StepPower {
  double gpu_w = 0;      // board power of one GPU, averaged over the step
  double node_w = 0;     // one node: its GPUs and the rest of the server
  double network_w = 0;  // the scale-out network's switches and transceivers, the whole cluster
  // The network's bill of materials (estimator/network.h), the same every step: what it costs and
  // what all of it draws, its NICs too.
  double network_capex_usd = 0;
  double network_power_w = 0;
  double gpu_clock = 1;  // the GEMMs' SM clock under the power cap, relative to uncapped
  // Joules of one step: the GPU boards; the servers (GPUs and the rest); servers and network.
  double gpu_j = 0;
  double node_j = 0;
  double it_j = 0;
};

// What the scale-out network of `cluster` draws beyond its servers: the switches, transceivers and
// cables of its bill of materials (estimator/network.h) without the NICs, which the servers'
// node_overhead_w holds.
double network_outside_servers_w(const Cluster& cluster, const Calibration& calibration) noexcept;

// The power drawn by a cluster's GPUs, nodes and network while training, computed once per
// cluster (Estimator and DlrmEstimator hold one).
class StepPowerModel {
 public:
  StepPowerModel() = default;
  StepPowerModel(const Cluster& cluster, const Calibration& calibration) noexcept;
  // The SM clock of the GEMMs under the power cap, relative to uncapped (1 without a cap): their
  // time divides by it.
  double gemm_clock() const noexcept { return gemm_clock_; }
  StepPower step(const WorkSeconds& seconds) const noexcept;
  // The least IT energy (it_j, what the energy objective ranks) of a step of at least `time_s`
  // of which at least `busy_s` is GEMM or memory-bound work: the search's energy bound.
  double energy_bound_j(double time_s, double busy_s) const noexcept;

 private:
  double gemm_w_ = 0, memory_w_ = 0, comm_w_ = 0, wait_w_ = 0;  // per GPU, under the cap
  double gemm_clock_ = 1;
  double gpus_ = 0, nodes_ = 0;
  double node_rest_w_ = 0;  // per node beyond its GPUs
  double network_w_ = 0;    // the whole cluster, beyond the servers
  double network_capex_usd_ = 0, network_power_w_ = 0;
};

// The most power a design can draw: every GPU at its cap (or TDP), every node at its datasheet
// maximum, the network's switches and transceivers, before PUE. What a site's power budget must
// provision.
double peak_it_power_w(const Cluster& cluster, const Calibration& calibration) noexcept;

}  // namespace clustersweep::estimator
