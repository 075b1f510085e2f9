#include "spaces/search.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>

#include "spaces/rules.h"

namespace clustersweep::spaces {

double objective_value(Objective objective, const Pricing& pricing, double usd_per_gpu_s,
                       double step_s, double energy_per_step_j, double steps, double num_gpus,
                       const estimator::JobDesign& job) noexcept {
  if (objective == Objective::step_time) return step_s;
  // The wall time grows with the step and the goodput does not: both terms stay monotone.
  const estimator::JobOutcome o = estimator::job_outcome(job, step_s, steps);
  const double energy = energy_per_step_j * steps / o.goodput;
  switch (objective) {
    case Objective::time_to_train:
      return o.wall_s;
    case Objective::energy:
      return energy;
    case Objective::cost:
      return pricing.cost_usd(usd_per_gpu_s, num_gpus, o.wall_s, energy);
    case Objective::step_time:
      break;
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

// The search order of the plan axes, most significant first, cut into levels: the parallel
// degrees and the software stack's settings, vp and the micro-batch, offload, recompute, the ZeRO
// stage. A node of level l fixes the axes up to kLevelEnd[l] in its box; the leaves enumerate the
// axes after the last level. The stack is fixed in every box, as the degrees are: a box is bounded
// for one stack (PlanBox::plan.stack), never over several.
constexpr std::array<int, kNumPlanAxes> search_order() {
  std::array<int, kNumPlanAxes> order{};
  std::size_t at = 0;
  for (int a : {kTp, kPp, kCp, kEp, kEtp}) order[at++] = a;
  for (int i = 0; i < kNumStackSettings; ++i) order[at++] = kFirstStackAxis + i;
  for (int a : {kVp, kMicroBatch, kOffload, kRecompute, kZero, kSequenceParallel, kPipelineSplit})
    order[at++] = a;
  return order;
}
constexpr std::array<int, kNumPlanAxes> kSearchOrder = search_order();
constexpr std::size_t kFixed = 5 + kNumStackSettings;  // the axes of every box
constexpr std::array<std::size_t, 5> kLevelEnd = {kFixed, kFixed + 2, kFixed + 3, kFixed + 4,
                                                  kFixed + 5};
constexpr std::size_t kNumLevels = kLevelEnd.size();
// Bounding a box costs about as much as estimating one plan, so a node whose children would each
// hold at most this many plans has its plans estimated instead.
constexpr std::uint64_t kEstimateAtMost = 4;

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
    return best_.size() == k_ && objective > best_.back().objective;
  }

  // Pareto: records the plan's (time, energy) and whether it may be on the front; best: keeps the
  // plan if it is among the k best so far.
  void add(PlanResult&& result) {
    const double time_s = result.estimate.time.total_s;
    const double energy_j = result.estimate.energy_per_step_j;
    if (pareto_) {
      candidates_.push_back(std::move(result));
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
    auto before = [](const PlanResult& a, const PlanResult& b) {
      return a.objective != b.objective ? a.objective < b.objective : a.plan_index < b.plan_index;
    };
    if (best_.size() == k_ && !before(result, best_.back())) return;
    best_.insert(std::upper_bound(best_.begin(), best_.end(), result, before), std::move(result));
    if (best_.size() > k_) best_.pop_back();
  }

  // Best: the k best plans, best first; Pareto: every plan added.
  std::vector<PlanResult> take() { return std::move(pareto_ ? candidates_ : best_); }

 private:
  bool pareto_;
  std::size_t k_;
  std::vector<PlanResult> best_;  // ascending by (objective, plan index)
  std::vector<std::pair<double, double>> front_;
  std::vector<PlanResult> candidates_;
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
        usd_per_gpu_s_(space.usd_per_gpu_s(design)),
        incumbents_(pareto, k) {
    std::uint64_t stride = 1;
    for (int i = kNumAxes - 1; i >= kTp; --i) {
      stride_[i] = stride;
      stride *= axes_[i].size();
    }
    // The digits to visit: all of them, but offload's on a cluster without an expansion tier
    // (offload_needs_expansion) when searching. A plan's setting on one axis depends on that
    // axis's digit alone, so each value of each axis a box may leave open goes into open_.
    for (int axis = kTp; axis < kNumAxes; ++axis) {
      for (std::uint32_t v = 0; v < axes_[axis].size(); ++v) {
        std::array<std::uint32_t, kNumAxes> digits{};
        digits[axis] = v;
        estimator::Plan p;
        space_.plan_values(design_, digits.data() + kTp, p);
        values_[axis].push_back(p);
        if (axis == kOffload && !options_.exhaustive && p.offload != estimator::Offload::none &&
            !can_offload(design_.cluster))
          continue;
        digits_[axis].push_back(v);
        // The degrees and the stack are fixed in every box.
        if (axis < kVp || axis == kEp || axis == kEtp || axis >= kFirstStackAxis) continue;
        open_.vp_min = std::min(open_.vp_min, p.vp);
        open_.vp_max = std::max(open_.vp_max, p.vp);
        open_.micro_batch_min = std::min(open_.micro_batch_min, p.micro_batch);
        open_.micro_batch_max = std::max(open_.micro_batch_max, p.micro_batch);
        open_.zero[p.zero] = true;
        open_.recompute[static_cast<int>(p.recompute)] = true;
        open_.recompute_modules |= estimator::recomputed_modules(p.recompute, p.recompute_modules);
        open_.sequence_parallel[p.sequence_parallel ? 1 : 0] = true;
        open_.offload[static_cast<int>(p.offload)] = true;
        open_.pipeline_split[static_cast<int>(p.pipeline_split)] = true;
      }
    }
  }

  std::vector<PlanResult> run(SearchStats& stats) {
    stats_ = &stats;
    std::array<std::uint32_t, kNumAxes> digits{};
    if (options_.exhaustive) {
      enumerate(digits, 0, kSearchOrder.size(), [&](auto& d) { evaluate(d); });
    } else {
      enumerate(digits, 0, kLevelEnd[0], [&](auto& d) {
        estimator::Plan plan;
        space_.plan_values(design_, d.data() + kTp, plan);
        // The degrees and ep_group rules read nothing the tuple leaves open.
        if (!degrees_fit(plan, design_.cluster) || !ep_group_fits(plan)) {
          stats_->pruned += subtree_points(kLevelEnd[0]);
          return;
        }
        // Nor do the stack's rules (ep and the stack) and the torus's (the degrees): their failures
        // are removed whole.
        if (check_stack(design_.workload, design_.cluster, plan) ||
            check_torus(design_.cluster, plan)) {
          stats_->invalid += subtree_points(kLevelEnd[0]);
          return;
        }
        push(Node{d, 0});
      });
      // Best-first over the nodes of every level: the lowest bound is expanded first, so the
      // first leaves evaluated give the incumbent that prunes the rest.
      while (!queue_.empty()) {
        std::pop_heap(queue_.begin(), queue_.end(), later);
        const Node node = nodes_[queue_.back().node];
        queue_.pop_back();
        if (!pruned(node)) expand(node);
      }
    }
    std::vector<PlanResult> results = incumbents_.take();
    std::sort(results.begin(), results.end(),
              [](const PlanResult& a, const PlanResult& b) { return a.plan_index < b.plan_index; });
    return results;
  }

 private:
  struct Node {
    std::array<std::uint32_t, kNumAxes> digits;
    std::size_t level = 0;
    double objective = 0, time_s = 0, energy_j = 0;
  };
  // A queued node: its objective bound, and where it is in nodes_ (the order of creation, which
  // breaks ties so that equal bounds expand in a fixed order).
  struct Queued {
    double objective;
    std::size_t node;
  };
  static bool later(const Queued& a, const Queued& b) {
    return a.objective != b.objective ? a.objective > b.objective : a.node > b.node;
  }

  static estimator::PlanBox empty_box() {
    estimator::PlanBox box;
    box.vp_min = box.micro_batch_min = std::numeric_limits<int>::max();
    box.vp_max = box.micro_batch_max = 0;
    std::fill(std::begin(box.zero), std::end(box.zero), false);
    std::fill(std::begin(box.recompute), std::end(box.recompute), false);
    std::fill(std::begin(box.sequence_parallel), std::end(box.sequence_parallel), false);
    std::fill(std::begin(box.offload), std::end(box.offload), false);
    std::fill(std::begin(box.pipeline_split), std::end(box.pipeline_split), false);
    return box;
  }

  // Calls f(digits) for every combination of the search axes [i, end), in digit order; with
  // `skip_leaves`, not for the leaf values that leaf_fits() rules out.
  template <class F>
  void enumerate(std::array<std::uint32_t, kNumAxes>& digits, std::size_t i, std::size_t end, F&& f,
                 bool skip_leaves = false) {
    if (i == end) {
      f(digits);
      return;
    }
    const int a = kSearchOrder[i];
    // Digits a rule removes from the whole design are never visited.
    stats_->invalid += (axes_[a].size() - digits_[a].size()) * subtree_points(i + 1);
    for (std::uint32_t v : digits_[a]) {
      digits[a] = v;
      if (skip_leaves && !leaf_fits(a, digits)) {
        stats_->invalid += subtree_points(i + 1);
        continue;
      }
      enumerate(digits, i + 1, end, f, skip_leaves);
    }
    digits[a] = 0;
  }

  // Whether the leaf axis `a` may take its value in `digits` by the rules that read only it and
  // the axes before it in the search order: the many leaf plans they remove are not built.
  bool leaf_fits(int a, const std::array<std::uint32_t, kNumAxes>& digits) const {
    const auto at = [&](int axis) -> const estimator::Plan& { return values_[axis][digits[axis]]; };
    if (a == kSequenceParallel) {
      estimator::Plan p;
      p.tp = at(kTp).tp;
      p.cp = at(kCp).cp;
      p.sequence_parallel = at(kSequenceParallel).sequence_parallel;
      return sequence_parallel_fits(p, design_.workload);
    }
    if (a == kPipelineSplit)
      return split_rule(design_.workload.model, at(kPp).pp, at(kVp).vp,
                        at(kPipelineSplit).pipeline_split) == Rule::none;
    return true;
  }

  // Bounds the node's box and queues it unless the bounds rule it out.
  void push(Node node) {
    if (!bounded(node)) return;
    queue_.push_back({node.objective, nodes_.size()});
    nodes_.push_back(node);
    std::push_heap(queue_.begin(), queue_.end(), later);
  }

  // Queues the node's children, or evaluates its plans below the last level. A level whose axes
  // have one value each fixes nothing new (its box is its parent's) and is passed over.
  void expand(const Node& node) {
    std::size_t level = node.level + 1;
    auto one_value = [&](std::size_t l) {
      for (std::size_t i = kLevelEnd[l - 1]; i < kLevelEnd[l]; ++i)
        if (digits_[kSearchOrder[i]].size() > 1) return false;
      return true;
    };
    while (level < kNumLevels && one_value(level)) ++level;
    // From the node's axes on, through the levels passed over (one digit each).
    std::array<std::uint32_t, kNumAxes> digits = node.digits;
    if (level == kNumLevels || child_plans(node, level) <= kEstimateAtMost) {
      enumerate(
          digits, kLevelEnd[node.level], kSearchOrder.size(), [&](auto& d) { evaluate(d); }, true);
      return;
    }
    enumerate(digits, kLevelEnd[node.level], kLevelEnd[level], [&](auto& d) {
      push(Node{d, level});
    });
  }

  // Plans each child of `node` at `level` would hold: its open axes' values, the leaf axes' after
  // the leaf rules once the node fixes the axes they read (the degrees and vp).
  std::uint64_t child_plans(const Node& node, std::size_t level) const {
    std::uint64_t n = 1;
    std::array<std::uint32_t, kNumAxes> digits = node.digits;
    for (std::size_t i = kLevelEnd[level]; i < kSearchOrder.size(); ++i) {
      const int a = kSearchOrder[i];
      if (i < kLevelEnd[kNumLevels - 1] || node.level == 0) {
        n *= digits_[a].size();
        continue;
      }
      std::uint64_t fit = 0;
      for (std::uint32_t v : digits_[a]) {
        digits[a] = v;
        fit += leaf_fits(a, digits);
      }
      digits[a] = 0;
      n *= fit;
    }
    return n;
  }

  // Plan points below a node that fixes the first `fixed` search axes.
  std::uint64_t subtree_points(std::size_t fixed) const {
    std::uint64_t n = 1;
    for (std::size_t i = fixed; i < kSearchOrder.size(); ++i) n *= axes_[kSearchOrder[i]].size();
    return n;
  }

  // Sets the node's bounds from the box of plans below it (the search axes up to its level's end
  // fixed); false (and the subtree counted as pruned) when they rule it out.
  bool bounded(Node& node) {
    const std::size_t fixed = kLevelEnd[node.level];
    // The node's settings on the axes it fixes, every value of the others.
    estimator::PlanBox box = open_;
    space_.plan_values(design_, node.digits.data() + kTp, box.plan);
    const estimator::Plan& p = box.plan;
    auto only = [](bool* marks, int count, int value) {
      std::fill(marks, marks + count, false);
      marks[value] = true;
    };
    for (std::size_t i = kLevelEnd[0]; i < fixed; ++i) {
      switch (kSearchOrder[i]) {
        case kVp:
          box.vp_min = box.vp_max = p.vp;
          break;
        case kMicroBatch:
          box.micro_batch_min = box.micro_batch_max = p.micro_batch;
          break;
        case kZero:
          only(box.zero, 4, p.zero);
          break;
        case kRecompute:
          only(box.recompute, 3, static_cast<int>(p.recompute));
          box.recompute_modules = estimator::recomputed_modules(p.recompute, p.recompute_modules);
          break;
        case kOffload:
          only(box.offload, 4, static_cast<int>(p.offload));
          break;
        default:  // the leaves are never fixed in a box
          break;
      }
    }
    ++stats_->boxes;
    const estimator::StepBound b = estimator_.bound(box);
    node.time_s = b.time_s;
    node.energy_j = estimator_.energy_bound_j(b.time_s, b.busy_s);
    node.objective =
        objective_value(options_.objective, space_.pricing(), usd_per_gpu_s_, node.time_s,
                        node.energy_j, options_.steps, design_.cluster.num_gpus, options_.job) *
        (options_.robust ? options_.robust->least_factor() : 1.0);
    if (b.hbm_bytes > design_.cluster.hbm_bytes) {  // no plan below fits
      stats_->pruned += subtree_points(fixed);
      return false;
    }
    return !pruned(node);
  }

  bool pruned(const Node& node) {
    if (!incumbents_.beats(node.objective, node.time_s, node.energy_j)) return false;
    stats_->pruned += subtree_points(kLevelEnd[node.level]);
    return true;
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
    const double objective = objective_value(options_.objective, space_.pricing(), usd_per_gpu_s_,
                                             e.time.total_s, e.energy_per_step_j, options_.steps,
                                             design_.cluster.num_gpus, options_.job) *
                             (options_.robust ? options_.robust->factor(plan) : 1.0);
    incumbents_.add({index, plan, e, objective});
  }

  const Space& space_;
  const Design& design_;
  const estimator::Estimator& estimator_;
  const SearchOptions& options_;
  const std::vector<Axis>& axes_;
  const double usd_per_gpu_s_;
  std::array<std::uint64_t, kNumAxes> stride_{};
  std::array<std::vector<std::uint32_t>, kNumAxes> digits_;
  // By axis and digit, the plan with that digit (Space::plan_values): its setting on that axis.
  std::array<std::vector<estimator::Plan>, kNumAxes> values_;
  Incumbents incumbents_;
  std::vector<Node> nodes_;    // every node queued
  std::vector<Queued> queue_;  // a heap: the node of the lowest bound on top
  // The box of every plan of the design, degrees aside: each axis's values.
  estimator::PlanBox open_ = empty_box();
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
