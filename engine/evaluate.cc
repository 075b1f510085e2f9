#include "engine/evaluate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>

#include "engine/evaluate_dlrm.h"
#include "engine/evaluate_transformer.h"

namespace clustersweep::engine {

std::vector<std::size_t> pareto_front(const std::vector<double>& time,
                                      const std::vector<double>& energy) {
  std::vector<std::size_t> order(time.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (time[a] != time[b]) return time[a] < time[b];
    if (energy[a] != energy[b]) return energy[a] < energy[b];
    return a < b;
  });
  // Sweep by increasing time; within a group of equal times only the lowest energy survives, and
  // only if it beats every strictly faster point's energy.
  std::vector<std::size_t> front;
  double best_energy = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j < order.size() && time[order[j]] == time[order[i]]) ++j;
    const double group_min = energy[order[i]];
    if (group_min < best_energy) {
      for (std::size_t k = i; k < j && energy[order[k]] == group_min; ++k)
        front.push_back(order[k]);
      best_energy = group_min;
    }
    i = j;
  }
  std::sort(front.begin(), front.end());
  return front;
}

double objective_value(spaces::Objective objective, const spaces::Pricing& pricing, double step_s,
                       double energy_per_step_j, double steps, double num_gpus) noexcept {
  switch (objective) {
    case spaces::Objective::step_time:
      return step_s;
    case spaces::Objective::time_to_train:
      return step_s * steps;
    case spaces::Objective::energy:
      return energy_per_step_j * steps;
    case spaces::Objective::cost:
      return pricing.cost_usd(num_gpus, step_s * steps, energy_per_step_j * steps);
  }
  return step_s;
}

ChunkEvaluator::ChunkEvaluator(const spaces::Space& space, const Schema& schema) {
  switch (space.family()) {
    case estimator::Family::transformer:
      family_ = std::make_unique<TransformerChunkEvaluator>(space, schema);
      break;
    case estimator::Family::dlrm:
      family_ = std::make_unique<DlrmChunkEvaluator>(space, schema);
      break;
  }
}

}  // namespace clustersweep::engine
