#pragma once
// Hand-written SVG charts: a scatter plot (grey cloud, highlighted front) and a horizontal bar
// chart. Self-contained markup (no scripts, fonts or external references), usable as a file or
// inline in HTML.
#include <string>
#include <vector>

namespace clustersweep::analysis {

struct Series {
  std::string name;   // legend text
  std::string color;  // CSS color
  double radius = 2;
  bool staircase = false;  // connect the points (sorted by x) with a step line
  std::vector<double> x, y;
};

struct ScatterPlot {
  std::string title;
  std::string x_label, y_label;  // e.g. "time to train"
  // The stored units of x and y ("s", "USD", "kWh"): the axes show the values in the readable
  // unit of their range (days, $M, MWh; base/format.h display_unit) and name it in the label.
  std::string x_unit, y_unit;
  // Logarithmic axes; by default chosen when all values are positive and max/min >= 20.
  enum class Scale {
    automatic,
    linear,
    log
  } x_scale = Scale::automatic,
    y_scale = Scale::automatic;
  std::vector<Series> series;
};

struct BarChart {
  std::string title;
  std::string value_label;  // the x axis, e.g. "share of explained variance (%)"
  std::vector<std::string> labels;
  std::vector<double> values;  // >= 0
};

std::string render_svg(const ScatterPlot& plot, int width = 820, int height = 560);
std::string render_svg(const BarChart& chart, int width = 820);

// Escapes &, <, >, " for SVG/HTML text and attributes.
std::string xml_escape(const std::string& text);

}  // namespace clustersweep::analysis
