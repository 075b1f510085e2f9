// clustersweep merge: join the shard stores of a sharded sweep into one store (docs/slurm.md).
#include <fmt/format.h>

#include <iostream>

#include "apps/commands.h"
#include "base/error.h"
#include "base/files.h"
#include "engine/merge.h"

namespace clustersweep::cli {

int merge(const Args& args) {
  po::options_description options("Options");
  options.add_options()("shards", po::value<std::vector<std::string>>(),
                        "the shard stores (any order)")("output,o", po::value<std::string>(),
                                                        "the merged store to write")(
      "force", po::bool_switch(), "replace an existing output store");
  po::positional_options_description positional;
  positional.add("shards", -1);
  const auto vm = parse(
      args, options, positional, "merge SHARD.h5... -o STORE [--force]",
      "Joins the stores of `clustersweep run --shard I/K` (or of the tasks of `clustersweep "
      "submit --array K`)\ninto one store whose data equal a single run's. Every shard 0..K-1 "
      "must be given once,\ncomplete, and written for the same spec.");
  if (!vm) return kExitOk;
  if (!vm->count("shards"))
    throw InputError("no shard stores given; usage: clustersweep merge SHARD.h5... -o STORE");
  const auto shards = (*vm)["shards"].as<std::vector<std::string>>();
  const auto output = required<std::string>(*vm, "output");
  std::vector<CommandFile> inputs;
  for (const auto& shard : shards) inputs.push_back({shard, "a shard being merged"});
  refuse_clobbering(inputs, {{output, "-o"}});
  std::vector<std::string> command_line = {"clustersweep", "merge"};
  command_line.insert(command_line.end(), args.begin(), args.end());
  const auto result = engine::merge_shards(shards, output, (*vm)["force"].as<bool>(), command_line);
  std::cout << fmt::format("wrote '{}': {} rows from {} shards in {:.2f} s\n", output, result.rows,
                           result.shards, result.wall_time_s);
  return kExitOk;
}

}  // namespace clustersweep::cli
