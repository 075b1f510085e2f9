#pragma once
// Published, measured training runs (the format of ../shared/validation/transformer_runs.csv) read
// as points of the resolution layer, and the error statistics `clustersweep validate` reports.
// Each row becomes Settings whose origins name the file, line and column, so a run is resolved
// and checked exactly as `estimate` resolves and checks the same flags.
#include <string>
#include <vector>

#include "calibration/fit.h"
#include "estimator/estimator.h"
#include "spaces/resolve.h"

namespace clustersweep::spaces {

struct MeasuredRun {
  std::string id;
  std::string source;
  std::string gpu;           // the accelerator's catalog key
  std::string at;            // "FILE:LINE: column 'gpu'": where the row names its accelerator
  bool unknown_gpu = false;  // the catalog has no such accelerator (the reason says which)
  double measured_s = 0;
  // Why the run cannot be predicted ("unknown accelerator 'X'", a broken rule); empty when it can,
  // and then `sample` holds its point.
  std::string reason;
  // Whether a rule refused the run's plan ("cannot be estimated: RULE: ..."): a published run did
  // run, so this counts apart from the rows nothing could predict (no measurement, no accelerator).
  bool refused_by_rule = false;
  // A repair made to a misreported plan so that the run can still be predicted, as written in the
  // reason column (empty when the row is taken as published).
  std::string repair;
  // The runtime settings the row leaves unknown and the defaults they were predicted with, for the
  // reason column: "dispatcher unknown: predicted with alltoall; ..." (empty when none).
  std::string defaults;
  estimator::Sample sample;
  Settings settings;  // the row's settings, as resolved into `sample`
};

// Reads a runs file. Malformed values are InputErrors naming "FILE:LINE: column 'C'"; rows the
// estimator cannot represent get a reason instead.
std::vector<MeasuredRun> read_runs(const std::string& path,
                                   const estimator::Calibration& calibration);

// The recommendation-model runs format (../shared/validation/dlrm_runs.csv): a header with
// num_tables. `sharding = hybrid` (HugeCTR's automatic placement) is the planner's best.
bool is_dlrm_runs(const std::string& path);

struct MeasuredDlrmRun {
  std::string id;
  std::string source;
  std::string gpu;
  std::string at;            // "FILE:LINE: column 'gpu'": where the row names its accelerator
  bool unknown_gpu = false;  // the catalog has no such accelerator (the reason says which)
  // The training throughput the prediction is compared with: train_only_samples_per_s where the
  // file gives it (MLPerf's throughput without its periodic evaluations), else samples_per_s;
  // `target` names the column.
  double measured_samples_per_s = 0;
  std::string target;
  std::string published_sharding;  // the sharding column as published ("hybrid", "table", ...)
  std::string reason;              // empty when `point` can be predicted
  DlrmPoint point;
};
std::vector<MeasuredDlrmRun> read_dlrm_runs(const std::string& path,
                                            const estimator::Calibration& calibration);

// The training-energy runs format (../shared/validation/energy_runs.csv): a header with
// energy_scope.
bool is_energy_runs(const std::string& path);

// What a published energy figure covers (../shared/validation/README.md, "energy_runs.csv").
enum class EnergyScope : std::uint8_t { gpu_only, node, node_plus_network, facility, tdp_estimate };
const char* to_string(EnergyScope scope) noexcept;

struct MeasuredEnergyRun {
  std::string id;
  std::string source;
  std::string family;  // transformer, moe, lora, dlrm, encoder
  EnergyScope scope = EnergyScope::gpu_only;
  double measured_kwh = 0;
  double measured_w = 0;   // average power per GPU at the scope, before PUE; 0 when not known
  double pue = 0;          // the site's, for a facility row (0: not given)
  double steps = 0;        // optimizer steps the energy covers
  std::string steps_from;  // "tokens_trained" or "train_s / step_time_s"
  std::string reason;      // why the row is not predicted; empty when it is
  bool dlrm = false;
  Point point;           // a transformer row's
  DlrmPoint dlrm_point;  // a recommendation-model row's
};
// Reads an energy runs file: a row is predicted when it is a measurement (not a TDP estimate) of a
// transformer, MoE, LoRA or DLRM run with a GPU count, a catalog accelerator and a model shape,
// and the steps it covers follow from its tokens or its time; every other row says why not.
// LoRA rows are predicted with their lora_rank column's rank, else with 16, MLPerf's, which sets
// the adapters' negligible share of the work only.
std::vector<MeasuredEnergyRun> read_energy_runs(const std::string& path,
                                                const estimator::Calibration& calibration);

struct ErrorStats {
  std::size_t n = 0;
  double mape = 0, median = 0, geomean = 0, max = 0;
};
// Of absolute relative errors.
ErrorStats error_stats(std::vector<double> abs_errors);
// The median of values sorted ascending (the mean of the middle two for an even count); 0 for none.
double sorted_median(const std::vector<double>& sorted);

}  // namespace clustersweep::spaces
