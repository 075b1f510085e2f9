#include "engine/store_reader.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.h"
#include "engine/chunks.h"
#include "engine/h5.h"
#include "engine/store_format.h"
#include "engine/store_writer.h"

namespace clustersweep::engine {

struct StoreReader::Impl {
  h5::File file;  // declared first: closes after the datasets
  Schema schema;
  std::vector<ColumnInfo> columns;
  std::vector<h5::Id> datasets;
  std::vector<h5::Id> mem_types;
  std::uint64_t rows = 0;
  StoreHeader header;
  RunStats stats;

  explicit Impl(const std::string& path) : file(format::open_store(path, /*writable=*/false)) {
    try {
      open(path);
    } catch (const h5::Failed& e) {
      format::rethrow_read_failure(path, e);
    }
  }

  void open(const std::string& path) {
    const hid_t root = file.get();
    header = read_header(root);
    stats = read_run_stats(root);
    if (header.staging) {
      // A staging file is STORE.partial; its run finishes STORE.
      const std::string suffix = ".partial";
      const bool partial = path.size() > suffix.size() && path.ends_with(suffix);
      throw InputError(fmt::format(
          "'{}' is the staging file of an unfinished run; finish it with 'clustersweep run {} -o "
          "{} --resume'",
          path, header.spec_file.empty() ? "SPEC" : header.spec_file,
          partial ? path.substr(0, path.size() - suffix.size()) : "STORE"));
    }
    schema = format::read_schema(root, path);
    for (const auto& c : schema.columns) {
      columns.push_back(ColumnInfo{c.name, c.unit, is_label(c.type), c.labels, c.role, c.type});
      datasets.push_back(h5::open_dataset(root, c.name, path));
      mem_types.push_back(format::memory_type(c, path));
    }
    const std::uint64_t extent = datasets.empty() ? 0 : h5::extent(datasets.front().get(), path);
    rows = stats.complete ? extent : committed_rows(path, extent);
  }

  // Label codes and booleans index tables (a label's name, true/false): a code outside them can
  // only come from damaged bytes, and is refused before anything uses it.
  template <class T>
  void check_codes(std::size_t c, const T* codes, std::uint64_t offset, std::uint64_t count) const {
    const Column& column = schema.columns[c];
    const std::uint64_t limit = column.type == ColumnType::boolean ? 2 : column.labels.size();
    for (std::uint64_t i = 0; i < count; ++i)
      if (static_cast<std::uint64_t>(codes[i]) >= limit)
        throw format::damaged(
            file.path(),
            fmt::format("the file is damaged: column '{}' holds the code {} at row {}, beyond "
                        "its {} {}",
                        column.name, static_cast<std::uint64_t>(codes[i]), offset + i, limit,
                        column.type == ColumnType::boolean ? "values" : "labels"));
  }

  // The rows of an unfinished keep = "all" store that are final: those of its leading done chunks.
  std::uint64_t committed_rows(const std::string& path, std::uint64_t extent) const {
    const hid_t root = file.get();
    spaces::Keep keep = spaces::Keep::all;
    if (!parse_keep(header.keep, keep)) return 0;
    const ChunkLayout layout =
        ChunkLayout::stored(header.design_begin, header.design_end, header.plan_points, keep,
                            header.designs_per_chunk, header.splits_per_design);
    h5::Id done_set = h5::open_dataset(root, "progress/chunk_done", path);
    const std::uint64_t chunks = h5::extent(done_set.get(), path);
    if (chunks != layout.chunks()) return 0;
    std::vector<std::uint8_t> done(chunks);
    h5::read(done_set.get(), H5T_NATIVE_UINT8, 0, chunks, done.data(), path);
    const auto first_open = std::find(done.begin(), done.end(), 0);
    if (first_open == done.end()) return extent;
    return std::min(extent,
                    layout.slot_offset(static_cast<std::uint64_t>(first_open - done.begin())));
  }

