#pragma once
// The analytical model of one training step of a deep-learning recommendation model (DLRM, and
// DCNv2's cross network in place of DLRM's dot interaction) on a GPU cluster, with its embedding
// tables sharded as TorchRec shards them. Pure: plain structs in, plain structs out; no I/O, no
// clock, no allocation in estimate(). The equations and their sources are in docs/estimator.md
// ("DLRM").
#include <array>
#include <cstdint>
#include <string_view>

#include "estimator/estimator.h"

namespace clustersweep::estimator {

// Tables of one model (fixed arrays: estimate() and the planner allocate nothing).
inline constexpr int kMaxTables = 256;
inline constexpr int kMaxMlpLayers = 8;

enum class Interaction : std::uint8_t { dot, dcnv2 };

// Where a table lives. TorchRec's ShardingTypes: whole on one GPU; split by rows over every GPU
// (pooled partial sums reduce-scattered); split by columns over every GPU; split by rows over the
// GPUs of one node; replicated on every GPU (its gradient all-reduced like a dense weight).
// HugeCTR's hybrid embedding: the most frequently accessed rows replicated on every GPU (their
// gradients all-reduced), the others split by rows over every GPU, their vectors exchanged per
// lookup. SOK's fused row-wise vocabulary: the tables fused into one vocabulary split by rows
// over every GPU, one kernel for all of them, the looked-up vectors exchanged per lookup.
enum class Sharding : std::uint8_t {
  table_wise,
  row_wise,
  column_wise,
  table_row_wise,
  data,
  hybrid,
  fused_row
};
inline constexpr int kNumShardings = 7;

// The framework a recommendation model trains in, for what its host does each step: the host
// runs ahead of the GPU and its kernel launches hide behind the GPU's work (any), a whole-step
// CUDA graph replays the step without them (HugeCTR), or the input distribution copies the
// sparse features' lengths to the host every step, so the host cannot run ahead and every launch
// is on the step's critical path (TorchRec's KeyedJaggedTensor all-to-all).
enum class DlrmFramework : std::uint8_t { any, hugectr, torchrec };
inline constexpr int kNumDlrmFrameworks = 3;

// The sparse optimizer of the embedding tables, fused into their backward (FBGEMM TBE); its state
// per row is 0, 1 (row-wise Adagrad), D (Adagrad) or 2 D (Adam) fp32 values.
enum class SparseOptimizer : std::uint8_t { sgd, rowwise_adagrad, adagrad, adam };

struct DlrmModel {
  int num_tables = 0;
  int embedding_dim = 0;
  int dense_features = 13;                      // Criteo's 13 integer features feed the bottom MLP
  std::array<double, kMaxTables> rows{};        // rows of each table
  std::array<double, kMaxTables> pooling{};     // lookups per sample per table (multi-hot size)
  std::array<int, kMaxMlpLayers> bottom_mlp{};  // output widths, 0 = no layer
  std::array<int, kMaxMlpLayers> top_mlp{};
  Interaction interaction = Interaction::dot;
  int cross_layers = 3;      // dcnv2: low-rank cross layers
  int cross_rank = 512;      // dcnv2: their rank
  double index_skew = 1.05;  // Zipf exponent of the row accesses (reuse; docs/estimator.md)
  SparseOptimizer optimizer = SparseOptimizer::rowwise_adagrad;
};

struct DlrmWorkload {
  DlrmModel model;
  std::int64_t global_batch = 0;  // samples per optimizer step
  Precision precision = Precision::fp32;
  DlrmFramework framework = DlrmFramework::any;
};

// The 90% prediction interval of a recommendation model's step (measured / predicted ratios).
inline StepInterval step_interval(const DlrmCalibration& c) noexcept {
  return {c.interval_lo, c.interval_hi};
}

// The optimizer steps that train `samples` samples.
inline double steps_to_train(const DlrmWorkload& w, double samples) noexcept {
  return samples / static_cast<double>(w.global_batch);
}

// The placement of every table: its sharding and, for table_wise its GPU, for table_row_wise its
// node (ignored otherwise). Filled by plan_sharding() or by hand.
struct DlrmPlan {
  std::array<Sharding, kMaxTables> sharding{};
  std::array<std::int32_t, kMaxTables> device{};
};

// Seconds of one optimizer step, by cause; total_s is their plain sum (overlap already taken out).
struct DlrmStepTime {
  double embedding_fwd_s = 0;    // lookups and pooling on the busiest GPU
  double embedding_bwd_s = 0;    // gradient scatter and the fused sparse optimizer update
  double all_to_all_s = 0;       // pooled embeddings forward, their gradients backward (exposed)
  double mlp_compute_s = 0;      // bottom MLP, interaction, top MLP: GEMMs forward and backward
  double memory_bound_s = 0;     // elementwise traffic of the dense part
  double dense_allreduce_s = 0;  // MLP (and replicated-table) gradients, exposed part
  double optimizer_s = 0;        // dense optimizer step
  double overhead_s = 0;         // framework overhead and the host's exposed kernel launches
  double total_s = 0;
};

// Bytes on the busiest GPU; the footprint is hbm_bytes + expansion_bytes.
struct DlrmMemory {
  double tables_bytes = 0;
  double table_optimizer_bytes = 0;
  double dense_bytes = 0;  // MLP weights, gradients, optimizer state
  double activations_bytes = 0;
  double workspace_bytes = 0;
  double hbm_bytes = 0;
  double expansion_bytes = 0;  // cold table rows moved to the expansion tier
};

struct DlrmEstimate {
  bool feasible = false;
  Infeasible reason = Infeasible::none;
  DlrmStepTime time;
  DlrmMemory memory;
  double model_flops_per_step = 0;  // dense part, forward + backward
  double samples_per_s = 0;
  double mfu = 0;
  double energy_per_step_j = 0;  // IT energy: servers and network, before PUE (power.it_j)
  StepPower power;               // average power and the energy of a step by scope
};

// Names as used in files and flags: "table", "row", "column", "table_row", "data", "hybrid",
// "fused_row"; "dot", "dcnv2"; "sgd", "rowwise_adagrad", "adagrad", "adam"; "any", "hugectr",
// "torchrec".
const char* to_string(Sharding sharding) noexcept;
const char* to_string(DlrmFramework framework) noexcept;
bool parse_dlrm_framework(std::string_view name, DlrmFramework& out) noexcept;
const char* to_string(Interaction interaction) noexcept;
const char* to_string(SparseOptimizer optimizer) noexcept;
bool parse_sharding(std::string_view name, Sharding& out) noexcept;
bool parse_interaction(std::string_view name, Interaction& out) noexcept;
bool parse_sparse_optimizer(std::string_view name, SparseOptimizer& out) noexcept;

// Scales the table sizes of `model` to `total` rows in all, keeping their shape (each table at
// least one row): for datasets that publish only a total.
void scale_table_rows(DlrmModel& model, double total) noexcept;

// Share of the accesses that hit the `cached` most popular of `rows` rows when accesses follow a
// Zipf law of exponent `skew` (0: uniform): H(cached, skew) / H(rows, skew).
double zipf_hit_share(double cached, double rows, double skew) noexcept;
// Dense FLOPs of one sample, forward only: bottom MLP, interaction, top MLP.
double dlrm_forward_flops_per_sample(const DlrmModel& model) noexcept;

class DlrmEstimator {
 public:
  // The [dlrm] parameters, and the link efficiencies every family shares (nvlink_eff,
  // inter_node_eff: the same NCCL collectives on the same links).
  DlrmEstimator(const DlrmWorkload& workload, const Cluster& cluster,
                const Calibration& calibration);
  DlrmEstimate estimate(const DlrmPlan& plan) const noexcept;

