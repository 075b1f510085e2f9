// clustersweep run: sweep a spec's space on the MPI ranks into one HDF5 store (docs/engine.md).
#include <iostream>

#include "apps/commands.h"
#include "base/error.h"
#include "engine/run.h"
#include "jobs/job.h"

namespace clustersweep::cli {

int run(const Args& args) {
  po::options_description options("Options");
  options.add_options()("spec", po::value<std::string>(),
                        "the sweep spec (TOML, docs/spec-format.md)")(
      "output,o", po::value<std::string>(), "the results store to write (HDF5)")(
      "resume", po::bool_switch(),
      "continue the unfinished run of --output (start it if it does not exist)")(
      "force", po::bool_switch(),
      "delete an existing store (and any unfinished run of it) and start over")(
      "chunk-points", whole_value<std::uint64_t>(0)->default_value(0),
      "points per chunk, the unit of scheduling and resume; 0 = chosen from the space and rank "
      "count")(
      "shard", po::value<std::string>(),
      "I/K: run only shard I of K (0 <= I < K), a contiguous range of designs, into its own store")(
      "progress", po::value<std::string>()->default_value("auto"),
      "progress on stderr: auto (a bar on a terminal, lines otherwise), bar, lines, none")(
      "progress-interval", real_value(RealDomain::above(0))->default_value(5.0),
      "seconds between progress lines")("no-summary", po::bool_switch(),
                                        "do not print the best designs at the end")(
      "exhaustive", po::bool_switch(),
      "keep = best-per-design or pareto-per-design: evaluate every plan of each design instead of "
      "the exact plan search (the same rows, far slower; docs/search.md)");
  po::positional_options_description positional;
  positional.add("spec", 1);
  const auto vm = parse(
      args, options, positional, "run SPEC -o STORE [--resume | --force] [options]",
      "Evaluates every point of the spec's space (or of one --shard) on the MPI ranks it was "
      "started\n"
      "on (mpirun -n N / srun; a plain process is one rank) and writes the rows the spec's keep "
      "mode\n"
      "keeps into one HDF5 store, in point-id order whatever the rank count. An unfinished run "
      "lives\n"
      "in STORE.partial; SIGINT, SIGTERM or SIGUSR1 stop it cleanly (exit code 75), and --resume\n"
      "continues it after any interruption, SIGKILL included. STORE appears once it is complete.");
  if (!vm) return kExitOk;
  jobs::Job job;
  job.spec_path = required<std::string>(*vm, "spec");
  job.store_path = required<std::string>(*vm, "output");
  job.options.resume = (*vm)["resume"].as<bool>();
  job.options.force = (*vm)["force"].as<bool>();
  job.options.chunk_points = (*vm)["chunk-points"].as<std::uint64_t>();
  if (vm->count("shard")) job.options.shard = jobs::Shard::parse((*vm)["shard"].as<std::string>());
  job.options.progress = jobs::parse_progress_mode((*vm)["progress"].as<std::string>());
  job.options.progress_interval_s = (*vm)["progress-interval"].as<double>();
  job.options.summary = !(*vm)["no-summary"].as<bool>();
  job.options.exhaustive = (*vm)["exhaustive"].as<bool>();
  std::vector<std::string> command_line = {"clustersweep"};
  command_line.insert(command_line.end(), args.begin(), args.end());
  return engine::run(job, command_line, std::cout);
}

}  // namespace clustersweep::cli
