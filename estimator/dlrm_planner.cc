// The embedding-table sharding planner (estimator/dlrm.h): TorchRec's greedy partitioner (the
// largest table first onto the least-loaded GPU that has room) over the loads of
// DlrmEstimator::table_load(), and exhaustive search where the placements are few. Runs once per
// design, not per point, so it may allocate.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "estimator/dlrm.h"

namespace clustersweep::estimator {

namespace {

// Per-GPU and per-node loads of a partial placement.
class Balance {
 public:
  explicit Balance(const DlrmEstimator& e)
      : e_(e),
        gpus_(std::max(1, e.cluster().num_gpus)),
        per_node_(std::max(1, std::min(e.cluster().gpus_per_node, gpus_))),
        gpu_(gpus_),
        node_(e.num_nodes()) {}

  struct Load {
    double seconds = 0, intra = 0, inter = 0, memory = 0;
  };

  void add(int table, Sharding s, int device) {
    const auto l = e_.table_load(table, s);
    Load& slot = s == Sharding::table_wise       ? gpu_[device]
                 : s == Sharding::table_row_wise ? node_[device]
                                                 : spread_;
    slot.seconds += l.seconds;
    slot.intra += l.intra_bytes;
    slot.inter += l.inter_bytes;
    slot.memory += l.memory;
  }

  // The busiest GPU's time and whether every GPU's tables fit, if `table` were placed so.
  std::pair<double, bool> makespan_with(int table, Sharding s, int device) const {
    const auto l = e_.table_load(table, s);
    double worst = 0;
    bool fits = true;
    for (int g = 0; g < gpus_; ++g) {
      const int n = g / per_node_;
      double seconds = spread_.seconds + gpu_[g].seconds + node_[n].seconds;
      double intra = spread_.intra + gpu_[g].intra + node_[n].intra;
      double inter = spread_.inter + gpu_[g].inter + node_[n].inter;
      double memory = spread_.memory + gpu_[g].memory + node_[n].memory;
      if ((s == Sharding::table_wise && g == device) ||
          (s == Sharding::table_row_wise && n == device) ||
          (s != Sharding::table_wise && s != Sharding::table_row_wise)) {
        seconds += l.seconds;
        intra += l.intra_bytes;
        inter += l.inter_bytes;
        memory += l.memory;
      }
      worst = std::max(worst, seconds + e_.exchange_seconds(intra, inter));
      if (memory > e_.table_capacity()) fits = false;
    }
    return {worst, fits};
  }

  int least_loaded_gpu() const {
    return least(gpu_, [&](int g) { return g / per_node_; });
  }
  int least_loaded_node() const {
    int best = 0;
    for (int n = 1; n < static_cast<int>(node_.size()); ++n)
      if (node_[n].seconds < node_[best].seconds) best = n;
    return best;
  }

 private:
  template <class NodeOf>
  int least(const std::vector<Load>& loads, NodeOf node_of) const {
    int best = 0;
    double best_s = std::numeric_limits<double>::infinity();
    for (int g = 0; g < static_cast<int>(loads.size()); ++g) {
      const double s = loads[g].seconds + node_[node_of(g)].seconds;
      if (s < best_s) {
        best_s = s;
        best = g;
      }
    }
    return best;
  }

  const DlrmEstimator& e_;
  int gpus_;
  int per_node_;
  Load spread_;
  std::vector<Load> gpu_;
  std::vector<Load> node_;
};

// Tables by decreasing table-wise load: the largest first, as TorchRec's greedy proposer.
std::vector<int> largest_first(const DlrmEstimator& e) {
  const int tables = e.workload().model.num_tables;
  std::vector<int> order(static_cast<std::size_t>(std::max(0, tables)));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return e.table_load(a, Sharding::table_wise).seconds >
           e.table_load(b, Sharding::table_wise).seconds;
  });
  return order;
}

// Better: fits where the other does not, else faster.
bool better(const DlrmEstimate& a, const DlrmEstimate& b) {
  if (a.feasible != b.feasible) return a.feasible;
  return a.time.total_s < b.time.total_s;
}

// Every placement up to GPU symmetry: a table-wise table goes to a GPU already holding one, or to
// the first free GPU of a node; a table-row-wise table to any node.
class Exhaustive {
 public:
  explicit Exhaustive(const DlrmEstimator& e)
      : e_(e),
        tables_(e.workload().model.num_tables),
        gpus_(std::max(1, e.cluster().num_gpus)),
        per_node_(std::max(1, std::min(e.cluster().gpus_per_node, gpus_))),
        nodes_(e.num_nodes()),
        used_(gpus_, 0) {}

  // Counts placements, stopping past `cap`.
  std::uint64_t count(std::uint64_t cap) {
    cap_ = cap;
    counted_ = 0;
    counting_ = true;
    visit(0);
    return counted_;
  }

  DlrmPlan best() {
    counting_ = false;
    found_ = false;
    visit(0);
    return best_plan_;
  }

 private:
  void leaf() {
    if (counting_) {
      ++counted_;
      return;
    }
    const DlrmEstimate est = e_.estimate(plan_);
    if (!found_ || better(est, best_)) {
      best_ = est;
      best_plan_ = plan_;
      found_ = true;
    }
  }

