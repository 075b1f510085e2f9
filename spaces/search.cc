#include "spaces/search.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>

namespace clustersweep::spaces {

double objective_value(Objective objective, const Pricing& pricing, double step_s,
                       double energy_per_step_j, double steps, double num_gpus) noexcept {
  switch (objective) {
    case Objective::step_time:
      return step_s;
    case Objective::time_to_train:
      return step_s * steps;
    case Objective::energy:
      return energy_per_step_j * steps;
    case Objective::cost:
      return pricing.cost_usd(num_gpus, step_s * steps, energy_per_step_j * steps);
  }
  return step_s;
}

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

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The search levels, most significant first: the parallel degrees, then vp and the micro-batch,
// then recompute; the leaves enumerate the rest. Each level's axes are fixed in its boxes.
constexpr std::array<int, 5> kDegreeAxes = {kTp, kPp, kCp, kEp, kEtp};
constexpr std::array<int, 2> kShapeAxes = {kVp, kMicroBatch};
constexpr std::array<int, 1> kRecomputeAxes = {kRecompute};
constexpr std::array<int, 4> kLeafAxes = {kZero, kSequenceParallel, kOffload, kPipelineSplit};
constexpr std::array<int, kNumPlanAxes> kSearchOrder = {
    kTp,      kPp,           kCp, kEp, kEtp, kVp, kMicroBatch, kRecompute, kZero, kSequenceParallel,
    kOffload, kPipelineSplit};
static_assert(kDegreeAxes.size() + kShapeAxes.size() + kRecomputeAxes.size() + kLeafAxes.size() ==
              kSearchOrder.size());

// What the incumbent set lets the search prune: a box whose bounds cannot beat it.
class Incumbents {
 public:
  Incumbents(bool pareto, std::size_t k) : pareto_(pareto), k_(k) {}

  // Whether no plan with objective >= `objective`, step time >= `time_s` and energy >=
  // `energy_j` can be kept.
  bool beats(double objective, double time_s, double energy_j) const noexcept {
    if (pareto_) {
      for (const auto& [t, e] : front_)
        if ((t < time_s && e <= energy_j) || (t <= time_s && e < energy_j)) return true;
      return false;
    }
    // Ties are not pruned: the lower plan index wins them, wherever it is.
    return best_.size() == k_ && objective > best_.back().first;
  }

  void add(double objective, std::uint64_t plan_index, double time_s, double energy_j) {
    if (pareto_) {
      // Keep the non-dominated (time, energy) pairs seen: enough to test domination.
      for (const auto& [t, e] : front_)
        if ((t < time_s && e <= energy_j) || (t <= time_s && e < energy_j) ||
            (t == time_s && e == energy_j))
          return;
      std::erase_if(front_, [&](const std::pair<double, double>& p) {
        return (time_s < p.first && energy_j <= p.second) ||
               (time_s <= p.first && energy_j < p.second);
      });
      front_.emplace_back(time_s, energy_j);
      return;
    }
    const std::pair<double, std::uint64_t> entry{objective, plan_index};
    if (best_.size() == k_ && !(entry < best_.back())) return;
    best_.insert(std::upper_bound(best_.begin(), best_.end(), entry), entry);
    if (best_.size() > k_) best_.pop_back();
  }

 private:
  bool pareto_;
  std::size_t k_;
  std::vector<std::pair<double, std::uint64_t>> best_;  // (objective, plan index), ascending
  std::vector<std::pair<double, double>> front_;
};

class Search {
 public:
  Search(const Space& space, const Design& design, const estimator::Estimator& estimator,
         const SearchOptions& options, bool pareto, std::size_t k)
      : space_(space),
        design_(design),
        estimator_(estimator),
        options_(options),
        axes_(space.axes()),
        incumbents_(pareto, k) {
    std::uint64_t stride = 1;
    for (int i = kNumAxes - 1; i >= kTp; --i) {
      stride_[i] = stride;
      stride *= axes_[i].size();
    }
  }

