#pragma once
// How long a sweep will take and how big its store will be, from a short timed sample of the
// estimator on points spread over the space (`clustersweep plan`).
#include <cstdint>

#include "spaces/space.h"

namespace clustersweep::spaces {

struct Forecast {
  std::uint64_t sampled_designs = 0;
  std::uint64_t sampled_plans = 0;      // structural checks timed
  std::uint64_t sampled_estimates = 0;  // estimator evaluations timed
  std::uint64_t sampled_feasible = 0;   // of the estimates
  double design_s = 0;                  // per design: design() + building its estimator::Estimator
  double check_s = 0;            // per point: decoding and the structural checks (Space::plan)
  double estimate_s = 0;         // per structurally valid point: Estimator::estimate
  double feasible_fraction = 0;  // of the valid points sampled, the fraction that fit in memory
  // Mean size of a design's Pareto front (step time vs energy per step) over the sampled plans of
  // the sampled designs: a lower estimate of the front over all plans.
  double pareto_per_design = 0;
  double core_seconds = 0;            // the whole sweep on one core
  double evaluations_per_second = 0;  // estimator evaluations per second per core
};

// Times about `budget_s` seconds of work on designs and plans spread evenly over the space and
// extrapolates to all of it; `valid_points` is Space::valid_points(). Deterministic sampling,
// noisy timings (use the result as an order of magnitude).
Forecast forecast(const Space& space, std::uint64_t valid_points, double budget_s = 0.5);

// Rows the store will hold for the spec's keep mode: all points, the feasible ones (estimated
// from the sample), one per design, or (pareto-per-design) designs x the sampled front size.
double forecast_rows(const Space& space, std::uint64_t valid_points, const Forecast& forecast);

}  // namespace clustersweep::spaces
