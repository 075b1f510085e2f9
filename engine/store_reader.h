#pragma once
// Reads a results store (docs/store-format.md) in chunks, for analysis: memory never grows with
// the number of rows. Only engine/ touches HDF5; analysis/ sees plain vectors.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/schema.h"
#include "engine/store_header.h"

namespace clustersweep::engine {

struct ColumnInfo {
  std::string name;                 // e.g. "step_time_s", "gpu"
  std::string unit;                 // the dataset's "units" attribute ("" for counts/labels)
  bool is_label = false;            // stored as an index into `labels`
  std::vector<std::string> labels;  // for label columns (gpu, model, recompute, reason...)
  // The column's role, as engine::Column::role in schema.h: "id",
  // "design_axis", "plan_axis" or "metric"; "" when the store does not say (analysis then infers
  // it from the name).
  std::string role;
  ColumnType type = ColumnType::f64;  // how the store keeps it (labels: label8 or label)
};

class StoreReader {
 public:
  // Opens read-only (serial HDF5 access, no MPI needed). InputError with the path when the file
  // is missing, is not HDF5, is not a clustersweep store, or has an unsupported format version.
  explicit StoreReader(const std::string& path);
  ~StoreReader();
  StoreReader(StoreReader&&) noexcept;
  StoreReader& operator=(StoreReader&&) noexcept;

  const std::string& path() const noexcept;
  std::uint64_t rows() const noexcept;  // rows written and committed
  const std::vector<ColumnInfo>& columns() const noexcept;
  const ColumnInfo* find_column(const std::string& name) const noexcept;

  // Reads rows [offset, offset + count) of a column as doubles (label columns: the label index).
  // InputError "unknown column 'X'; columns are: ..." for a column the store lacks.
  void read(const std::string& column, std::uint64_t offset, std::uint64_t count,
            std::vector<double>& out) const;

  // Root attributes: "spec" (full spec text), "format_version", "tool_version", "git_revision",
  // pricing parameters ("pue", "usd_per_kwh", ...), "training_tokens", ...
  std::optional<std::string> string_attribute(const std::string& name) const;
  std::optional<double> number_attribute(const std::string& name) const;

  // The root attributes: what the run that created the store wrote, and what it recorded when it
  // finished (all defaults while it has not).
  const StoreHeader& header() const noexcept;
  const RunStats& run_stats() const noexcept;

  // True when the run that wrote the store finished; an unfinished keep = "all" run's store
  // (results.h5.partial) opens too, with rows() = the rows of its leading finished chunks.
  bool complete() const noexcept;
  // The columns with their storage types (what merge and compaction copy).
  const Schema& schema() const noexcept;
  // Rows [offset, offset + count) of every column, in their stored types, into `out` (resized).
  void read_rows(std::uint64_t offset, std::uint64_t count, RowBlock& out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace clustersweep::engine
