#pragma once
// The columns analysis works with: those stored in a results store plus the priced columns derived
// on the fly (energy_kwh, cost_usd, co2e_kg, gpu_hours), and a chunked scan over them with an
// optional --where filter. Memory is bounded by the chunk size, never by the number of rows.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/source.h"
#include "spaces/space.h"

namespace clustersweep::analysis {

// Re-pricing parameters (docs/analysis.md): the spec's pricing with its formula. The store's root
// attributes give the spec's values; command-line flags override them; missing ones keep the
// defaults of spaces::Pricing.
using Pricing = spaces::Pricing;
using spaces::stored_pricing;

enum class Role : std::uint8_t {
  id,           // point_id
  design_axis,  // a swept cluster/workload axis: one value set = one cluster configuration
  plan_axis,    // a swept parallel-plan axis (tp, pp, ...), plus the derived dp
  metric,       // an estimator output stored per point
  priced,       // derived here from stored metrics and the Pricing
};

struct Column {
  std::string name;
  std::string unit;
  bool is_label = false;
  std::vector<std::string> labels;
  Role role = Role::metric;
  engine::ColumnType type = engine::ColumnType::f64;  // as stored (priced columns: f64)

  bool is_axis() const noexcept { return role == Role::design_axis || role == Role::plan_axis; }
  // A value as text: the label for label columns, a compact number otherwise.
  std::string format(double value) const;
  // A value as tables, reports and charts show it: the label for labels, an axis value as a
  // number, a measured value in readable units (format_quantity: "141 days", "$1.14M", "56.3%").
  std::string display(double value) const;
  // The column's name in table headings: short where the name is long ("net Gb/s" for
  // inter_node_gbps_per_gpu, "mb" for micro_batch, "time to train" for time_to_train_s),
  // with ", electricity only" for a cost without a GPU price. legend() lists the short ones.
  std::string heading() const;
  // A value as exact text for files (CSV, JSON Lines): the label for label columns, true/false
  // for booleans, "" for NaN, integers without a decimal point, other numbers in the shortest form
  // that reads back as the same double.
  std::string exact(double value) const;
};

// "mb = micro_batch, sp = sequence_parallel" for the columns whose heading is not their name
// (empty when none): what a table prints under itself so that its headings can be typed back as
// --by, --where or --columns names.
std::string legend(const std::vector<const Column*>& columns);

// Whether `name` is one of the priced columns (energy_kwh, co2e_kg, gpu_hours, cost_usd).
bool is_priced_column(std::string_view name);

// The role of a stored column, from its name (docs/analysis.md lists the names).
Role classify_column(std::string_view name);

class Dataset {
 public:
  Dataset(const ColumnSource& source, Pricing pricing);

  const ColumnSource& source() const noexcept { return *source_; }
  const Pricing& pricing() const noexcept { return pricing_; }
  std::uint64_t rows() const noexcept { return source_->rows(); }
  const std::vector<Column>& columns() const noexcept { return columns_; }
  std::vector<const Column*> axes() const;

  // Every column's name, stored then priced, point_id first: what a row of a CSV or JSON holds.
  std::vector<std::string> column_names() const;
  // "a,b,c" as column names; InputError "<what>: unknown column ..." as column() for a bad one.
  std::vector<std::string> column_list(std::string_view text, std::string_view what) const;

  const Column* find(std::string_view name) const noexcept;
  // The column or InputError "<what>: unknown column 'X'; did you mean 'Y'?", or, for a column
  // the store's sweep did not keep (`[output] columns`), "<what>: column 'X' was not kept ...".
  const Column& column(std::string_view name, std::string_view what) const;
  // Why `name` is missing when the sweep left it (or a column a priced one needs) out; else none.
  std::optional<std::string> not_kept(std::string_view name) const;

 private:
  const ColumnSource* source_;
  Pricing pricing_;
  std::vector<Column> columns_;
};

class Filter;

inline constexpr std::size_t kDefaultChunkRows = 1 << 18;

struct ScanOptions {
  const Filter* where = nullptr;
  bool feasible_only = false;  // also drop rows whose `feasible` column is 0
  std::uint64_t begin = 0;     // row range [begin, end); end = 0 means all rows
  std::uint64_t end = 0;
  std::size_t chunk_rows = kDefaultChunkRows;
};

// Reads `columns` chunk by chunk:
//   Scan scan(data, {"time_to_train_s", "cost_usd"}, options);
//   while (scan.next()) for (size_t i = 0; i < scan.size(); ++i) if (scan.keep(i)) use(scan[0][i]);
class Scan {
 public:
  Scan(const Dataset& data, const std::vector<std::string>& columns, ScanOptions options = {});
  ~Scan();

  bool next();
  std::uint64_t offset() const noexcept { return offset_; }  // store row of the chunk's row 0
  std::size_t size() const noexcept { return size_; }
  const double* operator[](std::size_t column) const noexcept { return wanted_[column]; }
  bool keep(std::size_t row) const noexcept { return keep_[row] != 0; }

 private:
  void load(std::size_t index);
  std::vector<double>& buffer(const std::string& name);

  const Dataset& data_;
  ScanOptions options_;
  std::vector<std::string> names_;            // every column materialized per chunk
  std::vector<std::vector<double>> buffers_;  // aligned with names_
  std::vector<std::size_t> wanted_index_;     // requested column -> index into names_
  std::vector<const double*> wanted_;
  std::vector<std::size_t> filter_index_;  // filter column -> index into names_
  std::vector<std::uint8_t> keep_;
  std::uint64_t next_ = 0;
  std::uint64_t end_ = 0;
  std::uint64_t offset_ = 0;
  std::size_t size_ = 0;
};

}  // namespace clustersweep::analysis
