#include "analysis/report.h"

#include <fmt/format.h>

#include <sstream>

#include "analysis/front.h"
#include "analysis/output.h"
#include "analysis/rank.h"
#include "analysis/sensitivity.h"
#include "analysis/summary.h"
#include "analysis/svg.h"
#include "base/error.h"

namespace clustersweep::analysis {
namespace {

constexpr const char* kStyle = R"(
body { font-family: sans-serif; margin: 2em auto; padding: 0 1.5em; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
pre { background: #f6f6f6; padding: 1em; overflow-x: auto; font-size: 12px; }
table { border-collapse: collapse; font-size: 12px; margin: .5em 0; }
th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: left; }
th { background: #eee; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1em 0; } .note { color: #555; font-size: 13px; }
)";

std::string pre(const std::string& text) { return "<pre>" + xml_escape(text) + "</pre>\n"; }

std::string pareto_section(const Dataset& data, const ReportOptions& options, const std::string& x,
                           const std::string& y, const std::string& group_by) {
  if (!data.find(x) || !data.find(y)) return "";
  FrontRequest request;
  request.objectives = {{x, false}, {y, false}};
  request.group_by = group_by;
  request.scan = options.scan;
  request.scan.feasible_only = true;
  request.sample_size = options.sample_size;
  const FrontResult result = compute_fronts(data, request);
  std::string html = fmt::format("<h3>{} vs {}{}</h3>\n", x, y,
                                 group_by.empty() ? "" : ", one front per " + group_by);
  if (result.rows_selected == 0) return html + "<p>No feasible point.</p>\n";
  html += "<figure>" + render_svg(front_plot(data, request, result)) + "</figure>\n";
  std::ostringstream table;
  print_fronts(table, data, request, result, 12);
  return html + pre(table.str());
}

}  // namespace

std::string render_report(const Dataset& data, const ReportOptions& options) {
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>clustersweep "
      "report: {}</title>\n"
      "<style>{}</style>\n</head>\n<body>\n<h1>clustersweep report</h1>\n",
      xml_escape(data.source().path()), kStyle);
  html += fmt::format(
      "<p>Store <code>{}</code>: {} rows{}.", xml_escape(data.source().path()), data.rows(),
      options.where_text.empty()
          ? ""
          : fmt::format(", filtered by <code>{}</code>", xml_escape(options.where_text)));
  if (const auto version = data.source().string_attribute("tool_version"))
    html += fmt::format(" Written by clustersweep {}.", xml_escape(*version));
  html += "</p>\n";

  // Summary.
  const bool has_time = data.find("time_to_train_s") != nullptr;
  html += "<h2>Summary</h2>\n";
  Summary summary;
  if (has_time) {
    summary = summarize(data, "time_to_train_s", options.scan);
    std::ostringstream text;
    print_summary(text, data, summary);
    html += pre(text.str());
  } else {
    html += "<p>The store has no time_to_train_s column.</p>\n";
  }

  // Pareto plots.
  html +=
      "<h2>Pareto fronts</h2>\n<p class=\"note\">Grey: a uniform sample of the feasible designs; "
      "coloured: the non-dominated ones (both objectives minimized).</p>\n";
  if (has_time) {
    html += pareto_section(data, options, "time_to_train_s", "energy_kwh", "");
    const Column* gpu = data.find("gpu");
    html += pareto_section(data, options, "time_to_train_s", "cost_usd",
                           gpu && gpu->is_label && gpu->labels.size() > 1 ? "gpu" : "");
  }

  // Best designs.
  if (has_time) {
    html += fmt::format("<h2>Best designs by time to train</h2>\n");
    const auto rows = top_rows(data, {"time_to_train_s", false}, options.best_rows, options.scan);
    std::vector<std::string> metrics;
    for (const char* c :
         {"time_to_train_s", "num_gpus", "mfu", "energy_kwh", "cost_usd", "co2e_kg"})
      if (data.find(c) &&
          (std::string(c) == "time_to_train_s" || data.find(c)->role != Role::design_axis))
        metrics.push_back(c);
    if (rows.empty()) {
      html += "<p>No feasible point.</p>\n";
    } else {
      std::vector<std::string> common;
      const TextTable table = rows_table(data, rows, metrics, common);
      if (!common.empty())
        html += fmt::format("<p class=\"note\">Common to all rows: {}</p>\n",
                            xml_escape(fmt::format("{}", fmt::join(common, " "))));
      html += table.html();
    }
  }

  // Energy, cost and carbon.
  if (data.find("energy_kwh") && data.find("cost_usd")) {
    html += "<h2>Energy, cost and carbon</h2>\n";
    std::ostringstream text;
    print_energy(text, data, energy_report(data, options.scan, std::nullopt, std::nullopt), {});
    html += pre(text.str());
  }

  // Sensitivity.
  if (has_time && summary.feasible >= 2) {
    html += "<h2>Sensitivity of time to train</h2>\n";
    const Sensitivity s = sensitivity(data, "time_to_train_s", options.scan);
    html += "<figure>" + render_svg(sensitivity_chart(s)) + "</figure>\n";
    std::ostringstream text;
    print_sensitivity(text, s);
    html += pre(text.str());
  }
  html +=
      "<p class=\"note\">Generated by <code>clustersweep report</code>; docs/analysis.md explains "
      "every number.</p>\n";
  return html + "</body>\n</html>\n";
}

}  // namespace clustersweep::analysis
