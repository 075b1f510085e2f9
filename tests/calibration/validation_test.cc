// Validation against published runs as library functions: the statistics and tables
// `clustersweep validate` prints, pinned on small synthetic inputs whose answers are worked out by
// hand, and the predictions on real runs checked against the estimator itself.
#include "calibration/validation.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "spaces/catalog.h"

namespace clustersweep::spaces {
namespace {

namespace est = estimator;

const std::string kData = std::string(CLUSTERSWEEP_SOURCE_DIR) + "/tests/apps/data/";

Prediction predicted(const std::string& source, double measured, double predicted_s) {
  Prediction p;
  p.id = "r";
  p.source = source;
  p.measured = measured;
  p.predicted = predicted_s;
  p.error = predicted_s / measured - 1;
  return p;
}

TEST(Validation, PredictsEachRunAsTheEstimatorDoes) {
  const est::Calibration calibration = builtin_calibration();
  auto rows = read_runs(kData + "transformer_runs.csv", calibration);
  rows.resize(6);
  MeasuredRun broken;
  broken.id = "x";
  broken.source = "S";
  broken.reason = "unknown accelerator 'X', say";
  rows.push_back(broken);
  const ValidationReport report = validate_runs(rows, calibration);
  ASSERT_EQ(report.rows.size(), 7u);
  EXPECT_EQ(report.unpredicted, 1u);
  EXPECT_EQ(report.errors.n, 6u);
  std::size_t by_source = 0;
  for (const auto& [source, stats] : report.errors_by_source) by_source += stats.n;
  EXPECT_EQ(by_source, 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    const MeasuredRun& r = rows[i];
    const Prediction& p = report.rows[i];
    const double step =
        est::estimate(r.sample.workload, r.sample.cluster, r.sample.plan, calibration).time.total_s;
    const est::StepInterval interval = est::step_interval(calibration, r.sample.workload.model);
    EXPECT_EQ(p.predicted, step);
    EXPECT_DOUBLE_EQ(p.lo, step * interval.lo);
    EXPECT_DOUBLE_EQ(p.hi, step * interval.hi);
    EXPECT_DOUBLE_EQ(p.error, step / r.measured_s - 1);
    EXPECT_FALSE(p.best_step_s);
  }
  const std::string csv = format_predictions_csv(report);
  EXPECT_NE(csv.find("\nx,S,,,,,,,,,\"unknown accelerator 'X', say\"\n"), std::string::npos) << csv;
}

TEST(Validation, EachFamilyWeighsOneInAFitWhicheverFilesHoldIt) {
  const est::Calibration calibration = builtin_calibration();
  // Three files, two families: the other vendors' dense runs share the dense family's weight and
  // the MoE runs keep theirs, each run of a family counting the same.
  const auto rows = read_weighted_runs(
      {kData + "transformer_runs.csv", kData + "moe_runs.csv", kData + "accelerator_runs.csv"},
      calibration);
  double weight = 0, moe_weight = 0;
  std::size_t predictable = 0;
  for (const auto& r : rows)
    if (r.reason.empty()) {
      weight += r.sample.weight;
      if (est::is_moe(r.sample.workload.model)) moe_weight += r.sample.weight;
      ++predictable;
    }
  EXPECT_NEAR(weight, 2.0, 1e-9);
  EXPECT_NEAR(moe_weight, 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(rows.front().sample.weight, rows.back().sample.weight);
  const auto runs = fit_runs(rows);
  EXPECT_EQ(runs.samples.size(), predictable);
  EXPECT_EQ(runs.support.size(), predictable);
  ASSERT_EQ(runs.groups.size(), predictable);
  EXPECT_EQ(runs.groups.front(), rows.front().source);
}

TEST(Validation, ErrorTableAndSummary) {
  ValidationReport report;
  report.rows = {predicted("A", 1, 1.1), predicted("A", 1, 0.7), predicted("B", 2, 2.5)};
  report.rows[0].repair = "pp 4 -> 2";
  report.rows[1].out_of_memory = true;
  report.errors_by_source["A"] = error_stats({0.1, 0.3});
  report.errors_by_source["B"] = error_stats({0.25});
  report.errors = error_stats({0.1, 0.3, 0.25});
  report.rows.push_back(predicted("B", 1, 1));
  report.rows.back().reason = "no";
  report.unpredicted = 1;
  report.repaired = 1;
  report.out_of_memory = 1;
  EXPECT_EQ(format_summary(report),
            "predicted 3 of 4 rows; 1 could not be predicted, 0 of them refused by a rule (see the "
            "reason column); 1 with a "
            "misreported plan repaired (see the reason column); the memory model puts 1 measured "
            "runs over HBM capacity (1 dense, 0 MoE; fits_hbm)\n");
  EXPECT_EQ(format_error_table(report),
            "source                    rows     MAPE   median  geomean      max\n"
            "A                            2   20.00%   20.00%   17.32%   30.00%\n"
            "B                            1   25.00%   25.00%   25.00%   25.00%\n"
            "all                          3   21.67%   25.00%   19.57%   30.00%\n");
  const std::string text = format_report(report);
  EXPECT_TRUE(text.ends_with("step-time MAPE: 21.67%  median: 25.00%  geomean: 19.57%\n")) << text;
  // A throughput report's errors are on the step too (global batch / throughput).
  report.measure = Measure::throughput;
  EXPECT_TRUE(
      format_report(report).ends_with("step-time MAPE: 21.67%  median: 25.00%  geomean: 19.57%\n"));
}

TEST(Validation, SummaryOfAllPredicted) {
  ValidationReport report;
  report.rows = {predicted("A", 1, 1.1)};
  report.errors = error_stats({0.1});
  EXPECT_EQ(format_summary(report), "predicted 1 of 1 rows\n");
}

TEST(Validation, PredictionsCsvColumns) {
  ValidationReport report;
  report.best = true;
  report.rows = {predicted("A", 2, 2.5), predicted("A", 1, 1)};
  report.rows[0].lo = 2;
  report.rows[0].hi = 3;
  report.rows[0].best_step_s = 1.5;
  report.rows[0].best_plan = "tp 8";
  report.rows[1].reason = "why";
  report.rows[1].measured = 0;
  report.rows[0].framework = "megatron-core";
  report.rows[0].memory_bytes = 61.5e9;
  EXPECT_EQ(format_predictions_csv(report),
            "id,source,measured_step_time_s,predicted_step_time_s,predicted_step_time_s_lo,"
            "predicted_step_time_s_hi,rel_error,framework,mem_per_gpu_gb,fits_hbm,reason,"
            "best_step_time_s,best_plan\n"
            "r,A,2,2.5,2,3,0.250000,megatron-core,61.5,yes,,1.5,tp 8\n"
            "r,A,,,,,,,,,why,,\n");
  report.measure = Measure::throughput;
  report.rows[0].sharding = "table-wise, 4 GPUs";
  report.rows[0].published_sharding = "table";
  report.rows[0].planner_matches = false;
  report.rows[0].ranking = "best < column < table";
  report.rows[0].target = "train_only_samples_per_s";
  EXPECT_EQ(format_predictions_csv(report),
            "id,source,measured_samples_per_s,predicted_samples_per_s,predicted_samples_per_s_lo,"
            "predicted_samples_per_s_hi,rel_error,sharding,published_sharding,planner_matches,"
            "sharding_ranking,reason\n"
            "r,A,2,2.5,2,3,0.250000,\"table-wise, 4 GPUs\",table,no,best < column < table,"
            "compared with train_only_samples_per_s\n"
            "r,A,,,,,,,,,,why\n");
}

TEST(Validation, BestRatiosPerSource) {
  ValidationReport report;
  report.best = true;
  for (double best : {0.5, 0.9, 1.0, 1.2}) {
    report.rows.push_back(predicted("LONGSOURCE", 2, 2));
    report.rows.back().best_step_s = 2 * best;
  }
  report.rows.push_back(predicted("B", 1, 1));  // no best plan: left out
  const BestRatios ratios = best_ratios(report);
  ASSERT_EQ(ratios.sources.size(), 1u);
  const RatioStats& s = ratios.sources[0];
  EXPECT_EQ(s.source, "LONGSOURCE");
  EXPECT_EQ(s.n, 4u);
  EXPECT_DOUBLE_EQ(s.median, 0.95);
  EXPECT_DOUBLE_EQ(s.min, 0.5);
  EXPECT_DOUBLE_EQ(s.max, 1.2);
  EXPECT_EQ(s.in_band, 2u);
  EXPECT_EQ(ratios.all.n, 4u);
  EXPECT_EQ(format_best_ratios(ratios),
            "\nbest plan's predicted step / measured step\n"
            "source      rows  median     min     max  in 0.85-1.10\n"
            "LONGSOURCE     4   0.950   0.500   1.200        2 of 4\n"
            "all            4   0.950   0.500   1.200        2 of 4\n"
            "by framework (each run's best plan searched within its own)\n"
            "any dense      4   0.950   0.500   1.200        2 of 4\n");
  EXPECT_EQ(format_best_ratios(best_ratios(ValidationReport{})),
            "\nbest plan's predicted step / measured step\n"
            "source  rows  median     min     max  in 0.85-1.10\n");
}

// Two groups of ten dense runs: A's residuals are +-0.05, B's 0.1, 0.2, ..., 1.0. A held out
// gets the interval +-1.0 of B's (the 10th smallest of 10 |residuals|) and is covered; B held out
// gets +-0.05 and is not.
HeldOut two_groups() {
  HeldOut h;
  for (int i = 0; i < 20; ++i) {
    const bool a = i < 10;
    h.family.push_back("dense");
    h.source.push_back(a ? "A" : "B");
    h.group.push_back(a ? 0 : 1);
    h.residuals.push_back(a ? (i % 2 ? 0.05 : -0.05) : 0.1 * (i - 9));
    h.few.push_back(false);
  }
  return h;
}

TEST(Validation, HeldOutCoverageAndHalfWidth) {
  const HeldOutReport report = held_out_report(two_groups());
  ASSERT_EQ(report.families.size(), 1u);
  const HeldOutFamily& dense = report.families[0];
  ASSERT_EQ(dense.groups.size(), 2u);
  EXPECT_EQ(dense.groups[0].source, "A");
  EXPECT_EQ(dense.groups[0].covered, 10u);
  EXPECT_NEAR(dense.groups[0].half_width, std::sinh(1.0), 1e-12);
  EXPECT_NEAR(dense.groups[0].hi, std::exp(1.0), 1e-12);
  EXPECT_EQ(dense.groups[1].covered, 0u);
  EXPECT_NEAR(dense.groups[1].half_width, std::sinh(0.05), 1e-12);
  EXPECT_EQ(report.samples, 20u);
  EXPECT_EQ(report.covered, 10u);
  EXPECT_DOUBLE_EQ(report.coverage, 0.5);
  EXPECT_NEAR(report.median_half_width, (std::sinh(1.0) + std::sinh(0.05)) / 2, 1e-12);
  const std::string text = format_held_out(report);
  EXPECT_NE(
      text.find(
          "\nA      dense     10    5.0%   100.0%      117.5%   0.368   2.718     0   1.00\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("\nall    dense     20   22.4%    50.0%\n"), std::string::npos) << text;
  // Each group's MAPE is of its own held-out errors: A's alternate e^0.05 - 1 and 1 - e^-0.05.
  EXPECT_NEAR(dense.groups[0].mape, (std::exp(0.05) - std::exp(-0.05)) / 2, 1e-12);
  EXPECT_TRUE(text.ends_with("held-out coverage 50.0% of 20 runs, median half-width 61.3%\n"))
      << text;
  // The held-out error |predicted / measured - 1| = |e^-r - 1| of each residual r: A's ten are
  // e^0.05 - 1 and 1 - e^-0.05 in turn, B's those of 0.1 (i - 9) for i = 10..19.
  double sum = 0;
  for (const double r : two_groups().residuals) sum += std::fabs(std::exp(-r) - 1.0);
  EXPECT_NEAR(dense.errors.mape, sum / 20, 1e-12);
  // The 10th and 11th smallest of the 20: e^0.05 - 1 (A's largest) and 1 - e^-0.1 (B's i = 10).
  EXPECT_NEAR(dense.errors.median, (std::exp(0.05) - 1 + 1 - std::exp(-0.1)) / 2, 1e-12);
  EXPECT_NE(text.find(fmt::format("\nheld-out dense MAPE {:.2f}%  median {:.2f}%\n",
                                  100 * dense.errors.mape, 100 * dense.errors.median)),
            std::string::npos)
      << text;
}

TEST(Validation, HeldOutIntervalOfAFamily) {
  const HeldOut h = two_groups();
  // The 19th smallest of the 20 |residuals| (ceil(21 * 0.9)): 0.9.
  const auto dense = held_out_interval(h, "dense");
  ASSERT_TRUE(dense);
  EXPECT_NEAR(dense->lo, std::exp(-0.9), 1e-12);
  EXPECT_NEAR(dense->hi, std::exp(0.9), 1e-12);
  EXPECT_FALSE(held_out_interval(h, "moe"));  // no residuals: no finite interval
  EXPECT_FALSE(held_out_widening(h));         // no run with few like it
  est::Calibration c;
  const est::Calibration before = c;
  derive_transformer_intervals(h, c);
  EXPECT_NEAR(c.interval_hi, std::exp(0.9), 1e-12);
  EXPECT_EQ(c.moe_interval_lo, before.moe_interval_lo);
  EXPECT_EQ(c.moe_interval_hi, before.moe_interval_hi);
  EXPECT_EQ(c.interval_widening, before.interval_widening);
  derive_dlrm_interval(h, c);
  EXPECT_EQ(c.dlrm.interval_hi, before.dlrm.interval_hi);
}

TEST(Validation, HeldOutFamiliesAreSeparate) {
  HeldOut h = two_groups();
  h.family[3] = "moe";
  EXPECT_EQ(h.families(), (std::vector<std::string>{"dense", "moe"}));
  const HeldOut::Family moe = h.of("moe");
  ASSERT_EQ(moe.residuals.size(), 1u);
  EXPECT_EQ(moe.residuals[0], h.residuals[3]);
  EXPECT_EQ(h.of("dense").residuals.size(), 19u);
}

}  // namespace
}  // namespace clustersweep::spaces
