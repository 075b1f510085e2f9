#pragma once
// The sweep spec of one design: the workload and cluster of a point's settings (as `estimate`
// takes them) with every plan axis the settings do not fix at "all". `best` searches the plans of
// that spec's single design, so its answer is the one a sweep of the same spec would keep, and a
// user can grow the printed spec into a sweep.
#include <string>

#include "spaces/resolve.h"
#include "spaces/search.h"
#include "spaces/space.h"

namespace clustersweep::spaces {

struct DesignSpecOptions {
  Objective objective = Objective::step_time;
  double training_tokens = 0;  // 0: the spec's default
  Pricing pricing;
  estimator::Reliability reliability;
  // Rank by the upper end of each plan's interval (RobustRanking); not written into the spec.
  bool robust = false;
  // Without a recompute setting: the recompute axis's values besides "all"'s none, selective and
  // full (a run's selective recompute with its modules, which `validate --best` searches too).
  std::vector<std::string> more_recomputes;
};

// The TOML text of the one-design spec of `settings`, which resolve() accepts as `point`. A
// catalog model is named by its key; a model given or changed by architecture settings is written
// out as [models.custom]. dp becomes the constraint "dp == N"; capacity_factor is not a plan axis
// of a sweep and is an InputError naming where it was given. The software stack's settings
// (spaces/stack_settings.h) are the point's, one value each: the search keeps to them.
std::string design_spec(const Settings& settings, const Point& point,
                        const DesignSpecOptions& options);

// The settings of a point's plan (tp, pp, dp, ..., capacity_factor): what design_spec() turns into
// fixed plan axes, and what a search of the point's design leaves out. Not the stack's settings,
// which a search keeps as the point has them.
const std::vector<std::string>& plan_setting_names();

// The `k` best plans of the design of `settings` (resolved to `point`) by the options' objective,
// found by the exact search (or every plan evaluated, if `exhaustive`), with the point's own
// calibration. InputError naming the setting to blame when the design breaks a rule or when the
// plan settings given leave no valid plan.
struct DesignSearch {
  Space space;
  Design design;
  std::vector<PlanResult> plans;  // best first; empty when no valid plan fits in memory
  SearchStats stats;
};
DesignSearch search_design(const Settings& settings, const Point& point,
                           const DesignSpecOptions& options, std::size_t k, bool exhaustive);

}  // namespace clustersweep::spaces
