#pragma once
// One function per subcommand, each in apps/cmd_<name>.cc; main.cc lists them.
#include "apps/cli.h"

namespace clustersweep::cli {
int estimate(const Args& args);
int best(const Args& args);
int validate(const Args& args);
int bench(const Args& args);
int plan(const Args& args);
int submit(const Args& args);
int status(const Args& args);
int merge(const Args& args);
int run(const Args& args);
// Analysis of a results store (analysis/, docs/analysis.md).
int pareto(const Args& args);
int energy(const Args& args);
int top(const Args& args);
int summary(const Args& args);
int sensitivity(const Args& args);
int report(const Args& args);
int export_store(const Args& args);  // `export` is a C++ keyword

// The commands that read a finished store given as their first argument: what submit --then runs.
inline constexpr const char* kStoreCommands[] = {"summary",     "top",    "pareto", "energy",
                                                 "sensitivity", "report", "export"};
}  // namespace clustersweep::cli
