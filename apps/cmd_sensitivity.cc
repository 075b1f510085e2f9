// clustersweep sensitivity: how much of the variance of log(target) each swept axis explains.
#include <fmt/format.h>

#include <iostream>

#include "analysis/output.h"
#include "analysis/sensitivity.h"
#include "apps/analysis_args.h"
#include "apps/commands.h"
#include "base/files.h"

namespace clustersweep::cli {

int sensitivity(const Args& args) {
  StoreArgs store;
  std::string target = "time_to_train_s", svg;
  bool json = false;
  po::options_description options("Options");
  po::positional_options_description positional;
  add_store_options(options, positional, store);
  options.add_options()("target", po::value(&target)->default_value(target),
                        "the column whose log is explained")(
      "svg", po::value(&svg), "write the ranked bar chart to this SVG file");
  add_json_option(options, json);
  const auto vm =
      parse(args, options, positional, "sensitivity results.h5 [--target COL] [--svg FILE]",
            "Ranks the swept axes by the share of the variance of log(target) they explain:\n"
            "a least-squares regression with every axis as a categorical factor (Eigen),\n"
            "ranked by each axis's Shapley share of R^2, with what it explains alone and what\n"
            "is lost without it; axes that move together are one group. Feasible rows only.");
  if (!vm) return 0;
  read_pricing_flags(*vm, store);
  refuse_clobbering(store, {{svg, "--svg"}});
  OpenStore open(store);
  const auto result = analysis::sensitivity(open.data, target, open.scan());
  if (json)
    print_json(analysis::sensitivity_json(open.data, result, store.where));
  else
    analysis::print_sensitivity(std::cout, result);
  if (!svg.empty()) {
    write_file_atomically(svg, analysis::render_svg(analysis::sensitivity_chart(result)), "--svg");
    if (!json) std::cout << fmt::format("Wrote {}\n", svg);
  }
  return 0;
}

}  // namespace clustersweep::cli
