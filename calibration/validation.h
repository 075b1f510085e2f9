#pragma once
// Validation against published runs: each run predicted and compared with its measurement, the
// error statistics per source, the best plan of each run's design against the tuned one, and the
// held-out residuals the prediction intervals come from (docs/calibration.md). Every result is a
// plain struct, and every table a string, so that `clustersweep validate`, the Python module and
// the tests share them without going through stdout.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibration/fit.h"
#include "calibration/runs.h"
#include "estimator/estimator.h"
#include "spaces/support.h"

namespace clustersweep::spaces {

// Reads runs files in turn into one list. Each family's predictable runs (dense and LoRA, MoE)
// weigh 1 in total in a fit, whichever files hold them, so that the few MoE runs are not outvoted
// by the many dense ones on the parameters both families share; within a family every run counts
// the same, since the objective is the error a user sees on a published run, and a file of a few
// runs of other vendors' parts weighs as many runs, not as a family.
std::vector<MeasuredRun> read_weighted_runs(const std::vector<std::string>& paths,
                                            const estimator::Calibration& calibration);

// The predictable runs of a runs file as a fit takes them: the samples, each as the support tables
// count it, and the group each is held out with (its source; "run ID" for recommendation models,
// whose runs come nearly all from one source).
template <class Sample>
struct FitRuns {
  std::vector<Sample> samples;
  std::vector<SupportRun> support;
  std::vector<std::string> groups;
};
FitRuns<estimator::Sample> fit_runs(const std::vector<MeasuredRun>& rows);
FitRuns<estimator::DlrmSample> fit_runs(const std::vector<MeasuredDlrmRun>& rows);

// What a prediction is of: a transformer's step time (s) or a recommendation model's throughput
// (samples/s). It decides the columns of the predictions CSV and the label of the overall line.
enum class Measure : std::uint8_t { step_time, throughput };

// One run as predicted: a row of the predictions CSV.
struct Prediction {
  std::string id;
  std::string source;
  double measured = 0;           // in the report's Measure; 0 when the file gives none
  std::string reason;            // why the run could not be predicted; empty when it was
  bool refused_by_rule = false;  // step time: the reason is a rule refusing the run's plan
  double predicted = 0;          // and its 90% prediction interval [lo, hi]
  double lo = 0;
  double hi = 0;
  double error = 0;  // relative: predicted / measured - 1
  bool out_of_memory = false;
  bool moe = false;         // step time: the family (over-capacity counts are by family)
  std::string framework;    // step time: the run's framework (spaces/frameworks.h)
  double memory_bytes = 0;  // step time: the predicted HBM need per GPU
  std::string repair;       // step time: the repair of a misreported plan, if any
  std::string defaults;     // step time: the runtime settings left unknown and their defaults
  std::string sharding;     // throughput: the planner's placement of the run's sharding
  std::string target;       // throughput: the column compared with (train-only or as published)
  std::string published_sharding;
  // Throughput: every sharding of the run's tables (each for all tables, and the planner's best
  // placement as "best"), fastest first ("hybrid < best < column < ..."), and whether the
  // planner's placement is of the kind the published run used (nullopt: no published kind).
  std::string ranking;
  std::optional<bool> planner_matches;
  // With a best-plan search: the best plan's predicted step and the plan as "tp 8 pp 8 ...";
  // nullopt when the search found no plan or did not run.
  std::optional<double> best_step_s;
  std::string best_plan;
};

struct ValidationReport {
  Measure measure = Measure::step_time;
  bool best = false;  // each predicted row carries a best-plan search
  std::vector<Prediction> rows;
  // Of the absolute relative errors of the predicted rows, per source and over all.
  std::map<std::string, ErrorStats> errors_by_source;
  ErrorStats errors;
  std::size_t unpredicted = 0;
  std::size_t refused_by_rule = 0;    // of the unpredicted, runs whose plan a rule refused
  std::size_t out_of_memory = 0;      // predicted runs the memory model puts over HBM capacity
  std::size_t planner_compared = 0;   // throughput: runs with a published sharding to compare
  std::size_t planner_matched = 0;    // of them, where the planner picks the published kind
  std::size_t out_of_memory_moe = 0;  // of them, Mixture-of-Experts runs
  std::size_t repaired = 0;           // predicted runs whose misreported plan was repaired
};

// Predicts every dense and MoE run with `calibration`. With `best`, also searches every plan of
// each run's model, cluster, batch and precision (as `best` does) for the best one, within the
// run's framework and stack; `robust` ranks them as `best --robust` does.
ValidationReport validate_runs(const std::vector<MeasuredRun>& rows,
                               const estimator::Calibration& calibration, bool best = false,
                               bool robust = false);
// Predicts every recommendation-model run's throughput with the planner's placement of the run's
// sharding.
ValidationReport validate_runs(const std::vector<MeasuredDlrmRun>& rows,
                               const estimator::Calibration& calibration);

// The predictions CSV: a header and one line per row, in the columns of the report's Measure.
std::string format_predictions_csv(const ValidationReport& report);
// The error table: per source, then all rows.
std::string format_error_table(const ValidationReport& report);
// "predicted N of M rows; ..." with what kept the others from being predicted.
std::string format_summary(const ValidationReport& report);
// The error table, the summary and the overall MAPE, median and geometric mean.
std::string format_report(const ValidationReport& report);

// Per source: the best plan's predicted step over the measured run's. Below 1 the search finds a
// plan the model calls faster than what was run; far below, a blind spot of the model it exploits.
struct RatioStats {
  std::string source;
  std::size_t n = 0;
  double median = 0, min = 0, max = 0;
  std::size_t in_band = 0;  // ratios within [kBestRatioLo, kBestRatioHi]
};
inline constexpr double kBestRatioLo = 0.85;
inline constexpr double kBestRatioHi = 1.10;
struct BestRatios {
  std::vector<RatioStats> sources;     // by source name
  std::vector<RatioStats> frameworks;  // by framework and family: "megatron-core moe"
  RatioStats all;                      // n == 0 when no run has a best plan
};
BestRatios best_ratios(const ValidationReport& report);
std::string format_best_ratios(const BestRatios& ratios);

// Every group of runs predicted by a fit on the others: the held-out residuals (log measured /
// predicted) the prediction intervals come from. Intervals are per family.
struct HeldOut {
  std::vector<std::string> family, source;  // of each sample
  std::vector<int> group;
  std::vector<double> residuals;
  std::vector<bool> few;  // the calibration support of the run was few when it was held out
  // The residuals, groups and few flags of one family.
  struct Family {
    std::vector<double> residuals;
    std::vector<int> group;
    std::vector<bool> few;
  };
  Family of(const std::string& f) const;
  std::vector<std::string> families() const;  // sorted, each once
};
// Groups are the runs' (family, group name) pairs; each fit starts from `start`.
HeldOut held_out(const FitRuns<estimator::Sample>& runs, const estimator::Calibration& start,
                 int sweeps);
HeldOut held_out(const FitRuns<estimator::DlrmSample>& runs, const estimator::Calibration& start,
                 int sweeps);

// The 90% interval of `family` from all its held-out residuals, as measured / predicted ratios;
// nullopt when the residuals are too few for a finite one.
std::optional<estimator::StepInterval> held_out_interval(const HeldOut& h,
                                                         const std::string& family);
// The widening of the interval of a point with few calibration runs like it: the largest any
// family's held-out runs show, never below 1; nullopt when no family has enough runs of both
// kinds. One factor serves every family, the recommendation models' too, whose 23 runs are too
// few to tell their own.
std::optional<double> held_out_widening(const HeldOut& h);
// Sets what a fit derives rather than moves, where `h` gives it: the dense and MoE intervals and
// the widening; or the recommendation models' interval. Kept where it does not.
void derive_transformer_intervals(const HeldOut& h, estimator::Calibration& calibration);
void derive_dlrm_interval(const HeldOut& h, estimator::Calibration& calibration);

// Per group, how often its runs fall in the 90% interval the other groups' held-out residuals give
// it (widened for its runs with few like them in the other groups), and how wide that interval is.
struct HeldOutGroup {
  std::string source;
  std::size_t samples = 0, covered = 0, few = 0;
  double half_width = 0;  // of the unwidened interval, as a fraction of the prediction
  double lo = 0, hi = 0;  // the unwidened interval as measured / predicted ratios
  double widening = 1;    // the exponent of the interval of the `few` runs
  double mape = 0;        // of its held-out predictions, |predicted / measured - 1|
};
struct HeldOutFamily {
  std::string family;
  std::vector<HeldOutGroup> groups;
  std::size_t samples = 0, covered = 0;
  // The error of the held-out predictions, |predicted / measured - 1| (leave-one-source-out):
  // what a run of a stack the calibration never saw may expect.
  ErrorStats errors;
};
struct HeldOutReport {
  std::vector<HeldOutFamily> families;  // by name
  std::size_t samples = 0, covered = 0;
  double coverage = 0;           // covered / samples
  double median_half_width = 0;  // over the runs, each with its own (widened or not) interval
};
HeldOutReport held_out_report(const HeldOut& h);
std::string format_held_out(const HeldOutReport& report);

}  // namespace clustersweep::spaces
