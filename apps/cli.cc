#include "apps/cli.h"

#include <fmt/format.h>

#include <iostream>

#include "base/error.h"

namespace clustersweep::cli {

std::optional<po::variables_map> parse(const Args& args, const po::options_description& options,
                                       const po::positional_options_description& positional,
                                       std::string_view usage, std::string_view about) {
  po::options_description all;
  all.add_options()("help,h", "show this help and exit");
  all.add(options);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << fmt::format("Usage: clustersweep {}\n\n{}\n\n", usage, about) << all << '\n';
      return std::nullopt;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError(e.what());
  }
  return vm;
}

void throw_missing(const char* flag) {
  throw InputError(fmt::format("the option '--{}' is required but missing", flag));
}

}  // namespace clustersweep::cli
