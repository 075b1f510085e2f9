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

// Switches and the links up into them, per tier, of one folded Clos.
struct Clos {
  int tiers = 0;
  std::array<double, kMaxNetworkTiers> switches{}, links{};
};

// `copies` folded Clos networks of `ports` endpoint ports each on radix-`k` switches. Below the
// top a switch has k/2 ports down and as many up; a leaf holds ports of one of `rails` rails
// (rail-optimized: GPU i of every node on the leaves of rail i), so more than one rail needs a
// spine. Tiers t reach k leaves for t = 2 and k/2 times more for each further tier. Copies share
// a switch's ports where one needs only part of it (rail-only's rails: ports partitioned by rail,
// no traffic between them). A taper of `taper`:1 keeps 1/taper of the links above the lowest
// tier whose sub-tree holds `pod_ports` ports (above the leaf when pod_ports is 0), and the tiers
// above shrink with them; the number of tiers stays.
Clos folded_clos(double ports, double rails, double copies, double k, double taper,
                 double pod_ports) noexcept {
  Clos c;
  const double down = std::floor(k / 2);
  if (ports <= 0 || down < 2) return c;
  if (rails <= 1 && ports <= k) {
    c.tiers = 1;
    c.switches[0] = std::ceil(copies / std::floor(k / ports));
    c.links[0] = copies * ports;
    return c;
  }
  const double leaves = rails * std::ceil(std::ceil(ports / rails) / down);
  c.tiers = 2;
  for (double reach = k; leaves > reach && c.tiers < kMaxNetworkTiers; reach *= down) ++c.tiers;
  // The tier whose links up are tapered: the lowest whose sub-tree, down^(tier+1) ports (a leaf
  // holds one rail, so a pod of several rails starts at the spine), holds the pod.
  int tapered = -1;
  if (taper > 1) {
    tapered = pod_ports > 0 && rails > 1 ? 1 : 0;
    for (double reach = std::pow(down, tapered + 1); pod_ports > reach; reach *= down) ++tapered;
  }
  c.switches[0] = copies * leaves;
  c.links[0] = copies * ports;
  // Non-blocking: each leaf as many links up as the fullest leaf has ports down.
  const double per_leaf = std::min(down, std::ceil(std::ceil(ports / rails) / (leaves / rails)));
  double up = leaves * per_leaf;  // of one copy
  for (int t = 1; t < c.tiers; ++t) {
    const auto at = static_cast<std::size_t>(t);
    if (t - 1 == tapered) up = std::ceil(up / taper);
    const bool top = t == c.tiers - 1;
    c.links[at] = copies * up;
    c.switches[at] = std::ceil(copies * up / (top ? k : down));
    up = std::ceil(up / (top ? k : down)) * down;
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
  bill.nics_per_gpu = std::ceil(gbps / parts->gbps);
  bill.link_gbps = parts->gbps / planes;
  bill.nics = gpus * bill.nics_per_gpu;
  const double k = parts->switch_ports * planes;
  const double scale = 1 / planes;
  // Each plane is a network of its own over every NIC port: one link per NIC per plane.
  const double ports = gpus * bill.nics_per_gpu;
  const double ports_per_gpu = bill.nics_per_gpu;
  // Copper reaches within a rack; the only unit the model knows to share a rack is the scale-up
  // domain (an NVL72 rack; an HGX node is a chassis whose leaf sits in another rack).
  const double rack_gpus = std::max<double>(cluster.nvlink_domain, per_node);
  const double taper = std::max(shape.oversubscription, 1.0);
  const double pod_ports = shape.pod_gpus > 0 ? shape.pod_gpus * ports_per_gpu : 0;

  if (shape.network == Network::dragonfly) {
    const double down = std::floor(k / 2);
    const double group = shape.group_gpus > 0 ? shape.group_gpus * ports_per_gpu : down;
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
    endpoint.copper = std::ceil(group / routers) / ports_per_gpu <= rack_gpus;
    NetworkRow& local = add_row(bill, "local");
    local.links = planes * groups * routers * (routers - 1) / 2;
    local.copper = group / ports_per_gpu <= rack_gpus;
    NetworkRow& global_row = add_row(bill, "global");
    global_row.links = planes * std::ceil(groups * global / 2);
  } else {
    double rails = 1, copies = 1, rail_ports = ports;
    if (shape.network == Network::rail_optimized) rails = per_node * ports_per_gpu;
    if (shape.network == Network::rail_only) {
      // One network per rail: GPU i of every scale-up domain (Wang et al.'s HB domain), with no
      // spine between rails; cross-rail traffic goes through the domain first.
      copies = std::max<double>(cluster.nvlink_domain, per_node);
      rail_ports = std::ceil(gpus / copies) * ports_per_gpu;
    }
    const Clos clos = folded_clos(rail_ports, rails, copies, k, taper, pod_ports);
    const double leaf_gpus = (clos.tiers == 1 ? rail_ports : std::floor(k / 2)) / ports_per_gpu;
    const bool leaf_in_rack =
        shape.network != Network::rail_only && rails <= 1 && leaf_gpus <= rack_gpus;
    bill.tiers = clos.tiers;
    for (int t = 0; t < clos.tiers; ++t) {
      NetworkRow& row = add_row(bill, kTierNames[t]);
      row.switches = planes * clos.switches[static_cast<std::size_t>(t)];
      row.radix = k;
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
