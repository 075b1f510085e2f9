#include "estimator/network.h"

#include <algorithm>
#include <cmath>

#include "estimator/estimator.h"

namespace clustersweep::estimator {

const NetworkParts* NetworkCatalog::parts_for(double gbps) const noexcept {
  if (count <= 0) return nullptr;
  for (int i = 0; i < count; ++i)
    if (speeds[static_cast<std::size_t>(i)].gbps >= gbps)
      return &speeds[static_cast<std::size_t>(i)];
  return &speeds[static_cast<std::size_t>(count - 1)];
}

namespace {

constexpr const char* kTierNames[kMaxNetworkTiers] = {"leaf",   "spine",  "core",   "tier 4",
                                                      "tier 5", "tier 6", "tier 7", "tier 8"};

// The shape of a folded Clos (fat_tree, rail_optimized, rail_only) over a cluster: `copies`
// networks of `ports` endpoint ports each on radix-`k` switches. Below the top a switch has k/2
// ports down and as many up; a leaf holds ports of one of `rails` rails (rail-optimized: GPU i of
// every node on the leaves of rail i), so more than one rail needs a spine. Tiers t reach k leaves
// for t = 2 and k/2 times more for each further tier. Copies share a switch's ports where one needs
// only part of it (rail-only's rails: ports partitioned by rail, no traffic between them).
struct ClosGeometry {
  double ports = 0, rails = 1, copies = 1, k = 0, down = 0;
  double taper = 1;          // the ratio asked for, at least 1
  double gpus_per_port = 1;  // GPUs behind one endpoint port (rail-only: a port per domain)
  double leaves = 0;         // of one copy
  int tiers = 0;
  int tapered = -1;  // the tier whose links up the taper thins; -1: none
};

// The GPUs in the sub-tree under one switch of tier t: a leaf's ports (one rail's leaf spans as
// many nodes), a tier's down^(t+1).
double subtree_gpus(const ClosGeometry& g, int t) noexcept {
  return (t == 0 ? g.down * g.rails : std::pow(g.down, t + 1)) * g.gpus_per_port;
}

// NIC ports a GPU needs at the parts' speed (one without parts).
double ports_per_gpu(const Cluster& cluster, const NetworkParts* parts) noexcept {
  const double gbps = cluster.inter_node_bytes_per_s * 8 / 1e9;
  return parts && parts->gbps > 0 ? std::max(1.0, std::ceil(gbps / parts->gbps)) : 1.0;
}

ClosGeometry clos_geometry(const Cluster& cluster, const NetworkCatalog& catalog) noexcept {
  ClosGeometry g;
  const ScaleOut& shape = cluster.scale_out;
  const double nic_ports =
      ports_per_gpu(cluster, catalog.parts_for(cluster.inter_node_bytes_per_s * 8 / 1e9));
  const double gpus = cluster.num_gpus;
  const double per_node = std::max(cluster.gpus_per_node, 1);
  g.taper = std::max(shape.oversubscription, 1.0);
  g.k = switch_ports(cluster, catalog) * std::max(shape.planes, 1);
  g.down = std::floor(g.k / 2);
  g.ports = gpus * nic_ports;
  g.gpus_per_port = 1 / nic_ports;
  if (shape.network == Network::rail_optimized) g.rails = per_node * nic_ports;
  if (shape.network == Network::rail_only) {
    // One network per rail: GPU i of every scale-up domain (Wang et al.'s HB domain), with no
    // spine between rails; cross-rail traffic goes through the domain first.
    g.copies = std::max<double>(cluster.nvlink_domain, per_node);
    g.ports = std::ceil(gpus / g.copies) * nic_ports;
    g.gpus_per_port = g.copies / nic_ports;
  }
  if (g.ports <= 0 || g.down < 2) return g;
  if (g.rails <= 1 && g.ports <= g.k) {
    g.tiers = 1;
    return g;
  }
  g.leaves = g.rails * std::ceil(std::ceil(g.ports / g.rails) / g.down);
  g.tiers = 2;
  for (double reach = g.k; g.leaves > reach && g.tiers < kMaxNetworkTiers; reach *= g.down)
    ++g.tiers;
  // A taper of t:1 thins the links up from the lowest tier whose sub-tree holds the pod (the leaf
  // without one; a pod of several rails starts at the spine). A pod that only the top tier holds
  // is the whole network: nothing is tapered.
  if (g.taper > 1) {
    int t = shape.pod_gpus > 0 && g.rails > 1 ? 1 : 0;
    while (shape.pod_gpus > 0 && t < g.tiers - 1 && subtree_gpus(g, t) < shape.pod_gpus) ++t;
    if (t < g.tiers - 1) g.tapered = t;
  }
  return g;
}

// Switches and the links up into them, per tier, of the Clos `g`. Its taper t:1 keeps 1/t of the
// links above the tapered tier, and the tiers above shrink with them; the number of tiers stays.
struct Clos {
  std::array<double, kMaxNetworkTiers> switches{}, links{};
};
Clos folded_clos(const ClosGeometry& g) noexcept {
  Clos c;
  if (g.tiers == 1) {
    c.switches[0] = std::ceil(g.copies / std::floor(g.k / g.ports));
    c.links[0] = g.copies * g.ports;
    return c;
  }
  if (g.tiers == 0) return c;
  c.switches[0] = g.copies * g.leaves;
  c.links[0] = g.copies * g.ports;
  // Non-blocking: each leaf as many links up as the fullest leaf has ports down.
  const double per_leaf =
      std::min(g.down, std::ceil(std::ceil(g.ports / g.rails) / (g.leaves / g.rails)));
  double up = g.leaves * per_leaf;  // of one copy
  for (int t = 1; t < g.tiers; ++t) {
    const auto at = static_cast<std::size_t>(t);
    if (t - 1 == g.tapered) up = std::ceil(up / g.taper);
    const bool top = t == g.tiers - 1;
    c.links[at] = g.copies * up;
    c.switches[at] = std::ceil(g.copies * up / (top ? g.k : g.down));
    up = std::ceil(up / (top ? g.k : g.down)) * g.down;
  }
  return c;
}

// Prices the links of a row: copper cables, or two transceivers and a fiber, at `scale` of the
// parts' port speed (a plane's link is a fraction of a port).
void price_links(NetworkRow& row, const NetworkParts& parts, double scale) noexcept {
  row.cables = row.links;
  if (row.copper) {
    row.usd += row.links * parts.copper_usd * scale;
    row.w += row.links * parts.copper_w * scale;
  } else {
    row.transceivers = 2 * row.links;
    row.usd += row.transceivers * parts.transceiver_usd * scale;
    row.w += row.transceivers * parts.transceiver_w * scale;
  }
}

NetworkRow& add_row(NetworkBill& bill, const char* name) noexcept {
  NetworkRow& row = bill.row[static_cast<std::size_t>(bill.rows)];
  row = NetworkRow{};
  row.name = name;
  ++bill.rows;
  return row;
}

}  // namespace

double switch_ports(const Cluster& cluster, const NetworkCatalog& catalog) noexcept {
  const NetworkParts* parts = catalog.parts_for(cluster.inter_node_bytes_per_s * 8 / 1e9);
  return parts && parts->switch_ports > 0 ? parts->switch_ports : kDefaultSwitchPorts;
}

double tapered_gpus(const Cluster& cluster, const NetworkCatalog& catalog) noexcept {
  if (cluster.scale_out.network == Network::dragonfly) return 0;
  const ClosGeometry g = clos_geometry(cluster, catalog);
  return g.tapered < 0 ? 0 : subtree_gpus(g, g.tapered);
}

double NetworkCatalog::largest_switch_ports() const noexcept {
  double ports = 0;
  for (int i = 0; i < count; ++i)
    ports = std::max(ports, speeds[static_cast<std::size_t>(i)].switch_ports);
  return ports > 0 ? ports : kDefaultSwitchPorts;
}

NetworkBill network_bill(const Cluster& cluster, const NetworkCatalog& catalog) noexcept {
  NetworkBill bill;
  const double gpus = cluster.num_gpus;
  const double per_node = std::max(cluster.gpus_per_node, 1);
  const double gbps = cluster.inter_node_bytes_per_s * 8 / 1e9;
  const NetworkParts* parts = catalog.parts_for(gbps);
  if (gpus <= per_node || gbps <= 0 || !parts || parts->gbps <= 0) return bill;
  const ScaleOut& shape = cluster.scale_out;
  const double planes = std::max(shape.planes, 1);
  bill.nics_per_gpu = ports_per_gpu(cluster, parts);
  bill.link_gbps = parts->gbps / planes;
  bill.nics = gpus * bill.nics_per_gpu;
  const double k = switch_ports(cluster, catalog) * planes;
  const double scale = 1 / planes;
  // Each plane is a network of its own over every NIC port: one link per NIC per plane.
  const double ports = gpus * bill.nics_per_gpu;
  const double nic_ports = bill.nics_per_gpu;
  // Copper reaches within a rack; the only unit the model knows to share a rack is the scale-up
  // domain (an NVL72 rack; an HGX node is a chassis whose leaf sits in another rack).
  const double rack_gpus = std::max<double>(cluster.nvlink_domain, per_node);

  if (shape.network == Network::dragonfly) {
    const double down = std::floor(k / 2);
    const double group = shape.group_gpus > 0 ? shape.group_gpus * nic_ports : down;
    const double groups = std::ceil(ports / group);
    const double global_taper = std::max(shape.global_taper, 1.0);
    // A group's links to other groups carry its injection over the global taper, at least one
    // to each other group.
    const double global = groups > 1 ? std::max(std::ceil(group / global_taper), groups - 1) : 0;
    // The fewest routers per group whose ports hold their endpoints, one link to each other
    // router of the group and their share of the global links. A group too small for the
    // cluster (no count of routers holds a link to every other group) gets routers enough for
    // the ports of its endpoints and global links on half of each router's ports.
    double routers = std::ceil((group + global) / std::floor(k / 2));
    for (double a = 1; a <= k; ++a) {
      if (std::ceil(group / a) + (a - 1) + std::ceil(global / a) <= k) {
        routers = a;
        break;
      }
    }
    bill.tiers = 1;
    NetworkRow& endpoint = add_row(bill, "router");
    endpoint.switches = planes * groups * routers;
    endpoint.radix = k;
    endpoint.links = planes * ports;
    endpoint.copper = std::ceil(group / routers) / nic_ports <= rack_gpus;
    NetworkRow& local = add_row(bill, "local");
    local.links = planes * groups * routers * (routers - 1) / 2;
    local.copper = group / nic_ports <= rack_gpus;
    NetworkRow& global_row = add_row(bill, "global");
    global_row.links = planes * std::ceil(groups * global / 2);
  } else {
    const ClosGeometry g = clos_geometry(cluster, catalog);
    const Clos clos = folded_clos(g);
    bill.taper = g.taper;
    bill.tapered_gpus = g.tapered < 0 ? 0 : subtree_gpus(g, g.tapered);
    const double leaf_gpus = (g.tiers == 1 ? g.ports : g.down) * g.gpus_per_port;
    const bool leaf_in_rack =
        shape.network != Network::rail_only && g.rails <= 1 && leaf_gpus <= rack_gpus;
    bill.tiers = g.tiers;
    for (int t = 0; t < g.tiers; ++t) {
      NetworkRow& row = add_row(bill, kTierNames[t]);
      row.switches = planes * clos.switches[static_cast<std::size_t>(t)];
      row.radix = g.k;
      row.links = planes * clos.links[static_cast<std::size_t>(t)];
      row.copper = t == 0 && leaf_in_rack;
    }
  }

  for (int r = 0; r < bill.rows; ++r) {
    NetworkRow& row = bill.row[static_cast<std::size_t>(r)];
    row.usd = row.switches * parts->switch_usd;
    row.w = row.switches * parts->switch_w;
    price_links(row, *parts, scale);
    if (r == 0) {
      row.nics = bill.nics;
      row.usd += bill.nics * parts->nic_usd;
      row.w += bill.nics * parts->nic_w;
    }
    bill.switches += row.switches;
    bill.transceivers += row.transceivers;
    bill.cables += row.cables;
    bill.capex_usd += row.usd;
    bill.power_w += row.w;
  }
  bill.nic_usd = bill.nics * parts->nic_usd;
  bill.nic_w = bill.nics * parts->nic_w;
  return bill;
}

}  // namespace clustersweep::estimator
