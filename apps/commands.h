#pragma once
// One function per subcommand, each in apps/cmd_<name>.cc; main.cc lists them.
#include "apps/cli.h"

namespace clustersweep::cli {
int estimate(const Args& args);
int validate(const Args& args);
int bench(const Args& args);
}  // namespace clustersweep::cli
