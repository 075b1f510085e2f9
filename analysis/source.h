#pragma once
// Where analysis reads columns from: a results store (through engine::StoreReader) or, in tests and
// benchmarks, a table in memory. Both are read in row ranges, so nothing above this interface
// holds more than one chunk of a column at a time.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/store_reader.h"

namespace clustersweep::analysis {

using engine::ColumnInfo;

class ColumnSource {
 public:
  virtual ~ColumnSource() = default;
  virtual const std::string& path() const = 0;  // for messages
  virtual std::uint64_t rows() const = 0;
  virtual const std::vector<ColumnInfo>& columns() const = 0;
  // Rows [offset, offset + count) of a column, as doubles (label columns: the label index).
  virtual void read(const std::string& column, std::uint64_t offset, std::uint64_t count,
                    std::vector<double>& out) const = 0;
  virtual std::optional<std::string> string_attribute(const std::string& name) const = 0;
  virtual std::optional<double> number_attribute(const std::string& name) const = 0;
};

// A column table held in memory.
class MemoryTable : public ColumnSource {
 public:
  explicit MemoryTable(std::string path = "<memory>") : path_(std::move(path)) {}

  // Adds a numeric column, or a label column when `labels` is not empty (values are indices).
  // All columns must have the same length.
  void add(ColumnInfo info, std::vector<double> values);
  void set_attribute(const std::string& name, double value) { numbers_[name] = value; }
  void set_attribute(const std::string& name, std::string value) {
    strings_[name] = std::move(value);
  }

  const std::string& path() const override { return path_; }
  std::uint64_t rows() const override { return rows_; }
  const std::vector<ColumnInfo>& columns() const override { return infos_; }
  void read(const std::string& column, std::uint64_t offset, std::uint64_t count,
            std::vector<double>& out) const override;
  std::optional<std::string> string_attribute(const std::string& name) const override;
  std::optional<double> number_attribute(const std::string& name) const override;

 private:
  std::string path_;
  std::uint64_t rows_ = 0;
  std::vector<ColumnInfo> infos_;
  std::vector<std::vector<double>> values_;
  std::map<std::string, double> numbers_;
  std::map<std::string, std::string> strings_;
};

// Rows generated on the fly (for benchmarks): point_id, feasible (all 1) and `objectives` columns
// obj0, obj1, ... of independent uniform values in (0, 1), a pure function of (row, column). Holds
// no rows in memory.
class SyntheticTable : public ColumnSource {
 public:
  SyntheticTable(std::uint64_t rows, std::size_t objectives);

  const std::string& path() const override { return path_; }
  std::uint64_t rows() const override { return rows_; }
  const std::vector<ColumnInfo>& columns() const override { return infos_; }
  void read(const std::string& column, std::uint64_t offset, std::uint64_t count,
            std::vector<double>& out) const override;
  std::optional<std::string> string_attribute(const std::string&) const override {
    return std::nullopt;
  }
  std::optional<double> number_attribute(const std::string&) const override { return std::nullopt; }

 private:
  std::string path_ = "<synthetic>";
  std::uint64_t rows_;
  std::vector<ColumnInfo> infos_;
};

// A results store on disk, through the engine's reader (the only code that touches HDF5).
class StoreSource : public ColumnSource {
 public:
  explicit StoreSource(const std::string& path);

  const std::string& path() const override;
  std::uint64_t rows() const override;
  const std::vector<ColumnInfo>& columns() const override;
  void read(const std::string& column, std::uint64_t offset, std::uint64_t count,
            std::vector<double>& out) const override;
  std::optional<std::string> string_attribute(const std::string& name) const override;
  std::optional<double> number_attribute(const std::string& name) const override;

 private:
  engine::StoreReader reader_;
};

}  // namespace clustersweep::analysis
