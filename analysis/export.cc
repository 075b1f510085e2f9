#include "analysis/export.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/csv.h"
#include "base/error.h"
#include "base/files.h"
#include "engine/table_file.h"

namespace clustersweep::analysis {

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// One exported column's value as text in each format: labels and booleans as what they name, NaN
// as an empty CSV cell and a JSON null.
struct TextColumn {
  const Column* column;
  std::string key;                  // JSON: "name":
  std::vector<std::string> labels;  // CSV: quoted label; JSON: string literal
};

std::vector<TextColumn> text_columns(const Dataset& data, const std::vector<std::string>& columns,
                                     ExportFormat format) {
  std::vector<TextColumn> out;
  for (const auto& name : columns) {
    TextColumn t{&data.column(name, "--columns"), nlohmann::json(name).dump() + ":", {}};
    for (const auto& label : t.column->labels)
      t.labels.push_back(format == ExportFormat::csv ? csv_quote(label)
                                                     : nlohmann::json(label).dump());
    out.push_back(std::move(t));
  }
  return out;
}

void append_value(std::string& out, const TextColumn& t, double v, ExportFormat format) {
  if (t.column->is_label && v >= 0 && v < static_cast<double>(t.labels.size())) {
    out += t.labels[static_cast<std::size_t>(v)];
  } else if (!std::isfinite(v) && format == ExportFormat::jsonl) {
    out += "null";
  } else {
    out += t.column->exact(v);
  }
}

}  // namespace

ExportFormat export_format(const std::string& path, const std::string& flag) {
  if (ends_with(path, ".csv")) return ExportFormat::csv;
  if (ends_with(path, ".jsonl") || ends_with(path, ".ndjson")) return ExportFormat::jsonl;
  if (ends_with(path, ".nc")) return ExportFormat::netcdf;
  throw InputError(fmt::format(
      "{}: cannot tell the format of '{}'; name the file .csv, .jsonl (JSON Lines) or .nc "
      "(netCDF-4)",
      flag, path));
}

std::uint64_t export_rows(const Dataset& data, std::vector<std::string> columns,
                          const ScanOptions& options, const std::string& path,
                          const std::vector<std::pair<std::string, std::string>>& attributes) {
  const ExportFormat format = export_format(path, "-o");
  for (const auto& name : columns) data.column(name, "--columns");
  columns.erase(std::remove(columns.begin(), columns.end(), "point_id"), columns.end());
  if (data.find("point_id")) columns.insert(columns.begin(), "point_id");
  if (columns.empty()) throw InputError("--columns: no column to export");

  AtomicFile file(path, "-o");
  std::unique_ptr<engine::TableWriter> table;
  if (format == ExportFormat::netcdf) {
    std::vector<engine::Column> schema;
    for (const auto& name : columns) {
      const Column& c = data.column(name, "--columns");
      schema.push_back(engine::Column{c.name, c.unit, "", c.type, c.labels, {}});
    }
    table = std::make_unique<engine::TableWriter>(file.temporary(), schema, attributes);
  }
  const auto text = text_columns(data, columns, format);
  if (format == ExportFormat::csv) {
    std::vector<std::string> header;
    for (const auto& name : columns) header.push_back(csv_quote(name));
    file.write(fmt::format("{}\n", fmt::join(header, ",")));
  }

  std::uint64_t written = 0;
  Scan scan(data, columns, options);
  std::vector<std::vector<double>> kept(columns.size());
  std::vector<const double*> pointers(columns.size());
  std::string out;
  while (scan.next()) {
    out.clear();
    for (auto& k : kept) k.clear();
    for (std::size_t i = 0; i < scan.size(); ++i) {
      if (!scan.keep(i)) continue;
      ++written;
      if (table) {
        for (std::size_t c = 0; c < columns.size(); ++c) kept[c].push_back(scan[c][i]);
        continue;
      }
      if (format == ExportFormat::jsonl) out += '{';
      for (std::size_t c = 0; c < columns.size(); ++c) {
        if (c) out += ',';
        if (format == ExportFormat::jsonl) out += text[c].key;
        append_value(out, text[c], scan[c][i], format);
      }
      out += format == ExportFormat::jsonl ? "}\n" : "\n";
      if (out.size() > (1 << 22)) {  // a few MB at a time, whatever the chunk
        file.write(out);
        out.clear();
      }
    }
    if (table) {
      for (std::size_t c = 0; c < columns.size(); ++c) pointers[c] = kept[c].data();
      table->append(pointers, kept.front().size());
    } else {
      file.write(out);
    }
  }
  if (table) table->close();
  file.commit();
  return written;
}

}  // namespace clustersweep::analysis
