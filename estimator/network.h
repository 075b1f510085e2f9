#pragma once
// The scale-out network's bill of materials (docs/estimator.md, "The network's bill of
// materials"): its switches per tier and their radix, the links between tiers and what each link
// is made of (copper within a rack, two transceivers and a fiber beyond), the NICs, and what they
// cost and draw. A folded Clos (fat_tree, rail_optimized) of t tiers of radix-k switches reaches
// k (k/2)^(t-1) ports and takes (2t - 1) ports / k switches when non-blocking (the DGX SuperPOD
// reference architectures' compute fabric); rail_only is one Clos per rail and no spine between
// rails (Wang et al. 2023); a dragonfly is groups of routers joined all-to-all inside and by
// global links between groups (Kim et al., ISCA 2008). Pure and allocation-free: a sweep prices
// every design point.
#include <array>

namespace clustersweep::estimator {

struct Cluster;

inline constexpr int kMaxNetworkSpeeds = 8;
inline constexpr int kMaxNetworkTiers = 8;
inline constexpr int kMaxNetworkRows = kMaxNetworkTiers + 2;

// The switch assumed where no parts are known: 64 ports (a Quantum-2 QM9700 at 400 Gbit/s).
inline constexpr double kDefaultSwitchPorts = 64;

// The parts of one port speed (spaces/data/network.toml, where every price and power has its
// source): a switch, an optical transceiver port, a copper cable and a NIC.
struct NetworkParts {
  double gbps = 0;          // one port, one direction
  double switch_ports = 0;  // at gbps
  double switch_usd = 0;
  double switch_w = 0;
  double transceiver_usd = 0;  // per port: one end of an optical link, its fiber included
  double transceiver_w = 0;
  double copper_usd = 0;  // per copper link (a direct-attach cable)
  double copper_w = 0;
  double nic_usd = 0;  // one NIC of one port at gbps
  double nic_w = 0;
};

// The parts of every speed, slowest first.
struct NetworkCatalog {
  std::array<NetworkParts, kMaxNetworkSpeeds> speeds{};
  int count = 0;
  // The parts that serve a GPU's scale-out of `gbps`: the slowest at least as fast, else the
  // fastest (several NICs per GPU). nullptr when the catalog is empty.
  const NetworkParts* parts_for(double gbps) const noexcept;
  // The most ports any of its switches has (kDefaultSwitchPorts without parts).
  double largest_switch_ports() const noexcept;
};

// One row of the bill: a tier of switches with the links that come up into it from below, or
// (a dragonfly's local and global links) links between switches of one tier.
struct NetworkRow {
  const char* name = "";  // "leaf", "spine", "core", "tier 4"..., "router", "local", "global"
  double switches = 0;
  double radix = 0;  // ports per switch at the link speed
  double links = 0;
  bool copper = false;      // the links are direct-attach copper, else optical
  double transceivers = 0;  // two per optical link
  double cables = 0;        // one per link: a copper cable or a fiber
  double nics = 0;          // on the row whose links start at the GPUs
  double usd = 0;           // its switches, transceivers, cables and NICs
  double w = 0;
};

struct NetworkBill {
  int tiers = 0;  // of switches
  int rows = 0;
  std::array<NetworkRow, kMaxNetworkRows> row{};
  double link_gbps = 0;  // one link: a NIC port over the planes
  double nics_per_gpu = 0;
  double switches = 0, transceivers = 0, cables = 0, nics = 0;
  double capex_usd = 0;  // switches, transceivers, cables and NICs
  double power_w = 0;    // switches, transceivers, cables and NICs
  double nic_usd = 0;    // of capex_usd, the NICs
  double nic_w = 0;      // of power_w, the NICs (they draw within their servers)
  // A folded Clos's taper: the ratio asked for, and the GPUs of the sub-tree whose links up it
  // thins (tapered_gpus; 0: none, when no tier below the top holds the pod).
  double taper = 1;
  double tapered_gpus = 0;
};

// The ports of the switch that serves `cluster`'s scale-out (at its NIC speed, before planes):
// what the bill builds the network of, and what the step time's placement reads a leaf's reach
// from (docs/estimator.md, "Scale-out networks"). kDefaultSwitchPorts without parts.
double switch_ports(const Cluster& cluster, const NetworkCatalog& catalog) noexcept;

// The GPUs below the level a taper sits above, the same for the bill and the step time
// (docs/estimator.md, "Scale-out networks"): in a folded Clos the sub-tree of the lowest tier of
// switches that holds the pod (`pod_gpus`; the leaf without one), whose links up the bill thins. 0
// when no link is tapered: no taper, a pod only the top tier holds, a single switch, a dragonfly.
double tapered_gpus(const Cluster& cluster, const NetworkCatalog& catalog) noexcept;

// The bill of the scale-out network of `cluster` (its num_gpus, gpus_per_node, nvlink_domain,
// inter_node_bytes_per_s per GPU and scale_out shape) built from the parts of `catalog` that serve
// its speed. Empty on one node, without a scale-out bandwidth or without parts.
NetworkBill network_bill(const Cluster& cluster, const NetworkCatalog& catalog) noexcept;

}  // namespace clustersweep::estimator
