#pragma once
// Site calibration (docs/calibration.md, "Your own cluster"): a few measured runs of one's own
// stack move a small fixed set of site factors, each a multiplier on one mechanism of the step
// model, from the base calibration towards what the runs show. Each factor's prior is centred on
// the base (log-factor 0) with the spread between the sources of the published runs (empirical
// Bayes: each source's factors fitted alone); the site's factors are the posterior mode, and the
// prediction intervals the posterior predictive (Laplace approximation of the posterior).
#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/runs.h"
#include "estimator/estimator.h"
#include "spaces/support.h"

namespace clustersweep::spaces {

// The site factors, each shared by every family that has its mechanism.
enum class SiteFactor : std::uint8_t {
  compute,             // GEMM and attention efficiency (dense, MoE, DLRM MLPs)
  memory,              // memory-bound efficiency (HBM streams, embedding gathers)
  scale_up,            // NVLink collective efficiency
  scale_out,           // scale-out collective efficiency
  host,                // host/framework seconds per layer, per step, per launch (time multiplier)
  dispatcher,          // MoE token dispatch and combine efficiency
  embedding_exchange,  // DLRM embedding all-to-all efficiency
};
inline constexpr int kNumSiteFactors = 7;
using SiteVector = std::array<double, kNumSiteFactors>;

struct SiteFactorInfo {
  const char* name;      // key in the [site] and [site_prior] tables
  const char* label;     // in the report: "compute x0.91"
  bool time_multiplier;  // true: >1 is slower (host seconds); false: an efficiency, >1 is faster
  const char* doc;
};
const SiteFactorInfo& site_factor_info(int factor) noexcept;

// `base` with every parameter of each factor's mechanism scaled by exp(log_factor); efficiencies
// stay at most 1 (a fraction of a peak). All zeros return `base` unchanged.
estimator::Calibration apply_site_factors(const estimator::Calibration& base,
                                          const SiteVector& log_factor);

// One measured run as the site fit takes it: its predicted step under any calibration.
struct SiteRun {
  std::string id, source, gpu;
  SupportFamily family = SupportFamily::dense;
  SupportRun support;
  double measured_s = 0;
  double weight = 1;  // relative weight in the likelihood
  std::function<double(const estimator::Calibration&)> predict_s;
};
std::vector<SiteRun> site_runs(const std::vector<MeasuredRun>& rows);
std::vector<SiteRun> site_runs(const std::vector<MeasuredDlrmRun>& rows);

// Reads runs files of the step-time formats (transformer, MoE, recommendation models) for a site
// calibration: a row on an accelerator the catalog lacks, a training-energy file or no
// predictable row at all is an InputError naming the file and line. Rows a rule refuses or
// without a measurement are left out and counted in `skipped`.
struct SiteRunsRead {
  std::vector<SiteRun> runs;
  std::vector<std::string> skipped;  // "FILE: ID: reason"
};
SiteRunsRead read_site_runs(const std::vector<std::string>& paths,
                            const estimator::Calibration& base);

// The prior of the site factors: each log-factor's sd between sources, and the residual sd within
// one source once its factors are fitted.
struct SitePrior {
  SiteVector sd{};
  double within_sd = 0.1;
  int sources = 0;  // sources the widths were measured on
  int runs = 0;
  std::array<int, kNumSiteFactors> informed_sources{};  // of them, those whose runs set the factor
};
// Empirical Bayes on the runs' sources (`runs[i].source`) of at least 4 runs:
// expectation-maximisation of the hierarchical model (Gaussian factors, Student-t residuals),
// each source's factors the posterior mode under the current widths.
SitePrior fit_site_prior(const std::vector<SiteRun>& runs, const estimator::Calibration& base);
// The shipped widths (spaces/data/site_priors.toml, written by fit_site_prior on the shipped runs
// and the shipped calibration: `Site.ShippedPriorIsReproducible`).
const SitePrior& builtin_site_prior();
SitePrior parse_site_prior(std::string_view toml, std::string_view filename);
std::string format_site_prior(const SitePrior& prior, std::string_view header);

// The posterior of the site factors given runs.
struct SiteFit {
  SiteVector log_factor{};  // posterior mode
  SiteVector sd{};          // posterior sd of each log-factor (Laplace)
  std::array<double, kNumSiteFactors * kNumSiteFactors> covariance{};
  std::array<bool, kNumSiteFactors> informed{};  // the runs show the factor's mechanism
  std::vector<double> log_residuals;             // log(measured / predicted) at the mode
  std::vector<double> jacobian;  // d log(predicted) / d log-factor, run-major, at the mode
};
// Gauss-Newton (iteratively reweighted) on the log posterior: Gaussian prior N(0, prior.sd^2) on
// each log-factor and Student-t log residuals of scale prior.within_sd, each run's log-likelihood
// times its weight. A factor whose mechanism is a
// negligible share of every run's step stays at its prior. No runs: the prior.
SiteFit fit_site_factors(const std::vector<SiteRun>& runs, const estimator::Calibration& base,
                         const SitePrior& prior);

// A site calibration: the factors, what they give, and how its runs agree with it.
struct SiteCalibration {
  estimator::Calibration calibration;  // base with the factors applied and the site's intervals
  CalibrationSupport support;          // the base's with the site's runs added
  SiteFit fit;
  SitePrior prior;
  std::size_t runs = 0;
  std::vector<std::string> ids, sources, accelerators, families;  // sorted, each once (not ids)
  std::vector<double> loo_log_residuals;  // each run predicted by the factors of the others
  double loo_mape = 0;                    // of those predictions (NaN with one run)
  std::string disagreeing_run;  // the run farthest outside what the others predict, if notable
  double disagreement = 0;      // its standardised leave-one-out residual
  // The family the report's interval is of (the one most runs are), its interval before and after.
  SupportFamily main_family = SupportFamily::dense;
  estimator::StepInterval base_interval, interval;
  std::vector<std::string> skipped;
};
SiteCalibration calibrate_site(const std::vector<SiteRun>& runs, const estimator::Calibration& base,
                               const CalibrationSupport& base_support,
                               const SitePrior& prior = builtin_site_prior());

// How site calibration does on sources a calibration never saw (`validate --held-out --shots K`):
// for each (source, accelerator) group of at least `min_runs` runs, a calibration fitted without
// the group's source (and the factors' prior measured without it) is site-calibrated on `shots`
// of the group's runs, drawn `draws` times with fixed seeds, and predicts the group's other runs.
struct ShotsOptions {
  int shots = 3;
  int draws = 5;
  int min_runs = 6;
  int sweeps = 12;  // of each held-out fit
};
struct ShotsGroup {
  std::string source, gpu;
  std::size_t runs = 0;
  double no_shot_mape = 0;  // of the remaining runs with the held-out fit alone, over the draws
  double shot_mape = 0;     // the same after site calibration
  // Every run of the group after site calibration on all of them, in sample: about the least
  // error the site factors can leave on these runs, whatever K.
  double floor_mape = 0;
  std::size_t predictions = 0, covered = 0;  // of the remaining runs, over the draws
  double median_half_width = 0;              // of their site intervals
};
struct ShotsReport {
  int shots = 0, draws = 0;
  std::vector<ShotsGroup> groups;
  double no_shot_mape = 0, shot_mape = 0, floor_mape = 0;  // means over the groups
  std::size_t predictions = 0, covered = 0;
  double median_half_width = 0;  // over every prediction
  std::size_t worse_groups = 0;  // groups more than 1 point worse than with no shot
};
ShotsReport site_shots(const std::vector<MeasuredRun>& rows, const estimator::Calibration& start,
                       const ShotsOptions& options);
ShotsReport site_shots(const std::vector<MeasuredDlrmRun>& rows,
                       const estimator::Calibration& start, const ShotsOptions& options);
std::string format_shots(const ShotsReport& report);

// The printed advice: "compute x0.91 (0.86-0.96) from 3 runs; ...".
std::string format_site_report(const SiteCalibration& site);
// The calibration file: the calibration, its support tables and the [site] table.
std::string format_site_calibration(const SiteCalibration& site, std::string_view header);
// 90% range of a log-factor with the given posterior sd.
inline constexpr double kSiteZ90 = 1.6448536269514722;

}  // namespace clustersweep::spaces