  const DlrmWorkload& workload() const noexcept { return workload_; }
  const Cluster& cluster() const noexcept { return cluster_; }
  int num_nodes() const noexcept { return num_nodes_; }

  // The work one table adds under `sharding` to each GPU that holds a part of it: seconds of
  // lookups forward + backward, bytes sent in the all-to-all, bytes of memory. The planner
  // balances these.
  struct TableLoad {
    double seconds = 0;       // lookups forward and backward
    double intra_bytes = 0;   // sent to the NVLink domain's peers in each all-to-all
    double inter_bytes = 0;   // sent beyond the domain (scale-out) in each all-to-all
    double memory = 0;        // rows and their optimizer state
    double reduce_bytes = 0;  // replicated rows: their gradients, all-reduced with the MLPs'
  };
  TableLoad table_load(int table, Sharding sharding) const noexcept {
    return table_loads_[table][static_cast<int>(sharding)];
  }
  // Seconds the all-to-alls forward and backward add (exposed) when a GPU sends these bytes to
  // the peers of its NVLink domain and to the GPUs beyond it in each.
  double exchange_seconds(double intra_bytes, double inter_bytes) const noexcept;
  // One copy of the training state a restart needs: every table's rows and their optimizer state,
  // the MLPs' weights, fp32 master weights and moments (estimator/job.h).
  double checkpoint_bytes() const noexcept;
  // Bytes per GPU left for tables (and their state) in HBM and the expansion tier together.
  double table_capacity() const noexcept { return table_capacity_; }
  // The rows of `table` a hybrid embedding replicates: those whose all-reduce costs less than the
  // exchange of their lookups saves (the Zipf access distribution, docs/estimator.md).
  double frequent_rows(int table) const noexcept { return frequent_rows_[table]; }
  // Kernels one step launches (the host's work per step, estimator/host.h).
  double launches_per_step(const DlrmPlan& plan) const noexcept;

