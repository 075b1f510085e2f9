#include "engine/evaluate_dlrm.h"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "base/error.h"

namespace clustersweep::engine {

DlrmChunkEvaluator::DlrmChunkEvaluator(const spaces::Space& space, const Schema& schema)
    : space_(space),
      schema_(schema),
      keep_(space.keep()),
      objective_(space.objective()),
      plan_points_(space.plan_points()),
      rows_(schema) {
  point_col_ = schema.index("point_id");
  design_col_ = schema.index("design_id");
  feasible_col_ = schema.index("feasible");
  reason_col_ = schema.index("infeasible_reason");
  num_gpus_col_ = schema.index("num_gpus");
  for (const auto& axis : space.axes()) axis_col_.push_back(schema.index(axis.name));
  framework_col_ = schema.index(kDlrmFrameworkColumn);
  framework_code_ = dlrm_framework_codes(schema);
  for (int m = 0; m < kNumDlrmMetrics; ++m) metric_col_[m] = schema.index(kDlrmMetrics[m].name);
}

void DlrmChunkEvaluator::start(const Chunk& chunk) {
  chunk_ = chunk;
  next_ = chunk.point_begin;
  evaluated_ = 0;
  used_ = 0;
  rows_.clear();
  design_loaded_ = false;
  best_.reset();
  candidates_.clear();
}

bool DlrmChunkEvaluator::advance(std::uint64_t points) {
  const std::uint64_t stop = std::min(chunk_.point_end, next_ + points);
  for (; next_ < stop; ++next_) {
    const std::uint64_t design = next_ / plan_points_;
    if (!design_loaded_ || design != design_) {
      if (design_loaded_) finish_design();
      load_design(design);
    }
    evaluate_point(next_);
  }
  evaluated_ = next_ - chunk_.point_begin;
  if (next_ < chunk_.point_end) return false;
  if (design_loaded_) finish_design();
  design_loaded_ = false;
  rows_.resize(used_);
  return true;
}

void DlrmChunkEvaluator::evaluate_table(const spaces::TableDigits& table, const std::size_t* order,
                                        std::size_t n) {
  used_ = 0;
  rows_.clear();
  design_loaded_ = false;
  const std::uint32_t* sharding = table.axis[spaces::kDlrmSharding];
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t r = order[k];
    const std::uint64_t design = table.design[r];
    if (!design_loaded_ || design != design_) {
      if (design_loaded_) finish_design();
      load_design(design);
    }
    evaluate_point(design * plan_points_ + (sharding ? sharding[r] : 0));
  }
  if (design_loaded_) finish_design();
  design_loaded_ = false;
  rows_.resize(used_);
  evaluated_ = n;
}

void DlrmChunkEvaluator::load_design(std::uint64_t design) {
  design_ = design;
  design_loaded_ = true;
  spaces::Violation why;
  design_ok_ = space_.dlrm_design(design, design_data_, why);
  design_reason_ = spaces::to_infeasible(why.rule);
  estimator_.reset();
  steps_ = 0;
  if (design_ok_) {
    estimator_.emplace(design_data_.workload, design_data_.cluster, space_.calibration());
    steps_ = estimator::steps_to_train(design_data_.workload, space_.training_samples());
    usd_per_gpu_s_ = space_.usd_per_gpu_s(design_data_);
    job_ = space_.job(design_data_.cluster, estimator_->checkpoint_bytes());
    interval_ = estimator::step_interval(space_.calibration().dlrm);
    support_ = space_.support_of(design_data_);
  }
  best_.reset();
  candidates_.clear();
}

double DlrmChunkEvaluator::objective_of(const estimator::DlrmEstimate& e) const noexcept {
  return objective_value(objective_, space_.pricing(), usd_per_gpu_s_, e.time.total_s,
                         e.energy_per_step_j, steps_, design_data_.cluster.num_gpus, job_);
}

