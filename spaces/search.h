#pragma once
// The exact plan search of one design (docs/search.md): the plans exhaustive enumeration of the
// design's plan axes would keep, found while evaluating far fewer of them. Subtrees of the plan
// space (the parallel degrees first, then vp and micro-batch, then recompute) are ruled out by
// lower bounds (estimator::Estimator::bound) on their HBM need and on the objective, best-first.
#include <cstdint>
#include <vector>

#include "estimator/estimator.h"
#include "spaces/space.h"
#include "spaces/support.h"

namespace clustersweep::spaces {

// The value of a point the keep modes best-per-design minimize: its step, its time or energy to
// train over `steps` steps with the failures and checkpoints of `job` (estimator/job.h), or the
// cost of that time and energy under `pricing` with its accelerator at `usd_per_gpu_s`
// (Space::usd_per_gpu_s). Non-decreasing in the step time and in the energy, which the search's
// bounds rely on.
double objective_value(Objective objective, const Pricing& pricing, double usd_per_gpu_s,
                       double step_s, double energy_per_step_j, double steps, double num_gpus,
                       const estimator::JobDesign& job) noexcept;

// The Pareto-optimal candidates (minimizing step time and energy per step) of one design, as
// indices into `time`/`energy`, ascending. A point is dropped only when another is no worse in both
// and better in one; exact ties are all kept.
std::vector<std::size_t> pareto_front(const std::vector<double>& time,
                                      const std::vector<double>& energy);

// One evaluated, feasible plan of a design.
struct PlanResult {
  std::uint64_t plan_index = 0;  // within the design: point id = design * plan_points() + this
  estimator::Plan plan;
  estimator::Estimate estimate;
  double objective = 0;
};

struct SearchStats {
  std::uint64_t evaluated = 0;  // plans the estimator evaluated
  std::uint64_t invalid = 0;    // plans visited and removed by a rule or constraint
  std::uint64_t pruned = 0;     // plans never visited: a bound (or the degrees rule) ruled out
                                // their subtree; evaluated + invalid + pruned = plan_points()
  std::uint64_t boxes = 0;      // subtrees bounded, each about as costly as one evaluation
};

// Ranking by the estimator's own error (`best --robust`): a plan's objective times the upper end
// of its 90% interval, which widens where the calibration has few runs like the plan
// (spaces/support.h). A plan then wins only when it beats the others beyond that error.
struct RobustRanking {
  DesignSupport support;
  estimator::Model model;            // the design's (its regimes depend on it)
  estimator::StepInterval interval;  // the calibration's, before any widening
  double widening = 1;               // estimator::Calibration::interval_widening
  double factor(const estimator::Plan& plan) const noexcept {
    return supported_interval(interval, support.of(regime_of(plan, model), plan.cp), widening).hi;
  }
  // No plan's factor is smaller: widening only moves the upper end up.
  double least_factor() const noexcept { return interval.hi; }
};

struct SearchOptions {
  Objective objective = Objective::step_time;
  double steps = 1;          // optimizer steps to train, for the time/energy/cost objectives
  estimator::JobDesign job;  // failures and checkpoints (Space::job)
  bool exhaustive = false;   // evaluate every plan (the reference the search must equal)
  const RobustRanking* robust = nullptr;  // rank by the interval's upper end
};

// The k best feasible plans of `design` (accepted by Space::design) by the objective, best first;
// ties in the objective go to the lower plan index, as a sweep's best-per-design keeps them.
std::vector<PlanResult> best_plans(const Space& space, const Design& design,
                                   const estimator::Estimator& estimator,
                                   const SearchOptions& options, std::size_t k,
                                   SearchStats* stats = nullptr);

// Every feasible plan of `design` that can be on its (step time, energy per step) Pareto front,
// by ascending plan index: a superset of the front that contains every plan pareto_front() keeps
// from all of the design's plans, so pareto_front() of these gives the same rows.
std::vector<PlanResult> pareto_candidates(const Space& space, const Design& design,
                                          const estimator::Estimator& estimator,
                                          const SearchOptions& options,
                                          SearchStats* stats = nullptr);

}  // namespace clustersweep::spaces
