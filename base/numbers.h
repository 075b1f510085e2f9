#pragma once
// The one way a number is read from text (a flag, a setting, a field of a time limit): all of the
// text, in decimal, within a stated range, and otherwise an error that quotes the text as given,
// "--ranks: expected a whole number from 1 to 4294967295, got '-1'".
//
// The read_* functions are pure: they return "" and set `value`, or return the problem without a
// name ("expected ..., got '...'") for the caller to prefix. The parse_* functions throw
// InputError "<name>: <problem>".
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace clustersweep {

// Degrees, layers and counts are ints in the estimator: past this they would wrap.
inline constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();

// "a whole number from 1 to 4294967295": how a message names a range of whole numbers.
std::string whole_range_text(std::int64_t min, std::int64_t max);
std::string whole_range_text(std::uint64_t min, std::uint64_t max);

// Whole numbers: decimal digits only (a leading '-' for the signed form), no '+', blank, point,
// exponent or anything after; from `min` to `max`, both included.
std::string read_uint64(std::string_view text, std::uint64_t min, std::uint64_t max,
                        std::uint64_t& value);
std::string read_int64(std::string_view text, std::int64_t min, std::int64_t max,
                       std::int64_t& value);
std::uint64_t parse_uint64(std::string_view name, std::string_view text, std::uint64_t min = 0,
                           std::uint64_t max = std::numeric_limits<std::uint64_t>::max());
std::int64_t parse_int64(std::string_view name, std::string_view text,
                         std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                         std::int64_t max = std::numeric_limits<std::int64_t>::max());

// Where a real number may lie: from `min` to `max`, either end open or unbounded (infinite);
// finite unless `infinity` (+inf) is allowed; never NaN.
struct RealDomain {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_open = false;
  bool max_open = false;
  bool infinity = false;

  static constexpr RealDomain at_least(double min) { return {min}; }
  static constexpr RealDomain above(double min) {
    return {min, std::numeric_limits<double>::infinity(), true};
  }
  static constexpr RealDomain between(double min, double max) { return {min, max}; }
  constexpr RealDomain or_infinity() const {
    RealDomain d = *this;
    d.infinity = true;
    return d;
  }
  bool contains(double value) const;
  // "a finite number >= 0", "a number > 0 or inf", "a number from 0 to 600".
  std::string text() const;
};

// A decimal real number ("2.5", "1e-3", ".5"; "inf" where the domain allows it): no '+', blank,
// hexadecimal or anything after; past the range of a double ("1e400") is refused, not rounded.
// -0 reads as 0.
std::string read_real(std::string_view text, const RealDomain& domain, double& value);
double parse_real(std::string_view name, std::string_view text, const RealDomain& domain);

// A yes/no setting as flags, files and CSV cells spell it: 1, true, yes, on or 0, false, no, off.
// false (and `value` untouched) for any other text.
bool read_boolean(std::string_view text, bool& value) noexcept;

}  // namespace clustersweep
