#include "engine/evaluate_transformer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "base/error.h"

namespace clustersweep::engine {

TransformerChunkEvaluator::TransformerChunkEvaluator(const spaces::Space& space,
                                                     const Schema& schema, bool exhaustive)
    : space_(space),
      schema_(schema),
      keep_(space.keep()),
      objective_(space.objective()),
      plan_points_(space.plan_points()),
      search_(!exhaustive &&
              (keep_ == spaces::Keep::best_per_design || keep_ == spaces::Keep::pareto_per_design)),
      rows_(schema) {
  point_col_ = schema.index("point_id");
  design_col_ = schema.index("design_id");
  dp_col_ = schema.index("dp");
  feasible_col_ = schema.index("feasible");
  reason_col_ = schema.index("infeasible_reason");
  num_gpus_col_ = schema.index("num_gpus");
  const auto& axes = space.axes();
  // A constant column is filled once, when its RowBlock grows: no row writes it.
  auto unless_constant = [&](std::size_t c) {
    return c != Schema::npos && schema.columns[c].constant ? Schema::npos : c;
  };
  for (int i = 0; i < spaces::kNumAxes; ++i)
    axis_col_[i] = unless_constant(schema.index(axes[i].name));
  odometer_end_ = spaces::kTp;
  for (int i = spaces::kTp; i < spaces::kNumAxes; ++i)
    if (axes[i].size() > 1) odometer_end_ = i + 1;
  for (int m = 0; m < kNumTransformerMetrics; ++m)
    metric_col_[m] = schema.index(kTransformerMetrics[m].name);
  point_u32_ = schema.columns[point_col_].type == ColumnType::u32;
  if (keep_ != spaces::Keep::all)
    for (int i = spaces::kTp; i < spaces::kNumAxes; ++i)
      if (axis_col_[i] != Schema::npos) row_plan_axes_.push_back(i);
  if (reason_col_ != Schema::npos && schema.columns[reason_col_].type != ColumnType::label8)
    throw Error("internal: infeasible_reason is not a label8 column");
}

void TransformerChunkEvaluator::start(const Chunk& chunk) {
  chunk_ = chunk;
  next_ = chunk.point_begin;
  evaluated_ = 0;
  used_ = 0;
  rows_.clear();
  if (keep_ == spaces::Keep::all) rows_.resize(static_cast<std::size_t>(chunk.points()));
  refresh_columns();
  design_loaded_ = false;
  best_.reset();
  candidates_.clear();
}

bool TransformerChunkEvaluator::advance(std::uint64_t points) {
  const std::uint64_t stop = std::min(chunk_.point_end, next_ + points);
  while (next_ < stop) {
    const std::uint64_t design = next_ / plan_points_;
    if (!design_loaded_ || design != design_) {
      if (design_loaded_) finish_design();
      load_design(design);
      set_plan_digits(next_ % plan_points_);
      // Per-design chunks hold whole designs, so a design starts where the search takes it.
      if (search_ && next_ % plan_points_ == 0) {
        search_design();
        next_ += plan_points_;
        continue;
      }
    }
    // Within one design: a tight loop over its plans.
    const std::uint64_t design_stop = std::min(stop, (design + 1) * plan_points_);
    for (; next_ < design_stop; ++next_) {
      evaluate_point(next_);
      next_plan_digits();
    }
  }
  evaluated_ = next_ - chunk_.point_begin;
  if (next_ < chunk_.point_end) return false;
  if (design_loaded_) finish_design();
  design_loaded_ = false;
  rows_.resize(used_);
  return true;
}

void TransformerChunkEvaluator::evaluate_table(const spaces::TableDigits& table,
                                               const std::size_t* order, std::size_t n) {
  listed_ = true;
  // The plan axes are written below, a column at a time, and by fill_design_rows() where the
  // table has one value: no row writes its own.
  row_plan_axes_.clear();
  chunk_ = Chunk{};
  used_ = 0;
  rows_.clear();
  rows_.resize(n);
  refresh_columns();
  design_loaded_ = false;
  // The plan axes the table gives, with their place value in a point id; the others' digits stay
  // the 0 that load_design() sets.
  struct Given {
    int axis;
    const std::uint32_t* digits;
    std::uint64_t stride;
  };
  std::vector<Given> given;
  const auto& axes = space_.axes();
  std::uint64_t stride = 1;
  for (int i = spaces::kNumAxes - 1; i >= spaces::kTp; --i) {
    if (table.axis[i]) given.push_back({i, table.axis[i], stride});
    stride *= axes[i].size();
  }
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t r = order[k];
    const std::uint64_t design = table.design[r];
    if (!design_loaded_ || design != design_) {
      if (design_loaded_) finish_design();
      load_design(design);
    }
    std::uint64_t point = design * plan_points_;
    for (const Given& g : given) {
      digits_[g.axis] = g.digits[r];
      point += g.digits[r] * g.stride;
    }
    evaluate_point(point);
  }
  if (design_loaded_) finish_design();
  design_loaded_ = false;
  rows_.resize(used_);
  evaluated_ = n;
  // Row k is the table's row order[k]: each plan axis of more than one value from its codes.
  for (const Given& g : given) {
    const spaces::Axis& axis = axes[g.axis];
    if (axis_col_[g.axis] == Schema::npos) continue;
    with_column(axis_col_[g.axis], [&](auto* p) {
      using T = std::remove_pointer_t<decltype(p)>;
      for (std::size_t k = 0; k < n; ++k) {
        const std::uint32_t d = g.digits[order[k]];
        p[k] = static_cast<T>(axis.is_label ? static_cast<double>(d) : axis.numbers[d]);
      }
    });
  }
}

