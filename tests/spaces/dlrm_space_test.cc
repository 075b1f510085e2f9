// Recommendation-model spaces (workload.family = "dlrm"): their axes, designs resolved as
// `estimate` resolves the same settings, constraints on the sharding axis, and errors.
#include <gtest/gtest.h>

#include "base/error.h"
#include "spaces/resolve.h"
#include "spaces/space.h"

namespace clustersweep::spaces {
namespace {

constexpr const char* kSpec = R"(
constraints = ["sharding != \"data\" or num_gpus <= 8"]
[workload]
family = "dlrm"
model = ["dlrm-criteo-small", "dlrmv2-dcnv2"]
precision = ["fp32", "fp16"]
training_samples = 4e9
[cluster]
gpu = ["A100-SXM4-80GB", "H100-SXM5-80GB"]
gpus = [8, 16]
inter_node_gbps_per_gpu = [100, 400]
[plan]
sharding = "all"
)";

std::string error_of(const std::string& text) {
  try {
    Space::parse(text, "d.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(DlrmSpace, AxesAreTheWorkloadTheClusterAndTheSharding) {
  const Space s = Space::parse(kSpec, "d.toml");
  EXPECT_EQ(s.family(), estimator::Family::dlrm);
  std::vector<std::string> names;
  for (const auto& a : s.axes()) names.push_back(a.name);
  EXPECT_EQ(names, (std::vector<std::string>{"model",
                                             "global_batch",
                                             "precision",
                                             "gpu",
                                             "num_gpus",
                                             "gpus_per_node",
                                             "nvlink_domain",
                                             "nvlink_gbytes_per_s",
                                             "inter_node_gbps_per_gpu",
                                             "hbm_gb",
                                             "expansion_gb",
                                             "expansion_gbytes_per_s",
                                             "power_cap_w",
                                             "fabric",
                                             "network",
                                             "oversubscription",
                                             "pod_gpus",
                                             "planes",
                                             "group_gpus",
                                             "global_taper",
                                             "sharding"}));
  EXPECT_TRUE(s.axes()[kDlrmSharding].is_plan);
  EXPECT_FALSE(s.axes()[kDlrmExpansionGbytesPerS].is_plan);
  EXPECT_EQ(s.plan_points(), 8u);
  EXPECT_EQ(s.designs(), 2u * 2 * 2 * 2 * 2);
  EXPECT_DOUBLE_EQ(s.training_samples(), 4e9);
  // Both models publish 65,536 samples a step: one concrete batch.
  EXPECT_EQ(s.axes()[kDlrmGlobalBatch].numbers, std::vector<double>{65536});
}

TEST(DlrmSpace, DesignsResolveAsEstimateResolvesTheSameSettings) {
  const Space s = Space::parse(kSpec, "d.toml");
  std::uint32_t digits[kNumAxes] = {};
  for (std::uint64_t d = 0; d < s.designs(); ++d) {
    DlrmDesign design;
    Violation why;
    ASSERT_TRUE(s.dlrm_design(d, design, why)) << d;
    s.decode(d * s.plan_points(), digits);
    const auto& axes = s.axes();
    Settings settings;
    auto set = [&](const char* name, int axis) {
      settings.set(name, axes[axis].value_text(digits[axis]), "test");
    };
    set("model", kDlrmModel);
    set("precision", kDlrmPrecision);
    set("gpu", kDlrmGpu);
    set("gpus", kDlrmClusterSize);
    set("inter_node_gbps_per_gpu", kDlrmInterNodeGbpsPerGpu);
    const DlrmPoint pt = resolve_dlrm(settings, s.calibration());
    EXPECT_EQ(design.workload.global_batch, pt.workload.global_batch);
    EXPECT_EQ(design.workload.precision, pt.workload.precision);
    EXPECT_EQ(design.workload.model.rows, pt.workload.model.rows);
    EXPECT_EQ(design.cluster.num_gpus, pt.cluster.num_gpus);
    EXPECT_EQ(design.cluster.nvlink_bytes_per_s, pt.cluster.nvlink_bytes_per_s);
    EXPECT_EQ(design.cluster.inter_node_bytes_per_s, pt.cluster.inter_node_bytes_per_s);
    EXPECT_EQ(design.cluster.hbm_bytes, pt.cluster.hbm_bytes);
    EXPECT_EQ(design.cluster.node_overhead_w, pt.cluster.node_overhead_w);
  }
}

TEST(DlrmSpace, ConstraintsReadTheShardingAxis) {
  const Space s = Space::parse(kSpec, "d.toml");
  const auto counts = s.count_by_rule();
  // `data` survives only on 8 GPUs: half the designs lose one of their six plans.
  EXPECT_EQ(counts[static_cast<int>(Rule::user_constraint)], s.designs() / 2);
  EXPECT_EQ(counts[0], s.size() - s.designs() / 2);
  EXPECT_EQ(s.valid_points(), counts[0]);
}

TEST(DlrmSpace, ErrorsNameTheKeyAndWhatIsValid) {
  const std::string head = "[workload]\nfamily = \"dlrm\"\n";
  const std::string cluster = "[cluster]\ngpu = \"H100-SXM5-80GB\"\ngpus = 8\n";
  EXPECT_EQ(error_of(head + "model = \"dlrm-smal\"\n" + cluster),
            "d.toml:3:9: workload.model: unknown recommendation model 'dlrm-smal'; did you mean "
            "'dlrm-criteo-small'?");
  EXPECT_EQ(error_of(head + "model = \"dlrmv2-dcnv2\"\nframework = \"megatron-core\"\n" + cluster),
            "d.toml:4:13: workload.framework: must be any, hugectr or torchrec, got "
            "\"megatron-core\"");
  EXPECT_EQ(error_of(head + "model = \"dlrmv2-dcnv2\"\nprecision = \"fp8\"\n" + cluster),
            "d.toml:4:13: workload.precision: must be one of \"fp32\", \"tf32\", \"fp16\", "
            "\"bf16\", got \"fp8\"");
  EXPECT_EQ(error_of(head + "model = \"dlrmv2-dcnv2\"\nseq_len = 8\n" + cluster),
            "d.toml:4:1: workload.seq_len: unknown key; valid keys are: family, model, "
            "global_batch, precision, training_samples, framework");
  EXPECT_EQ(error_of(head + "model = \"dlrmv2-dcnv2\"\n" + cluster + "[plan]\ntp = 2\n"),
            "d.toml:8:1: plan.tp: unknown key; valid keys are: sharding");
  EXPECT_EQ(
      error_of(head + "model = \"dlrmv2-dcnv2\"\n" + cluster + "[plan]\nsharding = \"rows\"\n"),
      "d.toml:8:12: plan.sharding: must be one of \"best\", \"table\", \"row\", \"column\", "
      "\"table_row\", \"data\", \"hybrid\", \"fused_row\", got \"rows\"");
  EXPECT_EQ(
      error_of("constraints = [\"dp > 1\"]\n" + head + "model = \"dlrmv2-dcnv2\"\n" + cluster),
      "d.toml:1:17: constraints[0]: unknown name 'dp'; did you mean 'gpu'?\n"
      "    dp > 1\n"
      "    ^~");
}

}  // namespace
}  // namespace clustersweep::spaces
