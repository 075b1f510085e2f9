#pragma once
// A netCDF-4 table for `clustersweep export -o FILE.nc`: an HDF5 file that xarray (h5netcdf and
// netcdf4 engines), netCDF tools and h5py read as one dimension (the first column, its own
// coordinate) with one variable per column, label columns as text. Written block by block into
// extensible, compressed datasets, so memory does not grow with the rows.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/schema.h"

namespace clustersweep::engine {

class TableWriter {
 public:
  // Creates (truncates) `path`: one variable per column, with its `units`; the root gets the
  // text `attributes`. Columns keep their stored types; label columns are written as UTF-8 text.
  TableWriter(const std::string& path, const std::vector<Column>& columns,
              const std::vector<std::pair<std::string, std::string>>& attributes);
  ~TableWriter();
  TableWriter(const TableWriter&) = delete;
  TableWriter& operator=(const TableWriter&) = delete;

  // Appends `rows` rows; values[c][i] is column c at row i (label columns: the label's index).
  void append(const std::vector<const double*>& values, std::size_t rows);
  // Flushes and closes; Error naming the file on failure.
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace clustersweep::engine