void TransformerChunkEvaluator::load_design(std::uint64_t design) {
  design_ = design;
  design_loaded_ = true;
  spaces::Violation why;
  design_ok_ = space_.design(design, design_data_, why);
  design_reason_ = spaces::to_infeasible(why.rule);
  space_.decode(design * plan_points_, digits_.data());
  estimator_.reset();
  steps_ = 0;
  if (design_ok_) {
    estimator_.emplace(design_data_.workload, design_data_.cluster, space_.calibration());
    steps_ = estimator::steps_to_train(design_data_.workload, space_.training_tokens());
    usd_per_gpu_s_ = space_.usd_per_gpu_s(design_data_);
    job_ = space_.job(design_data_.cluster, estimator_->checkpoint_bytes());
    interval_ = estimator::step_interval(space_.calibration(), design_data_.workload.model);
    support_ = space_.support_of(design_data_);
  }
  best_.reset();
  candidates_.clear();
  design_first_row_ = used_;
}

void TransformerChunkEvaluator::set_plan_digits(std::uint64_t plan_index) {
  const auto& axes = space_.axes();
  for (int i = odometer_end_ - 1; i >= spaces::kTp; --i) {
    const std::uint64_t radix = axes[i].size();
    digits_[i] = static_cast<std::uint32_t>(plan_index % radix);
    plan_index /= radix;
  }
}

void TransformerChunkEvaluator::next_plan_digits() noexcept {
  const auto& axes = space_.axes();
  for (int i = odometer_end_ - 1; i >= spaces::kTp; --i) {
    if (++digits_[i] < axes[i].size()) return;
    digits_[i] = 0;
  }
}

double TransformerChunkEvaluator::objective_of(const estimator::Estimate& e) const noexcept {
  return objective_value(objective_, space_.pricing(), usd_per_gpu_s_, e.time.total_s,
                         e.energy_per_step_j, steps_, design_data_.cluster.num_gpus, job_);
}

void TransformerChunkEvaluator::evaluate_point(std::uint64_t point_id) {
  if (!design_ok_) {
    if (keep_ == spaces::Keep::all) append(point_id, nullptr, design_reason_, nullptr);
    return;
  }
  estimator::Plan plan;
  estimator::Infeasible why = estimator::Infeasible::none;
  if (!space_.plan_from_digits(design_data_, digits_.data() + spaces::kTp, plan, why)) {
    if (keep_ == spaces::Keep::all) append(point_id, nullptr, why, nullptr);
    return;
  }
  const estimator::Estimate e = estimator_->estimate(plan);
  ++estimates_;
  switch (keep_) {
    case spaces::Keep::all:
      append(point_id, &plan, e.feasible ? estimator::Infeasible::none : e.reason, &e);
      return;
    case spaces::Keep::feasible:
      if (e.feasible) append(point_id, &plan, estimator::Infeasible::none, &e);
      return;
    case spaces::Keep::best_per_design: {
      if (!e.feasible) return;
      const double value = objective_of(e);
      // Strictly better only: ties keep the lowest point id.
      if (!best_ || value < best_->objective) best_ = Candidate{point_id, plan, e, value};
      return;
    }
    case spaces::Keep::pareto_per_design:
      if (e.feasible) candidates_.push_back(Candidate{point_id, plan, e, 0});
      return;
  }
}

