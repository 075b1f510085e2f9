#pragma once
// The flags of a point's settings (spaces::setting_infos()), shared by `estimate` and `best`: one
// flag per setting, an optional TOML file of the same names, the flags overriding the file.
#include <initializer_list>
#include <string_view>

#include "apps/cli.h"
#include "spaces/resolve.h"

namespace clustersweep::cli {

// Adds the positional FILE and one flag per setting, except those named in `skip`.
void add_setting_options(po::options_description& options,
                         po::positional_options_description& positional,
                         std::initializer_list<std::string_view> skip = {});

// The settings of the file (if given) overridden by the flags, each remembering where it was
// given ("--tp", "plan.toml:4:1: tp").
spaces::Settings read_settings(const po::variables_map& vm);

}  // namespace clustersweep::cli
