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

using clustersweep::cli::Command;

constexpr std::array kCommands = {
    Command{"run", "sweep a spec's space on MPI ranks into one resumable HDF5 store",
            clustersweep::cli::run},
    Command{"estimate", "estimate one training step (time, memory, energy) of one plan",
            clustersweep::cli::estimate},
    Command{"best", "the best parallel plans of one model on one cluster, by an exact search",
            clustersweep::cli::best},
    Command{"validate", "predict published training runs (CSV) and report the error",
            clustersweep::cli::validate},
    Command{"bench", "time the estimator on GPT-3 175B plans; prints evaluations_per_second",
            clustersweep::cli::bench},
    Command{"plan",
            "validate a sweep spec; print its axes, point counts and a run-time/store forecast",
            clustersweep::cli::plan},
    Command{"summary", "what a store holds: feasible points, best design per accelerator, spreads",
            clustersweep::cli::summary},
    Command{"pareto",
            "the Pareto-optimal designs of a store in 2 to 4 objectives (table, CSV, SVG)",
            clustersweep::cli::pareto},
    Command{"top", "the n best designs of a store by one column", clustersweep::cli::top},
    Command{"energy", "re-price a store's designs: kWh, cost, CO2e; deadline and budget questions",
            clustersweep::cli::energy},
    Command{"sensitivity", "how much of the variance of time to train each swept axis explains",
            clustersweep::cli::sensitivity},
    Command{"report",
            "one self-contained HTML page: summary, Pareto plots, best designs, sensitivity",
            clustersweep::cli::report},
    Command{"export",
            "a store's rows as CSV, JSON Lines or netCDF-4, labels as text, with priced columns",
            clustersweep::cli::export_store},
    Command{"submit", "run a sweep as Slurm batch job(s) that checkpoint, requeue and resume",
            clustersweep::cli::submit},
    Command{"merge", "join the shard stores of a sharded sweep into one store",
            clustersweep::cli::merge},
    Command{"status", "progress of a sweep's store and the state of its Slurm jobs",
            clustersweep::cli::status},
};

void print_help() {
  std::cout
      << "Usage: clustersweep <command> [options]\n\n"
         "Sweeps GPU cluster designs and parallel plans for deep-learning training through an\n"
         "analytical training-time estimator, into one HDF5 store mined for Pareto fronts.\n\n"
         "Commands:\n";
  for (const auto& c : kCommands) std::cout << fmt::format("  {:<12}{}\n", c.name, c.summary);
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
  for (const auto& c : kCommands) {
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
  for (const auto& c : kCommands) names.emplace_back(c.name);
  const auto close = clustersweep::closest_names(name, names, 1);
  std::cerr << fmt::format(
      "clustersweep: error: unknown command '{}'{}; run 'clustersweep --help'\n", name,
      close.empty() ? "" : fmt::format(" (did you mean '{}'?)", close[0]));
  return clustersweep::kExitBadInput;
}
