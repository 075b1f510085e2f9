#pragma once
// Output helpers: aligned terminal tables, CSV files, and reading back chosen rows of a store.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace clustersweep::analysis {

class Dataset;

// A table printed with aligned columns; numbers right-aligned, text left-aligned.
struct TextTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  bool align_numbers_right = true;
  // Per column, 1 to align right, 0 left; when empty, cells that read as numbers go right.
  std::vector<char> right = {};
  // Tables, and the lines about them, fit terminals this wide.
  static constexpr std::size_t kWidth = 120;
  void print(std::ostream& out) const;
  std::string html() const;  // an HTML <table>
  bool align_right(std::size_t column, const std::string& cell) const;
};

// The values of `columns` at the store rows `rows` (any order), column-major:
// result[c][i] is column c at rows[i]. Reads runs of nearby rows at once.
std::vector<std::vector<double>> fetch_rows(const Dataset& data,
                                            const std::vector<std::uint64_t>& rows,
                                            const std::vector<std::string>& columns);

// Writes a CSV (header + one line per row; labels as text, numbers with 17 significant digits)
// to `path` through a temporary file, so an error never leaves half a file. Error naming --csv.
void write_csv(const std::string& path, const Dataset& data,
               const std::vector<std::string>& columns,
               const std::vector<std::vector<double>>& values,
               const std::vector<std::string>& extra_header = {},
               const std::vector<std::vector<std::string>>& extra = {});

// A compact human number: 3 significant digits with an SI-ish suffix for large counts.
std::string human(double value);

}  // namespace clustersweep::analysis
