#pragma once
// Reading a sweep spec's TOML values with errors that point at them: "file:line:column: key:
// message". Internal to spaces/ (the spec parser); not part of the library's interface.
#include <fmt/format.h>
#include <toml++/toml.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.h"

namespace clustersweep::spaces {

using Names = std::span<const char* const>;

// "\"a\", \"b\", \"c\"".
std::string quoted_list(Names names);
// The index of `name` in `names`, or -1.
int find_name(Names names, std::string_view name);

// Where spec errors point, and how they read: "file:line:column: key: message".
class Reporter {
 public:
  explicit Reporter(std::string filename) : filename_(std::move(filename)) {}

  std::string where(const toml::source_region& at) const {
    return fmt::format("{}:{}:{}", filename_, at.begin.line, at.begin.column);
  }
  [[noreturn]] void fail(const toml::source_region& at, std::string_view key,
                         const std::string& message) const {
    throw InputError(fmt::format("{}: {}: {}", where(at), key, message));
  }
  [[noreturn]] void fail(const toml::node& node, std::string_view key,
                         const std::string& message) const {
    fail(node.source(), key, message);
  }
  const std::string& filename() const { return filename_; }

 private:
  std::string filename_;
};

// "string \"x\"", "integer 4", "an array"...: what a value is, for "got ..." in messages.
std::string describe_node(const toml::node& node);
// "cluster" + "nodes" -> "cluster.nodes".
std::string join_key(std::string_view prefix, std::string_view key);
// Unknown keys are errors, with the closest valid key suggested.
void check_keys(const Reporter& r, const toml::table& table, std::string_view prefix,
                const std::vector<std::string>& allowed);
// The table under `key`, nullptr when absent; an error when it is not a table.
const toml::table* subtable(const Reporter& r, const toml::table& parent, std::string_view key,
                            std::string_view full);

enum class Kind { positive_int, nonnegative_int, positive_real, nonnegative_real };
std::optional<double> scalar_number(const toml::node& node);
double checked_number(const Reporter& r, const toml::node& node, const std::string& key, Kind kind);
// The forms a numeric axis takes: a number, a list, {start, stop, step}, {start, stop, factor},
// "pow2:A..B", or (plan axes only) "all", returned as an empty vector.
std::vector<double> axis_numbers(const Reporter& r, const toml::node& node, const std::string& key,
                                 Kind kind, bool allow_all);
// A label axis: one string or a list of strings from `valid` (or "all" when allow_all).
std::vector<int> axis_labels(const Reporter& r, const toml::node& node, const std::string& key,
                             Names valid, bool allow_all);
// Strings naming catalog entries (models, accelerators): one string or a list, unique.
std::vector<std::pair<std::string, const toml::node*>> name_list(const Reporter& r,
                                                                 const toml::node& node,
                                                                 const std::string& key);
double number_key(const Reporter& r, const toml::table& table, std::string_view prefix,
                  std::string_view name, Kind kind, double fallback);
bool bool_key(const Reporter& r, const toml::table& table, std::string_view prefix,
              std::string_view name, bool fallback);

}  // namespace clustersweep::spaces
