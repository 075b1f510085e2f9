#include "analysis/output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>
#include <ostream>

#include "analysis/dataset.h"
#include "analysis/svg.h"
#include "base/csv.h"
#include "base/error.h"
#include "base/files.h"

namespace clustersweep::analysis {
namespace {

bool looks_numeric(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end && *end == '\0';
}

}  // namespace

bool TextTable::align_right(std::size_t column, const std::string& cell) const {
  if (column < right.size()) return right[column] != 0;
  return align_numbers_right && looks_numeric(cell);
}

void TextTable::print(std::ostream& out) const {
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  const auto line = [&](const std::vector<std::string>& cells, bool is_header) {
    std::string text;
    for (std::size_t c = 0; c < cells.size() && c < width.size(); ++c) {
      if (c) text += "  ";
      const bool right = !is_header && align_right(c, cells[c]);
      text += right ? fmt::format("{:>{}}", cells[c], width[c])
                    : fmt::format("{:<{}}", cells[c], width[c]);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << '\n';
  };
  line(header, true);
  std::size_t total = 0;
  for (std::size_t w : width) total += w;
  out << std::string(total + 2 * (width.empty() ? 0 : width.size() - 1), '-') << '\n';
  for (const auto& row : rows) line(row, false);
}

std::string TextTable::html() const {
  std::string out = "<table>\n<tr>";
  for (const auto& h : header) out += "<th>" + xml_escape(h) + "</th>";
  out += "</tr>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c)
      out +=
          (align_right(c, row[c]) ? "<td class=\"num\">" : "<td>") + xml_escape(row[c]) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::vector<std::vector<double>> fetch_rows(const Dataset& data,
                                            const std::vector<std::uint64_t>& rows,
                                            const std::vector<std::string>& columns) {
  std::vector<std::vector<double>> out(columns.size(), std::vector<double>(rows.size()));
  if (rows.empty()) return out;
  std::vector<std::size_t> order(rows.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return rows[a] < rows[b]; });
  // Runs of rows less than `gap` apart are read in one call (one chunk of each column).
  constexpr std::uint64_t gap = 4096;
  for (std::size_t first = 0; first < order.size();) {
    std::size_t last = first;
    while (last + 1 < order.size() && rows[order[last + 1]] - rows[order[last]] < gap &&
           rows[order[last + 1]] - rows[order[first]] < kDefaultChunkRows)
      ++last;
    ScanOptions options;
    options.begin = rows[order[first]];
    options.end = rows[order[last]] + 1;
    options.chunk_rows = static_cast<std::size_t>(options.end - options.begin);
    Scan scan(data, columns, options);
    scan.next();
    for (std::size_t i = first; i <= last; ++i)
      for (std::size_t c = 0; c < columns.size(); ++c)
        out[c][order[i]] = scan[c][rows[order[i]] - options.begin];
    first = last + 1;
  }
  return out;
}

void write_csv(const std::string& path, const Dataset& data,
               const std::vector<std::string>& columns,
               const std::vector<std::vector<double>>& values,
               const std::vector<std::string>& extra_header,
               const std::vector<std::vector<std::string>>& extra) {
  std::string text;
  std::vector<std::string> header = extra_header;
  header.insert(header.end(), columns.begin(), columns.end());
  for (auto& h : header) h = csv_quote(h);
  text += fmt::format("{}\n", fmt::join(header, ","));
  const std::size_t n = values.empty() ? extra.size() : values.front().size();
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::string> cells;
    if (i < extra.size())
      for (const auto& e : extra[i]) cells.push_back(csv_quote(e));
    for (std::size_t c = 0; c < columns.size(); ++c) {
      cells.push_back(csv_quote(data.column(columns[c], "--csv").exact(values[c][i])));
    }
    text += fmt::format("{}\n", fmt::join(cells, ","));
  }
  write_file_atomically(path, text, "--csv");
}

std::string human(double value) {
  if (std::isnan(value)) return "nan";
  const double a = std::fabs(value);
  if (a != 0 && (a < 1e-3 || a >= 1e15)) return fmt::format("{:.3g}", value);
  static const char* const suffix[] = {"", "k", "M", "G", "T"};
  int s = 0;
  double v = value;
  while (std::fabs(v) >= 1000 && s < 4) {
    v /= 1000;
    ++s;
  }
  if (s == 0) return fmt::format("{:.4g}", v);
  return fmt::format("{:.3g}{}", v, suffix[s]);
}

}  // namespace clustersweep::analysis
