#pragma once
// A table of points, one row a point and one column an axis named as the store's column ("tp",
// "gpu", "num_gpus"...): the candidate list a user evaluates without writing a spec (Python's
// `estimate_many`, docs/python.md). It becomes the space whose axes hold the table's distinct
// values, so that every row is one point of it and passes the same rules, defaults and estimator
// as a point of a sweep.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "spaces/space.h"

namespace clustersweep::spaces {

// One column: its distinct values, in first-seen order, and each row's index into them.
struct TableColumn {
  std::string name;
  bool is_label = false;
  std::vector<double> numbers;         // numeric columns
  std::vector<std::string> labels;     // label columns
  std::vector<std::uint32_t> codes;    // per row; empty when every row has the one value
  std::vector<std::size_t> first_row;  // per distinct value: the first row that has it

  std::size_t size() const noexcept { return is_label ? labels.size() : numbers.size(); }
  std::uint32_t code(std::size_t row) const noexcept { return codes.empty() ? 0 : codes[row]; }
  // A numeric column of `rows` values (one value: every row's); InputError naming the row on NaN.
  static TableColumn from_numbers(std::string name, const double* values, std::size_t rows);
  static TableColumn from_numbers(std::string name, const std::int64_t* values, std::size_t rows);
  // A label column from codes into `categories` (-1: missing, an InputError naming the row); one
  // code: every row's.
  static TableColumn from_codes(std::string name, std::vector<std::string> categories,
                                const std::int64_t* codes, std::size_t rows);
};

struct PointTable {
  std::size_t rows = 0;
  std::vector<TableColumn> columns;
};

// The table's distinct values span more points than a 64-bit point id numbers: the caller may
// split the rows and evaluate the parts.
class TableTooLarge : public InputError {
 public:
  using InputError::InputError;
};

// The table's space: every column an axis of the family of its `model` column (a recommendation
// model's, or a transformer's). `spec_text` (of the file `spec_name`) gives what the table does
// not: the training target, pricing, reliability, calibration, constraints and any axis of one
// value; empty for the defaults. The rows keep the `columns` of the store. The rows keep the
// `columns` of the store. A stack setting that neither gives takes each row's framework's default.
// Errors name the column and the first row with the bad value ("row 3, column 'tp': must be a
// positive integer, got 0"), an unknown column with the closest axis names, an axis the spec sweeps
// that no column gives. TableTooLarge when the distinct values span more than 2^62 points.
struct TableSpace {
  Space space;
  PointTable table;                 // the table with the stack columns the frameworks imply
  std::vector<int> axis_of_column;  // per column of `table`
};
// `columns` is the TOML value of the store's `[output] columns`: "summary" (keep = "all"'s
// default), "all" or a list of names.
TableSpace table_space(PointTable table, std::string_view spec_text, std::string_view spec_name,
                       std::string_view columns = "\"summary\"");

// Each row's design (Space::design()'s index) and, per axis, the rows' value indices into the
// space's axis (null for an axis of one value: index 0 on every row).
struct TableDigits {
  std::vector<std::uint64_t> design;
  std::vector<const std::uint32_t*> axis;
};
TableDigits table_digits(const TableSpace& ts);

}  // namespace clustersweep::spaces
