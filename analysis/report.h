#pragma once
// `clustersweep report`: one self-contained HTML page (inline CSS and SVG, no scripts, no external
// URL) with the summary, Pareto plots, the best designs, energy and cost, and the sensitivity of
// time to train to every axis. It opens offline in any browser.
#include <string>

#include "analysis/dataset.h"

namespace clustersweep::analysis {

struct ReportOptions {
  ScanOptions scan;        // filter and chunk size
  std::string where_text;  // shown on the page
  std::size_t best_rows = 15;
  std::size_t sample_size = 3000;
};

std::string render_report(const Dataset& data, const ReportOptions& options);

}  // namespace clustersweep::analysis
