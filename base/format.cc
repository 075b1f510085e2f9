#include "base/format.h"

#include <fmt/format.h>

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

std::string format_duration(double seconds) {
  if (std::isnan(seconds)) return "nan";
  if (seconds >= 86400 * 365.25) return fmt::format("{:.3g} years", seconds / (86400 * 365.25));
  if (seconds >= 86400) return fmt::format("{:.3g} days", seconds / 86400);
  if (seconds >= 3600) return fmt::format("{:.3g} h", seconds / 3600);
  if (seconds >= 60) return fmt::format("{:.3g} min", seconds / 60);
  return fmt::format("{:.3g} s", seconds);
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
