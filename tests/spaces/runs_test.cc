// Published runs through the resolution layer: every run `validate` predicts is a point that a
// sweep of the same design keeps, with the same plan and the same estimate.
#include "spaces/runs.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "spaces/catalog.h"
#include "spaces/space.h"

namespace clustersweep::spaces {
namespace {

namespace est = estimator;

const std::string kRuns =
    std::string(CLUSTERSWEEP_SOURCE_DIR) + "/tests/apps/data/transformer_runs.csv";

// A one-design spec of the run's workload and cluster with its plan on the plan axes; the
// pipeline split is left to the spec's default.
std::string spec_of(const MeasuredRun& run) {
  const est::Workload& w = run.sample.workload;
  const est::Cluster& c = run.sample.cluster;
  const est::Plan& p = run.sample.plan;
  return fmt::format(
      "[models.run]\nlayers = {}\nhidden = {}\nheads = {}\nkv_heads = {}\nffn_hidden = {}\n"
      "mlp = \"{}\"\nvocab = {}\n"
      "[workload]\nmodel = \"run\"\nseq_len = {}\nglobal_batch = {}\nprecision = \"{}\"\n"
      "[cluster]\ngpu = \"{}\"\ngpus = {}\ngpus_per_node = {}\nnvlink_domain = {}\n"
      "inter_node_gbps_per_gpu = {}\n"
      "[plan]\ntp = {}\npp = {}\ncp = {}\nvp = {}\nmicro_batch = {}\nzero = {}\n"
      "recompute = \"{}\"\nsequence_parallel = {}\n",
      w.model.layers, w.model.hidden, w.model.heads, w.model.kv_heads, w.model.ffn_hidden,
      est::to_string(w.model.mlp), w.model.vocab, w.seq_len, w.global_batch,
      est::to_string(w.precision), run.gpu, c.num_gpus, c.gpus_per_node, c.nvlink_domain,
      c.inter_node_bytes_per_s * 8 / 1e9, p.tp, p.pp, p.cp, p.vp, p.micro_batch, p.zero,
      est::to_string(p.recompute), p.sequence_parallel ? "true" : "false");
}

TEST(Runs, EveryPredictedRunIsAPointASweepKeeps) {
  const auto runs = read_runs(kRuns, builtin_calibration());
  ASSERT_EQ(runs.size(), 224u);
  int checked = 0;
  for (const MeasuredRun& run : runs) {
    if (!run.reason.empty()) continue;
    const std::string text = spec_of(run);
    SCOPED_TRACE(fmt::format("run {} ({})\n{}", run.id, run.source, text));
    const Space space = Space::parse(text, "run.toml");
    ASSERT_EQ(space.designs(), 1u);
    Design design;
    ASSERT_TRUE(space.design(0, design));
    // The sweep keeps the run's plan (it may keep other pipeline splits of it beside it).
    int kept = 0;
    for (std::uint64_t i = 0; i < space.plan_points(); ++i) {
      est::Plan plan;
      Violation why;
      const est::Plan& p = run.sample.plan;
      if (!space.plan(design, i, plan, why) || plan.pipeline_split != p.pipeline_split) continue;
      // A design spec carries no runtime settings of the stack: the run's go with the swept plan.
      plan.stack = p.stack;
      ++kept;
      EXPECT_EQ(plan.dp, p.dp);
      const auto swept = est::estimate(design.workload, design.cluster, plan, space.calibration());
      const auto validated =
          est::estimate(run.sample.workload, run.sample.cluster, p, builtin_calibration());
      EXPECT_EQ(swept.time.total_s, validated.time.total_s);
      EXPECT_EQ(swept.memory.hbm_bytes, validated.memory.hbm_bytes);
    }
    EXPECT_EQ(kept, 1);
    ++checked;
  }
  EXPECT_EQ(checked, 224);
}

TEST(Runs, ErrorStats) {
  const ErrorStats s = error_stats({0.1, 0.3, 0.2, 0.4});
  EXPECT_EQ(s.n, 4u);
  EXPECT_DOUBLE_EQ(s.mape, 0.25);
  EXPECT_DOUBLE_EQ(s.median, 0.25);
  EXPECT_DOUBLE_EQ(s.max, 0.4);
  EXPECT_NEAR(s.geomean, std::pow(0.1 * 0.3 * 0.2 * 0.4, 0.25), 1e-12);
  EXPECT_EQ(error_stats({}).n, 0u);
}

}  // namespace
}  // namespace clustersweep::spaces
