#pragma once
// Shared argument handling for the subcommands: Boost.Program_options with one error style.
#include <boost/program_options.hpp>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/numbers.h"

namespace clustersweep::cli {

namespace po = boost::program_options;
using Args = std::vector<std::string>;  // the arguments after the subcommand name

struct Command {
  std::string_view name;
  std::string_view summary;  // one line for `clustersweep --help`
  int (*run)(const Args& args);
};

// Parses `args`. On --help/-h prints "Usage: clustersweep <usage>\n\n<about>\n\n<options>" to
// stdout and returns nullopt (the command then exits 0). Boost's parse errors become one
// InputError line naming the flag.
std::optional<po::variables_map> parse(const Args& args, const po::options_description& options,
                                       const po::positional_options_description& positional,
                                       std::string_view usage, std::string_view about);

[[noreturn]] void throw_missing(const char* flag);

// What a command's --help shows, as data: for the Python module's docstrings and keyword
// arguments (python/).
struct OptionInfo {
  std::string name;         // the long name ("tp", "sequence-parallel")
  bool takes_value = true;  // false: a switch (--json)
  std::string description;
};
struct CommandInfo {
  std::string help;                     // the text of `clustersweep NAME --help`
  std::vector<OptionInfo> options;      // every option, --help first
  std::vector<std::string> positional;  // the options positional arguments fill, in order
};
CommandInfo describe(const Command& command);

// The option value or throw InputError "--flag is required".
template <class T>
T required(const po::variables_map& vm, const char* flag) {
  if (!vm.count(flag)) throw_missing(flag);
  return vm[flag].as<T>();
}

// Numeric flags, read by the number layer (base/numbers.h) instead of Boost's lexical_cast, which
// wraps "-1" into an unsigned and takes "inf" and "nan" for a double: `whole_value<unsigned>(1)`,
// `whole_value(&rows, 1)`, `real_value(RealDomain::above(0))`. A bad value reads
// "--ranks: expected a whole number from 1 to 4294967295, got '-1'", naming the flag by its long
// name (-n when it has none); --help shows a default_value() as Boost does.
template <class T>
po::typed_value<T>* whole_value(std::type_identity_t<T> min,
                                std::type_identity_t<T> max = std::numeric_limits<T>::max());
template <class T>
po::typed_value<T>* whole_value(T* store, std::type_identity_t<T> min,
                                std::type_identity_t<T> max = std::numeric_limits<T>::max());
po::typed_value<double>* real_value(const RealDomain& domain);
po::typed_value<double>* real_value(double* store, const RealDomain& domain);

namespace detail {

// Boost's own error for a bad value, so that Boost names the flag when it passes it on.
[[noreturn]] void throw_bad_value(const std::string& problem);

// A typed value whose text `read` turns into a T, or into the problem with it.
template <class T>
class NumberValue final : public po::typed_value<T> {
 public:
  using Read = std::function<std::string(std::string_view text, T& value)>;
  NumberValue(T* store, Read read) : po::typed_value<T>(store), read_(std::move(read)) {}

  void xparse(boost::any& value, const std::vector<std::string>& tokens) const override {
    po::validators::check_first_occurrence(value);
    T number{};
    if (auto problem = read_(po::validators::get_single_string(tokens), number); !problem.empty())
      throw_bad_value(problem);
    value = number;
  }

 private:
  Read read_;
};

}  // namespace detail

template <class T>
po::typed_value<T>* whole_value(T* store, std::type_identity_t<T> min,
                                std::type_identity_t<T> max) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  return new detail::NumberValue<T>(store, [min, max](std::string_view text, T& value) {
    // Read in 64 bits, then narrow: the range fits T, so the value does.
    if constexpr (std::is_signed_v<T>) {
      std::int64_t wide = 0;
      auto problem = read_int64(text, min, max, wide);
      if (problem.empty()) value = static_cast<T>(wide);
      return problem;
    } else {
      std::uint64_t wide = 0;
      auto problem = read_uint64(text, min, max, wide);
      if (problem.empty()) value = static_cast<T>(wide);
      return problem;
    }
  });
}

template <class T>
po::typed_value<T>* whole_value(std::type_identity_t<T> min, std::type_identity_t<T> max) {
  return whole_value<T>(nullptr, min, max);
}

}  // namespace clustersweep::cli
