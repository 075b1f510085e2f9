#include "spaces/spec_reader.h"

#include <algorithm>
#include <cmath>

#include "base/format.h"
#include "base/names.h"
#include "base/numbers.h"

namespace clustersweep::spaces {

constexpr std::size_t kMaxAxisValues = 1'000'000;

std::string quoted_list(Names names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += fmt::format("{}\"{}\"", i ? ", " : "", names[i]);
  return out;
}

int find_name(Names names, std::string_view name) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (name == names[i]) return static_cast<int>(i);
  }
  return -1;
}

std::string describe_node(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return fmt::format("string \"{}\"", node.as_string()->get());
    case toml::node_type::integer:
      return fmt::format("integer {}", node.as_integer()->get());
    case toml::node_type::floating_point:
      return fmt::format("number {}", node.as_floating_point()->get());
    case toml::node_type::boolean:
      return node.as_boolean()->get() ? "true" : "false";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:
      return "a date/time";
  }
}

std::string join_key(std::string_view prefix, std::string_view key) {
  return prefix.empty() ? std::string(key) : fmt::format("{}.{}", prefix, key);
}

// Unknown keys are errors, with the closest valid key suggested.
void check_keys(const Reporter& r, const toml::table& table, std::string_view prefix,
                const std::vector<std::string>& allowed) {
  for (auto&& [key, node] : table) {
    const std::string name(key.str());
    if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
    const std::string full = join_key(prefix, name);
    if (!prefix.empty() &&
        (name == "constraints" || name == "calibration" || name == "description")) {
      r.fail(key.source(), full,
             fmt::format("unknown key; '{}' is a top-level key: put it before the first [table]",
                         name));
    }
    const auto close = closest_names(name, allowed, 1);
    if (!close.empty())
      r.fail(key.source(), full, fmt::format("unknown key; did you mean '{}'?", close.front()));
    r.fail(key.source(), full,
           fmt::format("unknown key; valid keys are: {}", fmt::join(allowed, ", ")));
  }
}

const toml::table* subtable(const Reporter& r, const toml::table& parent, std::string_view key,
                            std::string_view full) {
  const toml::node* node = parent.get(key);
  if (!node) return nullptr;
  if (!node->is_table())
    r.fail(*node, full, fmt::format("must be a table, got {}", describe_node(*node)));
  return node->as_table();
}

namespace {

bool is_int_kind(Kind k) { return k == Kind::positive_int || k == Kind::nonnegative_int; }
bool is_positive_kind(Kind k) { return k == Kind::positive_int || k == Kind::positive_real; }

const char* kind_text(Kind k) {
  switch (k) {
    case Kind::positive_int:
      return "a positive integer";
    case Kind::nonnegative_int:
      return "a non-negative integer";
    case Kind::positive_real:
      return "a positive number";
    case Kind::nonnegative_real:
      return "a non-negative number";
  }
  return "";
}

}  // namespace

std::optional<double> scalar_number(const toml::node& node) {
  if (const auto* i = node.as_integer()) return static_cast<double>(i->get());
  if (const auto* f = node.as_floating_point()) return f->get();
  return std::nullopt;
}

double checked_number(const Reporter& r, const toml::node& node, const std::string& key,
                      Kind kind) {
  const auto v = scalar_number(node);
  if (!v)
    r.fail(node, key, fmt::format("must be {}, got {}", kind_text(kind), describe_node(node)));
  // An integer as written: past 2^53 its double is another number.
  const std::string got =
      node.as_integer() ? std::to_string(node.as_integer()->get()) : format_number(*v);
  const bool bad = !std::isfinite(*v) || (is_int_kind(kind) && *v != std::floor(*v)) ||
                   (is_positive_kind(kind) ? *v <= 0 : *v < 0);
  if (bad) r.fail(node, key, fmt::format("must be {}, got {}", kind_text(kind), got));
  if (is_int_kind(kind) && *v > static_cast<double>(kMaxInt)) {
    const std::int64_t min = is_positive_kind(kind) ? 1 : 0;
    r.fail(node, key, fmt::format("must be {}, got {}", whole_range_text(min, kMaxInt), got));
  }
  return *v;
}

