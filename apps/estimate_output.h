#pragma once
// How a transformer estimate is shown, shared by `estimate` (one plan) and `best` (its top
// plans): the parts of the step time and of the memory per GPU in one order with one label each,
// as text rows and as JSON.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "estimator/dlrm.h"
#include "estimator/estimator.h"
#include "estimator/job.h"
#include "spaces/resolve.h"

namespace clustersweep::cli {

using Rows = std::vector<std::pair<const char*, double>>;

// The step time's parts (the expert rows only for a Mixture-of-Experts model: a dense one has
// none), and the memory per GPU by kind.
Rows step_time_rows(const estimator::StepTime& time, bool moe);
Rows memory_rows(const estimator::Memory& memory, bool moe);

// The step time with its 90% prediction interval and calibration support (a note when it is few),
// and its parts, each with its share.
void print_step_time(double total_s, const spaces::PointInterval& interval, const Rows& parts);
// The ends of the interval and the support as JSON: {"step_time_lo_s": ..., "step_time_hi_s": ...,
// "calibration_support": ...}.
void add_interval_json(nlohmann::ordered_json& out, double total_s,
                       const spaces::PointInterval& interval);
// The memory of one GPU by kind, then where it lives against the capacities, then feasibility.
void print_memory(const char* title, double hbm_bytes, double expansion_bytes, const Rows& kinds,
                  const estimator::Cluster& cluster, bool feasible, estimator::Infeasible reason);

// The training job of an estimate (estimator/job.h): the point's tokens (or samples) in `steps`
// steps, saving `state_bytes` per checkpoint, with the figures a sweep stores in its job columns,
// computed by the same estimator::job_figures().
struct TrainingJob {
  double amount = 0;
  const char* unit = "tokens";
  double steps = 0;
  double state_bytes = 0;
  estimator::JobDesign design;
  estimator::JobFigures figures;
  estimator::StepPower power;  // of a step, for the job's energy at every scope
};
TrainingJob training_job(const spaces::Point& point, const estimator::Plan& plan,
                         const estimator::Estimator& estimator,
                         const estimator::Estimate& estimate);
TrainingJob training_job(const spaces::DlrmPoint& point, const estimator::DlrmEstimator& estimator,
                         const estimator::DlrmEstimate& estimate);
// Its failures, checkpoints, restarts, goodput and time and energy to train, as text rows under
// `title`.
void print_job(const TrainingJob& job, std::string_view title = "training job");
nlohmann::ordered_json job_json(const TrainingJob& job);

// The facility's PUE an estimate's facility energy assumes: the [pricing] default of a sweep.
double default_pue();
// The average power of a step per GPU, per node and of the network, and the step's energy at
// every scope (GPUs, servers, servers and network, facility), as text rows and as JSON.
void print_power(const estimator::StepPower& power, const estimator::Cluster& cluster);
nlohmann::ordered_json power_json(const estimator::StepPower& power);
// The scale-out network's bill of materials: a row per tier (switches, radix, links, optics,
// cables, NICs, USD, W) and the totals; nothing on one node.
void print_network(const estimator::NetworkBill& bill);
nlohmann::ordered_json network_json(const estimator::NetworkBill& bill);

// Non-finite numbers (a zero-bandwidth link) are null, as JSON has no infinity.
nlohmann::json json_number(double x);
// The plan's settings, the stack's among them (as the store's columns name them).
nlohmann::ordered_json plan_json(const estimator::Plan& plan);
// "cuda_graph none, dispatcher alltoall, ..., attention_kernel cudnn": every stack setting (the
// rank order only with `rank_order`: best searches it, so it is each plan's, not the stack's).
std::string stack_text(const estimator::Stack& stack, bool rank_order = true);
// The stack settings (framework first) that the user did not give, as an answer assumed them:
// "assumed (not given): framework, cuda_graph, ...; --framework and the stack flags choose", or ""
// when every one was given. `origin` is the resolved point's (a setting given has none).
std::string assumed_stack_text(const std::map<std::string, spaces::Origin>& origin,
                               bool rank_order = true);
// A recommendation model's framework as an answer took it: "hugectr", or "hugectr (assumed: the
// fastest GB200-186GB runs; --framework to choose)" when the user gave none.
std::string dlrm_framework_text(const spaces::DlrmPoint& point);
nlohmann::ordered_json step_time_json(const estimator::StepTime& time);
nlohmann::ordered_json memory_json(const estimator::Memory& memory,
                                   const estimator::Cluster& cluster);

}  // namespace clustersweep::cli
