// The scale-up fabrics (docs/estimator.md, "Scale-up fabrics"): the torus shapes, and the laws the
// bandwidth of a group on a mesh or torus obeys.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "estimator/detail/collectives.h"
#include "estimator/estimator.h"
#include "h100_like_cluster.h"

namespace clustersweep::estimator {
namespace {

using Shape = std::array<int, kMaxTorusDims>;

TEST(Fabric, BalancedTorusShapesAsTpuSlices) {
  EXPECT_EQ(balanced_torus(8, 2), (Shape{2, 4, 1}));
  EXPECT_EQ(balanced_torus(32, 2), (Shape{4, 8, 1}));
  EXPECT_EQ(balanced_torus(256, 2), (Shape{16, 16, 1}));
  EXPECT_EQ(balanced_torus(64, 3), (Shape{4, 4, 4}));
  EXPECT_EQ(balanced_torus(128, 3), (Shape{4, 4, 8}));
  EXPECT_EQ(balanced_torus(96, 3), (Shape{4, 4, 6}));
  EXPECT_EQ(balanced_torus(16, 2), (Shape{4, 4, 1}));
  EXPECT_EQ(balanced_torus(1, 3), (Shape{1, 1, 1}));
  EXPECT_EQ(balanced_torus(7, 2), (Shape{1, 7, 1}));
  for (int chips = 1; chips <= 512; ++chips)
    for (int dims = 1; dims <= kMaxTorusDims; ++dims) {
      const Shape s = balanced_torus(chips, dims);
      EXPECT_EQ(std::int64_t{s[0]} * s[1] * s[2], chips) << chips << " in " << dims;
    }
}

Cluster fabric_cluster(Fabric fabric, int domain, Shape torus = {1, 1, 1}) {
  Cluster c = test::cluster(1024);
  c.fabric = fabric;
  c.nvlink_domain = domain;
  c.torus = torus;
  return c;
}

double group_bw(const Cluster& c, int stride, int n, Traffic traffic) {
  return detail::scale_up_bytes_per_s(c, c.nvlink_bytes_per_s, stride, n, traffic);
}

TEST(Fabric, AMeshGroupHasTheLinksBetweenItsMembers) {
  // MI300X: 7 links of 64 GB/s; TP 2 runs at one link, TP 8 at all seven.
  Cluster c = fabric_cluster(Fabric::mesh, 8);
  c.nvlink_bytes_per_s = 448e9;
  EXPECT_DOUBLE_EQ(group_bw(c, 1, 2, Traffic::collective), 64e9);
  EXPECT_DOUBLE_EQ(group_bw(c, 1, 4, Traffic::collective), 192e9);
  EXPECT_DOUBLE_EQ(group_bw(c, 1, 8, Traffic::collective), 448e9);
  EXPECT_DOUBLE_EQ(group_bw(c, 1, 8, Traffic::all_to_all), 448e9);
  EXPECT_DOUBLE_EQ(group_bw(c, 4, 2, Traffic::p2p), 64e9);
  // A switch gives every group all of it.
  c.fabric = Fabric::switched;
  EXPECT_DOUBLE_EQ(group_bw(c, 1, 2, Traffic::collective), 448e9);
}

TEST(Fabric, OnAMeshALargerGroupNeverHasLessBandwidthPerChip) {
  for (const int domain : {2, 4, 8, 16, 72})
    for (const int stride : {1, 2, 4})
      for (const Traffic traffic : {Traffic::collective, Traffic::all_to_all}) {
        const Cluster c = fabric_cluster(Fabric::mesh, domain);
        double last = 0;
        for (int n = 2; n * stride <= domain; ++n) {  // one member communicates with none
          const double bw = group_bw(c, stride, n, traffic);
          EXPECT_GE(bw, last) << domain << " " << stride << " " << n;
          last = bw;
        }
      }
}

// The chips' links a torus group uses: a group spanning a whole slice of 16 x 16 uses both rings
// of both dimensions; TP 4 at stride 1 a line of 4 on the first (a ring only when it closes it).
TEST(Fabric, ATorusGroupUsesTheDimensionsItSpans) {
  const Shape square{16, 16, 1};
  EXPECT_DOUBLE_EQ(detail::torus_collective_links(square, 1, 256), 4.0);
  EXPECT_DOUBLE_EQ(detail::torus_collective_links(square, 1, 16), 2.0);
  EXPECT_DOUBLE_EQ(detail::torus_collective_links(square, 1, 4), 1.0);
  EXPECT_DOUBLE_EQ(detail::torus_collective_links(square, 16, 16), 2.0);
  // Members two links apart share the links with the interleaved group.
  EXPECT_DOUBLE_EQ(detail::torus_collective_links(square, 2, 8), 1.0);
  const Shape cube{4, 4, 4};
  EXPECT_DOUBLE_EQ(detail::torus_collective_links(cube, 1, 64), 6.0);
  EXPECT_DOUBLE_EQ(detail::torus_collective_links(cube, 4, 16), 4.0);
}

// However the bytes move, an exchange over a torus slice cannot beat its bisection: cutting the
// longest dimension L of a slice of n chips in half cuts 2 n / L links each way (two with the
// wrap-around), and half of every chip's all-to-all bytes and half of an all-gather's must cross.
TEST(Fabric, ATorusExchangeIsNeverFasterThanTheBisectionAllows) {
  const double link = 100e9;
  for (const Shape& shape : {Shape{16, 16, 1}, Shape{4, 8, 1}, Shape{2, 4, 1}, Shape{4, 4, 4},
                             Shape{8, 8, 8}, Shape{4, 4, 8}, Shape{8, 16, 1}, Shape{16, 16, 16}}) {
    const int n = shape[0] * shape[1] * shape[2];
    const int longest = *std::max_element(shape.begin(), shape.end());
    const double bisection = (longest > 2 ? 2.0 : 1.0) * n / longest * link;
    const double bytes = 1e9;  // each chip's all-to-all bytes; the all-gather's buffer
    const double a2a = bytes * (n - 1.0) / n / (link * detail::torus_all_to_all_links(shape, 1, n));
    EXPECT_GE(a2a * (1 + 1e-12), n * bytes / 4.0 / bisection) << n;
    const double gather =
        (n - 1.0) / n * bytes / (link * detail::torus_collective_links(shape, 1, n));
    EXPECT_GE(gather * (1 + 1e-12), bytes / 2.0 / bisection) << n;
  }
}

TEST(Fabric, AStepOnAMeshIsNoFasterThanOnASwitchOfTheSameBandwidth) {
  Workload w;
  w.model = {.layers = 32,
             .hidden = 4096,
             .heads = 32,
             .kv_heads = 8,
             .ffn_hidden = 14336,
             .mlp = Mlp::swiglu,
             .vocab = 128256};
  w.seq_len = 4096;
  w.global_batch = 64;
  const Calibration cal;
  for (const int tp : {1, 2, 4, 8}) {
    Plan p;
    p.tp = tp;
    p.dp = 8 / tp;
    const Cluster sw = fabric_cluster(Fabric::switched, 8);
    Cluster mesh = fabric_cluster(Fabric::mesh, 8);
    Cluster torus = fabric_cluster(Fabric::torus, 8, balanced_torus(8, 2));
    for (Cluster* c : {&mesh, &torus}) c->num_gpus = 8;
    Cluster eight = sw;
    eight.num_gpus = 8;
    const double t_switch = estimate(w, eight, p, cal).time.total_s;
    EXPECT_GE(estimate(w, mesh, p, cal).time.total_s, t_switch * (1 - 1e-12)) << tp;
    EXPECT_GE(estimate(w, torus, p, cal).time.total_s, t_switch * (1 - 1e-12)) << tp;
  }
}

}  // namespace
}  // namespace clustersweep::estimator