// The forms a numeric axis takes: a number, a list, {start, stop, step}, {start, stop, factor},
// "pow2:A..B", or (plan axes only) "all", returned as an empty vector.
std::vector<double> axis_numbers(const Reporter& r, const toml::node& node, const std::string& key,
                                 Kind kind, bool allow_all) {
  const std::string forms =
      fmt::format("{}, a list, {{start, stop, step}}, {{start, stop, factor}} or \"pow2:A..B\"{}",
                  kind_text(kind), allow_all ? " or \"all\"" : "");
  std::vector<double> values;
  if (scalar_number(node)) {
    values.push_back(checked_number(r, node, key, kind));
  } else if (const auto* array = node.as_array()) {
    if (array->empty()) r.fail(node, key, fmt::format("empty list; give {}", forms));
    for (std::size_t i = 0; i < array->size(); ++i) {
      const toml::node& element = *array->get(i);
      const std::string element_key = fmt::format("{}[{}]", key, i);
      if (!scalar_number(element)) {
        r.fail(element, element_key,
               fmt::format("must be {}, got {}", kind_text(kind), describe_node(element)));
      }
      const double v = checked_number(r, element, element_key, kind);
      if (std::find(values.begin(), values.end(), v) != values.end()) {
        r.fail(element, element_key, fmt::format("duplicate value {}", format_number(v)));
      }
      values.push_back(v);
    }
  } else if (const auto* range = node.as_table()) {
    check_keys(r, *range, key, {"start", "stop", "step", "factor"});
    const toml::node* start_node = range->get("start");
    const toml::node* stop_node = range->get("stop");
    const toml::node* step_node = range->get("step");
    const toml::node* factor_node = range->get("factor");
    if (!start_node || !stop_node) {
      r.fail(node, key, fmt::format("a range needs 'start' and 'stop', and 'step' or 'factor'"));
    }
    if ((step_node != nullptr) == (factor_node != nullptr)) {
      r.fail(node, key, "a range needs exactly one of 'step' (linear) or 'factor' (geometric)");
    }
    const double start = checked_number(r, *start_node, key + ".start", kind);
    const double stop = checked_number(r, *stop_node, key + ".stop", kind);
    if (stop < start) {
      r.fail(
          *stop_node, key + ".stop",
          fmt::format("must be >= start ({}), got {}", format_number(start), format_number(stop)));
    }
    if (step_node) {
      const double step =
          checked_number(r, *step_node, key + ".step",
                         is_int_kind(kind) ? Kind::positive_int : Kind::positive_real);
      const double count = std::floor((stop - start) / step + 1e-9) + 1;
      if (count > static_cast<double>(kMaxAxisValues)) {
        r.fail(node, key,
               fmt::format("the range has {} values; at most {} are allowed", format_number(count),
                           kMaxAxisValues));
      }
      for (double i = 0; i < count; ++i) {
        // Round off the drift of repeated decimal steps (0.1 + 0.2 -> 0.3).
        values.push_back(std::stod(fmt::format("{:.12g}", start + i * step)));
      }
    } else {
      const auto factor = scalar_number(*factor_node);
      if (!factor || !(*factor > 1) || !std::isfinite(*factor)) {
        r.fail(*factor_node, key + ".factor",
               fmt::format("must be a number > 1, got {}",
                           factor ? format_number(*factor) : describe_node(*factor_node)));
      }
      for (double v = start; v <= stop * (1 + 1e-12); v *= *factor) {
        const double value = is_int_kind(kind) ? std::round(v) : v;
        if (is_int_kind(kind) && std::fabs(value - v) > 1e-9 * v) {
          r.fail(node, key,
                 fmt::format("the geometric range reaches {}, which is not an integer",
                             format_number(v)));
        }
        values.push_back(value);
      }
    }
  } else if (const auto* text = node.as_string()) {
    const std::string s = text->get();
    if (s == "all" && allow_all) return {};
    // Both ends whole numbers as the number layer reads them: no sign, blank or junk.
    constexpr std::string_view kPow2 = "pow2:";
    constexpr std::uint64_t kMaxPow2 = std::uint64_t{1} << 40;
    const std::string_view bounds =
        s.starts_with(kPow2) ? std::string_view(s).substr(kPow2.size()) : std::string_view();
    const auto dots = bounds.find("..");
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;
    if (dots == std::string_view::npos ||
        !read_uint64(bounds.substr(0, dots), 1, kMaxPow2, lo).empty() ||
        !read_uint64(bounds.substr(dots + 2), lo, kMaxPow2, hi).empty()) {
      r.fail(node, key, fmt::format("must be {}, got {}", forms, describe_node(node)));
    }
    for (std::uint64_t v = 1; v <= hi; v *= 2) {
      if (v >= lo) values.push_back(static_cast<double>(v));
    }
    if (values.empty()) r.fail(node, key, fmt::format("\"{}\" holds no power of two", s));
  } else {
    r.fail(node, key, fmt::format("must be {}, got {}", forms, describe_node(node)));
  }
  return values;
}