  std::vector<PlanResult> run(SearchStats& stats) {
    stats_ = &stats;
    std::array<std::uint32_t, kNumAxes> digits{};
    if (options_.exhaustive) {
      leaves(digits, all_axes(), 0);
    } else {
      // Best-first over the degree tuples: the tuple with the lowest objective bound first gives
      // the incumbent that prunes the others.
      std::vector<Node> tuples;
      for_each(kDegreeAxes, digits, 0, [&](auto& d) {
        estimator::Plan plan;
        space_.plan_values(design_, d.data() + kTp, plan);
        const bool degrees_ok = static_cast<double>(plan.tp) * plan.pp * plan.cp * plan.dp ==
                                    design_.cluster.num_gpus &&
                                (static_cast<std::int64_t>(plan.tp) * plan.cp * plan.dp) %
                                        (static_cast<std::int64_t>(plan.ep) * plan.etp) ==
                                    0;
        if (!degrees_ok) {  // the degrees and ep_group rules remove every plan of the tuple
          stats_->pruned += subtree_points(kDegreeAxes.size());
          return;
        }
        Node node{d, {}};
        if (bounded(node, kDegreeAxes.size())) tuples.push_back(node);
      });
      std::stable_sort(tuples.begin(), tuples.end(),
                       [](const Node& a, const Node& b) { return a.objective < b.objective; });
      for (Node& tuple : tuples) {
        if (pruned(tuple, kDegreeAxes.size())) continue;
        for_each(kShapeAxes, tuple.digits, 0, [&](auto& d) {
          Node shape{d, {}};
          if (!bounded(shape, kDegreeAxes.size() + kShapeAxes.size())) return;
          for_each(kRecomputeAxes, shape.digits, 0, [&](auto& d2) {
            Node recompute{d2, {}};
            if (bounded(recompute, kDegreeAxes.size() + kShapeAxes.size() + 1))
              leaves(recompute.digits, kLeafAxes, 0);
          });
        });
      }
    }
    std::sort(results_.begin(), results_.end(),
              [](const PlanResult& a, const PlanResult& b) { return a.plan_index < b.plan_index; });
    return std::move(results_);
  }

 private:
  struct Node {
    std::array<std::uint32_t, kNumAxes> digits;
    double objective = 0, time_s = 0, energy_j = 0;
  };

  static std::array<int, kNumPlanAxes> all_axes() {
    std::array<int, kNumPlanAxes> a{};
    std::iota(a.begin(), a.end(), int{kTp});
    return a;
  }

  // Calls f(digits) for every combination of `axes` from position i on, in digit order.
  template <std::size_t N, class F>
  void for_each(const std::array<int, N>& axes, std::array<std::uint32_t, kNumAxes>& digits,
                std::size_t i, F&& f) {
    if (i == N) {
      f(digits);
      return;
    }
    const int a = axes[i];
    for (std::uint32_t v = 0; v < axes_[a].size(); ++v) {
      digits[a] = v;
      for_each(axes, digits, i + 1, f);
    }
    digits[a] = 0;
  }

  // Plan points below a node that fixes the first `fixed` search axes.
  std::uint64_t subtree_points(std::size_t fixed) const {
    std::uint64_t n = 1;
    for (std::size_t i = fixed; i < kSearchOrder.size(); ++i) n *= axes_[kSearchOrder[i]].size();
    return n;
  }

