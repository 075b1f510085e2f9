#pragma once
// How numbers read in every table, message and report: one function per kind of number.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace clustersweep {

// 1234567 -> "1,234,567".
std::string with_commas(std::uint64_t n);
// An integral value without decimals ("8", "1536"), else the shortest form that reads back as
// the same double ("12.5", "0.1").
std::string format_number(double value);
// How values of a stored unit read at a magnitude: value / divisor, between prefix and suffix.
// "s" -> s, min, h, days, years; "kWh" -> kWh, MWh, GWh; "USD" -> $, $k, $M, $B; "kg" -> kg, t;
// "fraction" -> %; "B" -> B, kB, MB, GB, TB; "J", "FLOP", "h", "tokens/s"... -> SI prefixes.
struct DisplayUnit {
  double divisor = 1;
  std::string prefix, suffix;  // "$" and "M"; "" and " days"
  // The unit as an axis or column label names it: "$M", "days", "MWh", "%".
  std::string name() const;
};
DisplayUnit display_unit(std::string_view unit, double magnitude);

// The one way a measured value reads in tables, reports and charts: 3 significant digits in the
// display_unit() of its own magnitude ("141 days", "569 MWh", "$1.14M", "56.3%", "171 GB");
// integers of a unitless column as they are ("4096"); "nan" for NaN.
std::string format_quantity(double value, std::string_view unit);

// Seconds in the largest unit that keeps it readable: "45.2 s", "12 min", "3.1 h", "9.5 days",
// "2.1 years"; "nan" for NaN (format_quantity(seconds, "s")).
std::string format_duration(double seconds);
// Bytes in decimal units: "512 B", "1.5 GB", "2.2 TB".
std::string format_bytes(double bytes);
// H:MM:SS of a whole number of seconds.
std::string format_clock(double seconds);

// "a", "a or b", "a, b or c": a choice of names in words.
std::string join_or(const std::vector<std::string>& names);

// `text` broken at blanks into lines of at most `width` characters (a longer word stays whole),
// the first line keeping the text's leading blanks, every other one starting with `indent`.
std::string wrap_words(std::string_view text, std::size_t width, std::string_view indent);

}  // namespace clustersweep
