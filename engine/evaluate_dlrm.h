#pragma once
// The recommendation-model family's kernel of ChunkEvaluator (engine/evaluate.h): one
// estimator::DlrmEstimator per design; each value of the sharding axis is placed by the planner
// and estimated. A design has a handful of plans and the planner dominates, so rows are written
// one at a time.
#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "engine/evaluate.h"
#include "estimator/dlrm.h"

namespace clustersweep::engine {

class DlrmChunkEvaluator final : public FamilyEvaluator {
 public:
  DlrmChunkEvaluator(const spaces::Space& space, const Schema& schema);

  void start(const Chunk& chunk) override;
  bool advance(std::uint64_t points) override;
  const RowBlock& rows() const noexcept override { return rows_; }
  void swap_rows(RowBlock& other) noexcept override { std::swap(rows_, other); }
  std::uint64_t points_evaluated() const noexcept override { return evaluated_; }
  std::uint64_t estimates() const noexcept override { return estimates_; }
  void evaluate_table(const spaces::TableDigits& table, const std::size_t* order,
                      std::size_t n) override;

 private:
  struct Candidate {
    std::uint64_t point_id = 0;
    estimator::DlrmEstimate estimate;
    double objective = 0;
  };

  void load_design(std::uint64_t design);
  void finish_design();
  void evaluate_point(std::uint64_t point_id);
  // Appends one row; `estimate` is null for points removed before evaluation.
  void append(std::uint64_t point_id, estimator::Infeasible reason,
              const estimator::DlrmEstimate* estimate);
  double objective_of(const estimator::DlrmEstimate& e) const noexcept;
  void put(std::size_t column, std::size_t row, double value) noexcept;

  const spaces::Space& space_;
  const Schema& schema_;
  spaces::Keep keep_;
  spaces::Objective objective_;
  std::uint64_t plan_points_;

  std::size_t point_col_, design_col_, feasible_col_, reason_col_, num_gpus_col_;
  std::vector<std::size_t> axis_col_;
  std::size_t framework_col_;
  std::array<std::size_t, estimator::kNumDlrmFrameworks> framework_code_{};  // by DlrmFramework
  std::size_t metric_col_[kNumDlrmMetrics] = {};

  RowBlock rows_;
  std::size_t used_ = 0;
  Chunk chunk_;
  std::uint64_t next_ = 0;
  std::uint64_t evaluated_ = 0;
  std::uint64_t estimates_ = 0;

  // The current design.
  std::uint64_t design_ = 0;
  bool design_loaded_ = false;
  bool design_ok_ = false;
  estimator::Infeasible design_reason_ = estimator::Infeasible::none;
  spaces::DlrmDesign design_data_;
  std::optional<estimator::DlrmEstimator> estimator_;
  double steps_ = 0;                  // optimizer steps to train
  estimator::JobDesign job_;          // failures and checkpoints of the design's job
  estimator::StepInterval interval_;  // the 90% prediction interval of its steps
  spaces::DesignSupport support_;     // the calibration runs like its points
  double usd_per_gpu_s_ = 0;          // the design's accelerator price, for the cost objective

  std::optional<Candidate> best_;
  std::vector<Candidate> candidates_;
};

}  // namespace clustersweep::engine
