#include "apps/setting_flags.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "base/files.h"
#include "base/names.h"

namespace clustersweep::cli {
namespace {

// A TOML file of settings: the flags' names with '_' or '-'.
void read_settings_file(const std::string& path, spaces::Settings& settings) {
  const auto text = read_file(path);
  if (!text) throw InputError(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  toml::table root;
  try {
    root = toml::parse(*text, path);
  } catch (const toml::parse_error& e) {
    throw InputError(fmt::format("{}:{}:{}: {}", path, e.source().begin.line,
                                 e.source().begin.column, e.description()));
  }
  std::vector<std::string> names;
  for (const auto& info : spaces::setting_infos()) names.emplace_back(info.name);
  for (const auto& [key, node] : root) {
    std::string name(key.str());
    for (char& ch : name)
      if (ch == '-') ch = '_';
    const std::string where = fmt::format("{}:{}:{}: {}", path, key.source().begin.line,
                                          key.source().begin.column, key.str());
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      const auto close = closest_names(name, names, 1);
      throw InputError(
          fmt::format("{}: unknown key{}", where,
                      close.empty() ? "" : fmt::format("; did you mean '{}'?", close[0])));
    }
    std::string value;
    if (auto s = node.value_exact<std::string>())
      value = *s;
    else if (auto b = node.value_exact<bool>())
      value = *b ? "true" : "false";
    else if (auto i = node.value_exact<std::int64_t>())
      value = std::to_string(*i);
    else if (auto d = node.value_exact<double>())
      value = fmt::format("{}", *d);
    else
      throw InputError(fmt::format("{}: must be a string, number or boolean", where));
    settings.set(name, value, where);
  }
}

}  // namespace

void add_setting_options(po::options_description& options,
                         po::positional_options_description& positional,
                         std::initializer_list<std::string_view> skip) {
  options.add_options()(
      "file", po::value<std::string>(),
      "TOML file with the same settings (keys with '_' or '-'); flags override it");
  positional.add("file", 1);
  for (const auto& info : spaces::setting_infos()) {
    if (std::find(skip.begin(), skip.end(), info.name) != skip.end()) continue;
    const std::string flag = spaces::flag_name(info.name);
    if (flag == "sequence-parallel" || flag == "allow-tp-across-nodes")
      options.add_options()(flag.c_str(), po::value<std::string>()->implicit_value("true"),
                            info.help);
    else
      options.add_options()(flag.c_str(), po::value<std::string>(), info.help);
  }
}

spaces::Settings read_settings(const po::variables_map& vm) {
  spaces::Settings settings;
  if (vm.count("file")) read_settings_file(vm["file"].as<std::string>(), settings);
  for (const auto& info : spaces::setting_infos()) {
    const std::string flag = spaces::flag_name(info.name);
    if (vm.count(flag)) settings.set(info.name, vm[flag].as<std::string>(), "--" + flag);
  }
  return settings;
}

}  // namespace clustersweep::cli
