#include "analysis/report.h"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/front.h"
#include "analysis/output.h"
#include "analysis/rank.h"
#include "analysis/sensitivity.h"
#include "analysis/summary.h"
#include "analysis/svg.h"
#include "base/error.h"
#include "base/format.h"
#include "spaces/support.h"

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

std::string note(const std::string& text) {
  return "<p class=\"note\">" + xml_escape(text) + "</p>\n";
}

// A table of rows standing for their ties, as HTML: the settings common to all, the table, what
// the ties differ in, and the short headings' column names.
std::string tied_html(const TiedTable& t) {
  std::string html;
  if (!t.common.empty())
    html += note(fmt::format("Common to all rows: {}", fmt::join(t.common, " ")));
  html += t.table.html();
  for (const auto& line : t.also) html += note(line);
  if (!t.legend.empty()) html += note("Columns: " + t.legend);
  return html;
}

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
  std::string html =
      fmt::format("<h3>{} vs {}{}</h3>\n", data.find(x)->heading(), data.find(y)->heading(),
                  group_by.empty() ? "" : ", one front per " + group_by);
  if (result.rows_selected == 0) return html + "<p>No feasible point.</p>\n";
  html += "<figure>" + render_svg(front_plot(data, request, result)) + "</figure>\n";
  const std::vector<std::string> shown = metric_columns(data, {x, y}, {"num_gpus", "mfu"});
  for (const auto& f : result.fronts) {
    // The designs of the front by the first objective, each standing for its ties.
    std::vector<std::size_t> order(f.rows.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return f.values[a * 2] < f.values[b * 2];
    });
    order.resize(std::min<std::size_t>(order.size(), 12));
    TiedRows rows;
    for (std::size_t i : order) {
      rows.rows.push_back({f.rows[i], f.values[i * 2]});
      rows.ties.push_back(f.ties[i]);
    }
    if (!group_by.empty())
      html += fmt::format("<h4>{} = {}: {} designs on the front</h4>\n", xml_escape(group_by),
                          xml_escape(data.find(group_by)->format(f.group)), f.rows.size());
    html += tied_html(tied_table(data, rows, shown));
  }
  return html;
}

std::string summary_section(const Dataset& data, const Summary& s) {
  std::string html = fmt::format(
      "<p>{} points stored, {} selected, {} feasible ({:.1f}%).</p>\n", with_commas(s.rows),
      with_commas(s.selected), with_commas(s.feasible),
      s.selected ? 100.0 * static_cast<double>(s.feasible) / static_cast<double>(s.selected) : 0.0);
  html += "<h3>Swept axes</h3>\n" + swept_axes_table(s).html();
  if (!s.infeasible_reasons.empty()) {
    TextTable reasons{{"why infeasible", "points"}, {}};
    for (const auto& [name, count] : s.infeasible_reasons)
      reasons.rows.push_back({name, with_commas(count)});
    html += reasons.html();
  }
  if (s.feasible == 0) return html + "<p>No feasible point: nothing to rank.</p>\n";
  const Column& target = *data.find(s.target);
  const std::vector<std::string> shown =
      metric_columns(data, {s.target}, {"num_gpus", "mfu", "energy_kwh", "cost_usd"});
  {
    TiedRows rows;
    std::vector<std::string> labels;
    for (const auto& [gpu, best] : s.best_per_accelerator) {
      labels.push_back(gpu);
      rows.rows.push_back(best);
    }
    html += "<h3>Best design per accelerator</h3>\n" +
            note(fmt::format("The feasible design with the least {} on each accelerator.",
                             target.heading())) +
            tied_html(tied_table(data, rows, shown, labels));
  }
  html += "<h3>How much the cluster configuration matters</h3>\n" +
          note(
              "Each configuration (workload and cluster) at its best plan; the spread is the "
              "worst configuration's over the best's (COMET reports up to 7.7x).");
  TextTable spreads{{"workload", "configurations", "spread", "best", "worst"}, {}};
  spreads.right = {0, 1, 1, 1, 1};
  for (const auto& v : {&s.spreads, &s.spreads_at_equal_gpus}) {
    if (v == &s.spreads_at_equal_gpus && s.spreads_at_equal_gpus.size() == s.spreads.size()) break;
    for (const auto& spread : *v)
      spreads.rows.push_back({spread.workload.empty() ? "all" : spread.workload,
                              with_commas(spread.designs), fmt::format("{:.2f}x", spread.ratio()),
                              target.display(spread.best.value),
                              target.display(spread.worst.value)});
  }
  html += spreads.html();
  if (!s.spreads.empty())
    html += tied_html(tied_table(data, {{s.spreads.front().best, s.spreads.front().worst}, {}},
                                 shown, {"best", "worst"}));
  html += "<h3>Memory-expansion tier</h3>\n";
  const ExpansionGain& e = s.expansion;
  if (!s.has_expansion_axis || e.groups == 0)
    html +=
        "<p>Not swept: no cluster was evaluated both with and without expansion "
        "memory.</p>\n";
  else
    html += fmt::format(
        "<p>{} clusters compared with and without the tier: faster with it in {}, feasible only "
        "with it in {}; gain (best without / best with) up to {:.2f}x, median {:.2f}x (COMET "
        "reports up to 1.4x).</p>\n",
        e.groups, e.improved, e.enabled, e.max_gain, e.median_gain);
  html += "<h3>Software stack settings</h3>\n";
  const std::string fixed =
      s.fixed_stack.empty() ? "" : "<p>" + xml_escape(describe_fixed_stack(s)) + "</p>\n";
  if (s.stack.empty()) return html + "<p>Not swept.</p>\n" + fixed;
  html += "<ul>\n";
  for (const auto& setting : s.stack)
    html += "<li>" + xml_escape(describe_stack_setting(setting, s.stack_by_design)) + "</li>\n";
  return html + "</ul>\n" + fixed;
}

