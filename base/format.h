#pragma once
// How numbers read in every table, message and report: one function per kind of number.
#include <cstdint>
#include <string>

namespace clustersweep {

// 1234567 -> "1,234,567".
std::string with_commas(std::uint64_t n);
// An integral value without decimals ("8", "1536"), else the shortest form that reads back as
// the same double ("12.5", "0.1").
std::string format_number(double value);
// Seconds in the largest unit that keeps it readable: "45.2 s", "12 min", "3.1 h", "9.5 days",
// "2.1 years"; "nan" for NaN.
std::string format_duration(double seconds);
// Bytes in decimal units: "512 B", "1.5 GB", "2.2 TB".
std::string format_bytes(double bytes);
// H:MM:SS of a whole number of seconds.
std::string format_clock(double seconds);

}  // namespace clustersweep