void TransformerChunkEvaluator::search_design() {
  if (!design_ok_) return;
  const spaces::SearchOptions options{objective_, steps_, job_, false};
  const std::uint64_t first = design_ * plan_points_;
  auto candidate = [&](spaces::PlanResult& r) {
    return Candidate{first + r.plan_index, r.plan, r.estimate, r.objective};
  };
  spaces::SearchStats stats;
  if (keep_ == spaces::Keep::best_per_design) {
    auto best = spaces::best_plans(space_, design_data_, *estimator_, options, 1, &stats);
    if (!best.empty()) best_ = candidate(best.front());
  } else {
    for (auto& r : spaces::pareto_candidates(space_, design_data_, *estimator_, options, &stats))
      candidates_.push_back(candidate(r));
  }
  estimates_ += stats.evaluated;
}

void TransformerChunkEvaluator::finish_design() {
  if (keep_ == spaces::Keep::best_per_design && best_) {
    set_plan_digits(best_->point_id % plan_points_);
    append_candidate(*best_);
  } else if (keep_ == spaces::Keep::pareto_per_design && !candidates_.empty()) {
    std::vector<double> time(candidates_.size()), energy(candidates_.size());
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
      time[i] = candidates_[i].estimate.time.total_s;
      energy[i] = candidates_[i].estimate.energy_per_step_j;
    }
    for (std::size_t i : pareto_front(time, energy)) {
      set_plan_digits(candidates_[i].point_id % plan_points_);
      append_candidate(candidates_[i]);
    }
  }
  best_.reset();
  candidates_.clear();
  fill_design_rows();
}

void TransformerChunkEvaluator::put(std::size_t c, std::size_t r, double value) noexcept {
  visit(schema_.columns[c].type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    static_cast<T*>(column_[c])[r] = static_cast<T>(value);
  });
}

double TransformerChunkEvaluator::derived_dp() const noexcept {
  const auto& axes = space_.axes();
  const double model_parallel = axes[spaces::kTp].numbers[digits_[spaces::kTp]] *
                                axes[spaces::kPp].numbers[digits_[spaces::kPp]] *
                                axes[spaces::kCp].numbers[digits_[spaces::kCp]];
  const double dp = design_data_.cluster.num_gpus / model_parallel;
  return dp == std::floor(dp) ? dp : 0;
}

template <class F>
void TransformerChunkEvaluator::with_column(std::size_t c, F f) noexcept {
  visit(schema_.columns[c].type, [&](auto* tag) { f(static_cast<decltype(tag)>(column_[c])); });
}