  // Sets the node's bounds from the box of plans below it (the first `fixed` search axes fixed);
  // false (and the subtree counted as pruned) when they rule it out.
  bool bounded(Node& node, std::size_t fixed) {
    estimator::PlanBox box;
    space_.plan_values(design_, node.digits.data() + kTp, box.plan);
    const bool shape_fixed = fixed > kDegreeAxes.size();
    const bool recompute_fixed = fixed > kDegreeAxes.size() + kShapeAxes.size();
    auto range = [&](int axis, int fixed_value, int& lo, int& hi) {
      if (shape_fixed) {
        lo = hi = fixed_value;
        return;
      }
      const auto& v = axes_[axis].numbers;
      lo = static_cast<int>(*std::min_element(v.begin(), v.end()));
      hi = static_cast<int>(*std::max_element(v.begin(), v.end()));
    };
    range(kVp, box.plan.vp, box.vp_min, box.vp_max);
    range(kMicroBatch, box.plan.micro_batch, box.micro_batch_min, box.micro_batch_max);
    // The leaf axes (and recompute until it is fixed) range over their values.
    std::fill(std::begin(box.recompute), std::end(box.recompute), false);
    std::fill(std::begin(box.sequence_parallel), std::end(box.sequence_parallel), false);
    std::fill(std::begin(box.offload), std::end(box.offload), false);
    std::fill(std::begin(box.pipeline_split), std::end(box.pipeline_split), false);
    auto each_value = [&](int axis, auto&& use) {
      std::array<std::uint32_t, kNumAxes> d = node.digits;
      estimator::Plan p;
      for (std::uint32_t v = 0; v < axes_[axis].size(); ++v) {
        d[axis] = v;
        space_.plan_values(design_, d.data() + kTp, p);
        use(p);
      }
    };
    each_value(kZero,
               [&](const estimator::Plan& p) { box.zero_max = std::max(box.zero_max, p.zero); });
    if (recompute_fixed)
      box.recompute[static_cast<int>(box.plan.recompute)] = true;
    else
      each_value(kRecompute, [&](const estimator::Plan& p) {
        box.recompute[static_cast<int>(p.recompute)] = true;
      });
    each_value(kSequenceParallel, [&](const estimator::Plan& p) {
      box.sequence_parallel[p.sequence_parallel ? 1 : 0] = true;
    });
    each_value(kOffload,
               [&](const estimator::Plan& p) { box.offload[static_cast<int>(p.offload)] = true; });
    each_value(kPipelineSplit, [&](const estimator::Plan& p) {
      box.pipeline_split[static_cast<int>(p.pipeline_split)] = true;
    });
    const estimator::StepBound b = estimator_.bound(box);
    node.time_s = b.time_s;
    node.energy_j = estimator_.energy_bound_j(b.time_s, b.busy_s);
    node.objective = objective_value(options_.objective, space_.pricing(), node.time_s,
                                     node.energy_j, options_.steps, design_.cluster.num_gpus);
    if (b.hbm_bytes > design_.cluster.hbm_bytes) {  // no plan below fits
      stats_->pruned += subtree_points(fixed);
      return false;
    }
    return !pruned(node, fixed);
  }

  bool pruned(const Node& node, std::size_t fixed) {
    if (!incumbents_.beats(node.objective, node.time_s, node.energy_j)) return false;
    stats_->pruned += subtree_points(fixed);
    return true;
  }

  // Evaluates every plan with the given axes free, the others as in `digits`.
  template <std::size_t N>
  void leaves(std::array<std::uint32_t, kNumAxes> digits, const std::array<int, N>& axes,
              std::size_t i) {
    for_each(axes, digits, i, [&](auto& d) { evaluate(d); });
  }

  void evaluate(const std::array<std::uint32_t, kNumAxes>& digits) {
    estimator::Plan plan;
    estimator::Infeasible why;
    if (!space_.plan_from_digits(design_, digits.data() + kTp, plan, why)) {
      ++stats_->invalid;
      return;
    }
    ++stats_->evaluated;
    const estimator::Estimate e = estimator_.estimate(plan);
    if (!e.feasible) return;
    std::uint64_t index = 0;
    for (int a = kTp; a < kNumAxes; ++a) index += digits[a] * stride_[a];
    const double objective =
        objective_value(options_.objective, space_.pricing(), e.time.total_s, e.energy_per_step_j,
                        options_.steps, design_.cluster.num_gpus);
    incumbents_.add(objective, index, e.time.total_s, e.energy_per_step_j);
    results_.push_back({index, plan, e, objective});
  }

  const Space& space_;
  const Design& design_;
  const estimator::Estimator& estimator_;
  const SearchOptions& options_;
  const std::vector<Axis>& axes_;
  std::array<std::uint64_t, kNumAxes> stride_{};
  Incumbents incumbents_;
  std::vector<PlanResult> results_;
  SearchStats* stats_ = nullptr;
};

}  // namespace

std::vector<PlanResult> best_plans(const Space& space, const Design& design,
                                   const estimator::Estimator& estimator,
                                   const SearchOptions& options, std::size_t k,
                                   SearchStats* stats) {
  SearchStats local;
  std::vector<PlanResult> all =
      Search(space, design, estimator, options, false, std::max<std::size_t>(k, 1))
          .run(stats ? *stats : local);
  std::stable_sort(all.begin(), all.end(), [](const PlanResult& a, const PlanResult& b) {
    return a.objective < b.objective;  // stable: equal objectives stay by plan index
  });
  if (all.size() > k) all.resize(k);
  return all;
}

std::vector<PlanResult> pareto_candidates(const Space& space, const Design& design,
                                          const estimator::Estimator& estimator,
                                          const SearchOptions& options, SearchStats* stats) {
  SearchStats local;
  return Search(space, design, estimator, options, true, 0).run(stats ? *stats : local);
}

}  // namespace clustersweep::spaces
