#pragma once
// A sweep space parsed from a TOML spec (docs/spec-format.md).
//
// Point ids are a mixed-radix number over the axes. Design axes (workload and cluster: everything
// but the plan) are the most significant digits and plan axes the least, so the points of one
// design (one workload on one cluster configuration) are the contiguous id range
// [design * plan_points(), (design + 1) * plan_points()). The engine relies on this: it builds one
// estimator::Estimator per design and loops over that design's plans.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/estimator.h"

namespace clustersweep::spaces {

// One swept dimension. Numeric axes hold `numbers`; label axes (gpu, model, recompute, offload,
// precision...) hold `labels`, and a point stores the label's index.
struct Axis {
  std::string name;  // store column name, e.g. "num_nodes", "gpu", "tp"
  std::string unit;  // e.g. "Gbit/s", "GB", "" for counts
  bool is_label = false;
  bool is_plan = false;  // plan axes are the least significant digits
  std::vector<double> numbers;
  std::vector<std::string> labels;
  std::size_t size() const noexcept { return is_label ? labels.size() : numbers.size(); }
};

// Re-pricing parameters stored with the results, never baked into them (analysis re-prices).
struct Pricing {
  double pue = 1.2;
  double usd_per_kwh = 0.10;
  double carbon_g_per_kwh = 400;
  double gpu_hour_usd = 0;        // if > 0, cost = GPU-hours * price
  double capex_usd_per_gpu = 0;   // else capex amortized over amortize_years
  double amortize_years = 4;
};

enum class Keep : std::uint8_t { all, feasible, best_per_design, pareto_per_design };
enum class Objective : std::uint8_t { step_time, time_to_train, energy, cost };

// One design: the workload and cluster the plan loop runs on.
struct Design {
  estimator::Workload workload;
  estimator::Cluster cluster;
};

class Space {
 public:
  // Parses and validates spec text; every error is an InputError naming
  // `filename:line:column: key: message`. `catalog` comes from Catalog::builtin() unless overridden.
  static Space parse(std::string_view toml_text, std::string_view filename);

  const std::vector<Axis>& axes() const noexcept;
  std::uint64_t size() const noexcept;         // all points, valid or not
  std::uint64_t designs() const noexcept;      // product of the design axes
  std::uint64_t plan_points() const noexcept;  // product of the plan axes

  // Fills the axis-value indices of `point_id` (one per axis, in axes() order).
  void decode(std::uint64_t point_id, std::uint32_t* axis_index) const noexcept;
  // The workload and cluster of design `design` (0 <= design < designs()). Returns false (and
  // leaves `why` set) when the design itself violates a structural constraint.
  bool design(std::uint64_t design, Design& out) const noexcept;
  // The plan of plan index `plan` within a design; false with `why` when a structural constraint
  // (docs/spec-format.md) removes it before evaluation. dp is derived here.
  bool plan(const Design& design, std::uint64_t plan, estimator::Plan& out,
            estimator::Infeasible& why) const noexcept;

  double training_tokens() const noexcept;  // tokens to train, for time_to_train_s
  const Pricing& pricing() const noexcept;
  Keep keep() const noexcept;
  Objective objective() const noexcept;
  const estimator::Calibration& calibration() const noexcept;
  const std::string& text() const noexcept;  // the full spec text, stored with the results

 private:
  struct Impl;
  // Implementation defined in spaces/space.cc.
};

}  // namespace clustersweep::spaces
