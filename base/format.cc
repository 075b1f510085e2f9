#include "base/format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace clustersweep {

std::string with_commas(std::uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_number(double value) {
  if (value == std::floor(value) && std::fabs(value) < 1e15)
    return fmt::format("{}", static_cast<std::int64_t>(value));
  return fmt::format("{}", value);
}

std::string DisplayUnit::name() const {
  std::string text = prefix + suffix;
  return text.empty() || text[0] != ' ' ? text : text.substr(1);
}

namespace {

// value / 1000^k with SI prefixes, e.g. " M" + "tokens/s", for magnitudes from 1 to 10^18.
DisplayUnit si(std::string_view unit, double magnitude, bool spaced) {
  static const char* const kPrefix[] = {"", "k", "M", "G", "T", "P", "E"};
  int k = 0;
  while (magnitude >= 1000 && k < 6) {
    magnitude /= 1000;
    ++k;
  }
  DisplayUnit d;
  d.divisor = std::pow(1000.0, k);
  d.suffix = fmt::format("{}{}{}", spaced && !unit.empty() ? " " : "", kPrefix[k], unit);
  return d;
}

}  // namespace

DisplayUnit display_unit(std::string_view unit, double magnitude) {
  magnitude = std::fabs(magnitude);
  if (!std::isfinite(magnitude)) magnitude = 0;
  if (unit == "s") {
    constexpr double kDay = 86400, kYear = 365.25 * kDay;
    if (magnitude >= kYear) return {kYear, "", " years"};
    if (magnitude >= kDay) return {kDay, "", " days"};
    if (magnitude >= 3600) return {3600, "", " h"};
    if (magnitude >= 60) return {60, "", " min"};
    return {1, "", " s"};
  }
  if (unit == "kWh") {
    if (magnitude >= 1e6) return {1e6, "", " GWh"};
    if (magnitude >= 1e3) return {1e3, "", " MWh"};
    return {1, "", " kWh"};
  }
  if (unit.rfind("USD", 0) == 0) {
    if (magnitude >= 1e9) return {1e9, "$", "B"};
    if (magnitude >= 1e6) return {1e6, "$", "M"};
    if (magnitude >= 1e3) return {1e3, "$", "k"};
    return {1, "$", ""};
  }
  if (unit == "kg")
    return magnitude >= 1e3 ? DisplayUnit{1e3, "", " t"} : DisplayUnit{1, "", " kg"};
  if (unit == "fraction") return {0.01, "", "%"};
  if (unit == "h") {  // GPU-hours: "1.56M h", not mega-hours
    DisplayUnit d = si("", magnitude, false);
    d.suffix += " h";
    return d;
  }
  if (unit == "B" || unit == "J" || unit == "FLOP" || unit == "tokens/s" || unit == "samples/s")
    return si(unit, magnitude, true);
  DisplayUnit d;
  if (!unit.empty()) d.suffix = fmt::format(" {}", unit);
  return d;
}

std::string format_quantity(double value, std::string_view unit) {
  if (std::isnan(value)) return "nan";
  if (unit.empty()) {
    if (value == std::floor(value) && std::fabs(value) < 1e6) return format_number(value);
    const DisplayUnit d = si("", std::fabs(value), false);
    return fmt::format("{:.3g}{}", value / d.divisor, d.suffix);
  }
  const DisplayUnit d = display_unit(unit, value);
  const double v = value / d.divisor;
  // Past the largest unit (1,000s of years or tonnes), whole numbers rather than 1.2e+03.
  return std::fabs(v) >= 1000 ? fmt::format("{}{:.0f}{}", d.prefix, v, d.suffix)
                              : fmt::format("{}{:.3g}{}", d.prefix, v, d.suffix);
}

std::string format_duration(double seconds) { return format_quantity(seconds, "s"); }

std::string join_or(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += fmt::format("{}{}", i == 0 ? "" : i + 1 == names.size() ? " or " : ", ", names[i]);
  return out;
}

std::string wrap_words(std::string_view text, std::size_t width, std::string_view indent) {
  // Leading blanks are the first line's own indent.
  std::size_t start = std::min(text.find_first_not_of(' '), text.size());
  const std::string lead(text.substr(0, start));
  std::string out, line = lead;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) continue;
    const bool fresh = line == lead || line == indent;  // nothing but an indent yet
    if (!fresh && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = std::string(indent);
    } else if (!fresh) {
      line += ' ';
    }
    line += word;
  }
  return out + line;
}

std::string format_bytes(double bytes) {
  constexpr const char* kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (bytes >= 1000 && u < 5) {
    bytes /= 1000;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, kUnits[u]);
}

std::string format_clock(double seconds) {
  const auto s = static_cast<std::uint64_t>(seconds + 0.5);
  return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

}  // namespace clustersweep