 private:
  DlrmWorkload workload_;
  Cluster cluster_;
  DlrmCalibration calibration_;
  int num_nodes_ = 1;
  int gpus_per_node_ = 1;
  double peak_flops_ = 0;  // at the capped clock
  StepPowerModel power_;
  double act_bytes_ = 4;       // per dense activation element
  double table_bytes_ = 4;     // per embedding element
  double wire_bytes_ = 4;      // per element of an exchanged embedding vector
  double state_elements_ = 1;  // sparse optimizer state per row
  double hbm_bytes_per_s_ = 0;
  double nvlink_bytes_per_s_ = 0;  // in an all-to-all
  double inter_node_bytes_per_s_ = 0;
  double allreduce_nvlink_bytes_per_s_ = 0;
  double allreduce_inter_node_bytes_per_s_ = 0;
  double allreduce_bytes_per_s_ = 0;  // of an all-reduce over every GPU
  double dense_layers_ = 0;           // GEMMs with weights (MLP and cross layers)
  double expansion_bytes_per_s_ = 0;
  double dense_params_ = 0;
  double dense_time_s_ = 0;  // MLP + interaction compute, per step
  double memory_bound_s_ = 0;
  double activation_bytes_ = 0;
  double flops_per_step_ = 0;
  double dense_memory_ = 0;     // MLP weights, gradients, optimizer state
  double fixed_memory_ = 0;     // dense state, activations, workspace
  double backward_factor_ = 2;  // embedding backward traffic per forward byte
  double table_capacity_ = 0;
  int domain_ = 1;  // GPUs of one NVLink domain the job spans (at most all of them)
  std::array<double, kMaxTables> frequent_rows_{};
  // table_load() of every table and sharding, computed once: the planner asks for them often.
  std::array<std::array<TableLoad, kNumShardings>, kMaxTables> table_loads_{};

  TableLoad compute_table_load(int table, Sharding sharding) const noexcept;

  // Ring all-reduce over every GPU of `bytes` of gradients.
  double reduce_seconds(double bytes) const noexcept;
  // Splits `bytes` a GPU sends evenly to every GPU into the NVLink domain's share and the rest.
  void spread(double bytes, TableLoad& load) const noexcept;
  // Lookups of table `t` a GPU serves when its rows are a 1/gpus share of the rows beyond the `k`
  // replicated on every GPU (hybrid, fused_row).
  double served_lookups(int t, double k) const noexcept;
  double lookup_seconds(double lookups, double row_bytes, double rows, double cache_rows,
                        double expansion_share) const noexcept;
};

// The placement of every table with `sharding` (table_wise tables on the GPUs, table_row_wise
// tables on the nodes, largest load first onto the least-loaded that has room, as TorchRec's
// greedy planner); a table_wise table that no GPU can hold whole is sliced by columns.
DlrmPlan plan_sharding(const DlrmEstimator& estimator, Sharding sharding);
// The faster of the row-wise placements: every table split by rows, or the tables fused into one
// vocabulary split by rows (a run published only as "row-wise").
DlrmPlan plan_row_wise(const DlrmEstimator& estimator);
// The fastest placement the planner finds among every sharding of every table: exhaustive where
// the space is small (kMaxExhaustive placements up to GPU symmetry), else greedy by cost. The
// result never exceeds memory when some placement fits; when none does, its estimate says
// out_of_memory.
inline constexpr std::uint64_t kMaxExhaustive = 50000;
DlrmPlan plan_best_sharding(const DlrmEstimator& estimator);
// The number of placements exhaustive search would try (up to GPU symmetry), capped at cap + 1.
std::uint64_t exhaustive_placements(const DlrmEstimator& estimator, std::uint64_t cap);

}  // namespace clustersweep::estimator
