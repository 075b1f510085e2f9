// Published runs through the resolution layer: every run `validate` predicts is a point that a
// sweep of the same design keeps, with the same plan and the same estimate.
#include "calibration/runs.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
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

// A runs file of one dense row (Llama-3-70B-like on 64 H100, 64 heads on hidden 8192) with the
// optional model columns head_dim and lora_rank set to `head_dim` and `lora_rank`, written where
// the test's files go and removed with it.
class OneRunFile {
 public:
  OneRunFile(const std::string& head_dim, const std::string& lora_rank) {
    path_ = (std::filesystem::temp_directory_path() /
             fmt::format("clustersweep-runs-test-{}-{}.csv", ::getpid(), counter()++))
                .string();
    std::ofstream(path_, std::ios::binary)
        << "id,source,model,layers,hidden,heads,kv_heads,ffn_hidden,ffn_act,seq_len,vocab,gpu,"
           "num_gpus,gpus_per_node,nvlink_domain,inter_node_gbps_per_gpu,tp,pp,dp,cp,vp,"
           "sequence_parallel,zero,recompute,micro_batch,global_batch,precision,step_time_s,"
           "software,attention_kernel,head_dim,lora_rank\n"
        << fmt::format(
               "1,TEST,L70,80,8192,64,8,28672,swiglu,8192,128256,H100-SXM5-80GB,64,8,8,400,4,4,4,"
               "1,5,1,1,none,1,128,bf16,10,nemo 25.02,cudnn,{},{}\n",
               head_dim, lora_rank);
  }
  ~OneRunFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::string path_;
};

MeasuredRun one_run(const std::string& head_dim, const std::string& lora_rank) {
  const OneRunFile file(head_dim, lora_rank);
  auto runs = read_runs(file.path(), builtin_calibration());
  EXPECT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs.front().reason, "");
  return runs.front();
}

est::Estimate estimate_of(const MeasuredRun& run) {
  return est::estimate(run.sample.workload, run.sample.cluster, run.sample.plan,
                       builtin_calibration());
}

// head_dim is the width of every query, key and value head; empty is hidden/heads, so giving
// hidden/heads changes nothing, and a wider head widens the attention.
TEST(Runs, HeadDimIsEachHeadsWidth) {
  const MeasuredRun plain = one_run("", "");
  const MeasuredRun same = one_run("128", "");  // 8192 / 64
  EXPECT_EQ(same.sample.workload.model.qk_head_dim, 128);
  EXPECT_EQ(same.sample.workload.model.v_head_dim, 128);
  EXPECT_EQ(plain.sample.workload.model.qk_head_dim, 0);
  const est::Estimate a = estimate_of(plain), b = estimate_of(same);
  EXPECT_EQ(a.time.total_s, b.time.total_s);
  EXPECT_EQ(a.memory.hbm_bytes, b.memory.hbm_bytes);
  EXPECT_EQ(a.mfu, b.mfu);
  const MeasuredRun wide = one_run("256", "");
  EXPECT_EQ(wide.sample.workload.model.qk_head_dim, 256);
  const est::Estimate c = estimate_of(wide);
  EXPECT_GT(c.time.total_s, a.time.total_s);
  EXPECT_GT(c.memory.hbm_bytes, a.memory.hbm_bytes);
  EXPECT_GT(est::total_params(wide.sample.workload.model),
            est::total_params(plain.sample.workload.model));
}

// lora_rank freezes the base: only the adapters train.
TEST(Runs, LoraRankIsReadAsTheWorkloads) {
  EXPECT_EQ(one_run("", "").sample.workload.lora_rank, 0);
  const MeasuredRun lora = one_run("", "16");
  EXPECT_EQ(lora.sample.workload.lora_rank, 16);
  EXPECT_LT(estimate_of(lora).time.total_s, estimate_of(one_run("", "")).time.total_s);
}

// The error reading a one-row file with these model columns gives, with the file's name as PATH.
std::string error_of(const std::string& head_dim, const std::string& lora_rank) {
  const OneRunFile file(head_dim, lora_rank);
  try {
    read_runs(file.path(), builtin_calibration());
  } catch (const InputError& e) {
    std::string text = e.what();
    if (text.rfind(file.path(), 0) == 0) text.replace(0, file.path().size(), "PATH");
    return text;
  }
  return "no error";
}

