#include "apps/cli.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <sstream>

#include "base/error.h"

namespace clustersweep::cli {
namespace {

// Set while describe() runs a command: parse() fills it in instead of parsing.
thread_local CommandInfo* describing = nullptr;

}  // namespace

std::optional<po::variables_map> parse(const Args& args, const po::options_description& options,
                                       const po::positional_options_description& positional,
                                       std::string_view usage, std::string_view about) {
  po::options_description all;
  all.add_options()("help,h", "show this help and exit");
  all.add(options);
  const auto help = [&] {
    std::ostringstream text;
    text << fmt::format("Usage: clustersweep {}\n\n{}\n\n", usage, about) << all << '\n';
    return text.str();
  };
  if (describing) {
    describing->help = help();
    for (const auto& o : all.options())
      describing->options.push_back(
          {o->long_name(), o->semantic()->max_tokens() > 0, o->description()});
    for (unsigned i = 0; i < std::min(positional.max_total_count(), 8u); ++i) {
      const std::string& name = positional.name_for_position(i);
      if (describing->positional.empty() || describing->positional.back() != name)
        describing->positional.push_back(name);
    }
    return std::nullopt;
  }
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << help();
      return std::nullopt;
    }
    po::notify(vm);
  } catch (po::error_with_option_name& e) {
    // Boost names a flag that has no long form by its letter after "--" ("--n"): it is "-n".
    const std::string name = e.get_option_name();
    const auto* short_only =
        name.starts_with("--") ? all.find_nothrow("-" + name.substr(2), false) : nullptr;
    if (short_only && short_only->long_name().empty())
      e.set_prefix(po::command_line_style::allow_dash_for_short);
    throw InputError(e.what());
  } catch (const po::error& e) {
    throw InputError(e.what());
  }
  return vm;
}

CommandInfo describe(const Command& command) {
  CommandInfo info;
  describing = &info;
  try {
    command.run({"--help"});
  } catch (...) {
    describing = nullptr;
    throw;
  }
  describing = nullptr;
  return info;
}

void throw_missing(const char* flag) {
  throw InputError(fmt::format("the option '--{}' is required but missing", flag));
}

po::typed_value<double>* real_value(double* store, const RealDomain& domain) {
  return new detail::NumberValue<double>(store, [domain](std::string_view text, double& value) {
    return read_real(text, domain, value);
  });
}

po::typed_value<double>* real_value(const RealDomain& domain) {
  return real_value(nullptr, domain);
}

namespace detail {

void throw_bad_value(const std::string& problem) {
  // Boost fills %canonical_option% in when it adds the option's context and rethrows.
  po::validation_error error(po::validation_error::invalid_option_value);
  error.m_error_template = "%canonical_option%: %problem%";
  error.set_substitute("problem", problem);
  throw error;
}

}  // namespace detail

}  // namespace clustersweep::cli