void DlrmChunkEvaluator::evaluate_point(std::uint64_t point_id) {
  if (!design_ok_) {
    if (keep_ == spaces::Keep::all) append(point_id, design_reason_, nullptr);
    return;
  }
  const auto digit = static_cast<std::uint32_t>(point_id % plan_points_);
  spaces::Violation why;
  if (!space_.dlrm_plan(design_data_, digit, why)) {
    if (keep_ == spaces::Keep::all) append(point_id, spaces::to_infeasible(why.rule), nullptr);
    return;
  }
  const spaces::ShardingChoice& choice = space_.shardings()[digit];
  const estimator::DlrmPlan plan = choice.best
                                       ? estimator::plan_best_sharding(*estimator_)
                                       : estimator::plan_sharding(*estimator_, choice.sharding);
  const estimator::DlrmEstimate e = estimator_->estimate(plan);
  ++estimates_;
  switch (keep_) {
    case spaces::Keep::all:
      append(point_id, e.feasible ? estimator::Infeasible::none : e.reason, &e);
      return;
    case spaces::Keep::feasible:
      if (e.feasible) append(point_id, estimator::Infeasible::none, &e);
      return;
    case spaces::Keep::best_per_design: {
      if (!e.feasible) return;
      const double value = objective_of(e);
      // Strictly better only: ties keep the lowest point id.
      if (!best_ || value < best_->objective) best_ = Candidate{point_id, e, value};
      return;
    }
    case spaces::Keep::pareto_per_design:
      if (e.feasible) candidates_.push_back(Candidate{point_id, e, 0});
      return;
  }
}

void DlrmChunkEvaluator::finish_design() {
  if (keep_ == spaces::Keep::best_per_design && best_) {
    append(best_->point_id, estimator::Infeasible::none, &best_->estimate);
  } else if (keep_ == spaces::Keep::pareto_per_design && !candidates_.empty()) {
    std::vector<double> time(candidates_.size()), energy(candidates_.size());
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
      time[i] = candidates_[i].estimate.time.total_s;
      energy[i] = candidates_[i].estimate.energy_per_step_j;
    }
    for (std::size_t i : pareto_front(time, energy))
      append(candidates_[i].point_id, estimator::Infeasible::none, &candidates_[i].estimate);
  }
  best_.reset();
  candidates_.clear();
}

void DlrmChunkEvaluator::put(std::size_t c, std::size_t r, double value) noexcept {
  if (c == Schema::npos) return;  // a column `[output] columns` does not keep
  visit(schema_.columns[c].type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    static_cast<T*>(rows_.raw(c))[r] = static_cast<T>(value);
  });
}

void DlrmChunkEvaluator::append(std::uint64_t point_id, estimator::Infeasible reason,
                                const estimator::DlrmEstimate* e) {
  if (used_ == rows_.capacity()) rows_.resize(std::max<std::size_t>(256, 2 * rows_.capacity()));
  rows_.resize(std::max(rows_.rows(), used_ + 1));
  const std::size_t r = used_++;
  put(point_col_, r, static_cast<double>(point_id));
  put(design_col_, r, static_cast<double>(design_));
  // The design axes with catalog defaults resolved (label axes: the label's code), then the
  // sharding axis's code.
  for (int i = 0; i < spaces::kNumDlrmDesignAxes; ++i) put(axis_col_[i], r, design_data_.value[i]);
  put(axis_col_[spaces::kDlrmSharding], r, static_cast<double>(point_id % plan_points_));
  put(framework_col_, r,
      static_cast<double>(
          framework_code_[static_cast<std::size_t>(design_data_.workload.framework)]));
  if (num_gpus_col_ != axis_col_[spaces::kDlrmClusterSize])
    put(num_gpus_col_, r, design_data_.cluster.num_gpus);
  put(feasible_col_, r, e && e->feasible ? 1 : 0);
  put(reason_col_, r, static_cast<double>(reason));
  double m[kNumDlrmMetrics];
  if (e) {
    const spaces::ShardingChoice& choice = space_.shardings()[point_id % plan_points_];
    const int support = support_.of(spaces::regime_of(choice.best, choice.sharding), 1);
    dlrm_metric_values(
        *e, steps_, job_,
        spaces::supported_interval(interval_, support, space_.calibration().interval_widening),
        support, space_.pricing().pue, m);
  } else
    std::fill(m, m + kNumDlrmMetrics, kNaN);
  for (int i = 0; i < kNumDlrmMetrics; ++i) put(metric_col_[i], r, m[i]);
}

}  // namespace clustersweep::engine
