// clustersweep report: one self-contained HTML page about a store.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "analysis/output.h"
#include "analysis/report.h"
#include "apps/analysis_args.h"
#include "apps/commands.h"
#include "base/error.h"
#include "base/files.h"

namespace clustersweep::cli {

int report(const Args& args) {
  StoreArgs store;
  std::string out_dir;
  std::size_t best_rows = 15;
  po::options_description options("Options");
  po::positional_options_description positional;
  add_store_options(options, positional, store);
  options.add_options()("output,o", po::value(&out_dir),
                        "directory to write index.html into (created if missing)")(
      "best", whole_value(&best_rows, 1)->default_value(15), "rows in the best-designs table");
  const auto vm =
      parse(args, options, positional, "report results.h5 -o DIR [options]",
            "Writes DIR/index.html: the summary, Pareto plots (time vs energy, time vs cost),\n"
            "the best designs, energy/cost/carbon and the sensitivity of time to train, as one\n"
            "self-contained page (inline CSS and SVG) that opens offline.");
  if (!vm) return 0;
  read_pricing_flags(*vm, store);
  if (out_dir.empty()) throw_missing("output");
  const std::string path = (std::filesystem::path(out_dir) / "index.html").string();
  refuse_clobbering(store, {{out_dir, "-o", true}, {path, "-o", true}});
  OpenStore open(store);
  analysis::ReportOptions report_options;
  report_options.scan = open.scan();
  report_options.where_text = store.where;
  report_options.best_rows = best_rows;
  const std::string html = analysis::render_report(open.data, report_options);
  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  if (error)
    throw InputError(
        fmt::format("-o: cannot create the folder '{}': {}", out_dir, error.message()));
  write_file_atomically(path, html, "-o");
  std::cout << fmt::format("Wrote {} ({} kB)\n", path, html.size() / 1024);
  return 0;
}

}  // namespace clustersweep::cli
