#pragma once
// One function per subcommand, each in apps/cmd_<name>.cc, and the table of them (commands()).
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "apps/cli.h"

namespace clustersweep::cli {
int estimate(const Args& args);
int best(const Args& args);
int validate(const Args& args);
int calibrate(const Args& args);
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
int catalog(const Args& args);

// The commands by name, in `clustersweep --help` order.
std::span<const Command> commands() noexcept;

// The results of the commands the Python module calls (python/), as data: what `--json` prints or
// `-o` writes, from the same arguments, without printing. Null JSON after --help.
nlohmann::ordered_json estimate_json(const Args& args);
nlohmann::ordered_json best_json(const Args& args);
nlohmann::ordered_json plan_json(const Args& args);
struct ValidateResult {
  std::string predictions_csv;  // what -o writes
  std::string report;           // what is printed
};
ValidateResult validate_result(const Args& args);
struct CalibrateResult {
  std::string output;           // the file it writes
  std::string toml;             // what it writes there
  std::string report;           // what is printed
  nlohmann::ordered_json json;  // what --json prints
};
CalibrateResult calibrate_result(const Args& args);
nlohmann::ordered_json catalog_json(const Args& args);
// The rows `export` wrote, without its message.
std::uint64_t export_rows(const Args& args);

// The commands that read a finished store given as their first argument: what submit --then runs.
inline constexpr const char* kStoreCommands[] = {"summary",     "top",    "pareto", "energy",
                                                 "sensitivity", "report", "export"};
}  // namespace clustersweep::cli
