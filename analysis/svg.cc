#include "analysis/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "base/format.h"

namespace clustersweep::analysis {
namespace {

struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double pixel_lo = 0, pixel_hi = 1;  // screen coordinates of lo and hi

  double map(double v) const {
    const double a = log ? std::log10(lo) : lo;
    const double b = log ? std::log10(hi) : hi;
    const double t = ((log ? std::log10(v) : v) - a) / (b - a);
    return pixel_lo + t * (pixel_hi - pixel_lo);
  }
};

std::string tick_text(double v) {
  const double a = std::fabs(v);
  if (a == 0) return "0";
  if (a >= 1e5 || a < 1e-3) {
    const int exponent = static_cast<int>(std::floor(std::log10(a)));
    const double mantissa = v / std::pow(10.0, exponent);
    if (std::fabs(mantissa - std::round(mantissa)) < 1e-9)
      return fmt::format("{}e{}", static_cast<int>(std::round(mantissa)), exponent);
    return fmt::format("{:.2g}e{}", mantissa, exponent);
  }
  return fmt::format("{:.6g}", v);
}

// Ticks of a linear axis at 1, 2 or 5 times a power of ten; widens [lo, hi] to whole ticks.
std::vector<double> linear_ticks(double& lo, double& hi) {
  if (hi <= lo) {
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / 6;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * power) {
      step = m * power;
      break;
    }
  lo = std::floor(lo / step) * step;
  hi = std::ceil(hi / step) * step;
  std::vector<double> ticks;
  for (double t = lo; t <= hi + step * 1e-9; t += step)
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0 : t);
  return ticks;
}

// Ticks of a log axis at powers of ten (and 2x, 5x when the axis spans few decades).
std::vector<double> log_ticks(double& lo, double& hi) {
  double a = std::floor(std::log10(lo));
  double b = std::ceil(std::log10(hi));
  if (b <= a) b = a + 1;
  lo = std::pow(10.0, a);
  hi = std::pow(10.0, b);
  std::vector<double> ticks;
  for (double e = a; e <= b; ++e) {
    ticks.push_back(std::pow(10.0, e));
    if (b - a <= 2 && e < b)
      for (double m : {2.0, 5.0}) ticks.push_back(m * std::pow(10.0, e));
  }
  std::sort(ticks.begin(), ticks.end());
  return ticks;
}