TEST(Runs, BadModelColumnsNameFileLineAndColumn) {
  EXPECT_EQ(error_of("-128", ""),
            "PATH:2: column 'head_dim': must be a positive integer, got '-128'");
  EXPECT_EQ(error_of("0", ""), "PATH:2: column 'head_dim': must be a positive integer, got '0'");
  EXPECT_EQ(error_of("12.5", ""),
            "PATH:2: column 'head_dim': must be a positive integer, got '12.5'");
  EXPECT_EQ(error_of("", "-16"), "PATH:2: column 'lora_rank': must be an integer >= 0, got '-16'");
  EXPECT_EQ(error_of("", "8.5"), "PATH:2: column 'lora_rank': must be an integer >= 0, got '8.5'");
  EXPECT_EQ(error_of("", "r16"), "PATH:2: column 'lora_rank': must be an integer >= 0, got 'r16'");
}

// Llama 3.1 8B on 8 H100 at micro-batch 4 without recompute holds about 190 GB a GPU; a run with
// an assumed recompute ran, so it is predicted with the lightest heavier recompute that fits, and
// the reason says so. A recompute the source states is taken as published.
MeasuredRun run_with_recompute(const std::string& recompute, const std::string& assumed) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            fmt::format("clustersweep-runs-recompute-{}.csv", ::getpid()))
                               .string();
  std::ofstream(path, std::ios::binary)
      << "id,source,model,layers,hidden,heads,kv_heads,ffn_hidden,ffn_act,seq_len,vocab,gpu,"
         "num_gpus,gpus_per_node,nvlink_domain,inter_node_gbps_per_gpu,tp,pp,dp,cp,vp,"
         "sequence_parallel,zero,recompute,micro_batch,global_batch,precision,step_time_s,"
         "software,assumed\n"
      << fmt::format(
             "1,TEST,L8,32,4096,32,8,14336,swiglu,8192,128256,H100-SXM5-80GB,8,8,8,400,1,1,8,1,1,0,"
             "1,{},4,32,bf16,10,nemo 25.02,{}\n",
             recompute, assumed);
  auto runs = read_runs(path, builtin_calibration());
  std::filesystem::remove(path);
  EXPECT_EQ(runs.size(), 1u);
  return runs.front();
}

TEST(Runs, AnAssumedRecomputeThatDoesNotFitIsTheLightestThatDoes) {
  const MeasuredRun stated = run_with_recompute("none", "zero");
  EXPECT_EQ(stated.sample.plan.recompute, est::Recompute::none);
  EXPECT_EQ(estimate_of(stated).reason, est::Infeasible::out_of_memory);
  EXPECT_EQ(stated.defaults.find("recompute assumed"), std::string::npos) << stated.defaults;

  const MeasuredRun assumed = run_with_recompute("none", "zero;recompute");
  EXPECT_NE(assumed.sample.plan.recompute, est::Recompute::none);
  EXPECT_NE(estimate_of(assumed).reason, est::Infeasible::out_of_memory);
  EXPECT_NE(assumed.defaults.find("recompute assumed: predicted with "), std::string::npos)
      << assumed.defaults;
  EXPECT_NE(assumed.defaults.find(" (none does not fit HBM)"), std::string::npos)
      << assumed.defaults;
  // Nothing lighter fits: a full recompute fits too, so the choice is never heavier than needed.
  if (assumed.sample.plan.recompute == est::Recompute::full) {
    MeasuredRun lighter = assumed;
    lighter.sample.plan.recompute = est::Recompute::selective;
    lighter.sample.plan.recompute_modules = 0x7f;
    EXPECT_EQ(estimate_of(lighter).reason, est::Infeasible::out_of_memory);
  }
  // An assumption that fits stands.
  const MeasuredRun full = run_with_recompute("full", "recompute");
  EXPECT_EQ(full.sample.plan.recompute, est::Recompute::full);
  EXPECT_EQ(full.defaults.find("recompute assumed"), std::string::npos) << full.defaults;
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
