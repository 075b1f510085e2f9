#pragma once
// Calibration support (docs/calibration.md, "Calibration support"): how many of the calibration's
// measured runs are like a point. A point can lie outside the calibration in three ways: an
// accelerator never measured in its precision (B200 in bf16 when every B200 run is fp8), a
// parallel regime never measured (ZeRO-3 with tensor parallelism), a context parallelism above
// the largest measured. Its support is the fewest runs along any of them; below
// kFewCalibrationRuns the point is flagged and its prediction interval widens.
//
// `validate --fit` counts the runs it fits on into the [support] tables of the calibration file.
#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/dlrm.h"
#include "estimator/estimator.h"

namespace clustersweep::spaces {

inline constexpr int kFewCalibrationRuns = 3;

// The parallel regimes a support table counts. A transformer plan's: model_parallel (ZeRO 0-2,
// any TP/PP: Megatron), fsdp (ZeRO-3 without TP), fsdp_tp (ZeRO-3 with TP), and for a
// Mixture-of-Experts model fsdp_sharded_experts (ZeRO-3 with an expert-data-parallel group:
// ep*etp < tp*cp*dp). A recommendation model's: its sharding as the spec names it (table, row, ...,
// best: the planner's placement).
inline constexpr int kMaxRegimes = estimator::kNumShardings + 1;
int regime_of(const estimator::Plan& plan, const estimator::Model& model) noexcept;
int regime_of(bool best_sharding, estimator::Sharding sharding) noexcept;

// The three calibration families (the [support.dense], [support.moe] and [support.dlrm] tables).
enum class SupportFamily : std::uint8_t { dense, moe, dlrm };
const char* to_string(SupportFamily family) noexcept;
SupportFamily support_family(const estimator::Model& model) noexcept;  // dense or moe

// The runs of one family, counted.
struct FamilySupport {
  int runs = 0;
  int max_cp = 1;                           // the largest context parallelism of any run
  std::map<std::string, int> accelerators;  // "H100-SXM5-80GB bf16" -> runs
  std::map<std::string, int> regimes;       // regime name -> runs
};

struct CalibrationSupport {
  std::array<FamilySupport, 3> family;  // by SupportFamily
  const FamilySupport& of(SupportFamily f) const noexcept { return family[static_cast<int>(f)]; }
  FamilySupport& of(SupportFamily f) noexcept { return family[static_cast<int>(f)]; }
};

// One calibration run as a support table counts it.
struct SupportRun {
  SupportFamily family = SupportFamily::dense;
  std::string gpu;
  estimator::Precision precision = estimator::Precision::bf16;
  int regime = 0;
  int cp = 1;
};
// Counts `runs` into the tables of their families (the others stay empty).
CalibrationSupport count_runs(const std::vector<SupportRun>& runs);
// Each run's support in the table of the runs of the other groups (`group[i]`: its source): how
// far the calibration reached towards it when its group was held out.
std::vector<int> held_out_support(const std::vector<SupportRun>& runs,
                                  const std::vector<int>& group);

// The support of the points of one accelerator in one precision: what a sweep looks up once per
// design, and then per plan without allocating.
struct DesignSupport {
  int accelerator = 0;  // runs on the accelerator in the precision
  std::array<int, kMaxRegimes> regime{};
  int max_cp = 1;
  int runs = 0;
  // The point's calibration_support: the fewest runs along any way it differs.
  int of(int regime_index, int cp) const noexcept;
};
DesignSupport design_support(const CalibrationSupport& support, SupportFamily family,
                             std::string_view gpu, estimator::Precision precision);

// The support of one point, with what limits it when it is few: "no dense run on B200-180GB in
// bf16", "2 moe runs in regime fsdp_tp", "cp 8 above the largest in the moe runs (2)".
struct PointSupport {
  int runs = 0;
  std::string weakest;  // empty unless runs < kFewCalibrationRuns
};
PointSupport point_support(const CalibrationSupport& support, SupportFamily family,
                           std::string_view gpu, estimator::Precision precision, int regime,
                           int cp);

// The 90% interval of a step of `family` in `calibration` (interval_lo/_hi of [calibration],
// [moe] or [dlrm]), and setting it.
estimator::StepInterval family_interval(const estimator::Calibration& calibration,
                                        SupportFamily family) noexcept;
void set_family_interval(estimator::Calibration& calibration, SupportFamily family,
                         estimator::StepInterval interval) noexcept;

// The step's interval of a point with `runs` of support: the calibration's, widened for a point
// with few (estimator::Calibration::interval_widening).
estimator::StepInterval supported_interval(const estimator::StepInterval& interval, int runs,
                                           double widening) noexcept;

// The [support.*] tables of a calibration file's text; a family the text omits keeps `base`'s.
CalibrationSupport parse_support(std::string_view toml, std::string_view filename,
                                 const CalibrationSupport& base);
const CalibrationSupport& builtin_support();
// The [support.*] tables as TOML text (the families with runs).
std::string format_support(const CalibrationSupport& support);

}  // namespace clustersweep::spaces
