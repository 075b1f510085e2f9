#include "estimator/dlrm.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "estimator/detail/collectives.h"
#include "estimator/detail/host.h"

namespace clustersweep::estimator {

namespace {

constexpr DlrmCalibrationField kDlrmFields[] = {
    {"mlp_eff_max", &DlrmCalibration::mlp_eff_max, 0.2, 1.0,
     "fraction of dense peak a large MLP GEMM reaches"},
    {"mlp_half_dim", &DlrmCalibration::mlp_half_dim, 16, 2048,
     "smallest GEMM dimension at which an MLP GEMM reaches half of mlp_eff_max"},
    {"embedding_eff", &DlrmCalibration::embedding_eff, 0.1, 1.0,
     "achieved fraction of HBM bandwidth for random embedding-row gathers"},
    {"cache_speedup", &DlrmCalibration::cache_speedup, 3, 3,
     "how much faster hot rows are served from L2 than cold rows from HBM"},
    {"cache_bytes", &DlrmCalibration::cache_bytes, 40e6, 40e6,
     "per GPU: L2 bytes that hold the hot rows of HBM-resident tables"},
    {"memory_passes", &DlrmCalibration::memory_passes, 1, 30,
     "elementwise passes over the dense activations per step (forward and backward)"},
    {"hbm_eff", &DlrmCalibration::hbm_eff, 0.8, 0.8,
     "achieved fraction of HBM bandwidth for streaming traffic"},
    {"a2a_eff", &DlrmCalibration::a2a_eff, 0.1, 1.0,
     "achieved fraction of link bandwidth in the embedding all-to-all"},
    {"a2a_overlap", &DlrmCalibration::a2a_overlap, 0.0, 0.9,
     "fraction of the all-to-all hidden behind the bottom MLP and pipelining"},
    {"dense_overlap", &DlrmCalibration::dense_overlap, 0.8, 0.8,
     "fraction of the dense all-reduce hidden behind the embedding backward"},
    {"per_table_overhead_s", &DlrmCalibration::per_table_overhead_s, 0, 1e-4,
     "seconds per local table and step that do not fuse (kernel launches, index handling)"},
    {"per_step_overhead_s", &DlrmCalibration::per_step_overhead_s, 0, 0.02,
     "framework overhead per step"},
    {"launch_s", &DlrmCalibration::launch_s, 0, 1e-4,
     "host seconds per kernel launch outside a CUDA graph (Python, the framework's dispatch, the "
     "CUDA launch); exposed where the host cannot run ahead of the GPU"},
    {"expansion_eff", &DlrmCalibration::expansion_eff, 0.8, 0.8,
     "achieved fraction of expansion-tier bandwidth"},
    {"workspace_bytes", &DlrmCalibration::workspace_bytes, 1e9, 1e9,
     "CUDA context, library workspaces and fragmentation, per GPU"},
    {"interval_lo", &DlrmCalibration::interval_lo, 0, 0,
     "90% prediction interval of a step: lowest measured / predicted"},
    {"interval_hi", &DlrmCalibration::interval_hi, 0, 0,
     "90% prediction interval of a step: highest measured / predicted"},
};

constexpr const char* kShardingNames[] = {"table", "row",    "column",   "table_row",
                                          "data",  "hybrid", "fused_row"};
constexpr const char* kFrameworkNames[] = {"any", "hugectr", "torchrec"};
constexpr const char* kInteractionNames[] = {"dot", "dcnv2"};
constexpr const char* kOptimizerNames[] = {"sgd", "rowwise_adagrad", "adagrad", "adam"};

template <class E, std::size_t N>
bool parse_name(const char* const (&names)[N], std::string_view name, E& out) noexcept {
  for (std::size_t i = 0; i < N; ++i)
    if (name == names[i]) {
      out = static_cast<E>(i);
      return true;
    }
  return false;
}

// Generalised harmonic number H(n, s) = sum_{k=1..n} k^-s, by its integral with the
// Euler-Maclaurin end corrections (exact to ~1e-3 relative for n >= 1, cheap for any n).
double harmonic(double n, double s) noexcept {
  if (n <= 0) return 0;
  if (n < 1) return n;
  const double tail = 0.5 * (1 + std::pow(n, -s));
  if (std::fabs(s - 1) < 1e-9) return std::log(n) + tail;
  return (std::pow(n, 1 - s) - 1) / (1 - s) + tail;
}

bool is_half(Precision p) { return p == Precision::fp16 || p == Precision::bf16; }

// The smallest unit of a random DRAM access on NVIDIA GPUs.
constexpr double kSectorBytes = 32;
// Columns of a column-wise shard: a table of dimension D splits into D / 32 shards.
constexpr double kColumnShardWidth = 32;
// Bytes of one looked-up id sent to the GPU that holds its row (row-wise exchanges per lookup).
constexpr double kIdBytes = 8;

// Kernels a step launches, counted from TorchRec's DLRM (forward, backward, optimizer): per dense
// layer its GEMM, bias and activation forward, their gradients and an unfused optimizer update;
// per embedding kernel (the tables of one sharding share one fused kernel, FBGEMM's table-batched
// embedding) the input permutation, the lookup and its fused backward and the output
// distribution; per step the input copies, the loss, the collectives and the zeroing of
// gradients. TorchRec also handles each sparse feature of its KeyedJaggedTensor on its own
// (lengths, offsets, splits and permutations per key, forward and backward).
constexpr double kLaunchesPerDenseLayer = 8;
constexpr double kLaunchesPerEmbeddingKernel = 6;
constexpr double kLaunchesPerStep = 40;
constexpr double kLaunchesPerFeature = 6;

}  // namespace

const DlrmCalibrationField* dlrm_calibration_fields_begin() noexcept {
  return std::begin(kDlrmFields);
}
const DlrmCalibrationField* dlrm_calibration_fields_end() noexcept { return std::end(kDlrmFields); }

const char* to_string(Sharding sharding) noexcept {
  return kShardingNames[static_cast<int>(sharding)];
}
const char* to_string(DlrmFramework framework) noexcept {
  return kFrameworkNames[static_cast<int>(framework)];
}
bool parse_dlrm_framework(std::string_view name, DlrmFramework& out) noexcept {
  return parse_name(kFrameworkNames, name, out);
}
const char* to_string(Interaction interaction) noexcept {
  return kInteractionNames[static_cast<int>(interaction)];
}
const char* to_string(SparseOptimizer optimizer) noexcept {
  return kOptimizerNames[static_cast<int>(optimizer)];
}
bool parse_sharding(std::string_view name, Sharding& out) noexcept {
  return parse_name(kShardingNames, name, out);
}
bool parse_interaction(std::string_view name, Interaction& out) noexcept {
  return parse_name(kInteractionNames, name, out);
}
bool parse_sparse_optimizer(std::string_view name, SparseOptimizer& out) noexcept {
  return parse_name(kOptimizerNames, name, out);
}

void scale_table_rows(DlrmModel& model, double total) noexcept {
  double sum = 0;
  for (int t = 0; t < model.num_tables; ++t) sum += model.rows[t];
  if (sum <= 0) return;
  for (int t = 0; t < model.num_tables; ++t)
    model.rows[t] = std::max(1.0, std::round(model.rows[t] * total / sum));
}

double zipf_hit_share(double cached, double rows, double skew) noexcept {
  if (rows <= 0) return 1;
  cached = std::clamp(cached, 0.0, rows);
  if (cached >= rows) return 1;
  if (skew <= 0) return cached / rows;
  return harmonic(cached, skew) / harmonic(rows, skew);
}

namespace {

// Visits the dense layers of one sample as GEMMs of (rows x k) by (k x n), forward only: the
// bottom MLP, the interaction, the top MLP. `weights` is false for the dot interaction, a product
// of activations.
template <class F>
void for_each_gemm(const DlrmModel& m, F&& gemm) {
  double in = m.dense_features;
  for (int w : m.bottom_mlp) {
    if (w <= 0) break;
    gemm(1.0, in, double(w), true);
    in = w;
  }
  const double vectors = m.num_tables + 1;  // the embeddings and the bottom MLP's output
  const double d = m.embedding_dim;
  double top_in = 0;
  if (m.interaction == Interaction::dot) {
    // DLRM: Z = X X^T of the (T+1) x D vectors of a sample; the top MLP reads the bottom output
    // and the upper triangle of Z.
    gemm(vectors, d, vectors, false);
    top_in = d + vectors * (vectors - 1) / 2;
  } else {
    // DCNv2 low-rank cross layers: x_{l+1} = x0 * (U (V x_l) + b) + x_l on x0 = (T+1) D.
    const double x0 = vectors * d;
    for (int l = 0; l < m.cross_layers; ++l) {
      gemm(1.0, x0, double(m.cross_rank), true);
      gemm(1.0, double(m.cross_rank), x0, true);
    }
    top_in = x0;
  }
  in = top_in;
  for (int w : m.top_mlp) {
    if (w <= 0) break;
    gemm(1.0, in, double(w), true);
    in = w;
  }
}

}  // namespace

double dlrm_forward_flops_per_sample(const DlrmModel& model) noexcept {
  double flops = 0;
  for_each_gemm(model, [&](double rows, double k, double n, bool) { flops += 2 * rows * k * n; });
  return flops;
}

DlrmEstimator::DlrmEstimator(const DlrmWorkload& workload, const Cluster& cluster,
                             const Calibration& calibration)
    : workload_(workload), cluster_(cluster), calibration_(calibration.dlrm) {
  const auto& m = workload_.model;
  const auto& c = calibration_;
  const double gpus = std::max(1, cluster_.num_gpus);
  gpus_per_node_ = std::max(1, std::min(cluster_.gpus_per_node, cluster_.num_gpus));
  num_nodes_ = estimator::num_nodes(cluster_);
  const auto p = workload_.precision;
  power_ = StepPowerModel(cluster_, calibration);
  peak_flops_ = (p == Precision::fp8 || p == Precision::fp4)
                    ? 0
                    : cluster_.gpu.peak_flops[static_cast<int>(p)] * power_.gemm_clock();
  act_bytes_ = is_half(p) ? 2 : 4;
  // Embedding tables stay fp32 under mixed precision (autocast runs embedding lookups in the
  // weights' type, and frameworks keep embedding variables fp32), and so do the pooled vectors
  // they exchange, cast for the interaction after the all-to-all; HugeCTR exchanges them in the
  // training precision.
  table_bytes_ = 4;
  wire_bytes_ = workload_.framework == DlrmFramework::hugectr ? act_bytes_ : table_bytes_;
  switch (m.optimizer) {
    case SparseOptimizer::sgd:
      state_elements_ = 0;
      break;
    case SparseOptimizer::rowwise_adagrad:
      state_elements_ = 1;
      break;
    case SparseOptimizer::adagrad:
      state_elements_ = m.embedding_dim;
      break;
    case SparseOptimizer::adam:
      state_elements_ = 2.0 * m.embedding_dim;
      break;
  }
  hbm_bytes_per_s_ = cluster_.gpu.hbm_bytes_per_s;
  // Collectives reach the links' calibrated efficiency; an all-to-all a fraction a2a_eff of it.
  // The NVLink domain (an NVL72 rack spans nodes); without one stated, the node.
  domain_ = std::clamp(cluster_.nvlink_domain > 0 ? cluster_.nvlink_domain : gpus_per_node_, 1,
                       std::max(1, cluster_.num_gpus));
  // Over a mesh or torus the all-reduce and the exchange over every GPU get what their fabric
  // gives a group of the whole domain.
  const double scale_up = cluster_.nvlink_bytes_per_s * calibration.nvlink_eff;
  const int all = std::max(1, cluster_.num_gpus);
  allreduce_nvlink_bytes_per_s_ =
      detail::scale_up_bytes_per_s(cluster_, scale_up, 1, all, Traffic::collective);
  allreduce_inter_node_bytes_per_s_ = cluster_.inter_node_bytes_per_s * calibration.inter_node_eff;
  nvlink_bytes_per_s_ =
      detail::scale_up_bytes_per_s(cluster_, scale_up, 1, all, Traffic::all_to_all) * c.a2a_eff;
  inter_node_bytes_per_s_ = allreduce_inter_node_bytes_per_s_ * c.a2a_eff;
  // Both span every GPU: on a tapered network they cross its narrowest level, and on a rail-only
  // one the exchange (an all-to-all) forwards its cross-rail bytes over the domain.
  const ScaleOutLevels levels = detail::scale_out_levels(cluster_, calibration.network);
  if (!levels.non_blocking && all > domain_) {
    inter_node_bytes_per_s_ = detail::placed_scale_out_bytes_per_s(
        levels, 1, all, Traffic::all_to_all, inter_node_bytes_per_s_, nvlink_bytes_per_s_);
    allreduce_inter_node_bytes_per_s_ = detail::placed_scale_out_bytes_per_s(
        levels, 1, all, Traffic::collective, allreduce_inter_node_bytes_per_s_,
        allreduce_nvlink_bytes_per_s_);
  }
  // An all-reduce that leaves the domain drives the NICs of the domain's members together, as
  // the transformer's collectives.
  allreduce_bytes_per_s_ = detail::collective_bytes_per_s(
      1, std::max(1, cluster_.num_gpus), domain_, allreduce_nvlink_bytes_per_s_,
      allreduce_inter_node_bytes_per_s_, calibration.nic_aggregation);
  expansion_bytes_per_s_ = cluster_.expansion_bytes_per_s * c.expansion_eff;

  // The dense part runs data-parallel on the local batch.
  const double local = static_cast<double>(workload_.global_batch) / gpus;
  // A GEMM needs work in flight in proportion to the math rate it feeds: the tile-size ramp of
  // the 16-bit tensor cores, shorter for TF32 and far shorter for FP32 on the CUDA cores.
  const double half_peak = cluster_.gpu.peak_flops[static_cast<int>(Precision::fp16)];
  const double half_dim =
      c.mlp_half_dim *
      (half_peak > 0 ? std::min(1.0, peak_flops_ / (half_peak * power_.gemm_clock())) : 1.0);
  double gemm_s = 0, params = 0, flops = 0, widths = m.dense_features;
  dense_layers_ = 0;
  for_each_gemm(m, [&](double rows, double k, double n, bool weights) {
    // Forward, then the backward's two GEMMs (input and weight gradients).
    const double f = 3 * 2 * local * rows * k * n;
    flops += f;
    widths += rows * n;
    if (peak_flops_ <= 0) return;
    if (weights) {
      const double smallest = std::min({local, k, n});
      gemm_s += f / (peak_flops_ * c.mlp_eff_max * smallest / (smallest + half_dim));
      params += k * n + n;
      ++dense_layers_;
    } else {
      // The dot interaction: a (T+1) x D x (T+1) batched product per sample, bound by reading
      // its vectors and writing its products rather than by FLOPs.
      const double bytes = 3 * local * (rows * k + rows * n) * act_bytes_;
      gemm_s += std::max(f / (peak_flops_ * c.mlp_eff_max),
                         bytes / (cluster_.gpu.hbm_bytes_per_s * c.hbm_eff));
    }
  });
  widths += (m.num_tables + 1.0) * m.embedding_dim;  // the interaction's input
  dense_params_ = params;
  dense_time_s_ = gemm_s;
  flops_per_step_ = flops * gpus;
  memory_bound_s_ = local * widths * act_bytes_ * c.memory_passes / (hbm_bytes_per_s_ * c.hbm_eff);
  activation_bytes_ = 2 * local * widths * act_bytes_;  // kept for the backward, with gradients
  // Weights, gradients and fp32 master weights and moments of the MLPs.
  dense_memory_ = dense_params_ * (2 * act_bytes_ + 12);
  fixed_memory_ = dense_memory_ + activation_bytes_ + c.workspace_bytes;
  // The fused backward reads and writes each touched row and its optimizer state.
  backward_factor_ = 2 + 2 * state_elements_ * 4 / (m.embedding_dim * table_bytes_);
  table_capacity_ = cluster_.hbm_bytes + cluster_.expansion_bytes - fixed_memory_;

  // A hybrid embedding replicates the k hottest rows of a table where that pays: the all-reduce
  // of their gradients against the exchange of the lookups they serve locally. k is the best of
  // none and powers of two, within a share of the room for tables.
  const double row_bytes = m.embedding_dim * table_bytes_;
  for (int t = 0; t < std::min(m.num_tables, kMaxTables); ++t) {
    const double budget =
        std::max(0.0, table_capacity_) / (4.0 * m.num_tables) / (row_bytes + state_elements_ * 4);
    double best_k = 0, best_s = std::numeric_limits<double>::infinity();
    for (double k = 0; k <= std::min(m.rows[t], budget); k = k == 0 ? 1024 : 2 * k) {
      TableLoad exchange;
      spread(served_lookups(t, k) * (m.embedding_dim * wire_bytes_ + kIdBytes), exchange);
      const double s = exchange_seconds(exchange.intra_bytes, exchange.inter_bytes) +
                       reduce_seconds(k * row_bytes) * (1 - c.dense_overlap);
      if (s < best_s) {
        best_s = s;
        best_k = k;
      }
    }
    frequent_rows_[t] = best_k;
  }
  for (int t = 0; t < std::min(m.num_tables, kMaxTables); ++t)
    for (int s = 0; s < kNumShardings; ++s)
      table_loads_[t][s] = compute_table_load(t, static_cast<Sharding>(s));
}

void DlrmEstimator::spread(double bytes, TableLoad& load) const noexcept {
  const double gpus = std::max(1, cluster_.num_gpus);
  load.intra_bytes = bytes * (domain_ - 1) / gpus;
  load.inter_bytes = bytes * (gpus - domain_) / gpus;
}

double DlrmEstimator::served_lookups(int t, double k) const noexcept {
  const auto& m = workload_.model;
  const double hot = k > 0 ? zipf_hit_share(k, m.rows[t], m.index_skew) : 0;
  return static_cast<double>(workload_.global_batch) * m.pooling[t] * (1 - hot) /
         std::max(1, cluster_.num_gpus);
}

double DlrmEstimator::reduce_seconds(double bytes) const noexcept {
  const double gpus = std::max(1, cluster_.num_gpus);
  if (gpus <= 1 || allreduce_bytes_per_s_ <= 0) return 0;
  return 2 * (gpus - 1) / gpus * bytes / allreduce_bytes_per_s_;
}

double DlrmEstimator::launches_per_step(const DlrmPlan& plan) const noexcept {
  const auto& m = workload_.model;
  bool used[kNumShardings] = {};
  double kernels = 0;
  for (int t = 0; t < m.num_tables; ++t) {
    kernels += !used[static_cast<int>(plan.sharding[t])];
    used[static_cast<int>(plan.sharding[t])] = true;
  }
  const double features = workload_.framework == DlrmFramework::torchrec ? m.num_tables : 0;
  return kLaunchesPerStep + kLaunchesPerDenseLayer * dense_layers_ +
         kLaunchesPerEmbeddingKernel * kernels + kLaunchesPerFeature * features;
}

double DlrmEstimator::exchange_seconds(double intra_bytes, double inter_bytes) const noexcept {
  // Both link kinds carry their share at once; forward and backward.
  const double intra = nvlink_bytes_per_s_ > 0 ? intra_bytes / nvlink_bytes_per_s_ : 0;
  const double inter = inter_node_bytes_per_s_ > 0 ? inter_bytes / inter_node_bytes_per_s_ : 0;
  return 2 * std::max(intra, inter) * (1 - calibration_.a2a_overlap);
}

double DlrmEstimator::lookup_seconds(double lookups, double row_bytes, double rows,
                                     double cache_rows, double expansion_share) const noexcept {
  const auto& c = calibration_;
  // A gather moves whole 32-byte DRAM sectors, however narrow the row (or column shard).
  const double bytes = lookups * std::max(row_bytes, kSectorBytes);
  const double cold_rate = hbm_bytes_per_s_ * c.embedding_eff;
  const double hot =
      std::min(zipf_hit_share(cache_rows, rows, workload_.model.index_skew), 1 - expansion_share);
  double s =
      bytes * (hot / (cold_rate * c.cache_speedup) + (1 - hot - expansion_share) / cold_rate);
  if (expansion_share > 0 && expansion_bytes_per_s_ > 0)
    s += bytes * expansion_share / expansion_bytes_per_s_;
  return s;
}

DlrmEstimator::TableLoad DlrmEstimator::compute_table_load(int t,
                                                           Sharding sharding) const noexcept {
  const auto& m = workload_.model;
  const double gpus = std::max(1, cluster_.num_gpus);
  const double batch = static_cast<double>(workload_.global_batch);
  const double d = m.embedding_dim;
  const double row_bytes = d * table_bytes_;
  const double wire_bytes = d * wire_bytes_;  // a vector in the all-to-all
  const double state = state_elements_ * 4;
  const double rows = m.rows[t];
  const double lookups = batch * m.pooling[t];
  const double cache_rows = calibration_.cache_bytes / row_bytes;
  TableLoad load;
  // The pooled output a GPU sends to the GPUs of the samples (forward; its gradient comes back),
  // split into the part for its NVLink domain's peers and for the GPUs beyond it (scale-out).
  const double peers = domain_;
  const double node = std::min<double>(gpus, gpus_per_node_);
  double shard_lookups = lookups, shard_rows = rows, shard_row_bytes = row_bytes;
  switch (sharding) {
    case Sharding::table_wise:
      spread(batch * wire_bytes, load);
      break;
    case Sharding::row_wise:
      shard_lookups = lookups / gpus;
      shard_rows = rows / gpus;
      spread(batch * wire_bytes, load);  // partial sums, reduce-scattered
      break;
    case Sharding::column_wise: {
      const double shards = std::min(gpus, std::max(1.0, d / kColumnShardWidth));
      shard_row_bytes = row_bytes / shards;
      // Spread over every GPU on average when there are more GPUs than column shards.
      const double share = shards / gpus;
      shard_lookups = lookups * share;
      shard_rows = rows * share;
      spread(batch * wire_bytes / shards * share, load);
      break;
    }
    case Sharding::table_row_wise: {
      // Partial sums reduce-scattered inside the node, then each GPU's share to the others,
      // over NVLink as far as the domain reaches.
      shard_lookups = lookups / node;
      shard_rows = rows / node;
      const double share = batch * wire_bytes / node;
      load.intra_bytes = share * (node - 1) + share * std::max(0.0, peers - node) / gpus;
      load.inter_bytes = share * (gpus - std::max(peers, node)) / gpus;
      break;
    }
    case Sharding::data:
      shard_lookups = lookups / gpus;
      load.reduce_bytes = rows * row_bytes;
      break;
    case Sharding::hybrid:
    case Sharding::fused_row: {
      // The rows a GPU holds serve 1/gpus of the (cold) lookups, whose vectors it sends to the
      // GPUs of their samples after receiving their ids; the frequent rows of a hybrid table
      // serve the GPU's own samples.
      const double k = sharding == Sharding::hybrid ? frequent_rows_[t] : 0;
      shard_lookups = served_lookups(t, k);
      shard_rows = std::max(1.0, (rows - k) / gpus);
      spread(shard_lookups * (wire_bytes + kIdBytes), load);
      load.reduce_bytes = k * row_bytes;
      if (k > 0) {
        const double hot = zipf_hit_share(k, rows, m.index_skew);
        const double local = lookup_seconds(lookups * hot / gpus, row_bytes, k, cache_rows, 0);
        // The replicated rows' update streams them and their state once per step.
        load.seconds = local * (1 + backward_factor_) +
                       2 * k * (row_bytes + state) / (hbm_bytes_per_s_ * calibration_.hbm_eff);
      }
      break;
    }
  }
  const double fwd =
      lookup_seconds(shard_lookups, shard_row_bytes, std::max(1.0, shard_rows), cache_rows, 0);
  load.seconds += fwd * (1 + backward_factor_);
  // Replicated tables keep every row, a hybrid table its frequent rows and a share of the rest;
  // the others a share (column shards average over the GPUs).
  const double share = sharding == Sharding::data || sharding == Sharding::table_wise ? 1
                       : sharding == Sharding::table_row_wise ? 1.0 / gpus_per_node_
                                                              : 1 / gpus;
  const double k = frequent_rows_[t];
  load.memory = sharding == Sharding::hybrid ? (k + (rows - k) / gpus) * (row_bytes + state)
                                             : rows * (row_bytes + state) * share;
  return load;
}

namespace {

// Per-GPU loads of a placement: what every GPU carries (row-, column-wise, replicated tables),
// plus each GPU's table-wise tables and each node's table-row-wise tables. Fixed arrays.
struct Loads {
  // No default member initializers: the slot arrays stay uninitialized (they are 28 KB, and a
  // point uses a few of them); find() initializes a slot when it first takes it.
  struct Slot {
    std::int32_t id;
    double seconds, intra_bytes, inter_bytes, memory, rows;
    int tables;
  };
  Slot spread{-1, 0, 0, 0, 0, 0, 0};  // on every GPU
  std::array<Slot, kMaxTables> gpu;
  int gpus = 0;
  std::array<Slot, kMaxTables> node;
  int nodes = 0;

