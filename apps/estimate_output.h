#pragma once
// How a transformer estimate is shown, shared by `estimate` (one plan) and `best` (its top
// plans): the parts of the step time and of the memory per GPU in one order with one label each,
// as text rows and as JSON.
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>
#include <vector>

#include "estimator/estimator.h"
#include "estimator/job.h"

namespace clustersweep::cli {

using Rows = std::vector<std::pair<const char*, double>>;

// The step time's parts (the expert rows only for a Mixture-of-Experts model: a dense one has
// none), and the memory per GPU by kind.
Rows step_time_rows(const estimator::StepTime& time, bool moe);
Rows memory_rows(const estimator::Memory& memory, bool moe);

// The step time with its 90% prediction interval, and its parts, each with its share.
void print_step_time(double total_s, const estimator::StepInterval& interval, const Rows& parts);
// The ends of the interval as JSON: {"step_time_lo_s": ..., "step_time_hi_s": ...}.
void add_interval_json(nlohmann::ordered_json& out, double total_s,
                       const estimator::StepInterval& interval);
// The memory of one GPU by kind, then where it lives against the capacities, then feasibility.
void print_memory(const char* title, double hbm_bytes, double expansion_bytes, const Rows& kinds,
                  const estimator::Cluster& cluster, bool feasible, estimator::Infeasible reason);

// The training job of an estimate (estimator/job.h): `amount` tokens or samples in `steps` steps
// of `step_s`, on `cluster`, saving `state_bytes` per checkpoint. What a sweep stores as
// time_to_train_s, time_to_train_failure_free_s, goodput, checkpoint_interval_s and
// energy_to_train_j, computed the same way.
struct TrainingJob {
  double amount = 0;
  const char* unit = "tokens";
  double steps = 0;
  double state_bytes = 0;
  estimator::JobDesign design;
  estimator::JobOutcome outcome;
  double failure_free_s = 0;
  double energy_j = 0;
  double wall_lo_s = 0, wall_hi_s = 0;  // at the ends of the step's 90% prediction interval
};
TrainingJob training_job(double amount, const char* unit, double steps,
                         const estimator::Reliability& reliability,
                         const estimator::Cluster& cluster, double state_bytes, double step_s,
                         double energy_per_step_j, const estimator::StepInterval& interval);
// Its failures, checkpoints, restarts, goodput and time and energy to train, as text rows under
// `title`.
void print_job(const TrainingJob& job, std::string_view title = "training job");
nlohmann::ordered_json job_json(const TrainingJob& job);

// Non-finite numbers (a zero-bandwidth link) are null, as JSON has no infinity.
nlohmann::json json_number(double x);
nlohmann::ordered_json plan_json(const estimator::Plan& plan);
nlohmann::ordered_json step_time_json(const estimator::StepTime& time);
nlohmann::ordered_json memory_json(const estimator::Memory& memory,
                                   const estimator::Cluster& cluster);

}  // namespace clustersweep::cli