  std::size_t index(const std::string& name) const {
    const std::size_t i = schema.index(name);
    if (i != Schema::npos) return i;
    std::string names;
    for (const auto& c : columns) names += (names.empty() ? "" : ", ") + c.name;
    throw InputError(fmt::format("unknown column '{}'; columns are: {}", name, names));
  }

  void check_range(std::uint64_t offset, std::uint64_t count) const {
    if (offset > rows || count > rows - offset)
      throw Error(fmt::format("{}: rows [{}, {}) are outside the store's {} rows", file.path(),
                              offset, offset + count, rows));
  }
};

StoreReader::StoreReader(const std::string& path) : impl_(std::make_unique<Impl>(path)) {}
StoreReader::~StoreReader() = default;
StoreReader::StoreReader(StoreReader&&) noexcept = default;
StoreReader& StoreReader::operator=(StoreReader&&) noexcept = default;

const std::string& StoreReader::path() const noexcept { return impl_->file.path(); }
std::uint64_t StoreReader::rows() const noexcept { return impl_->rows; }
const std::vector<ColumnInfo>& StoreReader::columns() const noexcept { return impl_->columns; }
bool StoreReader::complete() const noexcept { return impl_->stats.complete; }
const StoreHeader& StoreReader::header() const noexcept { return impl_->header; }
const RunStats& StoreReader::run_stats() const noexcept { return impl_->stats; }
const Schema& StoreReader::schema() const noexcept { return impl_->schema; }

const ColumnInfo* StoreReader::find_column(const std::string& name) const noexcept {
  for (const auto& c : impl_->columns)
    if (c.name == name) return &c;
  return nullptr;
}

void StoreReader::read(const std::string& column, std::uint64_t offset, std::uint64_t count,
                       std::vector<double>& out) const {
  const Impl& m = *impl_;
  const std::size_t c = m.index(column);
  m.check_range(offset, count);
  out.resize(count);
  const hid_t dataset = m.datasets[c].get();
  const ColumnType type = m.schema.columns[c].type;
  try {
    if (type == ColumnType::f64) {
      h5::read(dataset, H5T_NATIVE_DOUBLE, offset, count, out.data(), m.file.path());
      return;
    }
    // Read in the column's own type and widened here: HDF5's conversion to double is several
    // times slower, and it converts no enum codes (labels, booleans).
    visit(type, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      thread_local std::vector<T> buffer;  // one per element type, kept across reads
      buffer.resize(count);
      T* values = buffer.data();
      h5::read(dataset, m.mem_types[c].get(), offset, count, values, m.file.path());
      if (is_label(type) || type == ColumnType::boolean) m.check_codes(c, values, offset, count);
      std::copy(values, values + count, out.begin());
    });
  } catch (const h5::Failed& e) {
    format::rethrow_read_failure(m.file.path(), e);
  }
}

void StoreReader::read_rows(std::uint64_t offset, std::uint64_t count, RowBlock& out) const {
  const Impl& m = *impl_;
  m.check_range(offset, count);
  out = RowBlock(m.schema);
  out.resize(count);
  try {
    for (std::size_t c = 0; c < m.datasets.size(); ++c) {
      h5::read(m.datasets[c].get(), m.mem_types[c].get(), offset, count, out.raw(c), m.file.path());
      const ColumnType type = m.schema.columns[c].type;
      if (is_label(type) || type == ColumnType::boolean)
        visit(type, [&](auto* tag) {
          m.check_codes(c, static_cast<const std::remove_pointer_t<decltype(tag)>*>(out.raw(c)),
                        offset, count);
        });
    }
  } catch (const h5::Failed& e) {
    format::rethrow_read_failure(m.file.path(), e);
  }
}

std::optional<std::string> StoreReader::string_attribute(const std::string& name) const {
  return h5::read_string_attribute(impl_->file.get(), name);
}

std::optional<double> StoreReader::number_attribute(const std::string& name) const {
  return h5::read_number_attribute(impl_->file.get(), name);
}

}  // namespace clustersweep::engine
