#include "spaces/space.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>

#include "base/error.h"
#include "base/files.h"
#include "base/format.h"
#include "spaces/frameworks.h"
#include "spaces/space_impl.h"
#include "spaces/spec_reader.h"

namespace clustersweep::spaces {

// ---------------------------------------------------------------------------------------------
// Designs and plans

bool Space::Impl::fill_design(std::uint64_t design, Design& out, Violation& why) const noexcept {
  why = Violation{};
  out.id = design;
  std::uint64_t rest = design;
  for (int i = kNumDesignAxes - 1; i >= 0; --i) {
    out.axis_index[i] = static_cast<std::uint32_t>(rest % radix[i]);
    rest /= radix[i];
  }
  auto number = [&](AxisId id) { return axes[id].numbers[out.axis_index[id]]; };

  // Axis values of 0 are "the catalog default": resolve_cluster() and resolve_workload() read 0
  // as "not set", as they do for a flag not given.
  out.workload = resolve_workload(models[out.axis_index[kModel]], static_cast<int>(number(kSeqLen)),
                                  static_cast<std::int64_t>(number(kGlobalBatch)),
                                  precisions[out.axis_index[kPrecision]]);
  out.workload.lora_rank = lora_rank;
  const ClusterSettings cs = cluster_settings(out.axis_index.data(), kGpu);
  out.cluster = resolve_cluster(*gpus[out.axis_index[kGpu]], cs, calibration);

  resolve_values(out);
  why = check_design(out.workload, out.cluster);
  if (why) return false;
  if (out.cluster.expansion_bytes == 0 && out.axis_index[kExpansionGbytesPerS] > 0) {
    why.rule = Rule::expansion_duplicate;
    return false;
  }
  if (!design_constraints_hold(out.value.data(), kNumDesignAxes, out.cluster)) {
    why.rule = Rule::user_constraint;
    return false;
  }
  return true;
}

ClusterSettings Space::Impl::cluster_settings(const std::uint32_t* axis_index,
                                              int gpu_axis) const noexcept {
  // The cluster axes keep the transformer's order after the gpu axis in every family.
  auto number = [&](AxisId id) {
    const int i = gpu_axis + (id - kGpu);
    return axes[i].numbers[axis_index[i]];
  };
  ClusterSettings cs;
  (size_is_nodes ? cs.nodes : cs.num_gpus) = static_cast<std::int64_t>(number(kClusterSize));
  cs.gpus_per_node = static_cast<int>(number(kGpusPerNode));
  cs.nvlink_domain = static_cast<int>(number(kNvlinkDomain));
  cs.nvlink_gbytes_per_s = number(kNvlinkGbytesPerS);
  cs.inter_node_gbps_per_gpu = number(kInterNodeGbpsPerGpu);
  cs.hbm_gb = number(kHbmGb);
  cs.expansion_gb = number(kExpansionGb);
  cs.expansion_gbytes_per_s = number(kExpansionGbytesPerS);
  cs.power_cap_w = number(kPowerCapW);
  cs.fabric = fabrics[axis_index[gpu_axis + (kFabric - kGpu)]];
  cs.scale_out.network = networks[axis_index[gpu_axis + (kNetwork - kGpu)]];
  cs.scale_out.oversubscription = number(kOversubscription);
  cs.scale_out.pod_gpus = static_cast<int>(number(kPodGpus));
  cs.scale_out.planes = static_cast<int>(number(kPlanes));
  cs.scale_out.group_gpus = static_cast<int>(number(kGroupGpus));
  cs.scale_out.global_taper = number(kGlobalTaper);
  cs.torus = torus;
  cs.nvlink_latency_us = nvlink_latency_us;
  cs.inter_node_latency_us = inter_node_latency_us;
  cs.node_overhead_w = node_overhead_w;
  return cs;
}

bool Space::Impl::fill_dlrm_design(std::uint64_t design, DlrmDesign& out,
                                   Violation& why) const noexcept {
  why = Violation{};
  out.id = design;
  std::uint64_t rest = design;
  for (int i = kNumDlrmDesignAxes - 1; i >= 0; --i) {
    out.axis_index[i] = static_cast<std::uint32_t>(rest % radix[i]);
    rest /= radix[i];
  }
  const DlrmModelEntry& model = *dlrm_models[out.axis_index[kDlrmModel]];
  out.workload.model = model.model;
  const double batch = axes[kDlrmGlobalBatch].numbers[out.axis_index[kDlrmGlobalBatch]];
  out.workload.global_batch = batch > 0 ? static_cast<std::int64_t>(batch) : model.global_batch;
  out.workload.precision = precisions[out.axis_index[kDlrmPrecision]];
  out.workload.framework =
      dlrm_framework.value_or(default_dlrm_framework(*gpus[out.axis_index[kDlrmGpu]]));
  out.cluster = resolve_cluster(*gpus[out.axis_index[kDlrmGpu]],
                                cluster_settings(out.axis_index.data(), kDlrmGpu), calibration);
  const auto& c = out.cluster;
  auto& v = out.value;
  for (int i = 0; i < kNumDlrmDesignAxes; ++i) {
    const Axis& a = axes[i];
    v[i] = a.is_label ? out.axis_index[i] : a.numbers[out.axis_index[i]];
  }
  v[kDlrmGlobalBatch] = static_cast<double>(out.workload.global_batch);
  v[kDlrmGpusPerNode] = c.gpus_per_node;
  v[kDlrmNvlinkDomain] = c.nvlink_domain;
  if (v[kDlrmNvlinkGbytesPerS] == 0) v[kDlrmNvlinkGbytesPerS] = c.nvlink_bytes_per_s / 1e9;
  if (v[kDlrmInterNodeGbpsPerGpu] == 0)
    v[kDlrmInterNodeGbpsPerGpu] = c.inter_node_bytes_per_s * 8 / 1e9;
  if (v[kDlrmHbmGb] == 0) v[kDlrmHbmGb] = c.hbm_bytes / 1e9;

  why = check_design(out.workload.precision, c);
  if (why) return false;
  if (c.expansion_bytes == 0 && out.axis_index[kDlrmExpansionGbytesPerS] > 0) {
    why.rule = Rule::expansion_duplicate;
    return false;
  }
  if (!design_constraints_hold(v.data(), kNumDlrmDesignAxes, c)) {
    why.rule = Rule::user_constraint;
    return false;
  }
  return true;
}

void Space::Impl::design_variables(const double* axis_values, int num_axes,
                                   const estimator::Cluster& c, double* vars) const noexcept {
  // The design axes, then the cluster size the axes do not hold (constraint names in parse
  // order: the axes, then num_gpus or num_nodes).
  std::copy(axis_values, axis_values + num_axes, vars);
  vars[axes.size()] = size_is_nodes ? c.num_gpus : estimator::num_nodes(c);
  // What a site's power budget must provision: every GPU at its cap, every node at its maximum,
  // the switches, times the PUE.
  vars[facility_var] = estimator::peak_it_power_w(c, calibration) * pricing.pue / 1e6;
}

bool Space::Impl::design_constraints_hold(const double* axis_values, int num_axes,
                                          const estimator::Cluster& c) const noexcept {
  if (design_constraints.empty()) return true;
  double vars[kNumVars] = {};
  design_variables(axis_values, num_axes, c, vars);
  for (const Expression& x : design_constraints)
    if (!x.holds(vars)) return false;
  return true;
}

void Space::Impl::resolve_values(Design& d) const noexcept {
  const auto& w = d.workload;
  const auto& c = d.cluster;
  auto& v = d.value;
  for (int i = 0; i < kNumDesignAxes; ++i) {
    const Axis& a = axes[i];
    v[i] = a.is_label ? d.axis_index[i] : a.numbers[d.axis_index[i]];
  }
  v[kSeqLen] = w.seq_len;
  v[kGlobalBatch] = static_cast<double>(w.global_batch);
  v[kGpusPerNode] = c.gpus_per_node;
  v[kNvlinkDomain] = c.nvlink_domain;
  if (v[kNvlinkGbytesPerS] == 0) v[kNvlinkGbytesPerS] = c.nvlink_bytes_per_s / 1e9;
  if (v[kInterNodeGbpsPerGpu] == 0) v[kInterNodeGbpsPerGpu] = c.inter_node_bytes_per_s * 8 / 1e9;
  if (v[kHbmGb] == 0) v[kHbmGb] = c.hbm_bytes / 1e9;
}

void Space::Impl::plan_values(const Design& d, const std::uint32_t* digit,
                              estimator::Plan& p) const noexcept {
  p.tp = tp[digit[kTp - kTp]];
  p.pp = pp[digit[kPp - kTp]];
  p.cp = cp[digit[kCp - kTp]];
  p.vp = vp[digit[kVp - kTp]];
  p.micro_batch = micro_batch[digit[kMicroBatch - kTp]];
  p.zero = zero[digit[kZero - kTp]];
  p.recompute = recompute[digit[kRecompute - kTp]];
  p.recompute_modules = recompute_modules[digit[kRecompute - kTp]];
  p.sequence_parallel = sequence_parallel[digit[kSequenceParallel - kTp]] != 0;
  p.offload = offload[digit[kOffload - kTp]];
  p.pipeline_split = pipeline_split[digit[kPipelineSplit - kTp]];
  p.ep = ep[digit[kEp - kTp]];
  p.etp = etp[digit[kEtp - kTp]];
  p.stack = stack_base;
  const auto settings = stack_settings();
  for (int i : swept_stack) settings[i].set(p.stack, stack[i][digit[kFirstStackAxis - kTp + i]]);
  // A sweep has no capacity_factor axis: capacity routing takes one balanced share, as resolve()
  // gives it when the factor is not set.
  p.capacity_factor = p.stack.token_routing == estimator::TokenRouting::capacity ? 1.0 : 0.0;
  // dp is what the GPUs leave; a remainder makes `degrees` fail.
  // In double: the degrees of a spec's axes may multiply past any integer.
  const double model_parallel = static_cast<double>(p.tp) * p.pp * p.cp;
  p.dp = model_parallel <= d.cluster.num_gpus
             ? static_cast<int>(d.cluster.num_gpus / static_cast<std::int64_t>(model_parallel))
             : 1;
}

bool Space::Impl::check_plan(const Design& d, const std::uint32_t* digit, estimator::Plan& p,
                             Violation& why) const noexcept {
  plan_values(d, digit, p);
  why = spaces::check_plan(d.workload, d.cluster, p, rules);
  if (!why) why = check_framework_vendor(p, gpus[d.axis_index[kGpu]]->vendor);
  if (why) return false;
  if (!plan_constraints.empty()) {
    double vars[kNumVars];
    if (!plan_constraint_design_vars.empty())
      design_variables(d.value.data(), kNumDesignAxes, d.cluster, vars);
    for (int i = 0; i < kNumPlanAxes; ++i) {
      const Axis& a = axes[kTp + i];
      vars[kTp + i] = a.is_label ? digit[i] : a.numbers[digit[i]];
    }
    vars[kVarDp] = p.dp;
    for (const Expression& x : plan_constraints) {
      if (!x.holds(vars)) {
        why.rule = Rule::user_constraint;
        return false;
      }
    }
  }
  return true;
}

std::vector<double> Space::Impl::plan_rules_key(const Design& d) const {
  const auto& m = d.workload.model;
  std::vector<double> key = {
      double(m.heads), double(m.kv_heads), double(m.layers), double(m.num_experts),
      double(d.workload.seq_len), double(d.workload.global_batch), double(d.cluster.num_gpus),
      double(d.cluster.nvlink_domain), d.cluster.expansion_bytes > 0 ? 1.0 : 0.0,
      d.cluster.expansion_bytes_per_s > 0 ? 1.0 : 0.0,
      // The stack rules (check_stack): the precision and MX formats.
      double(d.workload.precision),
      d.cluster.gpu.peak_flops[static_cast<int>(estimator::Precision::fp4)] > 0 ? 1.0 : 0.0,
      // The framework's vendor (check_framework_vendor): the accelerator.
      double(d.axis_index[kGpu]),
      // The torus rule (check_torus): the fabric and the torus's dimensions.
      double(d.cluster.fabric), double(d.cluster.torus[0]), double(d.cluster.torus[1]),
      double(d.cluster.torus[2])};
  if (!plan_constraint_design_vars.empty()) {
    double vars[kNumVars] = {};
    design_variables(d.value.data(), kNumDesignAxes, d.cluster, vars);
    for (int v : plan_constraint_design_vars) key.push_back(vars[v]);
  }
  return key;
}

void Space::Impl::count_plans(const Design& d, std::array<std::uint64_t, kNumRules>& counts) const {
  // An odometer over the plan digits (no divisions). A rule that reads only the leading digits
  // (tp; tp, pp, cp) and is checked before every rule reading later digits removes the whole
  // block of plans sharing those digits, so the block is counted at once and skipped.
  std::array<std::uint64_t, kNumPlanAxes + 1> block{};  // plans per value of digit i-1
  block[kNumPlanAxes] = 1;
  for (int a = kNumPlanAxes - 1; a >= 0; --a) block[a] = block[a + 1] * radix[kTp + a];
  std::array<std::uint32_t, kNumPlanAxes> digit{};
  estimator::Plan plan;
  Violation why;
  std::uint64_t done = 0;
  while (done < plan_points) {
    check_plan(d, digit.data(), plan, why);
    // Digits that decide `why`; the digits after plan_digits_used are always 0.
    int leading = plan_digits_used;
    if (why.rule == Rule::tp_heads || why.rule == Rule::tp_nvlink_domain) leading = 1;
    if (why.rule == Rule::degrees) leading = 3;  // tp, pp, cp
    counts[static_cast<int>(why.rule)] += block[leading];
    done += block[leading];
    for (int a = leading; a < plan_digits_used; ++a) digit[a] = 0;
    for (int a = leading - 1; a >= 0; --a) {
      if (++digit[a] < radix[kTp + a]) break;
      digit[a] = 0;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Space

Space Space::parse(std::string_view toml_text, std::string_view filename) {
  auto impl = std::make_shared<Impl>();
  impl->text = std::string(toml_text);
  impl->filename = std::string(filename);
  parse_spec(*impl);
  return Space(std::move(impl));
}

Space Space::load(const std::string& path) {
  const auto text = read_file(path);
  if (!text) throw InputError(fmt::format("cannot read spec '{}': {}", path, std::strerror(errno)));
  return parse(*text, path);
}

Space::~Space() = default;

estimator::Family Space::family() const noexcept { return impl_->family; }
const std::vector<Axis>& Space::axes() const noexcept { return impl_->axes; }
std::uint64_t Space::size() const noexcept { return impl_->size; }
std::uint64_t Space::designs() const noexcept { return impl_->designs; }
std::uint64_t Space::plan_points() const noexcept { return impl_->plan_points; }

void Space::decode(std::uint64_t point_id, std::uint32_t* axis_index) const noexcept {
  const Impl& im = *impl_;
  for (int i = static_cast<int>(im.axes.size()) - 1; i >= 0; --i) {
    axis_index[i] = static_cast<std::uint32_t>(point_id % im.radix[i]);
    point_id /= im.radix[i];
  }
}

std::uint64_t Space::encode(const std::uint32_t* axis_index) const noexcept {
  std::uint64_t id = 0;
  for (std::size_t i = 0; i < impl_->axes.size(); ++i) id += axis_index[i] * impl_->stride[i];
  return id;
}

bool Space::design(std::uint64_t design, Design& out) const noexcept {
  Violation why;
  return impl_->fill_design(design, out, why);
}

bool Space::design(std::uint64_t design, Design& out, Violation& why) const noexcept {
  return impl_->fill_design(design, out, why);
}

bool Space::plan(const Design& design, std::uint64_t plan, estimator::Plan& out,
                 Violation& why) const noexcept {
  const Impl& im = *impl_;
  // The digits after plan_digits_used have one value: 0, and no division.
  std::uint32_t digit[kNumPlanAxes] = {};
  if (im.plan_fits_32) {
    auto rest = static_cast<std::uint32_t>(plan);
    for (int i = im.plan_digits_used - 1; i >= 0; --i) {
      const auto r = static_cast<std::uint32_t>(im.radix[kTp + i]);
      digit[i] = rest % r;
      rest /= r;
    }
  } else {
    for (int i = im.plan_digits_used - 1; i >= 0; --i) {
      digit[i] = static_cast<std::uint32_t>(plan % im.radix[kTp + i]);
      plan /= im.radix[kTp + i];
    }
  }
  return im.check_plan(design, digit, out, why);
}

bool Space::plan(const Design& design, std::uint64_t plan, estimator::Plan& out,
                 estimator::Infeasible& why) const noexcept {
  Violation v;
  const bool ok = this->plan(design, plan, out, v);
  why = to_infeasible(v.rule);
  return ok;
}

void Space::plan_values(const Design& design, const std::uint32_t* plan_digits,
                        estimator::Plan& out) const noexcept {
  impl_->plan_values(design, plan_digits, out);
}

bool Space::plan_from_digits(const Design& design, const std::uint32_t* plan_digits,
                             estimator::Plan& out, estimator::Infeasible& why) const noexcept {
  Violation v;
  const bool ok = impl_->check_plan(design, plan_digits, out, v);
  why = to_infeasible(v.rule);
  return ok;
}

std::uint64_t Space::valid_plans(std::uint64_t design) const {
  Design d;
  if (!this->design(design, d)) return 0;
  std::array<std::uint64_t, kNumRules> counts{};
  impl_->count_plans(d, counts);
  return counts[0];
}

namespace {

// Calls visit(design or nullptr, violation, repeat) once per class of transformer designs that the
// structural rules and the constraints cannot tell apart, `repeat` being the designs in the class.
// The bandwidths and the HBM capacity feed the estimate, never a structural rule: unless a
// constraint reads them, every one of their values behaves as the first, so only the designs with
// those digits at 0 are checked. InputError when more than Space::kMaxCountedDesigns are left.
template <class Visit>
void visit_design_classes(const Space::Impl& im, Visit visit) {
  const auto read_by_constraints = [&](int axis) {
    const auto& plan_vars = im.plan_constraint_design_vars;
    if (std::find(plan_vars.begin(), plan_vars.end(), axis) != plan_vars.end()) return true;
    return std::any_of(im.design_constraints.begin(), im.design_constraints.end(),
                       [&](const Expression& x) {
                         const auto& read = x.names_read();
                         return std::find(read.begin(), read.end(), axis) != read.end();
                       });
  };
  std::array<std::uint64_t, kNumDesignAxes> stride{};  // of a design id
  std::array<std::uint64_t, kNumDesignAxes> count{};   // values checked per axis
  std::uint64_t repeat = 1, checked = 1;
  for (int i = kNumDesignAxes - 1; i >= 0; --i) {
    stride[i] = i == kNumDesignAxes - 1 ? 1 : stride[i + 1] * im.radix[i + 1];
    const bool free = (i == kNvlinkGbytesPerS || i == kInterNodeGbpsPerGpu || i == kHbmGb) &&
                      !read_by_constraints(i);
    count[i] = free ? 1 : im.radix[i];
    (free ? repeat : checked) *= im.radix[i];
  }
  if (checked > Space::kMaxCountedDesigns)
    throw InputError(fmt::format(
        "{}:1:1: space: {} designs differ in what the structural rules or the constraints read, "
        "more than the {} that can be counted in reasonable time; sweep fewer values of model, "
        "precision, gpu, the cluster size and shape, the expansion tiers or what the "
        "constraints read",
        im.filename, checked, Space::kMaxCountedDesigns));
  std::array<std::uint64_t, kNumDesignAxes> digit{};
  Design d;
  Violation why;
  for (std::uint64_t n = 0; n < checked; ++n) {
    std::uint64_t id = 0;
    for (int i = 0; i < kNumDesignAxes; ++i) id += digit[i] * stride[i];
    const bool ok = im.fill_design(id, d, why);
    visit(ok ? &d : nullptr, why, repeat);
    for (int i = kNumDesignAxes - 1; i >= 0 && ++digit[i] == count[i]; --i) digit[i] = 0;
  }
}

void refuse_uncountable_dlrm(const Space::Impl& im) {
  if (im.designs > Space::kMaxCountedDesigns)
    throw InputError(fmt::format(
        "{}:1:1: space: {} designs, more than the {} that can be counted in reasonable time; "
        "sweep fewer values",
        im.filename, im.designs, Space::kMaxCountedDesigns));
}

}  // namespace

std::array<std::uint64_t, kNumRules> Space::count_by_rule() const {
  const Impl& im = *impl_;
  std::array<std::uint64_t, kNumRules> total{};
  switch (im.family) {
    case estimator::Family::transformer:
      break;
    case estimator::Family::dlrm: {
      // A handful of sharding values a design: checked one by one.
      refuse_uncountable_dlrm(im);
      DlrmDesign d;
      Violation why;
      for (std::uint64_t i = 0; i < im.designs; ++i) {
        if (!im.fill_dlrm_design(i, d, why)) {
          total[static_cast<int>(why.rule)] += im.plan_points;
          continue;
        }
        for (std::uint32_t digit = 0; digit < im.plan_points; ++digit) {
          dlrm_plan(d, digit, why);
          ++total[static_cast<int>(why.rule)];
        }
      }
      return total;
    }
  }
  std::map<std::vector<double>, std::array<std::uint64_t, kNumRules>> memo;
  visit_design_classes(im, [&](const Design* d, const Violation& why, std::uint64_t repeat) {
    if (!d) {
      total[static_cast<int>(why.rule)] += im.plan_points * repeat;
      return;
    }
    auto [it, inserted] = memo.try_emplace(im.plan_rules_key(*d));
    if (inserted) im.count_plans(*d, it->second);
    for (int v = 0; v < kNumRules; ++v) total[v] += it->second[v] * repeat;
  });
  return total;
}

std::uint64_t Space::valid_designs() const {
  const Impl& im = *impl_;
  std::uint64_t valid = 0;
  if (im.family == estimator::Family::dlrm) {
    refuse_uncountable_dlrm(im);
    DlrmDesign d;
    Violation why;
    for (std::uint64_t i = 0; i < im.designs; ++i) valid += im.fill_dlrm_design(i, d, why);
    return valid;
  }
  visit_design_classes(im, [&](const Design* d, const Violation&, std::uint64_t repeat) {
    if (d) valid += repeat;
  });
  return valid;
}

std::uint64_t Space::valid_points() const { return count_by_rule()[0]; }

std::string Space::describe_point(std::uint64_t point_id) const {
  std::uint32_t index[kNumAxes];
  decode(point_id, index);
  std::string out;
  for (std::size_t i = 0; i < impl_->axes.size(); ++i) {
    out += fmt::format("{}{}={}", i ? " " : "", impl_->axes[i].name,
                       impl_->axes[i].value_text(index[i]));
  }
  return out;
}

double Space::training_tokens() const noexcept { return impl_->training_tokens; }
double Space::training_samples() const noexcept { return impl_->training_samples; }
const std::vector<ShardingChoice>& Space::shardings() const noexcept { return impl_->shardings; }
std::vector<estimator::DlrmFramework> Space::dlrm_frameworks() const {
  if (impl_->dlrm_framework) return {*impl_->dlrm_framework};
  std::vector<estimator::DlrmFramework> out;
  for (int f = 0; f < estimator::kNumDlrmFrameworks; ++f) {
    const auto framework = static_cast<estimator::DlrmFramework>(f);
    if (std::any_of(impl_->gpus.begin(), impl_->gpus.end(), [&](const AcceleratorEntry* gpu) {
          return default_dlrm_framework(*gpu) == framework;
        }))
      out.push_back(framework);
  }
  return out;
}
bool Space::dlrm_design(std::uint64_t design, DlrmDesign& out, Violation& why) const noexcept {
  return impl_->fill_dlrm_design(design, out, why);
}

bool Space::dlrm_plan(const DlrmDesign& d, std::uint32_t digit, Violation& why) const noexcept {
  const Impl& im = *impl_;
  why = Violation{};
  if (im.plan_constraints.empty()) return true;
  double vars[kNumVars] = {};
  im.design_variables(d.value.data(), kNumDlrmDesignAxes, d.cluster, vars);
  vars[kDlrmSharding] = digit;
  for (const Expression& x : im.plan_constraints)
    if (!x.holds(vars)) {
      why.rule = Rule::user_constraint;
      return false;
    }
  return true;
}
const Pricing& Space::pricing() const noexcept { return impl_->pricing; }
const estimator::Reliability& Space::reliability() const noexcept { return impl_->reliability; }
estimator::JobDesign Space::job(const estimator::Cluster& cluster,
                                double checkpoint_bytes) const noexcept {
  return estimator::job_design(impl_->reliability, cluster, checkpoint_bytes);
}
double Space::usd_per_gpu_s(const Design& design) const noexcept {
  const estimator::Cluster& c = design.cluster;
  return impl_->pricing.usd_per_gpu_s(impl_->gpus[design.axis_index[kGpu]]->key) +
         impl_->pricing.network_usd_per_gpu_s(
             estimator::network_bill(c, impl_->calibration.network).capex_usd, c.num_gpus);
}
double Space::usd_per_gpu_s(const DlrmDesign& design) const noexcept {
  const estimator::Cluster& c = design.cluster;
  return impl_->pricing.usd_per_gpu_s(impl_->gpus[design.axis_index[kDlrmGpu]]->key) +
         impl_->pricing.network_usd_per_gpu_s(
             estimator::network_bill(c, impl_->calibration.network).capex_usd, c.num_gpus);
}
Keep Space::keep() const noexcept { return impl_->keep; }
Objective Space::objective() const noexcept { return impl_->objective; }
const OutputColumns& Space::output_columns() const noexcept { return impl_->output_columns; }
Compression Space::compression() const noexcept { return impl_->compression; }
const estimator::Calibration& Space::calibration() const noexcept { return impl_->calibration; }
const std::string& Space::calibration_file() const noexcept { return impl_->calibration_file; }
const CalibrationSupport& Space::support() const noexcept { return impl_->support; }
DesignSupport Space::support_of(const Design& design) const {
  return design_support(impl_->support, support_family(design.workload.model),
                        impl_->gpus[design.axis_index[kGpu]]->key, design.workload.precision);
}
DesignSupport Space::support_of(const DlrmDesign& design) const {
  return design_support(impl_->support, SupportFamily::dlrm,
                        impl_->gpus[design.axis_index[kDlrmGpu]]->key, design.workload.precision);
}
const std::string& Space::text() const noexcept { return impl_->text; }
const std::string& Space::filename() const noexcept { return impl_->filename; }
const RuleOptions& Space::rule_options() const noexcept { return impl_->rules; }
const std::vector<std::string>& Space::constraints() const noexcept {
  return impl_->constraint_texts;
}

std::string Axis::value_text(std::size_t index) const {
  if (is_label) return labels.at(index);
  if (zero_means_default && numbers.at(index) == 0) return "default";
  return format_number(numbers.at(index));
}

const char* to_string(Keep keep) noexcept { return kKeepNames[static_cast<int>(keep)]; }

const char* to_string(Compression compression) noexcept {
  return kCompressionNames[static_cast<int>(compression)];
}

bool parse_compression(std::string_view text, Compression& out) noexcept {
  const int k = find_name(kCompressionNames, text);
  if (k < 0) return false;
  out = static_cast<Compression>(k);
  return true;
}

std::string OutputColumns::text() const {
  switch (kind) {
    case Kind::all:
      return "all";
    case Kind::summary:
      return "summary";
    case Kind::list:
      break;
  }
  std::vector<std::string> quoted;
  for (const auto& n : names) quoted.push_back(fmt::format("\"{}\"", n));
  return fmt::format("[{}]", fmt::join(quoted, ", "));
}
const char* to_string(Objective objective) noexcept {
  return kObjectiveNames[static_cast<int>(objective)];
}

}  // namespace clustersweep::spaces
