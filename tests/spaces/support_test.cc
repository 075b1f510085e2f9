// Calibration support: the runs like a point, what limits it, the widened interval and the
// support tables of a calibration file.
#include "spaces/support.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"

namespace clustersweep::spaces {
namespace {

namespace est = estimator;

// Four dense runs: three on H100 in bf16 with Megatron plans (one with cp 2), one on A100 with
// FSDP.
CalibrationSupport four_runs() {
  return count_runs({{SupportFamily::dense, "H100-SXM5-80GB", est::Precision::bf16, 0, 1},
                     {SupportFamily::dense, "H100-SXM5-80GB", est::Precision::bf16, 0, 2},
                     {SupportFamily::dense, "H100-SXM5-80GB", est::Precision::bf16, 0, 1},
                     {SupportFamily::dense, "A100-SXM4-80GB", est::Precision::bf16, 1, 1}});
}

TEST(Support, IsTheFewestRunsAlongAnyWayAPointDiffers) {
  const CalibrationSupport s = four_runs();
  EXPECT_EQ(s.of(SupportFamily::dense).runs, 4);
  EXPECT_EQ(s.of(SupportFamily::dense).max_cp, 2);
  EXPECT_EQ(s.of(SupportFamily::moe).runs, 0);
  auto support = [&s](const char* gpu, est::Precision precision, int regime, int cp) {
    return point_support(s, SupportFamily::dense, gpu, precision, regime, cp);
  };
  const PointSupport like = support("H100-SXM5-80GB", est::Precision::bf16, 0, 2);
  EXPECT_EQ(like.runs, 3);
  EXPECT_EQ(like.weakest, "");
  EXPECT_EQ(support("H100-SXM5-80GB", est::Precision::fp8, 0, 1).weakest,
            "no dense runs on H100-SXM5-80GB in fp8");
  EXPECT_EQ(support("A100-SXM4-80GB", est::Precision::bf16, 1, 1).weakest,
            "1 dense run on A100-SXM4-80GB in bf16");
  EXPECT_EQ(support("H100-SXM5-80GB", est::Precision::bf16, 2, 1).weakest,
            "no dense runs in regime fsdp_tp");
  const PointSupport wide_cp = support("H100-SXM5-80GB", est::Precision::bf16, 0, 4);
  EXPECT_EQ(wide_cp.runs, 0);
  EXPECT_EQ(wide_cp.weakest, "cp 4 above the largest in the dense runs (2)");
  EXPECT_EQ(
      point_support(s, SupportFamily::moe, "H100-SXM5-80GB", est::Precision::bf16, 0, 1).weakest,
      "no moe calibration runs");
}

TEST(Support, RegimesOfPlansAndShardings) {
  est::Plan p;
  est::Model dense, moe;
  moe.num_experts = 64;
  p.zero = 1;
  p.tp = 8;
  p.dp = 4;
  EXPECT_EQ(regime_of(p, dense), 0);
  p.zero = 3;
  EXPECT_EQ(regime_of(p, dense), 2);
  p.tp = 1;
  EXPECT_EQ(regime_of(p, dense), 1);
  // ZeRO-3 shards experts replicated over an expert-data-parallel group: ep 2 of dp 4.
  p.ep = 2;
  EXPECT_EQ(regime_of(p, moe), 3);
  p.ep = 4;  // every expert on one rank of the stage: no expert data parallelism
  EXPECT_EQ(regime_of(p, moe), 1);
  EXPECT_EQ(regime_of(false, est::Sharding::row_wise), 1);
  EXPECT_EQ(regime_of(true, est::Sharding::row_wise), est::kNumShardings);
}

TEST(Support, OnlyFewRunsWidenTheIntervalAndItContainsTheCalibrations) {
  const est::StepInterval base{0.8, 1.5};
  const est::StepInterval same = supported_interval(base, kFewCalibrationRuns, 2);
  EXPECT_EQ(same.lo, base.lo);
  EXPECT_EQ(same.hi, base.hi);
  const est::StepInterval wide = supported_interval(base, kFewCalibrationRuns - 1, 2);
  EXPECT_DOUBLE_EQ(wide.lo, 0.64);
  EXPECT_DOUBLE_EQ(wide.hi, 2.25);
}

TEST(Support, HeldOutSupportCountsOnlyTheOtherGroups) {
  const std::vector<SupportRun> runs = {
      {SupportFamily::dense, "H100-SXM5-80GB", est::Precision::bf16, 0, 1},
      {SupportFamily::dense, "H100-SXM5-80GB", est::Precision::bf16, 0, 1},
      {SupportFamily::dense, "H100-SXM5-80GB", est::Precision::bf16, 0, 1},
      {SupportFamily::dense, "H100-SXM5-80GB", est::Precision::bf16, 0, 1}};
  // Runs 0-2 in group 0, run 3 alone: held out, group 0's runs see one run like them, run 3 three.
  EXPECT_EQ(held_out_support(runs, {0, 0, 0, 1}), (std::vector<int>{1, 1, 1, 3}));
}

TEST(Support, TablesRoundTripThroughTheirText) {
  const CalibrationSupport s = four_runs();
  const CalibrationSupport again = parse_support(format_support(s), "s.toml", {});
  EXPECT_EQ(again.of(SupportFamily::dense).runs, 4);
  EXPECT_EQ(again.of(SupportFamily::dense).max_cp, 2);
  EXPECT_EQ(again.of(SupportFamily::dense).accelerators, s.of(SupportFamily::dense).accelerators);
  EXPECT_EQ(again.of(SupportFamily::dense).regimes, s.of(SupportFamily::dense).regimes);
  // A file without the tables keeps the base's.
  EXPECT_EQ(parse_support("x = 1\n", "s.toml", s).of(SupportFamily::dense).runs, 4);
}

TEST(Support, BuiltInTablesCountTheShippedRuns) {
  const CalibrationSupport& s = builtin_support();
  // The NVIDIA dense runs and the other vendors' dense and LoRA runs, which the fit takes too.
  EXPECT_EQ(s.of(SupportFamily::dense).runs, 224 + 30);
  EXPECT_EQ(s.of(SupportFamily::moe).runs, 91);
  EXPECT_EQ(s.of(SupportFamily::dlrm).runs, 79);
  // Every B200 run of the data is fp8: B200 in bf16 has no dense support.
  EXPECT_EQ(point_support(s, SupportFamily::dense, "B200-180GB", est::Precision::bf16, 0, 1).runs,
            0);
}

TEST(Support, MalformedTablesNameTheirKey) {
  auto error = [](std::string_view text) {
    try {
      parse_support(text, "cal.toml", {});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("[support.gpt]\nruns = 1\n"),
            "cal.toml:1:10: support.gpt: unknown family; expected dense, moe or dlrm");
  EXPECT_EQ(error("[support.dense]\nruns = -1\n"),
            "cal.toml:2:8: support.dense.runs: must be an integer of at least 0");
  EXPECT_EQ(error("[support.dense]\nmax_cp = 0\n"),
            "cal.toml:2:10: support.dense.max_cp: must be an integer of at least 1");
  EXPECT_EQ(error("[support.dense]\nregimes = { ddp = 3 }\n"),
            "cal.toml:2:13: support.dense.regimes.ddp: unknown regime; expected one of "
            "model_parallel, fsdp, fsdp_tp, fsdp_sharded_experts");
  EXPECT_EQ(error("[support.dlrm]\naccelerators = { \"H100\" = 3 }\n"),
            "cal.toml:2:18: support.dlrm.accelerators.\"H100\": expected \"ACCELERATOR "
            "PRECISION\", e.g. \"H100-SXM5-80GB bf16\"");
  EXPECT_EQ(error("[support.dense]\nruns_total = 3\n"),
            "cal.toml:2:1: support.dense.runs_total: unknown key; expected runs, max_cp, regimes "
            "and accelerators");
}

}  // namespace
}  // namespace clustersweep::spaces
