#pragma once
// The transformer family's kernel of ChunkEvaluator (engine/evaluate.h): one
// estimator::Estimator per design, built once and reused for its plans, stepping an odometer over
// the plan digits.
#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "engine/evaluate.h"
#include "estimator/estimator.h"

namespace clustersweep::engine {

class TransformerChunkEvaluator final : public FamilyEvaluator {
 public:
  TransformerChunkEvaluator(const spaces::Space& space, const Schema& schema, bool exhaustive);

  void start(const Chunk& chunk) override;
  bool advance(std::uint64_t points) override;
  const RowBlock& rows() const noexcept override { return rows_; }
  void swap_rows(RowBlock& other) noexcept override { std::swap(rows_, other); }
  std::uint64_t points_evaluated() const noexcept override { return evaluated_; }
  std::uint64_t estimates() const noexcept override { return estimates_; }
  void evaluate_table(const spaces::TableDigits& table, const std::size_t* order,
                      std::size_t n) override;

 private:
  // One evaluated point, kept until its design is reduced (best / pareto modes).
  struct Candidate {
    std::uint64_t point_id = 0;
    estimator::Plan plan;
    estimator::Estimate estimate;
    double objective = 0;
  };

  void load_design(std::uint64_t design);
  void finish_design();
  void set_plan_digits(std::uint64_t plan_index);
  void next_plan_digits() noexcept;
  void evaluate_point(std::uint64_t point_id);
  // The whole current design through the plan search.
  void search_design();
  // Appends one row; `estimate` is null for points removed before evaluation.
  void append(std::uint64_t point_id, const estimator::Plan* plan, estimator::Infeasible reason,
              const estimator::Estimate* estimate);
  void append_candidate(const Candidate& c);
  std::size_t new_row();
  void refresh_columns();
  void fill_design_rows();
  double objective_of(const estimator::Estimate& e) const noexcept;
  // dp = num_gpus / (tp * pp * cp) of the current digits when that divides, else 0: the derived
  // degree of a point removed before evaluation (a removed plan has no estimator::Plan).
  double derived_dp() const noexcept;

  const spaces::Space& space_;
  const Schema& schema_;
  spaces::Keep keep_;
  // The rows come from a table (evaluate_table()), not from an odometer over the plan axes.
  bool listed_ = false;
  // The plan axes each row writes: all with a column but in keep = "all" (fill_design_rows()
  // writes them as runs of one value) and for a table (evaluate_table() writes them).
  std::vector<int> row_plan_axes_;
  spaces::Objective objective_;
  std::uint64_t plan_points_;
  // Per-design keep modes find each design's rows with the exact plan search (spaces/search.h);
  // false: by evaluating every plan.
  bool search_;

  // Column indices; Schema::npos for a column `[output] columns` does not keep.
  std::size_t point_col_, design_col_, dp_col_, feasible_col_, reason_col_, num_gpus_col_;
  bool point_u32_ = false;  // point_id is stored as uint32 (a space of at most 2^32 points)
  std::array<std::size_t, spaces::kNumAxes> axis_col_{};
  std::size_t metric_col_[kNumTransformerMetrics] = {};

  RowBlock rows_;
  std::vector<void*> column_;  // rows_'s arrays, refreshed when they grow
  // The metric columns' arrays by type, with their Metric index (refreshed with column_).
  std::vector<std::pair<double*, int>> f64_metrics_;
  std::vector<std::pair<float*, int>> f32_metrics_;
  // Stores `value` converted to column c's type in row r.
  void put(std::size_t c, std::size_t r, double value) noexcept;
  // Calls f with column c's array as a pointer of its element type.
  template <class F>
  void with_column(std::size_t c, F f) noexcept;
  std::size_t used_ = 0;
  std::size_t design_first_row_ = 0;  // the current design's first row

  Chunk chunk_;
  std::uint64_t next_ = 0;
  std::uint64_t evaluated_ = 0;
  std::uint64_t estimates_ = 0;

  // The current design.
  std::uint64_t design_ = 0;
  bool design_loaded_ = false;
  bool design_ok_ = false;
  estimator::Infeasible design_reason_ = estimator::Infeasible::none;
  spaces::Design design_data_;
  std::optional<estimator::Estimator> estimator_;
  double steps_ = 0;                  // optimizer steps to train
  estimator::JobDesign job_;          // failures and checkpoints of the design's job
  estimator::StepInterval interval_;  // the 90% prediction interval of its steps
  spaces::DesignSupport support_;     // the calibration runs like its points
  double usd_per_gpu_s_ = 0;          // the design's accelerator price, for the cost objective
  std::array<std::uint32_t, spaces::kNumAxes> digits_{};
  // One past the last axis with more than one value: the plan odometer steps the axes before it
  // (the digits of the axes after it are always 0, such as the stack settings a spec leaves).
  int odometer_end_ = spaces::kNumAxes;

  std::optional<Candidate> best_;
  std::vector<Candidate> candidates_;
};

}  // namespace clustersweep::engine
