#pragma once
// `clustersweep export`: the rows of a store (all, or those a filter keeps) with labels as text and
// the priced columns, streamed chunk by chunk into CSV, JSON Lines or a netCDF-4 file.
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/dataset.h"

namespace clustersweep::analysis {

enum class ExportFormat { csv, jsonl, netcdf };

// The format named by the file's extension: .csv, .jsonl (or .ndjson), .nc; InputError naming
// `flag` and the valid extensions otherwise.
ExportFormat export_format(const std::string& path, const std::string& flag);

// Writes the rows `options` keeps, `columns` in order (point_id is put first when missing: it is
// the netCDF dimension and the key that joins an export back to its store), to `path` through a
// temporary file renamed at the end. `attributes` become the netCDF file's global attributes (the
// other formats have none). Returns the rows written.
std::uint64_t export_rows(const Dataset& data, std::vector<std::string> columns,
                          const ScanOptions& options, const std::string& path,
                          const std::vector<std::pair<std::string, std::string>>& attributes);

}  // namespace clustersweep::analysis