  static Slot& find(std::array<Slot, kMaxTables>& slots, int& used, std::int32_t id) noexcept {
    for (int i = 0; i < used; ++i)
      if (slots[i].id == id) return slots[i];
    slots[used] = Slot{id, 0, 0, 0, 0, 0, 0};
    return slots[used++];
  }
};

}  // namespace

double DlrmEstimator::checkpoint_bytes() const noexcept {
  const auto& m = workload_.model;
  double rows = 0;
  for (int t = 0; t < m.num_tables; ++t) rows += m.rows[t];
  return rows * (m.embedding_dim * table_bytes_ + state_elements_ * 4) +
         dense_params_ * (act_bytes_ + 12);
}

DlrmEstimate DlrmEstimator::estimate(const DlrmPlan& plan) const noexcept {
  DlrmEstimate e;
  const auto& m = workload_.model;
  const auto& c = calibration_;
  auto infeasible = [&](Infeasible why) {
    e.feasible = false;
    e.reason = why;
    return e;
  };
  if (peak_flops_ <= 0) return infeasible(Infeasible::precision_unsupported);
  if (m.num_tables <= 0 || m.num_tables > kMaxTables || m.embedding_dim <= 0 ||
      cluster_.num_gpus <= 0 || workload_.global_batch <= 0)
    return infeasible(Infeasible::invalid_plan);
  const double gpus = cluster_.num_gpus;
  const double row_bytes = m.embedding_dim * table_bytes_;
  const double state_bytes = state_elements_ * 4;

  Loads loads;
  double replicated_bytes = 0;  // replicated rows: their gradients are all-reduced
  bool fused = false;           // a fused vocabulary holds a table already
  for (int t = 0; t < m.num_tables; ++t) {
    const Sharding s = plan.sharding[t];
    const TableLoad load = table_load(t, s);
    Loads::Slot* slot = &loads.spread;
    switch (s) {
      case Sharding::table_wise: {
        const std::int32_t g = plan.device[t];
        if (g < 0 || g >= cluster_.num_gpus) return infeasible(Infeasible::invalid_plan);
        slot = &Loads::find(loads.gpu, loads.gpus, g);
        break;
      }
      case Sharding::table_row_wise: {
        const std::int32_t n = plan.device[t];
        if (n < 0 || n >= num_nodes_) return infeasible(Infeasible::invalid_plan);
        slot = &Loads::find(loads.node, loads.nodes, n);
        break;
      }
      case Sharding::data:
      case Sharding::hybrid:
      case Sharding::fused_row:
      case Sharding::row_wise:
      case Sharding::column_wise:
        break;
    }
    replicated_bytes += load.reduce_bytes;
    slot->seconds += load.seconds;
    slot->intra_bytes += load.intra_bytes;
    slot->inter_bytes += load.inter_bytes;
    slot->memory += load.memory;
    slot->rows += m.rows[t];
    // A fused vocabulary is one embedding kernel, however many tables it holds.
    if (s != Sharding::fused_row || !fused) slot->tables += 1;
    fused = fused || s == Sharding::fused_row;
  }

  // The busiest GPU: a GPU with table-wise tables (and its node's table-row-wise tables), a GPU
  // of a table-row-wise node without table-wise tables, or a GPU with neither.
  const Loads::Slot none{-1, 0, 0, 0, 0, 0, 0};
  double worst_s = -1;
  Loads::Slot worst = none;
  // The fullest GPU's tables, and what of them lives in the expansion tier.
  double fullest_tables = -1, fullest_expansion = 0;
  bool fits = true;
  auto consider = [&](const Loads::Slot& extra_gpu, const Loads::Slot& extra_node) {
    Loads::Slot g = loads.spread;
    for (const Loads::Slot* x : {&extra_gpu, &extra_node}) {
      g.seconds += x->seconds;
      g.intra_bytes += x->intra_bytes;
      g.inter_bytes += x->inter_bytes;
      g.memory += x->memory;
      g.rows += x->rows;
      g.tables += x->tables;
    }
    // Cold rows that do not fit HBM live in the expansion tier.
    const double room = cluster_.hbm_bytes - fixed_memory_;
    double in_expansion = 0;
    double seconds = g.seconds;
    if (g.memory > room) {
      in_expansion = g.memory - std::max(0.0, room);
      if (in_expansion > cluster_.expansion_bytes || room <= 0) fits = false;
      if (expansion_bytes_per_s_ > 0 && g.tables > 0 && g.memory > 0) {
        const double rows_per_table = std::max(1.0, g.rows / g.tables);
        const double share = 1 - zipf_hit_share(rows_per_table * (1 - in_expansion / g.memory),
                                                rows_per_table, m.index_skew);
        // Those accesses move from HBM to the tier: the cost of the step's touched bytes.
        const double touched = seconds * hbm_bytes_per_s_ * c.embedding_eff;
        seconds +=
            touched * share *
            std::max(0.0, 1 / expansion_bytes_per_s_ - 1 / (hbm_bytes_per_s_ * c.embedding_eff));
      }
    }
    const double a2a = exchange_seconds(g.intra_bytes, g.inter_bytes);
    const double total = seconds + a2a + g.tables * c.per_table_overhead_s;
    if (total > worst_s) {
      worst_s = total;
      worst = g;
      worst.seconds = seconds;
    }
    if (g.memory > fullest_tables) {
      fullest_tables = g.memory;
      fullest_expansion = in_expansion;
    }
  };
  // GPUs with table-wise tables.
  int table_wise_gpus_per_node[kMaxTables] = {};
  for (int i = 0; i < loads.gpus; ++i) {
    const std::int32_t node = loads.gpu[i].id / gpus_per_node_;
    const Loads::Slot* n = &none;
    for (int j = 0; j < loads.nodes; ++j)
      if (loads.node[j].id == node) {
        n = &loads.node[j];
        ++table_wise_gpus_per_node[j];
      }
    consider(loads.gpu[i], *n);
  }
  // Table-row-wise nodes with a GPU free of table-wise tables.
  for (int j = 0; j < loads.nodes; ++j)
    if (table_wise_gpus_per_node[j] < gpus_per_node_) consider(none, loads.node[j]);
  // A GPU with neither.
  if (loads.gpus < cluster_.num_gpus) consider(none, none);

  DlrmStepTime& st = e.time;
  // Forward is 1 / (1 + backward_factor_) of the lookup seconds (table_load's convention).
  st.embedding_fwd_s = worst.seconds / (1 + backward_factor_);
  st.embedding_bwd_s = worst.seconds - st.embedding_fwd_s;
  st.all_to_all_s = exchange_seconds(worst.intra_bytes, worst.inter_bytes);
  st.mlp_compute_s = dense_time_s_;
  st.memory_bound_s = memory_bound_s_;
  // Ring all-reduce of the dense gradients (and of replicated rows).
  st.dense_allreduce_s =
      reduce_seconds(dense_params_ * act_bytes_ + replicated_bytes) * (1 - c.dense_overlap);
  st.optimizer_s = dense_params_ * 16 / (hbm_bytes_per_s_ * c.hbm_eff);
  st.overhead_s = c.per_step_overhead_s + worst.tables * c.per_table_overhead_s;
  const double gpu_s = st.embedding_fwd_s + st.embedding_bwd_s + st.all_to_all_s +
                       st.mlp_compute_s + st.memory_bound_s + st.dense_allreduce_s +
                       st.optimizer_s + st.overhead_s;
  // The host's kernel launches, as the transformer's (estimator/detail/host.h).
  const double host_s = detail::exposed_host_s(launches_per_step(plan) * c.launch_s, gpu_s,
                                               workload_.framework == DlrmFramework::hugectr,
                                               workload_.framework == DlrmFramework::torchrec);
  st.overhead_s += host_s;
  st.total_s = gpu_s + host_s;

  DlrmMemory& mem = e.memory;
  mem.tables_bytes = fullest_tables * row_bytes / (row_bytes + state_bytes);
  mem.table_optimizer_bytes = fullest_tables - mem.tables_bytes;
  mem.dense_bytes = dense_memory_;
  mem.activations_bytes = activation_bytes_;
  mem.workspace_bytes = c.workspace_bytes;
  // What does not fit is in the tier when there is one; without one, all of it counts against
  // HBM, so that an out-of-memory point shows how far over HBM it is.
  mem.expansion_bytes = std::min(fullest_expansion, cluster_.expansion_bytes);
  mem.hbm_bytes = mem.tables_bytes + mem.table_optimizer_bytes + mem.dense_bytes +
                  mem.activations_bytes + mem.workspace_bytes - mem.expansion_bytes;

  e.model_flops_per_step = flops_per_step_;
  e.samples_per_s = static_cast<double>(workload_.global_batch) / st.total_s;
  e.mfu = flops_per_step_ * power_.gemm_clock() / (st.total_s * gpus * peak_flops_);
  // The embedding lookups are random HBM gathers: memory-bound, like the framework overhead.
  e.power = power_.step({.gemm = st.mlp_compute_s,
                         .memory = st.embedding_fwd_s + st.embedding_bwd_s + st.memory_bound_s +
                                   st.optimizer_s + st.overhead_s,
                         .comm = st.all_to_all_s + st.dense_allreduce_s});
  e.energy_per_step_j = e.power.it_j;
  e.feasible = fits;
  e.reason = fits ? Infeasible::none : Infeasible::out_of_memory;
  return e;
}

}  // namespace clustersweep::estimator