void TransformerChunkEvaluator::fill_design_rows() {
  const std::size_t first = design_first_row_, last = used_;
  if (first == last) return;
  auto fill = [&](std::size_t c, double value) {
    if (c == Schema::npos) return;  // a column `[output] columns` does not keep
    with_column(c, [&](auto* p) {
      std::fill(p + first, p + last, static_cast<std::remove_pointer_t<decltype(p)>>(value));
    });
  };
  fill(design_col_, static_cast<double>(design_));
  // The design axes with catalog defaults resolved (label axes: the label's code).
  for (int i = 0; i < spaces::kTp; ++i) fill(axis_col_[i], design_data_.value[i]);
  if (num_gpus_col_ != Schema::npos && axis_col_[spaces::kClusterSize] != num_gpus_col_)
    fill(num_gpus_col_, design_data_.cluster.num_gpus);
  if (listed_) {
    for (int i = spaces::kTp; i < spaces::kNumAxes; ++i) {
      const spaces::Axis& axis = space_.axes()[i];
      if (axis.size() == 1) fill(axis_col_[i], axis.is_label ? 0.0 : axis.numbers[0]);
    }
  } else if (keep_ == spaces::Keep::all) {
    // Rows [first, last) are consecutive plans of the design, so each plan axis's column is runs
    // of one value, `stride` rows long (the product of the less significant axes' sizes).
    const auto& axes = space_.axes();
    const std::uint64_t plan_begin = (chunk_.point_begin + first) % plan_points_;
    std::uint64_t stride = 1;
    for (int i = spaces::kNumAxes - 1; i >= spaces::kTp; --i) {
      const spaces::Axis& axis = axes[i];
      const std::uint64_t size = axis.size();
      if (axis_col_[i] == Schema::npos) {
        stride *= size;
        continue;
      }
      with_column(axis_col_[i], [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        std::uint64_t d = (plan_begin / stride) % size;
        std::uint64_t done = plan_begin % stride;  // rows of the current run already past
        for (std::size_t r = first; r < last;) {
          const std::size_t run =
              static_cast<std::size_t>(std::min<std::uint64_t>(stride - done, last - r));
          std::fill(p + r, p + r + run,
                    static_cast<T>(axis.is_label ? static_cast<double>(d) : axis.numbers[d]));
          r += run;
          done = 0;
          if (++d == size) d = 0;
        }
      });
      stride *= size;
    }
  }
  design_first_row_ = used_;
}

void TransformerChunkEvaluator::append_candidate(const Candidate& c) {
  append(c.point_id, &c.plan, estimator::Infeasible::none, &c.estimate);
}

void TransformerChunkEvaluator::refresh_columns() {
  column_.resize(rows_.columns());
  for (std::size_t c = 0; c < column_.size(); ++c) column_[c] = rows_.raw(c);
  f64_metrics_.clear();
  f32_metrics_.clear();
  for (int m = 0; m < kNumTransformerMetrics; ++m) {
    if (metric_col_[m] == Schema::npos) continue;
    if (kTransformerMetrics[m].type == ColumnType::f32)
      f32_metrics_.push_back({static_cast<float*>(column_[metric_col_[m]]), m});
    else
      f64_metrics_.push_back({static_cast<double*>(column_[metric_col_[m]]), m});
  }
}

std::size_t TransformerChunkEvaluator::new_row() {
  if (used_ == rows_.capacity()) {
    rows_.resize(std::max<std::size_t>(1024, 2 * rows_.capacity()));
    refresh_columns();
  }
  return used_++;
}

void TransformerChunkEvaluator::append(std::uint64_t point_id, const estimator::Plan* plan,
                                       estimator::Infeasible reason, const estimator::Estimate* e) {
  const std::size_t r = new_row();
  auto at = [&](std::size_t c, auto value) {
    static_cast<decltype(value)*>(column_[c])[r] = value;
  };
  if (point_u32_)
    at(point_col_, static_cast<std::uint32_t>(point_id));
  else
    at(point_col_, point_id);
  // design_id and the design axes are constant over a design's rows: fill_design_rows() sets them.
  // With keep = "all" the plan axes (like the design axes) are filled by fill_design_rows().
  const auto& axes = space_.axes();
  for (int i : row_plan_axes_) {
    const std::uint32_t d = digits_[i];
    put(axis_col_[i], r, axes[i].is_label ? d : axes[i].numbers[d]);
  }
  if (dp_col_ != Schema::npos) put(dp_col_, r, plan ? plan->dp : derived_dp());
  const bool feasible = e && e->feasible;
  at(feasible_col_, static_cast<std::uint8_t>(feasible ? 1 : 0));
  // label8: checked in the constructor
  if (reason_col_ != Schema::npos) at(reason_col_, static_cast<std::uint8_t>(reason));

  double m[kNumTransformerMetrics];
  if (e) {
    const int support =
        support_.of(spaces::regime_of(*plan, design_data_.workload.model), plan->cp);
    transformer_metric_values(
        *e, steps_, job_,
        spaces::supported_interval(interval_, support, space_.calibration().interval_widening),
        support, space_.pricing().pue, m);
  } else
    std::fill(m, m + kNumTransformerMetrics, kNaN);
  for (const auto& [column, metric] : f64_metrics_) column[r] = m[metric];
  for (const auto& [column, metric] : f32_metrics_) column[r] = static_cast<float>(m[metric]);
}

}  // namespace clustersweep::engine
