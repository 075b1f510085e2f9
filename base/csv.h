#pragma once
// CSV as RFC 4180 writes it: the one reader and writer of every CSV file clustersweep touches.
#include <string>
#include <string_view>
#include <vector>

namespace clustersweep {

// The fields of one record (quoted fields may hold commas and doubled quotes; a trailing '\r' is
// dropped). Records span one line: no field of our formats holds a newline.
std::vector<std::string> split_csv_record(std::string_view line);
// `field` quoted when it holds a comma, a quote or a newline.
std::string csv_quote(std::string_view field);

}  // namespace clustersweep