// What the times to train hold, and how many feasible points lie beyond the calibration's runs.
std::string job_note(const Dataset& data, const ScanOptions& scan_options) {
  std::string text =
      "Times to train include the expected failures, checkpoints and restarts (goodput: the "
      "share of the wall time that trains); 90% from/to: the prediction interval of the time to "
      "train (docs/calibration.md).";
  if (data.find("calibration_support")) {
    ScanOptions options = scan_options;
    options.feasible_only = true;
    Scan scan(data, {"calibration_support"}, options);
    std::uint64_t feasible = 0, few = 0;
    while (scan.next())
      for (std::size_t i = 0; i < scan.size(); ++i)
        if (scan.keep(i)) {
          ++feasible;
          few += scan[0][i] < spaces::kFewCalibrationRuns;
        }
    text += " Support: the calibration runs like the design; ";
    text += few == 0
                ? fmt::format("every feasible point has at least {}.", spaces::kFewCalibrationRuns)
                : fmt::format(
                      "{} of the {} feasible points have fewer than {}: they lie "
                      "beyond the calibration's data, and their intervals are widened.",
                      with_commas(few), with_commas(feasible), spaces::kFewCalibrationRuns);
  }
  return note(text);
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
    html += summary_section(data, summary);
  } else {
    html += "<p>The store has no time_to_train_s column.</p>\n";
  }

  // Pareto plots.
  html +=
      "<h2>Pareto fronts</h2>\n<p class=\"note\">Grey: a uniform sample of the feasible designs; "
      "coloured: the designs no other design beats on both axes (both minimized), one front per "
      "accelerator. Below each plot, the front's designs, fastest first; a row stands for the "
      "designs of equal objectives (ties).</p>\n";
  if (has_time) {
    // One front per accelerator in every plot: the question is usually which one to buy.
    const Column* gpu = data.find("gpu");
    const std::string by_gpu = gpu && gpu->is_label && gpu->labels.size() > 1 ? "gpu" : "";
    html += pareto_section(data, options, "time_to_train_s", "energy_kwh", by_gpu);
    html += pareto_section(data, options, "time_to_train_s", "cost_usd", by_gpu);
  }

  // Best designs.
  if (has_time) {
    html += "<h2>Best designs by time to train</h2>\n" +
            note(
                "The fastest distinct results: rows equal in every column shown are one row, "
                "the one on the fewest GPUs, then with the least memory.");
    html += job_note(data, options.scan);
    const std::vector<std::string> metrics = metric_columns(
        data, {"time_to_train_s"},
        {"time_to_train_lo_s", "time_to_train_hi_s", "goodput", "calibration_support", "num_gpus",
         "mfu", "energy_kwh", "cost_usd", "co2e_kg"});
    const auto rows = top_distinct_rows(data, {"time_to_train_s", false}, options.best_rows,
                                        options.scan, metrics);
    if (rows.rows.empty()) {
      html += "<p>No feasible point.</p>\n";
    } else {
      const TiedTable t = tied_table(data, rows, metrics);
      if (!t.common.empty())
        html += fmt::format("<p class=\"note\">Common to all rows: {}</p>\n",
                            xml_escape(fmt::format("{}", fmt::join(t.common, " "))));
      html += t.table.html();
      for (const auto& line : t.also)
        html += fmt::format("<p class=\"note\">{}</p>\n", xml_escape(line));
    }
  }

  // Energy, cost and carbon.
  if (data.find("energy_kwh") && data.find("cost_usd")) {
    html += "<h2>Energy, cost and carbon</h2>\n";
    const EnergyView v =
        energy_view(data, energy_report(data, options.scan, std::nullopt, std::nullopt), {});
    for (const auto& line : v.pricing) html += note(line);
    if (v.feasible > 0) {
      html += note(fmt::format("The range of each quantity over the {} feasible designs, then "
                               "the design that is best at each.",
                               with_commas(v.feasible))) +
              v.ranges.html() + tied_html(v.answers);
    }
  }

  // Sensitivity.
  if (has_time && summary.feasible >= 2) {
    html += "<h2>Sensitivity of time to train</h2>\n";
    const Sensitivity s = sensitivity(data, "time_to_train_s", options.scan);
    html +=
        note(fmt::format("How much of the variance of log(time to train) each swept axis "
                         "explains; all axes together explain {:.1f}%, their interactions "
                         "the rest.",
                         100 * s.full_r2));
    html += "<figure>" + render_svg(sensitivity_chart(s)) + "</figure>\n";
    html += sensitivity_table(s).html();
    for (const auto& line : sensitivity_notes(s)) html += note(line);
  }
  html +=
      "<p class=\"note\">Generated by <code>clustersweep report</code>; docs/analysis.md explains "
      "every number.</p>\n";
  return html + "</body>\n</html>\n";
}

}  // namespace clustersweep::analysis
