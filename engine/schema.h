#pragma once
// The columns of a results store (docs/store-format.md) and a block of rows in memory, one typed
// array per column. No HDF5 here: the store writer and reader map these types to HDF5 types.
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace clustersweep::spaces {
class Space;
}

namespace clustersweep::engine {

enum class ColumnType : std::uint8_t {
  u64,      // point and design ids
  i32,      // integral axes and counts (tp, num_nodes, num_gpus)
  f64,      // measurements and non-integral axes
  f32,      // the step-time breakdown (attribution needs no more than 7 digits; 4 bytes a row less)
  boolean,  // feasible: HDF5 enum int8 {FALSE, TRUE}, which h5py reads as numpy bool
  label,    // HDF5 enum uint16 {label0 = 0, label1 = 1, ...}: gpu, model, infeasible_reason...
};

struct Column {
  std::string name;
  std::string unit;  // the dataset's "units" attribute ("" for ids, counts, labels)
  std::string role;  // "id", "design_axis", "plan_axis", "metric"
  ColumnType type = ColumnType::f64;
  std::vector<std::string> labels;  // label columns: the names of codes 0..n-1
};

struct Schema {
  std::vector<Column> columns;
  // Index of the column named `name`, or npos.
  std::size_t index(const std::string& name) const noexcept;
  std::size_t row_bytes() const noexcept;  // bytes of one row on disk
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
};

// The store's columns for a space: point_id, design_id, one column per axis (Space::axes()
// order), dp, then the feasibility and estimator columns (docs/store-format.md lists them).
Schema make_schema(const spaces::Space& space);

// Rows of a Schema, column-major: one typed array per column.
class RowBlock {
 public:
  using Data =
      std::variant<std::vector<std::uint64_t>, std::vector<std::int32_t>, std::vector<double>,
                   std::vector<std::uint8_t>, std::vector<std::uint16_t>, std::vector<float>>;

  RowBlock() = default;
  explicit RowBlock(const Schema& schema);

  std::size_t rows() const noexcept { return rows_; }
  std::size_t columns() const noexcept { return data_.size(); }
  ColumnType type(std::size_t column) const noexcept { return types_[column]; }
  // Sets the number of rows; never shrinks the arrays, so a block reused for chunk after chunk
  // allocates (and zero-fills) only while it grows.
  void resize(std::size_t rows);
  void clear() noexcept { rows_ = 0; }
  std::size_t capacity() const noexcept { return capacity_; }

  // The typed array of a column; T must match its ColumnType (u64: uint64_t, i32: int32_t,
  // f64: double, f32: float, boolean: uint8_t, label: uint16_t).
  template <class T>
  T* column(std::size_t c) noexcept {
    return std::get<std::vector<T>>(data_[c]).data();
  }
  template <class T>
  const T* column(std::size_t c) const noexcept {
    return std::get<std::vector<T>>(data_[c]).data();
  }
  const void* raw(std::size_t c) const noexcept;
  void* raw(std::size_t c) noexcept;
  double number(std::size_t c, std::size_t row) const noexcept;  // any type, as a double

  // Appends row `row` of `other` (same schema).
  void append(const RowBlock& other, std::size_t row);

 private:
  std::vector<ColumnType> types_;
  std::vector<Data> data_;
  std::size_t rows_ = 0;
  std::size_t capacity_ = 0;  // elements of every array
};

}  // namespace clustersweep::engine
