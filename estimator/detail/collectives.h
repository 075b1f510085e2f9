#pragma once
// Collectives on the slowest link they span (docs/estimator.md, "Collectives: alpha-beta on the
// slowest link"). Alpha-beta costs (Thakur, Rabenseifner & Gropp, IJHPCA 2005): a buffer of S
// bytes over n ranks of per-rank bandwidth beta and per-step latency alpha takes
//   all-reduce      min(ring, tree) = min(2 (n-1)/n S/beta + 2 (n-1) alpha,
//                                         2 S/beta + 2 ceil(log2 n) alpha)
//   all-gather / reduce-scatter       (n-1)/n S/beta + (n-1) alpha
// NCCL picks ring or (double binary) tree per message size, so the all-reduce is the faster of the
// two. The plan's rank order places each group at a stride (rank_strides: Megatron's default
// numbers tp fastest, then cp, dp, pp), so a group of n ranks at stride r stays
// inside one NVLink domain iff r n <= nvlink_domain, and then beta = NVLink x nvlink_eff. A group
// that leaves it is bound by scale-out, but its q = min(n, domain / r) members inside one domain
// drive q NICs at once: NCCL's rings and trees cross each domain boundary once per channel, one
// channel per NIC, so beta = min(NVLink, (1 + nic_aggregation (q - 1)) x scale-out x
// inter_node_eff). Defined inline: estimate() calls them per plan. Not part of the estimator's API.
//
// Scale-out networks (docs/estimator.md, "Scale-out networks"): under the same rank order a group
// spans the r n consecutive GPUs of its extent, and its traffic crosses every level of the
// topology narrower than that: the leaf (fat tree: radix/2 GPUs' worth of whole nodes; rail-
// optimized: one rail of radix/2 nodes, radix = the switch ports x planes), the pod (pod_gpus) and,
// on a dragonfly, the group (group_gpus). A group crossing the tapered level (above the pod when
// pod_gpus is set, else above the leaf) gets scale-out / oversubscription, one leaving a dragonfly
// group scale-out / global_taper, the narrowest of the levels it crosses. On a rail-only network
// traffic between different rails is forwarded over the scale-up domain first (PXN), so the same
// bytes cross both: 1/beta = 1/beta_out + 1/beta_up.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

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
// `domain` GPUs (at least 1): `scale_up` (the group's own scale-up bandwidth, scale_up_bytes_per_s)
// inside one domain, else the scale-out of the q members inside one domain driven together, never
// more than the scale-up. The recommendation model's all-reduce uses it too.
inline double collective_bytes_per_s(int stride, int n, int domain, double scale_up,
                                     double scale_out_bytes_per_s,
                                     double nic_aggregation) noexcept {
  if (static_cast<std::int64_t>(stride) * n <= domain) return scale_up;
  const double per_domain =
      std::clamp(static_cast<double>(domain / std::max(stride, 1)), 1.0, static_cast<double>(n));
  const double nics = 1.0 + nic_aggregation * (per_domain - 1.0);
  return std::min(scale_up, nics * scale_out_bytes_per_s);
}

// The members of a group of n ranks at stride `stride` that share one scale-up domain.
inline int members_in_domain(int stride, int n, int domain) noexcept {
  return std::clamp(domain / std::max(stride, 1), 1, std::max(n, 1));
}

// A group's extent along one torus dimension (docs/estimator.md, "Scale-up fabrics"). Ranks map
// onto the torus in mixed radix, the first dimension fastest, so a group of n ranks at stride r
// (indices 0, r, ..., (n-1) r) spans, along dimension d of length L whose first rank is at place
// value P: c = min(P L, r n) / max(P, r) coordinates (at least 1), `hop` = max(1, r / P) apart.
struct TorusSpan {
  double coords = 1;
  double hop = 1;
  bool ring = false;  // the group closes the dimension's ring (it spans all of it)
};
inline TorusSpan torus_span(int stride, int n, double place, int length) noexcept {
  const double r = std::max(stride, 1), extent = r * std::max(n, 1);
  TorusSpan span;
  span.coords = std::clamp(std::floor(std::min(place * length, extent) / std::max(place, r)), 1.0,
                           static_cast<double>(length));
  span.hop = std::max(1.0, std::floor(r / place));
  span.ring = span.coords * span.hop >= length && length > 2;
  return span;
}