  void visit(int t) {
    if (counting_ && counted_ > cap_) return;
    if (t == tables_) {
      leaf();
      return;
    }
    // Table-wise: any GPU in use, or the first free GPU of each node.
    for (int node = 0; node < nodes_; ++node) {
      bool took_free = false;
      for (int g = node * per_node_; g < std::min(gpus_, (node + 1) * per_node_); ++g) {
        if (used_[g] == 0) {
          if (took_free) continue;
          took_free = true;
        }
        plan_.sharding[t] = Sharding::table_wise;
        plan_.device[t] = g;
        ++used_[g];
        visit(t + 1);
        --used_[g];
      }
    }
    if (gpus_ == 1) return;  // one GPU: every sharding is the same placement
    for (Sharding s : {Sharding::row_wise, Sharding::column_wise, Sharding::data, Sharding::hybrid,
                       Sharding::fused_row}) {
      plan_.sharding[t] = s;
      plan_.device[t] = 0;
      visit(t + 1);
    }
    if (nodes_ > 1 && per_node_ > 1)
      for (int node = 0; node < nodes_; ++node) {
        plan_.sharding[t] = Sharding::table_row_wise;
        plan_.device[t] = node;
        visit(t + 1);
      }
  }

  const DlrmEstimator& e_;
  int tables_, gpus_, per_node_, nodes_;
  std::vector<int> used_;
  DlrmPlan plan_;
  bool counting_ = false;
  std::uint64_t cap_ = 0, counted_ = 0;
  bool found_ = false;
  DlrmEstimate best_;
  DlrmPlan best_plan_;
};

}  // namespace

DlrmPlan plan_sharding(const DlrmEstimator& e, Sharding sharding) {
  DlrmPlan plan;
  Balance balance(e);
  for (int t : largest_first(e)) {
    int device = 0;
    Sharding s = sharding;
    if (s == Sharding::table_wise || s == Sharding::table_row_wise) {
      // The least-loaded GPU (node) that still has room; the least-loaded one if none has.
      device = s == Sharding::table_wise ? balance.least_loaded_gpu() : balance.least_loaded_node();
      if (!balance.makespan_with(t, s, device).second) {
        const int limit =
            s == Sharding::table_wise ? std::max(1, e.cluster().num_gpus) : e.num_nodes();
        bool found = false;
        for (int d = 0; d < limit && !found; ++d)
          if (balance.makespan_with(t, s, d).second) {
            device = d;
            found = true;
          }
        // A table no GPU can hold whole is sliced by columns, as TorchRec and NVIDIA's DLRM
        // (column_slice_threshold) do with tables larger than a GPU.
        if (!found && s == Sharding::table_wise &&
            balance.makespan_with(t, Sharding::column_wise, 0).second) {
          s = Sharding::column_wise;
          device = 0;
        }
      }
    }
    plan.sharding[t] = s;
    plan.device[t] = device;
    balance.add(t, s, device);
  }
  return plan;
}

DlrmPlan plan_row_wise(const DlrmEstimator& e) {
  const DlrmPlan per_table = plan_sharding(e, Sharding::row_wise);
  const DlrmPlan fused = plan_sharding(e, Sharding::fused_row);
  return better(e.estimate(fused), e.estimate(per_table)) ? fused : per_table;
}

std::uint64_t exhaustive_placements(const DlrmEstimator& e, std::uint64_t cap) {
  // On more than one GPU each table has at least the five spread shardings and a table-wise GPU:
  // past the cap without counting.
  if (e.cluster().num_gpus > 1 &&
      std::pow(6.0, e.workload().model.num_tables) > static_cast<double>(cap))
    return cap + 1;
  return Exhaustive(e).count(cap);
}

DlrmPlan plan_best_sharding(const DlrmEstimator& e) {
  if (exhaustive_placements(e, kMaxExhaustive) <= kMaxExhaustive) return Exhaustive(e).best();
  // Greedy over every sharding of each table, largest first: the option that keeps the busiest
  // GPU least busy among those that fit.
  DlrmPlan plan;
  Balance balance(e);
  for (int t : largest_first(e)) {
    struct Option {
      Sharding s;
      int device;
    };
    const Option options[] = {{Sharding::table_wise, balance.least_loaded_gpu()},
                              {Sharding::table_row_wise, balance.least_loaded_node()},
                              {Sharding::row_wise, 0},
                              {Sharding::column_wise, 0},
                              {Sharding::data, 0},
                              {Sharding::hybrid, 0},
                              {Sharding::fused_row, 0}};
    Option best = options[0];
    double best_s = std::numeric_limits<double>::infinity();
    bool best_fits = false;
    for (const Option& o : options) {
      if (o.s == Sharding::table_row_wise && e.num_nodes() < 2) continue;
      const auto [seconds, fits] = balance.makespan_with(t, o.s, o.device);
      if ((fits && !best_fits) || (fits == best_fits && seconds < best_s)) {
        best = o;
        best_s = seconds;
        best_fits = fits;
      }
    }
    plan.sharding[t] = best.s;
    plan.device[t] = best.device;
    balance.add(t, best.s, best.device);
  }
  // Never worse than one sharding for every table.
  DlrmEstimate best_estimate = e.estimate(plan);
  for (int s = 0; s < kNumShardings; ++s) {
    const DlrmPlan uniform = plan_sharding(e, static_cast<Sharding>(s));
    const DlrmEstimate est = e.estimate(uniform);
    if (better(est, best_estimate)) {
      best_estimate = est;
      plan = uniform;
    }
  }
  return plan;
}

}  // namespace clustersweep::estimator
