#include "spaces/support.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "base/error.h"
#include "base/names.h"
#include "spaces/toml_text.h"

namespace clustersweep::spaces {
namespace {

namespace est = estimator;

constexpr const char* kFamilyNames[] = {"dense", "moe", "dlrm"};
constexpr const char* kTransformerRegimes[] = {"model_parallel", "fsdp", "fsdp_tp",
                                               "fsdp_sharded_experts"};
// The shardings in Sharding order, then the planner's placement.
constexpr const char* kDlrmRegimes[] = {"table", "row",    "column",    "table_row",
                                        "data",  "hybrid", "fused_row", "best"};
static_assert(std::size(kDlrmRegimes) == kMaxRegimes);

std::span<const char* const> regime_names(SupportFamily family) noexcept {
  if (family == SupportFamily::dlrm) return kDlrmRegimes;
  return kTransformerRegimes;
}

std::string accelerator_key(std::string_view gpu, est::Precision precision) {
  return fmt::format("{} {}", gpu, est::to_string(precision));
}

int count(const std::map<std::string, int>& counts, const std::string& key) {
  const auto at = counts.find(key);
  return at == counts.end() ? 0 : at->second;
}

// A count in a [support] table: a non-negative integer (at least `min`).
int read_count(const toml::node& node, std::string_view filename, std::string_view key,
               int min = 0) {
  const auto value = node.value<std::int64_t>();
  if (!value || *value < min || *value > 1'000'000'000)
    throw InputError(fmt::format("{}: {}: must be an integer of at least {}",
                                 where(filename, node.source()), key, min));
  return static_cast<int>(*value);
}

const toml::table& read_table(const toml::node& node, std::string_view filename,
                              std::string_view key) {
  if (!node.is_table())
    throw InputError(fmt::format("{}: {}: must be a table", where(filename, node.source()), key));
  return *node.as_table();
}

FamilySupport read_family(const toml::table& table, SupportFamily family,
                          std::string_view filename) {
  const std::string name = fmt::format("support.{}", to_string(family));
  FamilySupport out;
  for (const auto& [key, node] : table) {
    const std::string path = fmt::format("{}.{}", name, key.str());
    if (key.str() == "runs") {
      out.runs = read_count(node, filename, path);
    } else if (key.str() == "max_cp") {
      out.max_cp = read_count(node, filename, path, 1);
    } else if (key.str() == "regimes") {
      const auto names = regime_names(family);
      for (const auto& [regime, count] : read_table(node, filename, path)) {
        if (std::find(names.begin(), names.end(), regime.str()) == names.end())
          throw InputError(fmt::format("{}: {}.{}: unknown regime; expected one of {}",
                                       where(filename, regime.source()), path, regime.str(),
                                       fmt::join(names, ", ")));
        out.regimes[std::string(regime.str())] =
            read_count(count, filename, fmt::format("{}.{}", path, regime.str()));
      }
    } else if (key.str() == "accelerators") {
      for (const auto& [accelerator, count] : read_table(node, filename, path)) {
        const std::string_view text = accelerator.str();
        const auto space = text.rfind(' ');
        est::Precision precision;
        if (space == std::string_view::npos ||
            !est::parse_precision(text.substr(space + 1), precision))
          throw InputError(fmt::format(
              "{}: {}.\"{}\": expected \"ACCELERATOR PRECISION\", e.g. \"H100-SXM5-80GB bf16\"",
              where(filename, accelerator.source()), path, text));
        out.accelerators[std::string(text)] =
            read_count(count, filename, fmt::format("{}.\"{}\"", path, text));
      }
    } else {
      throw InputError(
          fmt::format("{}: {}: unknown key; expected runs, max_cp, regimes and accelerators",
                      where(filename, key.source()), path));
    }
  }
  return out;
}

}  // namespace

int regime_of(const est::Plan& plan, const est::Model& model) noexcept {
  if (plan.zero < 3) return 0;
  // ZeRO-3 over experts replicated across an expert-data-parallel group: each expert's weights
  // gathered from other ranks every micro-batch. The search favours it for MoE models; few
  // measured runs check it.
  if (est::is_moe(model) && plan.ep * plan.etp < plan.tp * plan.cp * plan.dp) return 3;
  return plan.tp > 1 ? 2 : 1;
}

int regime_of(bool best_sharding, est::Sharding sharding) noexcept {
  return best_sharding ? est::kNumShardings : static_cast<int>(sharding);
}

const char* to_string(SupportFamily family) noexcept {
  return kFamilyNames[static_cast<int>(family)];
}

SupportFamily support_family(const est::Model& model) noexcept {
  return est::is_moe(model) ? SupportFamily::moe : SupportFamily::dense;
}

CalibrationSupport count_runs(const std::vector<SupportRun>& runs) {
  CalibrationSupport out;
  for (const SupportRun& r : runs) {
    FamilySupport& f = out.of(r.family);
    ++f.runs;
    f.max_cp = std::max(f.max_cp, r.cp);
    ++f.accelerators[accelerator_key(r.gpu, r.precision)];
    ++f.regimes[regime_names(r.family)[r.regime]];
  }
  return out;
}

std::vector<int> held_out_support(const std::vector<SupportRun>& runs,
                                  const std::vector<int>& group) {
  std::vector<int> out(runs.size());
  std::vector<int> groups = group;
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  for (int g : groups) {
    std::vector<SupportRun> others;
    for (std::size_t i = 0; i < runs.size(); ++i)
      if (group[i] != g) others.push_back(runs[i]);
    const CalibrationSupport support = count_runs(others);
    for (std::size_t i = 0; i < runs.size(); ++i)
      if (group[i] == g) {
        const SupportRun& r = runs[i];
        out[i] = design_support(support, r.family, r.gpu, r.precision).of(r.regime, r.cp);
      }
  }
  return out;
}

int DesignSupport::of(int regime_index, int cp) const noexcept {
  return std::min({accelerator, regime[regime_index], cp <= max_cp ? runs : 0});
}

DesignSupport design_support(const CalibrationSupport& support, SupportFamily family,
                             std::string_view gpu, est::Precision precision) {
  const FamilySupport& f = support.of(family);
  DesignSupport out;
  out.accelerator = count(f.accelerators, accelerator_key(gpu, precision));
  const auto names = regime_names(family);
  for (std::size_t i = 0; i < names.size(); ++i) out.regime[i] = count(f.regimes, names[i]);
  out.max_cp = f.max_cp;
  out.runs = f.runs;
  return out;
}

PointSupport point_support(const CalibrationSupport& support, SupportFamily family,
                           std::string_view gpu, est::Precision precision, int regime, int cp) {
  const DesignSupport d = design_support(support, family, gpu, precision);
  PointSupport out{d.of(regime, cp), ""};
  if (out.runs >= kFewCalibrationRuns) return out;
  const char* name = to_string(family);
  auto runs = [](int n) { return n == 0 ? std::string("no") : fmt::format("{}", n); };
  if (d.runs < kFewCalibrationRuns)
    out.weakest = fmt::format("{} {} calibration runs", runs(d.runs), name);
  else if (out.runs == d.accelerator)
    out.weakest = fmt::format("{} {} run{} on {} in {}", runs(d.accelerator), name,
                              d.accelerator == 1 ? "" : "s", gpu, est::to_string(precision));
  else if (out.runs == d.regime[regime])
    out.weakest = fmt::format("{} {} run{} in regime {}", runs(d.regime[regime]), name,
                              d.regime[regime] == 1 ? "" : "s", regime_names(family)[regime]);
  else
    out.weakest = fmt::format("cp {} above the largest in the {} runs ({})", cp, name, d.max_cp);
  return out;
}

est::StepInterval family_interval(const est::Calibration& c, SupportFamily f) noexcept {
  switch (f) {
    case SupportFamily::dense:
      return {c.interval_lo, c.interval_hi};
    case SupportFamily::moe:
      return {c.moe_interval_lo, c.moe_interval_hi};
    case SupportFamily::dlrm:
      return {c.dlrm.interval_lo, c.dlrm.interval_hi};
  }
  return {};
}

void set_family_interval(est::Calibration& c, SupportFamily f, est::StepInterval i) noexcept {
  switch (f) {
    case SupportFamily::dense:
      c.interval_lo = i.lo;
      c.interval_hi = i.hi;
      break;
    case SupportFamily::moe:
      c.moe_interval_lo = i.lo;
      c.moe_interval_hi = i.hi;
      break;
    case SupportFamily::dlrm:
      c.dlrm.interval_lo = i.lo;
      c.dlrm.interval_hi = i.hi;
      break;
  }
}

est::StepInterval supported_interval(const est::StepInterval& interval, int runs,
                                     double widening) noexcept {
  if (runs >= kFewCalibrationRuns) return interval;
  // Widened in log space: the ratios' logarithms scale, so the interval stays about the
  // prediction as the held-out residuals' quantiles are.
  return {std::pow(interval.lo, widening), std::pow(interval.hi, widening)};
}

CalibrationSupport parse_support(std::string_view text, std::string_view filename,
                                 const CalibrationSupport& base) {
  const toml::table root = parse_toml(text, filename);
  CalibrationSupport out = base;
  const toml::node* node = root.get("support");
  if (!node) return out;
  for (const auto& [key, family] : read_table(*node, filename, "support")) {
    const auto at = std::find(std::begin(kFamilyNames), std::end(kFamilyNames), key.str());
    if (at == std::end(kFamilyNames))
      throw InputError(fmt::format("{}: support.{}: unknown family; expected dense, moe or dlrm",
                                   where(filename, key.source()), key.str()));
    const auto f = static_cast<SupportFamily>(at - std::begin(kFamilyNames));
    out.of(f) = read_family(read_table(family, filename, fmt::format("support.{}", key.str())), f,
                            filename);
  }
  return out;
}

const CalibrationSupport& builtin_support() {
  static const CalibrationSupport support =
      parse_support(embedded_text("calibration.toml"), "calibration.toml", CalibrationSupport{});
  return support;
}

std::string format_support(const CalibrationSupport& support) {
  std::string out;
  for (int i = 0; i < 3; ++i) {
    const FamilySupport& f = support.family[i];
    if (f.runs == 0) continue;
    out += fmt::format(
        "\n[support.{}]\n# the calibration runs: in all, the largest context parallelism, per\n"
        "# parallel regime and per accelerator and precision (docs/calibration.md)\n"
        "runs = {}\nmax_cp = {}\n",
        kFamilyNames[i], f.runs, f.max_cp);
    std::vector<std::string> regimes, accelerators;
    for (const auto& [name, n] : f.regimes) regimes.push_back(fmt::format("{} = {}", name, n));
    for (const auto& [name, n] : f.accelerators)
      accelerators.push_back(fmt::format("{} = {}", toml_quoted(name), n));
    out += fmt::format("regimes = {{ {} }}\n", fmt::join(regimes, ", "));
    out += fmt::format("accelerators = {{ {} }}\n", fmt::join(accelerators, ", "));
  }
  return out;
}

}  // namespace clustersweep::spaces
