#pragma once
// Shared argument handling for the subcommands: Boost.Program_options with one error style.
#include <boost/program_options.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// The option value or throw InputError "--flag is required".
template <class T>
T required(const po::variables_map& vm, const char* flag) {
  if (!vm.count(flag)) throw_missing(flag);
  return vm[flag].as<T>();
}

}  // namespace clustersweep::cli
