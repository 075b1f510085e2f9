#include "spaces/forecast.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <vector>

namespace clustersweep::spaces {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Keeps the optimizer from dropping estimates whose results are unused.
volatile double g_sink = 0;

// Points no other point beats in both step time and energy (minimizing both).
std::size_t front_size(std::vector<std::pair<double, double>>& points) {
  std::sort(points.begin(), points.end());
  std::size_t size = 0;
  double best_energy = std::numeric_limits<double>::infinity();
  for (const auto& [time, energy] : points) {
    if (energy < best_energy) {
      ++size;
      best_energy = energy;
    }
  }
  return size;
}

}  // namespace

namespace {

// A recommendation-model space: each sampled design's sharding values placed by the planner and
// estimated, repeated until the budget is spent.
Forecast forecast_dlrm(const Space& space, std::uint64_t valid_points, double budget_s) {
  Forecast f;
  constexpr std::uint64_t kMaxDesigns = 16;
  const std::uint64_t designs = space.designs();
  const std::uint64_t sample_designs = std::min(designs, kMaxDesigns);
  std::vector<DlrmDesign> sampled;
  Violation why;
  double design_time = 0;
  for (std::uint64_t i = 0; i < sample_designs; ++i) {
    DlrmDesign d;
    const auto start = Clock::now();
    const bool ok = space.dlrm_design(i * designs / sample_designs, d, why);
    design_time += seconds_since(start);
    if (ok) sampled.push_back(d);
  }
  f.sampled_designs = sampled.size();
  double estimate_time = 0, front_total = 0;
  std::vector<std::pair<double, double>> feasible;
  const auto begin = Clock::now();
  for (int pass = 0; pass == 0 || seconds_since(begin) < budget_s; ++pass) {
    std::uint64_t evaluated = 0;
    for (const DlrmDesign& d : sampled) {
      const auto start = Clock::now();
      const estimator::DlrmEstimator est(d.workload, d.cluster, space.calibration());
      feasible.clear();
      for (const ShardingChoice& c : space.shardings()) {
        const estimator::DlrmEstimate e =
            est.estimate(c.best ? estimator::plan_best_sharding(est)
                                : estimator::plan_sharding(est, c.sharding));
        g_sink = g_sink + e.time.total_s;
        if (pass == 0 && e.feasible) feasible.emplace_back(e.time.total_s, e.energy_per_step_j);
      }
      estimate_time += seconds_since(start);
      if (pass == 0) {
        f.sampled_feasible += feasible.size();
        front_total += static_cast<double>(front_size(feasible));
      }
      evaluated += space.shardings().size();
    }
    f.sampled_estimates += evaluated;
    if (evaluated == 0) break;
  }
  if (sample_designs > 0) f.design_s = design_time / static_cast<double>(sample_designs);
  if (f.sampled_estimates > 0) {
    f.estimate_s = estimate_time / static_cast<double>(f.sampled_estimates);
    f.evaluations_per_second = 1 / f.estimate_s;
    f.feasible_fraction = static_cast<double>(f.sampled_feasible) /
                          static_cast<double>(sampled.size() * space.shardings().size());
  }
  if (f.sampled_designs > 0)
    f.pareto_per_design = front_total / static_cast<double>(f.sampled_designs);
  f.core_seconds =
      static_cast<double>(designs) * f.design_s + static_cast<double>(valid_points) * f.estimate_s;
  return f;
}

}  // namespace