// A label axis: one string or a list of strings from `valid` (or "all" when allow_all).
std::vector<int> axis_labels(const Reporter& r, const toml::node& node, const std::string& key,
                             Names valid, bool allow_all) {
  const std::string valid_text = quoted_list(valid) + (allow_all ? " or \"all\"" : "");
  auto one = [&](const toml::node& element, const std::string& element_key) {
    const auto* s = element.as_string();
    if (!s)
      r.fail(element, element_key,
             fmt::format("must be one of {}, got {}", valid_text, describe_node(element)));
    const int index = find_name(valid, s->get());
    if (index < 0)
      r.fail(element, element_key,
             fmt::format("must be one of {}, got \"{}\"", valid_text, s->get()));
    return index;
  };
  std::vector<int> out;
  if (const auto* s = node.as_string(); s && s->get() == "all" && allow_all) {
    for (std::size_t i = 0; i < valid.size(); ++i) out.push_back(static_cast<int>(i));
  } else if (const auto* array = node.as_array()) {
    if (array->empty())
      r.fail(node, key, fmt::format("empty list; give one or more of {}", valid_text));
    for (std::size_t i = 0; i < array->size(); ++i) {
      const std::string element_key = fmt::format("{}[{}]", key, i);
      const int index = one(*array->get(i), element_key);
      if (std::find(out.begin(), out.end(), index) != out.end()) {
        r.fail(*array->get(i), element_key, fmt::format("duplicate value \"{}\"", valid[index]));
      }
      out.push_back(index);
    }
  } else {
    out.push_back(one(node, key));
  }
  return out;
}

// Strings naming catalog entries (models, accelerators): one string or a list, unique.
std::vector<std::pair<std::string, const toml::node*>> name_list(const Reporter& r,
                                                                 const toml::node& node,
                                                                 const std::string& key) {
  std::vector<std::pair<std::string, const toml::node*>> out;
  auto one = [&](const toml::node& element, const std::string& element_key) {
    const auto* s = element.as_string();
    if (!s)
      r.fail(element, element_key,
             fmt::format("must be a name or a list of names, got {}", describe_node(element)));
    for (const auto& [name, at] : out) {
      if (name == s->get())
        r.fail(element, element_key, fmt::format("duplicate value \"{}\"", name));
    }
    out.emplace_back(s->get(), &element);
  };
  if (const auto* array = node.as_array()) {
    if (array->empty()) r.fail(node, key, "empty list; give one or more names");
    for (std::size_t i = 0; i < array->size(); ++i)
      one(*array->get(i), fmt::format("{}[{}]", key, i));
  } else {
    one(node, key);
  }
  return out;
}

double number_key(const Reporter& r, const toml::table& table, std::string_view prefix,
                  std::string_view name, Kind kind, double fallback) {
  const toml::node* node = table.get(name);
  if (!node) return fallback;
  return checked_number(r, *node, join_key(prefix, name), kind);
}

bool bool_key(const Reporter& r, const toml::table& table, std::string_view prefix,
              std::string_view name, bool fallback) {
  const toml::node* node = table.get(name);
  if (!node) return fallback;
  const auto* b = node->as_boolean();
  if (!b)
    r.fail(*node, join_key(prefix, name),
           fmt::format("must be true or false, got {}", describe_node(*node)));
  return b->get();
}

}  // namespace clustersweep::spaces