// The per-rank bandwidth, one direction, of a collective over a torus group inside one domain, in
// units of one link: each dimension the group spans adds a bidirectional ring (2 links) when it
// closes the dimension's ring, else a line (1 link, a ring embedded on it uses each link both
// ways); members `hop` links apart share those links with the hop - 1 interleaved groups.
// Multi-dimensional collectives run on all spanned dimensions at once (as XLA's do).
inline double torus_collective_links(const std::array<int, kMaxTorusDims>& torus, int stride,
                                     int n) noexcept {
  double place = 1, links = 0;
  for (const int length : torus) {
    const TorusSpan span = torus_span(stride, n, place, length);
    if (span.coords > 1) links += (span.ring ? 2.0 : 1.0) / span.hop;
    place *= length;
  }
  return links;
}

// The same for an all-to-all: every byte travels the mean distance of the group's dimensions
// (a quarter of a ring, a third of a line, in hops) over the 2 or 1 links each offers; and a
// quarter of all the group's bytes, n/4 times one member's, crosses the cut through the middle of
// its longest dimension, whose 2 n/c (a ring) or n/c links, c its length, are all that carry it.
inline double torus_all_to_all_links(const std::array<int, kMaxTorusDims>& torus, int stride,
                                     int n) noexcept {
  double place = 1, links = 0, hops = 0, members = 1, cut = 0, longest = 0;
  for (const int length : torus) {
    const TorusSpan span = torus_span(stride, n, place, length);
    if (span.coords > 1) {
      const double per_dim = (span.ring ? 2.0 : 1.0) / span.hop;
      links += per_dim;
      hops += span.hop * (span.ring ? span.coords / 4.0
                                    : (span.coords * span.coords - 1.0) / (3.0 * span.coords));
      members *= span.coords;
      if (span.coords > longest) {
        longest = span.coords;
        cut = per_dim / span.coords;  // times members: the links across the cut
      }
    }
    place *= length;
  }
  if (hops <= 0) return 0;
  // Per member, one direction: (members - 1)/members of its bytes in the time the cut's links
  // take for members/4 of them.
  const double bisection = 4.0 * (members - 1.0) / members * cut;
  return std::min(links / std::max(hops, 1.0), bisection);
}

// The scale-up bandwidth per rank, one direction, of a group of n ranks at stride `stride` on
// `cluster`'s fabric, `achieved` the chip's achieved scale-up bandwidth over all its links: on a
// switch every member reaches the others at all of it; in a mesh the q members of one domain have
// the q - 1 direct links between them (a point-to-point send, one); on a torus the links of the
// dimensions the group spans (torus_collective_links, torus_all_to_all_links; a send to the
// neighbour, one link). A group with one member per domain uses no scale-up link.
inline double scale_up_bytes_per_s(const Cluster& cluster, double achieved, int stride, int n,
                                   Traffic traffic) noexcept {
  if (cluster.fabric == Fabric::switched) return achieved;
  const int q = members_in_domain(stride, n, std::max(cluster.nvlink_domain, 1));
  // One member per domain sends nothing over the scale-up links: only its NIC bounds it.
  if (q <= 1) return achieved;
  const double link = achieved / scale_up_links(cluster);
  if (traffic == Traffic::p2p) return link;
  if (cluster.fabric == Fabric::mesh) return link * (q - 1);
  const double links = traffic == Traffic::all_to_all
                           ? torus_all_to_all_links(cluster.torus, stride, q)
                           : torus_collective_links(cluster.torus, stride, q);
  return link * (links > 0 ? links : 1.0);  // a torus whose shape misses the group: one link
}