bool use_log(ScatterPlot::Scale scale, double lo, double hi) {
  if (scale == ScatterPlot::Scale::log) return lo > 0;
  if (scale == ScatterPlot::Scale::linear) return false;
  return lo > 0 && hi / lo >= 20;
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string render_svg(const ScatterPlot& stored, int width, int height) {
  const double left = 90, right = 30, top = 50, bottom = 70;
  // The values in the display units of their ranges.
  double x_max = 0, y_max = 0;
  for (const auto& s : stored.series)
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (std::isfinite(s.x[i])) x_max = std::max(x_max, std::fabs(s.x[i]));
      if (std::isfinite(s.y[i])) y_max = std::max(y_max, std::fabs(s.y[i]));
    }
  const DisplayUnit x_unit = display_unit(stored.x_unit, x_max);
  const DisplayUnit y_unit = display_unit(stored.y_unit, y_max);
  ScatterPlot plot = stored;
  for (auto& s : plot.series) {
    for (double& v : s.x) v /= x_unit.divisor;
    for (double& v : s.y) v /= y_unit.divisor;
  }
  const auto label = [](const std::string& text, const DisplayUnit& unit) {
    return unit.name().empty() ? text : fmt::format("{} ({})", text, unit.name());
  };
  plot.x_label = label(plot.x_label, x_unit);
  plot.y_label = label(plot.y_label, y_unit);
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_lo = x_lo, y_hi = -x_lo;
  for (const auto& s : plot.series)
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      x_lo = std::min(x_lo, s.x[i]);
      x_hi = std::max(x_hi, s.x[i]);
      y_lo = std::min(y_lo, s.y[i]);
      y_hi = std::max(y_hi, s.y[i]);
    }
  if (!std::isfinite(x_lo)) x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
  Axis x{x_lo, x_hi, use_log(plot.x_scale, x_lo, x_hi), left, width - right};
  Axis y{y_lo, y_hi, use_log(plot.y_scale, y_lo, y_hi), height - bottom, top};
  const auto x_ticks = x.log ? log_ticks(x.lo, x.hi) : linear_ticks(x.lo, x.hi);
  const auto y_ticks = y.log ? log_ticks(y.lo, y.hi) : linear_ticks(y.lo, y.hi);

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" "
      "font-weight=\"bold\">{3}</text>\n",
      width, height, width / 2, xml_escape(plot.title));
  // Grid and ticks.
  for (double t : x_ticks) {
    const double px = x.map(t);
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>\n"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        px, top, height - bottom, height - bottom + 18, tick_text(t));
  }
  for (double t : y_ticks) {
    const double py = y.map(t);
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#e4e4e4\"/>\n"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        left, py, width - right, left - 6, py + 4, tick_text(t));
  }
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", left,
      top, width - left - right, height - top - bottom);
  svg +=
      fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\">{}{}</text>\n",
                  (left + width - right) / 2, height - 28, xml_escape(plot.x_label),
                  x.log ? " — log scale" : "");
  svg += fmt::format(
      "<text transform=\"translate(22 {}) rotate(-90)\" text-anchor=\"middle\" "
      "font-size=\"13\">{}{}</text>\n",
      (top + height - bottom) / 2, xml_escape(plot.y_label), y.log ? " — log scale" : "");
  // Data.
  for (const auto& s : plot.series) {
    std::vector<std::size_t> order(s.x.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    order.erase(std::remove_if(order.begin(), order.end(),
                               [&](std::size_t i) {
                                 return !std::isfinite(s.x[i]) || !std::isfinite(s.y[i]) ||
                                        (x.log && s.x[i] <= 0) || (y.log && s.y[i] <= 0);
                               }),
                order.end());
    if (s.staircase && order.size() > 1) {
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return s.x[a] != s.x[b] ? s.x[a] < s.x[b] : s.y[a] < s.y[b];
      });
      std::string path = fmt::format("M{:.1f},{:.1f}", x.map(s.x[order[0]]), y.map(s.y[order[0]]));
      for (std::size_t i = 1; i < order.size(); ++i)
        path += fmt::format(" H{:.1f} V{:.1f}", x.map(s.x[order[i]]), y.map(s.y[order[i]]));
      svg += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"/>\n",
                         path, s.color);
    }
    svg += fmt::format("<g fill=\"{}\">\n", s.color);
    for (std::size_t i : order)
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\"/>\n", x.map(s.x[i]),
                         y.map(s.y[i]), s.radius);
    svg += "</g>\n";
  }
  // Legend.
  double ly = top + 16;
  for (const auto& s : plot.series) {
    if (s.name.empty()) continue;
    svg += fmt::format(
        "<circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\">{}</text>\n",
        width - right - 200, ly - 4, s.color, width - right - 190, ly, xml_escape(s.name));
    ly += 18;
  }
  return svg + "</svg>\n";
}

std::string render_svg(const BarChart& chart, int width) {
  std::size_t longest = 0;
  for (const auto& label : chart.labels) longest = std::max(longest, label.size());
  // About 7 px per character at font-size 12.
  const double left = std::max(120.0, 7.0 * static_cast<double>(longest) + 20), right = 70,
               top = 50, bar = 24, gap = 8;
  const double bottom = 55;
  const double height = top + bottom + static_cast<double>(chart.values.size()) * (bar + gap);
  double hi = 0;
  for (double v : chart.values) hi = std::max(hi, v);
  double lo = 0;
  const auto ticks = linear_ticks(lo, hi);
  Axis x{0, hi, false, left, width - right};
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1:.0f}\" viewBox=\"0 0 "
      "{0} {1:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"{0}\" height=\"{1:.0f}\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" "
      "font-weight=\"bold\">{3}</text>\n",
      width, height, width / 2, xml_escape(chart.title));
  const double axis_y = height - bottom;
  for (double t : ticks) {
    const double px = x.map(t);
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>\n"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        px, top - 4, axis_y, axis_y + 16, tick_text(t));
  }
  for (std::size_t i = 0; i < chart.values.size(); ++i) {
    const double y = top + static_cast<double>(i) * (bar + gap);
    const double w = std::max(0.0, x.map(chart.values[i]) - left);
    svg += fmt::format(
        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n"
        "<rect x=\"{}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"#3a6ea5\"/>\n"
        "<text x=\"{:.1f}\" y=\"{:.1f}\">{:.3g}</text>\n",
        left - 8, y + bar / 2 + 4, xml_escape(chart.labels[i]), left, y, w, bar, left + w + 5,
        y + bar / 2 + 4, chart.values[i]);
  }
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#444\"/>\n", left,
                     top - 4, axis_y);
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#444\"/>\n", left,
                     axis_y, width - right);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\">{}</text>\n",
                     (left + width - right) / 2, axis_y + 38, xml_escape(chart.value_label));
  return svg + "</svg>\n";
}

}  // namespace clustersweep::analysis
