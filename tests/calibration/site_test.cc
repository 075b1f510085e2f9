// Site calibration: the laws it obeys (no runs give the base byte for byte, a run pulls the
// factors towards it the more it weighs, a factor the runs do not show stays at its prior), a
// differential test against runs generated from known factors, and the shipped prior's
// reproducibility.
#include "calibration/site.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "spaces/catalog.h"
#include "spaces/toml_text.h"

namespace clustersweep::spaces {
namespace {

namespace est = estimator;

const std::string kData = std::string(CLUSTERSWEEP_SOURCE_DIR) + "/tests/apps/data/";

const std::vector<SiteRun>& dense_runs() {
  static const std::vector<SiteRun> runs =
      site_runs(read_runs(kData + "transformer_runs.csv", builtin_calibration()));
  return runs;
}

std::vector<SiteRun> runs_of(const std::string& source) {
  std::vector<SiteRun> out;
  for (const SiteRun& r : dense_runs())
    if (r.source == source) out.push_back(r);
  return out;
}

// The runs with the step each would take under `truth` as their measurement.
std::vector<SiteRun> measured_under(std::vector<SiteRun> runs, const est::Calibration& truth) {
  for (SiteRun& r : runs) r.measured_s = r.predict_s(truth);
  return runs;
}

int factor(SiteFactor f) { return static_cast<int>(f); }

TEST(Site, NoFactorsIsTheBase) {
  const est::Calibration& base = builtin_calibration();
  const est::Calibration c = apply_site_factors(base, SiteVector{});
  EXPECT_EQ(format_calibration(c, "h", builtin_support()),
            format_calibration(base, "h", builtin_support()));
}

TEST(Site, NoRunsIsTheBaseByteForByte) {
  const SiteCalibration site = calibrate_site({}, builtin_calibration(), builtin_support());
  EXPECT_EQ(format_site_calibration(site, "h"),
            format_calibration(builtin_calibration(), "h", builtin_support()));
  for (int k = 0; k < kNumSiteFactors; ++k) {
    EXPECT_EQ(site.fit.log_factor[k], 0);
    EXPECT_EQ(site.fit.sd[k], builtin_site_prior().sd[k]);
  }
}

TEST(Site, RecoversTheFactorsRunsWereGeneratedWith) {
  SiteVector truth{};
  truth[factor(SiteFactor::compute)] = std::log(0.9);
  truth[factor(SiteFactor::scale_out)] = std::log(0.7);
  truth[factor(SiteFactor::host)] = std::log(1.3);
  const est::Calibration& base = builtin_calibration();
  std::vector<SiteRun> runs = measured_under(dense_runs(), apply_site_factors(base, truth));
  // Many runs without noise: the likelihood outweighs the prior.
  for (SiteRun& r : runs) r.weight = 20;
  const SiteFit fit = fit_site_factors(runs, base, builtin_site_prior());
  for (const SiteFactor f : {SiteFactor::compute, SiteFactor::scale_out, SiteFactor::host}) {
    ASSERT_TRUE(fit.informed[factor(f)]) << site_factor_info(factor(f)).name;
    EXPECT_NEAR(fit.log_factor[factor(f)], truth[factor(f)], 0.02)
        << site_factor_info(factor(f)).name;
  }
  // The ones the truth leaves at 1 stay near it.
  for (const SiteFactor f : {SiteFactor::memory, SiteFactor::scale_up})
    EXPECT_NEAR(fit.log_factor[factor(f)], 0, 0.03) << site_factor_info(factor(f)).name;
  // Dense runs have no MoE dispatcher and no embedding exchange: those stay at their prior.
  for (const SiteFactor f : {SiteFactor::dispatcher, SiteFactor::embedding_exchange}) {
    EXPECT_FALSE(fit.informed[factor(f)]);
    EXPECT_EQ(fit.log_factor[factor(f)], 0);
    EXPECT_EQ(fit.sd[factor(f)], builtin_site_prior().sd[factor(f)]);
  }
}

TEST(Site, ARunPullsTheFactorsTowardsItTheMoreItWeighs) {
  const est::Calibration& base = builtin_calibration();
  std::vector<SiteRun> one = {runs_of("DGXC_BENCH").front()};
  const double predicted = one[0].predict_s(base);
  one[0].measured_s = 1.25 * predicted;  // 25% slower than the base predicts
  double previous_error = std::log(1.25);
  for (const double weight : {0.25, 1.0, 3.0, 10.0, 100.0}) {
    one[0].weight = weight;
    const SiteCalibration site = calibrate_site(one, base, builtin_support());
    const double error = std::log(one[0].measured_s / one[0].predict_s(site.calibration));
    EXPECT_GT(error, 0) << weight;  // never beyond the run
    EXPECT_LT(error, previous_error) << weight;
    previous_error = error;
  }
  EXPECT_LT(previous_error, 0.02);  // a hundred runs' worth: nearly all the way
  // Ten copies weigh as one run of weight ten.
  std::vector<SiteRun> ten(10, one[0]);
  for (SiteRun& r : ten) r.weight = 1;
  one[0].weight = 10;
  EXPECT_NEAR(fit_site_factors(ten, base, builtin_site_prior()).log_factor[0],
              fit_site_factors(one, base, builtin_site_prior()).log_factor[0], 1e-6);
}

TEST(Site, RunsTheBaseAlreadyPredictsLeaveItUnchanged) {
  const est::Calibration& base = builtin_calibration();
  const std::vector<SiteRun> runs = measured_under(runs_of("DGXC_BENCH"), base);
  const SiteCalibration site = calibrate_site(runs, base, builtin_support());
  for (int k = 0; k < kNumSiteFactors; ++k) EXPECT_NEAR(site.fit.log_factor[k], 0, 1e-6);
  EXPECT_LT(site.loo_mape, 1e-6);
  EXPECT_EQ(site.disagreeing_run, "");
  // Runs that agree narrow the interval.
  EXPECT_LT(site.interval.hi, base.interval_hi);
  EXPECT_GT(site.interval.lo, base.interval_lo);
}

TEST(Site, ARunThatDisagreesWidensTheIntervalAndIsNamed) {
  const est::Calibration& base = builtin_calibration();
  std::vector<SiteRun> runs = measured_under(runs_of("DGXC_BENCH"), base);
  runs.resize(4);
  const SiteCalibration agree = calibrate_site(runs, base, builtin_support());
  runs[2].measured_s *= 1.8;
  const SiteCalibration disagree = calibrate_site(runs, base, builtin_support());
  EXPECT_GT(disagree.interval.hi, agree.interval.hi);
  EXPECT_EQ(disagree.disagreeing_run, runs[2].id);
  EXPECT_NE(format_site_report(disagree).find("run " + runs[2].id + " disagrees with the others"),
            std::string::npos)
      << format_site_report(disagree);
}

// A site file's run ids and sources are the runs file's text: any character in them must come
// back from the file as it was.
TEST(Site, StringsAreWrittenAsTomlReadsThemBack) {
  const std::string text = "A \"quoted\" \\ source\nwith a tab\t and \u00e9";
  EXPECT_EQ(toml_quoted("H100 run 3"), "\"H100 run 3\"");
  EXPECT_EQ(toml_quoted(text), "\"A \\\"quoted\\\" \\\\ source\\nwith a tab\\t and \u00e9\"");
  const toml::table read = parse_toml("value = " + toml_quoted(text) + "\n", "test.toml");
  EXPECT_EQ(read["value"].value<std::string>(), text);
}

TEST(Site, ReportReadsLikeAdvice) {
  const est::Calibration& base = builtin_calibration();
  SiteVector truth{};
  truth[factor(SiteFactor::compute)] = std::log(0.9);
  const std::vector<SiteRun> runs =
      measured_under(runs_of("MOSAIC_LLMFOUNDRY"), apply_site_factors(base, truth));
  const SiteCalibration site =
      calibrate_site(std::vector<SiteRun>(runs.begin(), runs.begin() + 3), base, builtin_support());
  const std::string report = format_site_report(site);
  EXPECT_EQ(report.rfind("compute x0.9", 0), 0u) << report;
  EXPECT_NE(report.find(" from 3 runs; "), std::string::npos) << report;
  EXPECT_NE(report.find("unchanged (your runs do not show it): "), std::string::npos) << report;
  EXPECT_NE(report.find("MoE dispatcher, embedding exchange\n"), std::string::npos) << report;
  EXPECT_NE(report.find("leave-one-out error on your runs "), std::string::npos) << report;
  EXPECT_NE(report.find("dense intervals now ±"), std::string::npos) << report;
  // The file's [site] table and support tables count the runs.
  const std::string file = format_site_calibration(site, "h");
  EXPECT_NE(file.find("\n[site]\n"), std::string::npos);
  EXPECT_NE(file.find("runs = 3\n"), std::string::npos);
  EXPECT_NE(file.find("[site.factors.compute]\n"), std::string::npos);
  EXPECT_EQ(site.support.of(SupportFamily::dense).runs,
            builtin_support().of(SupportFamily::dense).runs + 3);
  // And the file reads back as the calibration it was written from.
  const est::Calibration back = parse_calibration(file, "site.toml");
  EXPECT_EQ(format_calibration(back, "h", site.support),
            format_calibration(site.calibration, "h", site.support));
}

TEST(Site, ShotsPredictEachGroupsOtherRunsWithAFitWithoutItsSource) {
  std::vector<MeasuredRun> rows;
  for (MeasuredRun& r : read_runs(kData + "transformer_runs.csv", builtin_calibration()))
    if (r.source == "NARAYANAN_SC21_T1" || r.source == "NARAYANAN_SC21_T2" ||
        r.source == "MEGATRON_README_2020")
      rows.push_back(std::move(r));
  ShotsOptions options;
  options.sweeps = 2;
  options.draws = 2;
  options.shots = 0;
  const ShotsReport none = site_shots(rows, est::Calibration{}, options);
  // MEGATRON_README_2020's V100 runs are two: too few for a group.
  ASSERT_EQ(none.groups.size(), 3u);
  EXPECT_EQ(none.groups[0].source + " " + none.groups[0].gpu,
            "MEGATRON_README_2020 A100-SXM4-40GB");
  for (const ShotsGroup& g : none.groups) {
    EXPECT_EQ(g.shot_mape, g.no_shot_mape);  // no shot: the held-out fit alone
    EXPECT_EQ(g.predictions, 2 * g.runs);
    // Site factors fitted on every run of the group leave them no worse off than none.
    EXPECT_GT(g.floor_mape, 0);
    EXPECT_LE(g.floor_mape, g.no_shot_mape) << g.source;
  }
  options.shots = 3;
  const ShotsReport three = site_shots(rows, est::Calibration{}, options);
  ASSERT_EQ(three.groups.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(three.groups[i].predictions, 2 * (three.groups[i].runs - 3));
    EXPECT_GT(three.groups[i].median_half_width, 0);
  }
  const std::string table = format_shots(three);
  EXPECT_EQ(table.rfind("\nsite calibration on 3 runs of each group held out with its source "
                        "(2 draws)\n",
                        0),
            0u)
      << table;
  EXPECT_NE(table.find("3-shot MAPE "), std::string::npos) << table;
  EXPECT_NE(table.find("\nall-run: each group's runs after site calibration on all of them, in "
                       "sample, "),
            std::string::npos)
      << table;
}

TEST(Site, ShippedPriorIsReproducible) {
  std::vector<SiteRun> runs = dense_runs();
  for (auto more : {site_runs(read_runs(kData + "moe_runs.csv", builtin_calibration())),
                    site_runs(read_dlrm_runs(kData + "dlrm_runs.csv", builtin_calibration()))})
    runs.insert(runs.end(), more.begin(), more.end());
  const SitePrior prior = fit_site_prior(runs, builtin_calibration());
  // Regenerate with `clustersweep calibrate tests/apps/data/transformer_runs.csv
  // tests/apps/data/moe_runs.csv tests/apps/data/dlrm_runs.csv --fit-prior
  // spaces/data/site_priors.toml`.
  EXPECT_EQ(format_site_prior(prior, ""), format_site_prior(builtin_site_prior(), ""));
}

}  // namespace
}  // namespace clustersweep::spaces
