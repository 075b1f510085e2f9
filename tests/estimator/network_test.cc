// The scale-out network's bill of materials (estimator/network.h): NVIDIA's DGX SuperPOD compute
// fabrics reproduced exactly, Wang et al.'s rail-only saving, the laws a bill obeys, and the
// parts file's errors.
#include "estimator/network.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "estimator/estimator.h"
#include "h100_like_cluster.h"
#include "spaces/catalog.h"

namespace clustersweep::estimator {
namespace {

const NetworkCatalog& parts() { return spaces::builtin_calibration().network; }

Cluster shaped(int gpus, Network network, double taper = 1, int planes = 1, double gbps = 400) {
  Cluster c = test::cluster(gpus, gbps);
  c.scale_out.network = network;
  c.scale_out.oversubscription = taper;
  c.scale_out.planes = planes;
  return c;
}

struct SuperPod {
  int gpus;
  double leaf, spine, core;                  // QM9700 switches
  double node_leaf, leaf_spine, spine_core;  // cables
};

// NVIDIA DGX SuperPOD reference architecture with DGX B200 (docs.nvidia.com/dgx-superpod/
// reference-architecture-scalable-infrastructure-b200, "DGX SuperPOD Architecture", the table of
// larger DGX SuperPOD component counts): SU count 2 to 64 of 32 nodes of 8 GPUs, each GPU on a
// 400G NDR port of a rail-optimized QM9700 fabric, with its InfiniBand switch and cable counts.
// The DGX H100 architecture (RA-11333-001) builds the same fabric from the same switches.
constexpr SuperPod kSuperPods[] = {
    {512, 16, 8, 0, 512, 512, 0},                 // 2 SU, 64 nodes
    {1024, 32, 16, 0, 1024, 1024, 0},             // 4 SU, 128 nodes
    {2048, 64, 32, 0, 2048, 2048, 0},             // 8 SU, 256 nodes
    {4096, 128, 128, 64, 4096, 4096, 4096},       // 16 SU, 512 nodes
    {8192, 256, 256, 128, 8192, 8192, 8192},      // 32 SU, 1,024 nodes
    {16384, 512, 512, 256, 16384, 16384, 16384},  // 64 SU, 2,048 nodes
};

TEST(Network, ReproducesTheDgxSuperPodComputeFabric) {
  for (const SuperPod& pod : kSuperPods) {
    SCOPED_TRACE(pod.gpus);
    const NetworkBill bill = network_bill(shaped(pod.gpus, Network::rail_optimized), parts());
    ASSERT_EQ(bill.tiers, pod.core > 0 ? 3 : 2);
    EXPECT_EQ(bill.row[0].switches, pod.leaf);
    EXPECT_EQ(bill.row[1].switches, pod.spine);
    EXPECT_EQ(bill.row[0].links, pod.node_leaf);
    EXPECT_EQ(bill.row[1].links, pod.leaf_spine);
    EXPECT_EQ(bill.row[0].radix, 64);
    if (pod.core > 0) {
      EXPECT_EQ(bill.row[2].switches, pod.core);
      EXPECT_EQ(bill.row[2].links, pod.spine_core);
    }
    // Every link leaves the rack: a transceiver port at each end, one fiber.
    EXPECT_EQ(bill.transceivers, 2 * bill.cables);
    EXPECT_EQ(bill.nics, pod.gpus);
  }
}

TEST(Network, ReproducesTheDgxH100SuperPodOf127Nodes) {
  // RA-11333-001 (DGX SuperPOD with DGX H100), 4 SU: 127 DGX H100 (one node's slot holds the UFM
  // appliance), 1,016 GPUs on 32 leaf and 16 spine QM9700.
  const NetworkBill bill = network_bill(shaped(1016, Network::rail_optimized), parts());
  ASSERT_EQ(bill.tiers, 2);
  EXPECT_EQ(bill.row[0].switches, 32);
  EXPECT_EQ(bill.row[1].switches, 16);
  EXPECT_EQ(bill.row[0].links, 1016);
  EXPECT_EQ(bill.row[1].links, 1024);  // every leaf's 32 uplinks, full or not
}

TEST(Network, PricesEachPartOnceAtItsSpeed) {
  const NetworkParts& p = *parts().parts_for(400);
  const NetworkBill bill = network_bill(shaped(1024, Network::rail_optimized), parts());
  const double links = 2048, switches = 48;
  EXPECT_DOUBLE_EQ(bill.capex_usd,
                   switches * p.switch_usd + 2 * links * p.transceiver_usd + 1024 * p.nic_usd);
  EXPECT_DOUBLE_EQ(bill.power_w,
                   switches * p.switch_w + 2 * links * p.transceiver_w + 1024 * p.nic_w);
  EXPECT_DOUBLE_EQ(bill.nic_w, 1024 * p.nic_w);
  double usd = 0;
  for (int r = 0; r < bill.rows; ++r) usd += bill.row[r].usd;
  EXPECT_DOUBLE_EQ(usd, bill.capex_usd);
}

TEST(Network, NoNetworkOnOneNodeOrWithoutScaleOut) {
  EXPECT_EQ(network_bill(shaped(8, Network::fat_tree), parts()).rows, 0);
  EXPECT_EQ(network_bill(shaped(1024, Network::fat_tree, 1, 1, 0), parts()).rows, 0);
  EXPECT_EQ(network_bill(shaped(1024, Network::fat_tree), NetworkCatalog{}).capex_usd, 0);
}

TEST(Network, CopperWithinTheRackOpticsBeyond) {
  // A leaf of 32 GPUs serves 32 GPUs of one NVL72 rack: copper up to it; not so for 8-GPU nodes.
  Cluster nvl72 = shaped(576, Network::fat_tree);
  nvl72.gpus_per_node = 4;
  nvl72.nvlink_domain = 72;
  const NetworkBill rack = network_bill(nvl72, parts());
  EXPECT_TRUE(rack.row[0].copper);
  EXPECT_EQ(rack.row[0].transceivers, 0);
  EXPECT_FALSE(rack.row[1].copper);
  EXPECT_FALSE(network_bill(shaped(576, Network::fat_tree), parts()).row[0].copper);
}

TEST(Network, FasterGpusTakeFasterPartsOrMoreNics) {
  EXPECT_EQ(network_bill(shaped(1024, Network::fat_tree, 1, 1, 800), parts()).row[0].radix, 144);
  const NetworkBill twice = network_bill(shaped(1024, Network::fat_tree, 1, 1, 1600), parts());
  EXPECT_EQ(twice.nics_per_gpu, 2);
  EXPECT_EQ(twice.row[0].links, 2048);
  // Slower than the slowest parts: one NIC of the slowest.
  EXPECT_EQ(network_bill(shaped(1024, Network::fat_tree, 1, 1, 200), parts()).nics_per_gpu, 1);
}

TEST(Network, TaperAboveThePodSparesTheLinksBelowIt) {
  // 16,384 GPUs: pods of 1,024 GPUs (a leaf and spine tier) under a 7:1 tapered core.
  Cluster c = shaped(16384, Network::fat_tree, 7);
  c.scale_out.pod_gpus = 1024;
  const NetworkBill bill = network_bill(c, parts());
  ASSERT_EQ(bill.tiers, 3);
  EXPECT_EQ(bill.row[0].switches, 512);
  EXPECT_EQ(bill.row[1].switches, 512);
  EXPECT_EQ(bill.row[2].links, 16384 / 7 + 1);
  EXPECT_EQ(bill.row[2].switches, 37);  // ceil(2,341 / 64)
  // Above the leaf instead: the spines shrink too.
  const NetworkBill leaf = network_bill(shaped(16384, Network::fat_tree, 7), parts());
  EXPECT_EQ(leaf.row[1].links, 16384 / 7 + 1);
  EXPECT_LT(leaf.capex_usd, bill.capex_usd);
}

// The taper sits above the lowest tier whose sub-tree holds the pod, for the bill and the step
// alike (tapered_gpus): a pod of 600 GPUs is tapered above the spines' 1,024; a pod that only the
// top tier holds (a rail of 2,048 nodes is a two-tier tree, its leaf 32 nodes) tapers nothing.
TEST(Network, TheTaperSitsWhereATierHoldsThePod) {
  Cluster c = shaped(16384, Network::rail_optimized, 7);
  EXPECT_EQ(tapered_gpus(c, parts()), 256);  // above the leaf: one rail of 32 nodes
  c.scale_out.pod_gpus = 600;
  EXPECT_EQ(tapered_gpus(c, parts()), 1024);
  c.scale_out.network = Network::rail_only;
  c.scale_out.pod_gpus = 256;
  EXPECT_EQ(tapered_gpus(c, parts()), 256);
  c.scale_out.pod_gpus = 1024;
  EXPECT_EQ(tapered_gpus(c, parts()), 0);
  Cluster open = c;
  open.scale_out.oversubscription = 1;
  EXPECT_EQ(network_bill(c, parts()).capex_usd, network_bill(open, parts()).capex_usd);
  // One switch holds 64 GPUs: nothing to taper.
  EXPECT_EQ(tapered_gpus(shaped(64, Network::fat_tree, 7), parts()), 0);
  EXPECT_EQ(tapered_gpus(shaped(16384, Network::fat_tree), parts()), 0);  // no taper
}

// Where the bill thins no link the step pays no taper, and where it does some plan pays it.
TEST(Network, TheStepPaysATaperExactlyWhereTheBillThinsTheLinks) {
  const Calibration cal = spaces::builtin_calibration();
  Workload w = test::gpt3_175b();
  w.global_batch = 2048;
  Plan p;
  p.tp = 8;
  p.pp = 16;
  p.dp = 128;  // Megatron's order: the pipeline spans the cluster
  p.sequence_parallel = true;
  int tapered = 0, untapered = 0;
  for (const Network network : {Network::fat_tree, Network::rail_optimized, Network::rail_only})
    for (const int pod : {0, 256, 1024, 4096}) {
      Cluster c = shaped(16384, network, 4);
      c.scale_out.pod_gpus = pod;
      Cluster open = c;
      open.scale_out.oversubscription = 1;
      const double step = estimate(w, c, p, cal).time.total_s;
      const double open_step = estimate(w, open, p, cal).time.total_s;
      const bool thinned =
          network_bill(c, cal.network).capex_usd < network_bill(open, cal.network).capex_usd;
      EXPECT_EQ(thinned, tapered_gpus(c, cal.network) > 0) << to_string(network) << " " << pod;
      EXPECT_EQ(step > open_step, thinned) << to_string(network) << " pod " << pod;
      (thinned ? tapered : untapered)++;
    }
  EXPECT_GT(tapered, 3);
  EXPECT_GT(untapered, 0);
}

TEST(Network, DragonflyGroupsJoinedAllToAll) {
  Cluster c = shaped(4096, Network::dragonfly);
  c.scale_out.group_gpus = 512;
  const NetworkBill bill = network_bill(c, parts());
  ASSERT_EQ(bill.rows, 3);
  const double groups = 8, routers = bill.row[0].switches / groups;
  // Every router reaches its endpoints, the other routers of its group and its global links.
  EXPECT_LE(std::ceil(512 / routers) + routers - 1 + std::ceil(512 / routers), 64);
  EXPECT_EQ(bill.row[1].links, groups * routers * (routers - 1) / 2);
  EXPECT_EQ(bill.row[2].links, groups * 512 / 2);
  c.scale_out.global_taper = 4;
  const NetworkBill tapered = network_bill(c, parts());
  EXPECT_EQ(tapered.row[2].links, groups * 128 / 2);
  EXPECT_LT(tapered.capex_usd, bill.capex_usd);
}

// Wang et al., "How to Build Low-cost Networks for Large Language Models (without Sacrificing
// Performance)" (arXiv 2307.12169; "Rail-only: A Low-Cost High-Performance Network for Training
// LLMs with Trillion Parameters" in v5): a rail-only network against the rail-optimized Clos of
// the same GPUs "reduc[es] the network cost by 38% to 77% and network power consumption by 37% to
// 75%". Rail-only drops the tiers above a rail: 38% where a rail of the paper's HB domain of 256
// GPUs keeps two of the Clos's three tiers (32,768 GPUs, rails of 128) and 77% where it keeps one
// (16,384 GPUs, rails of 64). Network cost: switches, transceivers and cables; the NICs are the
// servers' and the same in both.
double saving(const NetworkBill& only, const NetworkBill& clos, bool power) {
  const double a = power ? only.power_w - only.nic_w : only.capex_usd - only.nic_usd;
  const double b = power ? clos.power_w - clos.nic_w : clos.capex_usd - clos.nic_usd;
  return 1 - a / b;
}

TEST(Network, ReproducesWangEtAlsRailOnlySavingWithinTenPercent) {
  struct Case {
    int gpus, tiers;
    double cost_saving, power_saving;  // the paper's
  };
  for (const Case& c : {Case{32768, 2, 0.38, 0.37}, Case{16384, 1, 0.77, 0.75}}) {
    Cluster cluster = shaped(c.gpus, Network::rail_optimized);
    cluster.nvlink_domain = 256;
    const NetworkBill clos = network_bill(cluster, parts());
    cluster.scale_out.network = Network::rail_only;
    const NetworkBill only = network_bill(cluster, parts());
    ASSERT_EQ(clos.tiers, 3);
    ASSERT_EQ(only.tiers, c.tiers);
    EXPECT_NEAR(saving(only, clos, false) / c.cost_saving, 1, 0.10) << c.gpus;
    EXPECT_NEAR(saving(only, clos, true) / c.power_saving, 1, 0.10) << c.gpus;
  }
}

constexpr Network kNetworks[] = {Network::fat_tree, Network::rail_optimized, Network::rail_only,
                                 Network::dragonfly};

TEST(Network, MoreOversubscriptionNeverRaisesTheCost) {
  for (const Network network : kNetworks) {
    for (const int gpus : {64, 256, 1016, 2048, 2056, 8192, 16384, 65536}) {
      for (const int pod : {0, 256, 2048}) {
        double previous = std::numeric_limits<double>::infinity();
        for (const double taper : {1.0, 1.5, 2.0, 3.0, 4.0, 7.0, 16.0}) {
          Cluster c = shaped(gpus, network, taper);
          c.scale_out.pod_gpus = pod;
          c.scale_out.global_taper = taper;
          const double usd = network_bill(c, parts()).capex_usd;
          EXPECT_LE(usd, previous)
              << to_string(network) << " " << gpus << " pod " << pod << " taper " << taper;
          previous = usd;
        }
      }
    }
  }
}

TEST(Network, ALargerClusterNeverHasFewerSwitches) {
  for (const Network network : kNetworks) {
    for (const int planes : {1, 2}) {
      double previous = 0;
      for (int gpus = 8; gpus <= 40000; gpus += gpus < 4096 ? 8 : 520) {
        const double switches = network_bill(shaped(gpus, network, 1, planes), parts()).switches;
        EXPECT_GE(switches, previous) << to_string(network) << " " << gpus;
        previous = switches;
      }
    }
  }
}

TEST(Network, RailOnlyNeverCostsMoreThanRailOptimizedWithTheSameLinks) {
  for (int gpus = 16; gpus <= 70000; gpus += gpus < 4096 ? 8 : 1032) {
    for (const double gbps : {400.0, 800.0}) {
      const NetworkBill only = network_bill(shaped(gpus, Network::rail_only, 1, 1, gbps), parts());
      const NetworkBill optimized =
          network_bill(shaped(gpus, Network::rail_optimized, 1, 1, gbps), parts());
      EXPECT_EQ(only.row[0].links, optimized.row[0].links);
      EXPECT_LE(only.capex_usd, optimized.capex_usd) << gpus << " " << gbps;
      EXPECT_LE(only.power_w, optimized.power_w) << gpus << " " << gbps;
    }
  }
}

TEST(Network, PlanesNeverNeedMoreTiers) {
  for (const Network network : kNetworks) {
    for (int gpus = 16; gpus <= 300000; gpus *= 2) {
      const int one = network_bill(shaped(gpus, network), parts()).tiers;
      for (const int planes : {2, 4, 8})
        EXPECT_LE(network_bill(shaped(gpus, network, 1, planes), parts()).tiers, one)
            << to_string(network) << " " << gpus << " planes " << planes;
    }
  }
  // 4,096 GPUs: three tiers of 64-port switches, two of 128 ports of 200G on two planes.
  EXPECT_EQ(network_bill(shaped(4096, Network::fat_tree), parts()).tiers, 3);
  EXPECT_EQ(network_bill(shaped(4096, Network::fat_tree, 1, 2), parts()).tiers, 2);
}

// Parts-file errors: the file, line and column, the part and the key.
std::string parts_error(const std::string& text) {
  try {
    spaces::parse_network_parts(text, "network.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

constexpr const char* kSwitch = R"(
[[switch]]
key = "S"
name = "a switch"
gbps = 400
ports = 64
usd = 1
w = 1
source = "test"
)";
constexpr const char* kRest = R"(
[[transceiver]]
key = "T"
name = "optics"
gbps = 400
ports = 2
usd = 2
w = 2
source = "test"
[[cable]]
key = "C"
name = "copper"
gbps = 400
usd = 3
w = 0
source = "test"
[[nic]]
key = "N"
name = "a nic"
gbps = 400
usd = 4
w = 4
source = "test"
)";

TEST(NetworkParts, ParsesThePartsOfEachSpeed) {
  const NetworkCatalog c =
      spaces::parse_network_parts(std::string("format_version = 1\n") + kSwitch + kRest, "n");
  ASSERT_EQ(c.count, 1);
  EXPECT_EQ(c.speeds[0].switch_ports, 64);
  EXPECT_EQ(c.speeds[0].transceiver_usd, 1);  // per port of the twin-port module
  EXPECT_EQ(c.speeds[0].copper_usd, 3);
  EXPECT_EQ(c.speeds[0].nic_w, 4);
}

TEST(NetworkParts, ErrorsNameTheFileLinePartAndKey) {
  const std::string head = "format_version = 1\n";
  EXPECT_EQ(parts_error(head + kSwitch),
            "network.toml:3:1: switch 'S': no transceiver of 400 Gbit/s; every switch speed "
            "needs a transceiver, a cable and a nic of its speed");
  std::string slow = std::string(kRest);
  slow.replace(slow.find("gbps = 400"), 10, "gbps = 200");
  EXPECT_EQ(parts_error(head + kSwitch + slow),
            "network.toml:15:8: transceiver.gbps: transceiver 'T': no switch of 200 Gbit/s above; "
            "a part serves a switch of its speed");
  std::string small = kSwitch;
  small.replace(small.find("ports = 64"), 10, "ports = 2");
  EXPECT_EQ(
      parts_error(head + small + kRest),
      "network.toml:7:9: switch.ports: a switch needs at least 4 ports to build a tree, got 2");
  std::string negative = kSwitch;
  negative.replace(negative.find("usd = 1"), 7, "usd = -1");
  EXPECT_EQ(parts_error(head + negative + kRest),
            "network.toml:8:7: switch.usd: must be a non-negative number, got -1");
  EXPECT_EQ(parts_error(head + kSwitch + kRest + "[[router]]\nkey = \"R\"\n"),
            "network.toml:34:3: router: unknown key; expected format_version and [[switch]], "
            "[[transceiver]], [[cable]] and [[nic]] tables");
  EXPECT_EQ(parts_error(kSwitch), "network.toml:1:1: format_version: missing; expected 1");
}

}  // namespace
}  // namespace clustersweep::estimator
