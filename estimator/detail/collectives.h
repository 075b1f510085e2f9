#pragma once
// Collectives on the slowest link they span (docs/estimator.md, "Collectives: alpha-beta on the
// slowest link"). Alpha-beta costs (Thakur, Rabenseifner & Gropp, IJHPCA 2005): a buffer of S
// bytes over n ranks of per-rank bandwidth beta and per-step latency alpha takes
//   all-reduce      min(ring, tree) = min(2 (n-1)/n S/beta + 2 (n-1) alpha,
//                                         2 S/beta + 2 ceil(log2 n) alpha)
//   all-gather / reduce-scatter       (n-1)/n S/beta + (n-1) alpha
// NCCL picks ring or (double binary) tree per message size, so the all-reduce is the faster of the
// two. Megatron orders ranks tp fastest, then cp, dp, pp, so a group of n ranks at stride r stays
// inside one NVLink domain iff r n <= nvlink_domain, and then beta = NVLink x nvlink_eff. A group
// that leaves it is bound by scale-out, but its q = min(n, domain / r) members inside one domain
// drive q NICs at once: NCCL's rings and trees cross each domain boundary once per channel, one
// channel per NIC, so beta = min(NVLink, (1 + nic_aggregation (q - 1)) x scale-out x
// inter_node_eff). Defined inline: estimate() calls them per plan. Not part of the estimator's API.
#include <algorithm>
#include <bit>
#include <cstdint>

#include "estimator/estimator.h"

namespace clustersweep::estimator {
namespace detail {

// ceil(log2(n)) for n >= 1: the depth of a binary tree over n ranks.
inline double tree_depth(int n) {
  return n <= 1 ? 0.0 : static_cast<double>(std::bit_width(static_cast<unsigned>(n - 1)));
}

// All-reduce of a buffer of `bytes` in total: the faster of ring and tree.
inline double all_reduce_s(double bytes, int n, double bytes_per_s, double alpha_s) {
  if (n <= 1) return 0;
  const double ring = 2.0 * (n - 1) / n * bytes / bytes_per_s + 2.0 * (n - 1) * alpha_s;
  const double tree = 2.0 * bytes / bytes_per_s + 2.0 * tree_depth(n) * alpha_s;
  return std::min(ring, tree);
}

// All-gather or reduce-scatter of a buffer of `bytes` in total (ring).
inline double all_gather_s(double bytes, int n, double bytes_per_s, double alpha_s) {
  if (n <= 1) return 0;
  return (n - 1.0) / n * bytes / bytes_per_s + (n - 1.0) * alpha_s;
}

// Per-rank bandwidth of a collective over n ranks at stride `stride` in NVLink domains of
// `domain` GPUs (at least 1): NVLink inside one domain, else the scale-out of the q members inside
// one domain driven together, never more than NVLink. The recommendation model's all-reduce
// uses it too.
inline double collective_bytes_per_s(int stride, int n, int domain, double nvlink_bytes_per_s,
                                     double scale_out_bytes_per_s,
                                     double nic_aggregation) noexcept {
  if (static_cast<std::int64_t>(stride) * n <= domain) return nvlink_bytes_per_s;
  const double per_domain =
      std::clamp(static_cast<double>(domain / std::max(stride, 1)), 1.0, static_cast<double>(n));
  const double nics = 1.0 + nic_aggregation * (per_domain - 1.0);
  return std::min(nvlink_bytes_per_s, nics * scale_out_bytes_per_s);
}

}  // namespace detail

inline void Estimator::link(int stride, int n, double& bytes_per_s, double& alpha) const noexcept {
  const int domain = std::max(cluster_.nvlink_domain, 1);
  bytes_per_s =
      detail::collective_bytes_per_s(stride, n, domain, nvlink_bytes_per_s_,
                                     inter_node_bytes_per_s_, calibration_.nic_aggregation);
  alpha =
      static_cast<std::int64_t>(stride) * n <= domain ? nvlink_latency_s_ : inter_node_latency_s_;
}

}  // namespace clustersweep::estimator
