// clustersweep: argument parsing and dispatch only; the work lives in the libraries.
#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "base/error.h"
#include "base/names.h"
#include "clustersweep/version.h"

namespace {

void print_help() {
  std::cout
      << "Usage: clustersweep <command> [options]\n\n"
         "Sweeps GPU cluster designs and parallel plans for deep-learning training through an\n"
         "analytical training-time estimator, into one HDF5 store mined for Pareto fronts.\n\n"
         "Commands:\n";
  for (const auto& c : clustersweep::cli::commands())
    std::cout << fmt::format("  {:<12}{}\n", c.name, c.summary);
  std::cout << "\nOptions:\n  -h [ --help ]   show this help\n  --version       print the version "
               "and git revision\n\nRun 'clustersweep <command> --help' for a command's options.\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    // The commands on stdout, as --help prints them, and what to do in one line, as every error.
    print_help();
    std::cout.flush();
    std::cerr << "clustersweep: error: no command given; run 'clustersweep <command>' with one of "
                 "the commands above, e.g. 'clustersweep run --help'\n";
    return clustersweep::kExitBadInput;
  }
  const std::string name = argv[1];
  if (name == "-h" || name == "--help" || name == "help") {
    print_help();
    return 0;
  }
  if (name == "--version" || name == "version") {
    std::cout << fmt::format("clustersweep {} (git {})\n", clustersweep::kVersion,
                             clustersweep::kGitRevision);
    return 0;
  }
  for (const auto& c : clustersweep::cli::commands()) {
    if (c.name != name) continue;
    try {
      return c.run(clustersweep::cli::Args(argv + 2, argv + argc));
    } catch (const clustersweep::Error& e) {
      std::cout.flush();
      std::cerr << fmt::format("clustersweep {}: error: {}\n", name, e.what());
      return e.exit_code();
    } catch (const std::exception& e) {
      std::cout.flush();
      std::cerr << fmt::format("clustersweep {}: error: {}\n", name, e.what());
      return clustersweep::kExitFailure;
    }
  }
  std::vector<std::string> names;
  for (const auto& c : clustersweep::cli::commands()) names.emplace_back(c.name);
  const auto close = clustersweep::closest_names(name, names, 1);
  std::cerr << fmt::format(
      "clustersweep: error: unknown command '{}'{}; run 'clustersweep --help'\n", name,
      close.empty() ? "" : fmt::format(" (did you mean '{}'?)", close[0]));
  return clustersweep::kExitBadInput;
}
