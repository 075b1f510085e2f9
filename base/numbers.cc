#include "base/numbers.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "base/error.h"
#include "base/format.h"

namespace clustersweep {
namespace {

// All of `text` as a T in decimal. from_chars takes no blank and no '+', and a '-' only for a
// signed T, which is what a flag may hold: a sign that wraps ("-1" as 2^64 - 1) cannot get in.
template <class T>
bool whole_from_chars(std::string_view text, T& value) {
  const char* end = text.data() + text.size();
  const auto [at, error] = std::from_chars(text.data(), end, value);
  return !text.empty() && error == std::errc() && at == end;
}

template <class T>
std::string read_whole(std::string_view text, T min, T max, T& value) {
  T read = 0;
  if (!whole_from_chars(text, read) || read < min || read > max)
    return fmt::format("expected {}, got '{}'", whole_range_text(min, max), text);
  value = read;
  return "";
}

}  // namespace

std::string whole_range_text(std::int64_t min, std::int64_t max) {
  return fmt::format("a whole number from {} to {}", min, max);
}

std::string whole_range_text(std::uint64_t min, std::uint64_t max) {
  return fmt::format("a whole number from {} to {}", min, max);
}

std::string read_uint64(std::string_view text, std::uint64_t min, std::uint64_t max,
                        std::uint64_t& value) {
  return read_whole(text, min, max, value);
}

std::string read_int64(std::string_view text, std::int64_t min, std::int64_t max,
                       std::int64_t& value) {
  return read_whole(text, min, max, value);
}

std::uint64_t parse_uint64(std::string_view name, std::string_view text, std::uint64_t min,
                           std::uint64_t max) {
  std::uint64_t value = 0;
  if (auto problem = read_uint64(text, min, max, value); !problem.empty())
    throw InputError(fmt::format("{}: {}", name, problem));
  return value;
}

std::int64_t parse_int64(std::string_view name, std::string_view text, std::int64_t min,
                         std::int64_t max) {
  std::int64_t value = 0;
  if (auto problem = read_int64(text, min, max, value); !problem.empty())
    throw InputError(fmt::format("{}: {}", name, problem));
  return value;
}

bool RealDomain::contains(double value) const {
  if (std::isnan(value) || (std::isinf(value) && !infinity)) return false;
  const bool above_min = min_open ? value > min : value >= min;
  const bool below_max = max_open ? value < max : value <= max;
  return above_min && below_max;
}

std::string RealDomain::text() const {
  const bool has_min = std::isfinite(min), has_max = std::isfinite(max);
  const std::string lower = fmt::format("{} {}", min_open ? ">" : ">=", format_number(min));
  const std::string upper = fmt::format("{} {}", max_open ? "<" : "<=", format_number(max));
  if (has_min && has_max)
    return !min_open && !max_open
               ? fmt::format("a number from {} to {}", format_number(min), format_number(max))
               : fmt::format("a number {} and {}", lower, upper);
  // An unbounded end is where an infinity would otherwise pass: say whether it may.
  const std::string bound = has_min ? " " + lower : has_max ? " " + upper : "";
  if (infinity) return fmt::format("a number{}{}", bound, has_max ? "" : " or inf");
  return fmt::format("a finite number{}", bound);
}

std::string read_real(std::string_view text, const RealDomain& domain, double& value) {
  const char* end = text.data() + text.size();
  double read = 0;
  // The general format is decimal (fixed or with an exponent), "inf" and "nan"; no hexadecimal.
  // Out of a double's range is an error (result_out_of_range), not a rounded infinity or zero.
  const auto [at, error] = std::from_chars(text.data(), end, read, std::chars_format::general);
  if (text.empty() || error != std::errc() || at != end || !domain.contains(read))
    return fmt::format("expected {}, got '{}'", domain.text(), text);
  value = read + 0.0;  // -0 reads as 0
  return "";
}

double parse_real(std::string_view name, std::string_view text, const RealDomain& domain) {
  double value = 0;
  if (auto problem = read_real(text, domain, value); !problem.empty())
    throw InputError(fmt::format("{}: {}", name, problem));
  return value;
}

bool read_boolean(std::string_view text, bool& value) noexcept {
  if (text == "1" || text == "true" || text == "yes" || text == "on") {
    value = true;
    return true;
  }
  if (text == "0" || text == "false" || text == "no" || text == "off") {
    value = false;
    return true;
  }
  return false;
}

}  // namespace clustersweep
