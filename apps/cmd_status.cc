// clustersweep status: how far a sweep's store is, and what its Slurm jobs are doing
// (docs/slurm.md).
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "apps/analysis_args.h"
#include "apps/commands.h"
#include "base/error.h"
#include "slurm/scheduler.h"
#include "slurm/status.h"

namespace clustersweep::cli {

namespace fs = std::filesystem;

int status(const Args& args) {
  po::options_description options("Options");
  options.add_options()("store", po::value<std::string>(),
                        "the store a sweep writes (as given to run/submit -o)")(
      "interval", real_value(RealDomain::between(0, 600))->default_value(2.0),
      "seconds to watch an unfinished store to measure its rate (0: do not measure)");
  bool json = false;
  add_json_option(options, json);
  po::positional_options_description positional;
  positional.add("store", 1);
  const auto vm =
      parse(args, options, positional, "status STORE [--interval S] [--json]",
            "Shows how many points of the sweep writing STORE are done, its rate and ETA, and "
            "the state of the\nSlurm jobs `clustersweep submit` started for it (squeue, or "
            "sacct once Slurm forgot them).");
  if (!vm) return kExitOk;
  const std::string store =
      fs::absolute(required<std::string>(*vm, "store")).lexically_normal().string();
  const double interval = (*vm)["interval"].as<double>();

  slurm::SlurmScheduler scheduler;
  const auto report = slurm::status_of(store, interval, scheduler);
  if (json)
    print_json(slurm::status_json(report));
  else
    std::cout << slurm::status_text(report);
  return kExitOk;
}

}  // namespace clustersweep::cli
