#include "spaces/frameworks.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>

#include "base/error.h"
#include "base/names.h"
#include "spaces/rules.h"
#include "spaces/toml_text.h"

namespace clustersweep::spaces {
namespace {

namespace est = estimator;

constexpr std::string_view kFile = "frameworks.toml";

// The built-in file is ours, so a mistake in it is a bug of this build (a test reads every key).
[[noreturn]] void bad(const toml::node& n, std::string_view key, std::string_view what) {
  throw Error(fmt::format("{}: {}: {}", where(kFile, n.source()), key, what));
}

bool flag(const toml::table& t, const char* key) {
  const auto* n = t.get(key);
  if (!n || !n->is_boolean())
    bad(n ? *n : static_cast<const toml::node&>(t), key, "must be true or false");
  return n->as_boolean()->get();
}

// The values of `key` as a bit mask by value index (`parse` gives each value's, -1 if none), and
// the first listed.
template <class Parse>
std::uint32_t mask(const toml::table& t, const char* key, Parse parse, int* first = nullptr) {
  const auto* array = t.get_as<toml::array>(key);
  if (!array || array->empty()) bad(t, key, "must be a non-empty list");
  std::uint32_t out = 0;
  for (const toml::node& item : *array) {
    const int v = parse(item);
    if (v < 0) bad(item, key, "unknown value");
    if (out == 0 && first) *first = v;
    out |= 1u << v;
  }
  return out;
}

// A value named as the estimator's parse function for its enum reads it; -1 if none.
template <class Enum>
auto named(bool (*parse)(std::string_view, Enum&)) {
  return [parse](const toml::node& n) {
    const auto text = n.value<std::string>();
    Enum value{};
    return text && parse(*text, value) ? static_cast<int>(value) : -1;
  };
}

FrameworkProfile read_profile(const toml::table& t) {
  FrameworkProfile f;
  const auto key = t["key"].value<std::string>();
  if (!key || !est::parse_framework(*key, f.framework) || f.framework == est::Framework::any)
    bad(t, "key", "must be a framework's name, not any");
  f.title = t["title"].value_or(std::string());
  f.source = t["source"].value_or(std::string());
  if (const auto* software = t.get_as<toml::array>("software"))
    for (const toml::node& s : *software) f.software.push_back(s.value_or(std::string()));
  if (const auto* vendors = t.get("vendors")) {
    const auto* list = vendors->as_array();
    if (!list || list->empty()) bad(*vendors, "vendors", "must be a non-empty list");
    for (const toml::node& v : *list) {
      const auto name = v.value<std::string>();
      if (!name) bad(v, "vendors", "must be vendor names");
      f.vendors.push_back(*name);
    }
  }
  f.tensor_parallel = flag(t, "tensor_parallel");
  f.sequence_parallel = flag(t, "sequence_parallel");
  f.pipeline_parallel = flag(t, "pipeline_parallel");
  f.interleaved_pipeline = flag(t, "interleaved_pipeline");
  f.context_parallel = flag(t, "context_parallel");
  f.expert_parallel = flag(t, "expert_parallel");
  f.expert_tensor_parallel = flag(t, "expert_tensor_parallel");
  const auto stage = [](const toml::node& n) {
    const auto v = n.value_exact<std::int64_t>();
    return v && *v >= 0 && *v <= 3 ? static_cast<int>(*v) : -1;
  };
  f.zero = mask(t, "zero", stage);
  f.zero_with_pipeline = mask(t, "zero_with_pipeline", stage);
  f.recompute = mask(t, "recompute", named(est::parse_recompute));
  f.offload = mask(t, "offload", named(est::parse_offload));
  f.pipeline_split = mask(t, "pipeline_split", named(est::parse_pipeline_split));
  const auto* stack = t.get_as<toml::table>("stack");
  if (!stack) bad(t, "stack", "missing");
  const auto settings = stack_settings();
  for (std::size_t i = 0; i < settings.size(); ++i) {
    const StackSetting& st = settings[i];
    if (std::string_view(st.name) == "framework") {
      f.stack[i] = 1u << static_cast<int>(f.framework);
      continue;
    }
    int first = 0;
    f.stack[i] = mask(
        *stack, st.name,
        [&](const toml::node& n) {
          if (const auto b = n.value_exact<bool>(); b && st.boolean) return int{*b};
          const auto text = n.value<std::string>();
          return text && !st.boolean ? parse_stack_value(st, *text) : -1;
        },
        &first);
    st.set(f.defaults, first);
  }
  f.defaults.framework = f.framework;
  // A table of stack settings, each a value the framework's stack lists: (index, value) pairs.
  const auto read_settings = [&](const toml::node& node, const char* key) {
    const auto* table = node.as_table();
    if (!table) bad(node, key, "must hold tables of stack settings");
    std::vector<std::pair<std::size_t, int>> pairs;
    for (const auto& [setting, value] : *table) {
      const std::string_view name = setting.str();  // clang cannot capture a structured binding
      const auto it = std::find_if(settings.begin(), settings.end(),
                                   [name](const StackSetting& st) { return name == st.name; });
      int v = -1;
      if (it != settings.end() && it->boolean) {
        if (const auto b = value.value_exact<bool>()) v = int{*b};
      } else if (const auto text = value.value<std::string>(); it != settings.end() && text) {
        v = parse_stack_value(*it, *text);
      }
      const auto i = static_cast<std::size_t>(it - settings.begin());
      if (v < 0 || !(f.stack[i] >> v & 1u))
        bad(value, key, "must name a value the framework's stack lists");
      pairs.emplace_back(i, v);
    }
    return pairs;
  };
  if (const auto* own = t.get_as<toml::table>("software_stack"))
    for (const auto& [prefix, node] : *own) {
      const std::string name(prefix.str());
      if (std::find(f.software.begin(), f.software.end(), name) == f.software.end())
        bad(node, "software_stack", "must be keyed by one of the framework's software prefixes");
      f.software_stack.emplace_back(name, read_settings(node, "software_stack"));
    }
  if (const auto* by_routing = t.get_as<toml::table>("routing_stack"))
    for (const auto& [routing, node] : *by_routing) {
      est::TokenRouting r{};
      if (!est::parse_token_routing(routing.str(), r))
        bad(node, "routing_stack",
            "must be keyed by a token routing (dropless, balanced, capacity)");
      f.routing_stack[static_cast<std::size_t>(r)] = read_settings(node, "routing_stack");
    }
  return f;
}

const std::array<FrameworkProfile, est::kNumFrameworks>& profiles() {
  static const auto kProfiles = [] {
    std::array<FrameworkProfile, est::kNumFrameworks> out{};
    const toml::table root = parse_toml(embedded_text(kFile), kFile);
    const auto* list = root.get_as<toml::array>("framework");
    if (!list) throw Error(fmt::format("{}: no [[framework]] tables", kFile));
    for (const toml::node& n : *list) {
      const auto* t = n.as_table();
      if (!t) bad(n, "framework", "must be a table");
      FrameworkProfile f = read_profile(*t);
      out[static_cast<std::size_t>(f.framework)] = std::move(f);
    }
    for (int i = 1; i < est::kNumFrameworks; ++i)
      if (out[static_cast<std::size_t>(i)].framework == est::Framework::any)
        throw Error(fmt::format("{}: no profile of {}", kFile,
                                est::to_string(static_cast<est::Framework>(i))));
    return out;
  }();
  return kProfiles;
}

}  // namespace

const FrameworkProfile* framework_profile(est::Framework framework) noexcept {
  if (framework == est::Framework::any) return nullptr;
  return &profiles()[static_cast<std::size_t>(framework)];
}

namespace {

// The profile and the software prefix a runs file's `software` text names: the longest prefix
// wins ("nemo-automodel" is FSDP2, "nemo " Megatron-Core); nullptr when none does.
std::pair<const FrameworkProfile*, const std::string*> software_match(std::string_view software) {
  const std::string lower = lower_case(software);
  std::pair<const FrameworkProfile*, const std::string*> best{nullptr, nullptr};
  for (const FrameworkProfile& f : profiles())
    for (const std::string& prefix : f.software)
      if (lower.rfind(prefix, 0) == 0 && (!best.second || prefix.size() > best.second->size()))
        best = {&f, &prefix};
  return best;
}

}  // namespace

est::Framework framework_of_software(std::string_view software) noexcept {
  const FrameworkProfile* profile = software_match(software).first;
  return profile ? profile->framework : est::Framework::any;
}

std::vector<std::pair<std::string, std::string>> software_stack_defaults(
    std::string_view software) {
  const auto [profile, prefix] = software_match(software);
  std::vector<std::pair<std::string, std::string>> out;
  if (profile)
    for (const auto& [key, pairs] : profile->software_stack)
      if (key == *prefix)
        for (const auto& [i, v] : pairs)
          out.emplace_back(stack_settings()[i].name, stack_settings()[i].value_name(v));
  return out;
}

bool framework_runs_on(est::Framework framework, std::string_view vendor) noexcept {
  const FrameworkProfile* f = framework_profile(framework);
  return !f || f->vendors.empty() ||
         std::find(f->vendors.begin(), f->vendors.end(), vendor) != f->vendors.end();
}

void apply_framework_defaults(est::Framework framework,
                              const std::array<bool, kNumStackSettings>& given,
                              est::Stack& stack) noexcept {
  const FrameworkProfile* f = framework_profile(framework);
  if (!f) return;
  const auto settings = stack_settings();
  for (std::size_t i = 0; i < settings.size(); ++i)
    if (!given[i]) settings[i].set(stack, settings[i].get(f->defaults));
  stack.framework = framework;
  for (const auto& [i, v] : f->routing_stack[static_cast<std::size_t>(stack.token_routing)])
    if (!given[i]) settings[i].set(stack, v);
}

std::vector<std::string> frameworks_running(est::Plan plan,
                                            const std::array<bool, kNumStackSettings>& given,
                                            std::string_view vendor) {
  std::vector<std::string> names;
  const est::Stack stack = plan.stack;
  for (int i = 1; i < est::kNumFrameworks; ++i) {
    if (!vendor.empty() && !framework_runs_on(static_cast<est::Framework>(i), vendor)) continue;
    plan.stack = stack;
    apply_framework_defaults(static_cast<est::Framework>(i), given, plan.stack);
    if (!check_framework(plan)) names.emplace_back(est::to_string(plan.stack.framework));
  }
  return names;
}

estimator::DlrmFramework default_dlrm_framework(const AcceleratorEntry& gpu) noexcept {
  return gpu.vendor == "nvidia" ? estimator::DlrmFramework::hugectr : estimator::DlrmFramework::any;
}

}  // namespace clustersweep::spaces