// The scale-out network's levels for `cluster` (ScaleOutLevels), its switches those of `catalog`
// at its NIC speed: a plane's switches run at 1/planes of it with planes x the ports. A folded
// Clos is tapered above the sub-tree the bill thins the links of (tapered_gpus); a dragonfly above
// its leaf or pod, and its global links by global_taper.
inline ScaleOutLevels scale_out_levels(const Cluster& cluster,
                                       const NetworkCatalog& catalog) noexcept {
  const ScaleOut& net = cluster.scale_out;
  ScaleOutLevels levels;
  levels.network = net.network;
  levels.node_gpus = std::max(cluster.gpus_per_node, 1);
  levels.oversubscription = std::max(net.oversubscription, 1.0);
  levels.global_taper = std::max(net.global_taper, 1.0);
  const auto leaf_ports = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(switch_ports(cluster, catalog) * std::max(net.planes, 1) / 2));
  // A fat-tree leaf holds whole nodes; a rail-optimized or rail-only leaf one GPU of each of its
  // nodes, the node's other GPUs on the other rails' leaves.
  const std::int64_t leaf_gpus =
      net.network == Network::rail_optimized || net.network == Network::rail_only
          ? leaf_ports * levels.node_gpus
          : std::max(levels.node_gpus, leaf_ports / levels.node_gpus * levels.node_gpus);
  levels.group_gpus = net.group_gpus > 0 ? net.group_gpus : leaf_gpus;
  if (net.network == Network::dragonfly) {
    levels.taper_gpus = net.pod_gpus > 0 ? net.pod_gpus : leaf_gpus;
  } else {
    // A fat tree's leaf as the placement sees it: whole nodes, however the bill fills its ports.
    const double tapered = tapered_gpus(cluster, catalog);
    levels.taper_gpus = tapered <= 0 ? std::numeric_limits<std::int64_t>::max()
                        : net.pod_gpus > 0 || net.network != Network::fat_tree
                            ? static_cast<std::int64_t>(tapered)
                            : leaf_gpus;
    if (tapered <= 0) levels.oversubscription = 1;
  }
  levels.non_blocking =
      (net.network == Network::fat_tree || net.network == Network::rail_optimized) &&
      levels.oversubscription <= 1.0;
  return levels;
}

// The scale-out bandwidth of a group of n ranks at stride `stride` that leaves its scale-up
// domain, `scale_out` the full scale-out and `scale_up` the group's scale-up bandwidth: the
// narrowest level it crosses, and on a rail-only network its cross-rail traffic forwarded over the
// scale-up domain. Members at a stride that is a multiple or a divisor of the node sit on the same
// rails in every node (NCCL's rings and trees then stay on their rails); any other stride, and
// every all-to-all except a dispatcher's that sends each token to its own rail (`rail_aligned`),
// crosses rails.
inline double placed_scale_out_bytes_per_s(const ScaleOutLevels& levels, int stride, int n,
                                           Traffic traffic, double scale_out, double scale_up,
                                           bool rail_aligned = false) noexcept {
  const std::int64_t extent = static_cast<std::int64_t>(std::max(stride, 1)) * std::max(n, 1);
  double taper = extent > levels.taper_gpus ? levels.oversubscription : 1.0;
  if (levels.network == Network::dragonfly && extent > levels.group_gpus)
    taper = std::max(taper, levels.global_taper);
  double bytes_per_s = scale_out / taper;
  if (levels.network == Network::rail_only) {
    const std::int64_t r = std::max(stride, 1), node = levels.node_gpus;
    const bool cross_rail =
        traffic == Traffic::all_to_all ? !rail_aligned : r % node != 0 && node % r != 0;
    if (cross_rail && node > 1) bytes_per_s = 1.0 / (1.0 / bytes_per_s + 1.0 / scale_up);
  }
  return bytes_per_s;
}

}  // namespace detail

// Inlined into every caller, as it was before the scale-out networks: the default network takes
// one test of a flag here, and the placement runs out of line (placed_scale_out_bytes_per_s).
[[gnu::always_inline]] inline void Estimator::link(int stride, int n, double& bytes_per_s,
                                                   double& alpha, Traffic traffic) const noexcept {
  const int domain = std::max(cluster_.nvlink_domain, 1);
  const double scale_up =
      detail::scale_up_bytes_per_s(cluster_, nvlink_bytes_per_s_, stride, n, traffic);
  bytes_per_s = detail::collective_bytes_per_s(
      stride, n, domain, scale_up,
      scale_out_.non_blocking ? inter_node_bytes_per_s_
                              : placed_scale_out_bytes_per_s(stride, n, traffic, scale_up),
      calibration_.nic_aggregation);
  alpha =
      static_cast<std::int64_t>(stride) * n <= domain ? nvlink_latency_s_ : inter_node_latency_s_;
}

}  // namespace clustersweep::estimator
