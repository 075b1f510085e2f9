// clustersweep summary: what a store holds and its headline findings.
#include <iostream>
#include <string>

#include "analysis/summary.h"
#include "apps/analysis_args.h"
#include "apps/commands.h"

namespace clustersweep::cli {

int summary(const Args& args) {
  StoreArgs store;
  std::string target = "time_to_train_s";
  bool json = false;
  po::options_description options("Options");
  po::positional_options_description positional;
  add_store_options(options, positional, store);
  options.add_options()("target", po::value(&target)->default_value(target),
                        "the column to minimize (best designs, spread, expansion gain)");
  add_json_option(options, json);
  const auto vm =
      parse(args, options, positional, "summary results.h5 [options]",
            "What was swept, how many points are feasible, the best design per accelerator,\n"
            "the spread of the target across cluster configurations (each one's best plan;\n"
            "COMET: up to 7.7x) and the gain of the memory-expansion tier at an otherwise\n"
            "equal cluster (COMET: up to 1.4x).");
  if (!vm) return 0;
  read_pricing_flags(*vm, store);
  OpenStore open(store);
  const auto s = analysis::summarize(open.data, target, open.scan());
  if (json) {
    print_json(analysis::summary_json(open.data, s, store.where));
    return 0;
  }
  if (!store.where.empty()) std::cout << "Filter: --where " << store.where << '\n';
  analysis::print_summary(std::cout, open.data, s);
  return 0;
}

}  // namespace clustersweep::cli