Forecast forecast(const Space& space, std::uint64_t valid_points, double budget_s) {
  switch (space.family()) {
    case estimator::Family::transformer:
      break;
    case estimator::Family::dlrm:
      return forecast_dlrm(space, valid_points, budget_s);
  }
  Forecast f;
  constexpr std::uint64_t kMaxDesigns = 64;
  constexpr std::uint64_t kPlansPerDesign = 4096;
  const std::uint64_t designs = space.designs();
  const std::uint64_t sample_designs = std::min(designs, kMaxDesigns);
  const std::uint64_t plans = std::min(space.plan_points(), kPlansPerDesign);

  struct Sampled {
    Design design;
    std::vector<estimator::Plan> valid;
  };
  std::vector<Sampled> sampled;
  double design_time = 0;
  double check_time = 0;
  for (std::uint64_t i = 0; i < sample_designs; ++i) {
    Sampled s;
    auto start = Clock::now();
    const bool ok = space.design(i * designs / sample_designs, s.design);
    if (ok) {
      const estimator::Estimator est(s.design.workload, s.design.cluster, space.calibration());
      g_sink = g_sink + est.cluster().num_gpus;
    }
    design_time += seconds_since(start);
    if (!ok) continue;
    ++f.sampled_designs;
    start = Clock::now();
    estimator::Plan plan;
    estimator::Infeasible why;
    for (std::uint64_t j = 0; j < plans; ++j) {
      if (space.plan(s.design, j * space.plan_points() / plans, plan, why)) s.valid.push_back(plan);
    }
    check_time += seconds_since(start);
    f.sampled_plans += plans;
    sampled.push_back(std::move(s));
  }
  // Evaluate the valid sampled plans, again and again until the budget is spent, for a steadier
  // rate; feasibility comes from the first pass.
  double estimate_time = 0;
  double front_total = 0;
  std::vector<std::pair<double, double>> feasible;  // (step time, energy) of one design
  const auto begin = Clock::now();
  for (int pass = 0; pass == 0 || seconds_since(begin) < budget_s; ++pass) {
    std::uint64_t evaluated = 0;
    for (const Sampled& s : sampled) {
      if (s.valid.empty()) continue;
      const estimator::Estimator est(s.design.workload, s.design.cluster, space.calibration());
      feasible.clear();
      const auto start = Clock::now();
      for (const estimator::Plan& p : s.valid) {
        const estimator::Estimate e = est.estimate(p);
        g_sink = g_sink + e.time.total_s;
        if (pass == 0 && e.feasible) feasible.emplace_back(e.time.total_s, e.energy_per_step_j);
      }
      estimate_time += seconds_since(start);
      if (pass == 0) {
        f.sampled_feasible += feasible.size();
        front_total += static_cast<double>(front_size(feasible));
      }
      evaluated += s.valid.size();
    }
    f.sampled_estimates += evaluated;
    if (evaluated == 0) break;
  }

  const std::uint64_t valid_designs = space.valid_designs();
  if (sample_designs > 0) f.design_s = design_time / static_cast<double>(sample_designs);
  if (f.sampled_plans > 0) f.check_s = check_time / static_cast<double>(f.sampled_plans);
  if (f.sampled_estimates > 0) {
    f.estimate_s = estimate_time / static_cast<double>(f.sampled_estimates);
    f.evaluations_per_second = 1 / f.estimate_s;
    std::uint64_t first_pass = 0;
    for (const Sampled& s : sampled) first_pass += s.valid.size();
    f.feasible_fraction = static_cast<double>(f.sampled_feasible) / static_cast<double>(first_pass);
  }
  if (f.sampled_designs > 0) {
    f.pareto_per_design = front_total / static_cast<double>(f.sampled_designs);
  }
  f.core_seconds =
      static_cast<double>(valid_designs) * f.design_s +
      static_cast<double>(valid_designs) * static_cast<double>(space.plan_points()) * f.check_s +
      static_cast<double>(valid_points) * f.estimate_s;
  return f;
}

double forecast_rows(const Space& space, std::uint64_t valid_points, const Forecast& forecast) {
  const double feasible = static_cast<double>(valid_points) * forecast.feasible_fraction;
  switch (space.keep()) {
    case Keep::all:
      return static_cast<double>(space.size());
    case Keep::feasible:
      return feasible;
    case Keep::best_per_design:
      return static_cast<double>(space.designs());
    case Keep::pareto_per_design:
      return std::min(feasible, static_cast<double>(space.designs()) * forecast.pareto_per_design);
  }
  return 0;
}

}  // namespace clustersweep::spaces
