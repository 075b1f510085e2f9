#include "engine/store_writer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <type_traits>

#include "base/error.h"
#include "engine/h5.h"
#include "engine/store_format.h"

namespace clustersweep::engine {

namespace {

// A small dataset written at once with default (late, filled) allocation: axis tables and the
// progress marks' initial zeros.
void write_table(hid_t parent, const std::string& name, hid_t file_type, hid_t mem_type,
                 std::uint64_t size, const void* data, const std::string& context) {
  h5::Id space = h5::dataspace_1d(size, context);
  h5::Id dataset(h5::check(H5Dcreate2(parent, name.c_str(), file_type, space.get(), H5P_DEFAULT,
                                      H5P_DEFAULT, H5P_DEFAULT),
                           context, fmt::format("cannot create dataset '{}'", name).c_str()),
                 H5Dclose);
  if (size)
    h5::check(H5Dwrite(dataset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), context,
              fmt::format("cannot write dataset '{}'", name).c_str());
}

void write_axes(hid_t root, const std::vector<spaces::Axis>& axes, const std::string& context) {
  h5::Id group = h5::create_group(root, "axes", context);
  for (const auto& axis : axes) {
    if (axis.is_label) {
      h5::Id type = h5::string_type(context);
      std::vector<const char*> texts;
      for (const auto& l : axis.labels) texts.push_back(l.c_str());
      write_table(group.get(), axis.name, type.get(), type.get(), texts.size(), texts.data(),
                  context);
    } else {
      write_table(group.get(), axis.name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, axis.numbers.size(),
                  axis.numbers.data(), context);
    }
    h5::Id table = h5::open_dataset(group.get(), axis.name, context);
    h5::write_attribute(table.get(), "units", axis.unit, context);
    h5::write_attribute(table.get(), "role",
                        std::string(axis.is_plan ? "plan_axis" : "design_axis"), context);
    // Each value table is its own dimension (a netCDF coordinate variable).
    h5::attach_dimension(table.get(), axis.name, {}, context);
  }
}

// CF-1.8 flags on a label column, so that netCDF tools that read no HDF5 enum (xarray's h5netcdf
// engine shows the codes) can name the codes: flag_values 0..n-1 and flag_meanings, the labels
// separated by blanks (a blank inside a label becomes '_').
void write_flags(hid_t dataset, const Column& column, const std::string& context) {
  std::string meanings;
  for (const auto& label : column.labels) {
    if (!meanings.empty()) meanings += ' ';
    for (char c : label) meanings += c == ' ' ? '_' : c;
  }
  h5::write_attribute(dataset, "flag_meanings", meanings, context);
  if (column.type == ColumnType::label8) {
    std::vector<std::uint8_t> codes(column.labels.size());
    for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<std::uint8_t>(i);
    h5::write_attribute(dataset, "flag_values", codes, context);
  } else {
    std::vector<std::uint16_t> codes(column.labels.size());
    for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<std::uint16_t>(i);
    h5::write_attribute(dataset, "flag_values", codes, context);
  }
}

}  // namespace

namespace {

void fill_file(h5::File& file, const std::string& path, const StoreHeader& header) {
  const hid_t root = file.get();
  // Fixed-size attributes that finalize_store() overwrites in place: written now, same types.
  RunStats unfinished;
  unfinished.mpi_size = header.mpi_size;
  write_header(root, header, unfinished, path);
  std::vector<h5::Id> datasets;
  for (const auto& column : header.schema.columns) {
    h5::Id type = format::file_type(column, path);
    // A constant column is its fill value, never written: no room in the file, and every reader
    // reads the value in every row.
    h5::Id mem_type = format::memory_type(column, path);
    std::uint64_t value = 0;  // room for any column type's value
    if (column.constant)
      visit(column.type, [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        static_assert(sizeof(T) <= sizeof value);
        const auto v = static_cast<T>(*column.constant);
        std::memcpy(&value, &v, sizeof v);
      });
    const h5::Fill fill{mem_type.get(), &value};
    // A staging file is written a chunk at a time by independent ranks: never compressed.
    h5::Id dataset =
        h5::create_dataset(root, column.name, type.get(), header.rows, path,
                           format::column_filters(header.staging ? "none" : header.compression),
                           column.constant ? &fill : nullptr);
    h5::write_attribute(dataset.get(), "units", column.unit, path);
    h5::write_attribute(dataset.get(), "role", column.role, path);
    if (is_label(column.type)) write_flags(dataset.get(), column, path);
    datasets.push_back(std::move(dataset));
  }
  // Every column lies on one dimension, point_id (its own coordinate), so netCDF-4 readers see
  // the store as one table.
  if (!datasets.empty()) {
    std::vector<hid_t> attached;
    for (std::size_t i = 1; i < datasets.size(); ++i) attached.push_back(datasets[i].get());
    h5::attach_dimension(datasets.front().get(), header.schema.columns.front().name, attached,
                         path);
  }
  datasets.clear();
  write_axes(root, header.axes, path);
  h5::Id progress = h5::create_group(root, "progress", path);
  const std::vector<std::uint8_t> done(header.chunks, 0);
  const std::vector<std::uint64_t> rows(header.chunks, 0);
  write_table(progress.get(), "chunk_done", H5T_STD_U8LE, H5T_NATIVE_UINT8, done.size(),
              done.data(), path);
  write_table(progress.get(), "chunk_rows", H5T_STD_U64LE, H5T_NATIVE_UINT64, rows.size(),
              rows.data(), path);
  {
    h5::Id done_set = h5::open_dataset(progress.get(), "chunk_done", path);
    h5::Id rows_set = h5::open_dataset(progress.get(), "chunk_rows", path);
    h5::attach_dimension(done_set.get(), "chunk_done", {rows_set.get()}, path);
  }
  progress.reset();
  file.close();
  // A store whose every row gets written (not the staging file of a filtered run, whose unused
  // slots stay holes) gets its blocks reserved now: the rank writes then skip the file system's
  // block allocation (about 8% of a keep = "all" run), and a full disk shows here, before any
  // work. A compressed store allocates its chunks as they are written: nothing to reserve. Linux
  // fallocate() does not emulate itself by writing zeros where unsupported; then nothing changes.
  if (header.keep == "all" && (header.staging || header.compression == "none")) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) throw Error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
    const off_t size = ::lseek(fd, 0, SEEK_END);
    const int failed = size > 0 ? ::fallocate(fd, 0, 0, size) : 0;
    const int error = errno;
    ::close(fd);
    if (failed && (error == ENOSPC || error == EDQUOT || error == EFBIG))
      throw h5::Failed(
          fmt::format("cannot reserve {} bytes for '{}': {}", size, path, std::strerror(error)),
          h5::Failure{std::strerror(error), error, false});
  }
}

}  // namespace

void create_store(const std::string& path, const StoreHeader& header) {
  h5::File file = h5::File::create(path);
  try {
    fill_file(file, path, header);
  } catch (...) {
    // Whatever failed, the file is no store: it goes, rather than a sparse file of the store's
    // full size staying behind. Closed first (HDF5 may fail to, see h5::lost_file()).
    file = h5::File();
    ::unlink(path.c_str());
    throw;
  }
}

void finalize_store(const std::string& path, const RunStats& stats) {
  h5::File file = format::open_store(path, /*writable=*/true);
  const hid_t root = file.get();
  RunStats finished = stats;
  finished.complete = true;
  write_run_stats(root, finished, path);
  file.close();
}

struct StoreWriter::Impl {
  // Declared first, destroyed last: the datasets close before the file.
  h5::File file;
  Schema schema;
  std::uint64_t rows = 0;
  std::vector<h5::Id> datasets;
  std::vector<h5::Id> mem_types;
  h5::Id chunk_done;
  h5::Id chunk_rows;
  std::uint64_t chunks = 0;
  bool collective = false;  // compressed columns in a file opened on MPI ranks

  Impl(h5::File f, bool parallel) : file(std::move(f)) {
    const std::string& path = file.path();
    format::check_store(file.get(), path);
    schema = format::read_schema(file.get(), path);
    for (const auto& c : schema.columns) {
      datasets.push_back(h5::open_dataset(file.get(), c.name, path));
      mem_types.push_back(format::memory_type(c, path));
    }
    rows = datasets.empty() ? 0 : h5::extent(datasets.front().get(), path);
    collective = parallel && !datasets.empty() && h5::is_filtered(datasets.front().get(), path);
    chunk_done = h5::open_dataset(file.get(), "progress/chunk_done", path);
    chunk_rows = h5::open_dataset(file.get(), "progress/chunk_rows", path);
    chunks = h5::extent(chunk_done.get(), path);
  }

  void close() {
    chunk_rows.reset();
    chunk_done.reset();
    datasets.clear();
    file.close();
  }
};

StoreWriter::StoreWriter() = default;
StoreWriter::~StoreWriter() = default;
StoreWriter::StoreWriter(StoreWriter&&) noexcept = default;
StoreWriter& StoreWriter::operator=(StoreWriter&&) noexcept = default;

StoreWriter StoreWriter::open(const std::string& path) {
  StoreWriter w;
  w.impl_ = std::make_unique<Impl>(format::open_store(path, /*writable=*/true), false);
  return w;
}

StoreWriter StoreWriter::open(const std::string& path, const mpi::Comm& comm) {
  StoreWriter w;
  w.impl_ = std::make_unique<Impl>(h5::File::open_parallel(path, comm, /*writable=*/true), true);
  return w;
}

const std::string& StoreWriter::path() const noexcept { return impl_->file.path(); }
const Schema& StoreWriter::schema() const noexcept { return impl_->schema; }
std::uint64_t StoreWriter::rows() const noexcept { return impl_->rows; }

void StoreWriter::write(std::uint64_t offset, const RowBlock& block, std::size_t first,
                        std::size_t count) {
  Impl& m = *impl_;
  if (block.columns() != m.schema.columns.size())
    throw Error(fmt::format("{}: a block of {} columns for a store of {}", m.file.path(),
                            block.columns(), m.schema.columns.size()));
  if (first + count > block.rows() || offset + count > m.rows)
    throw Error(fmt::format("{}: rows [{}, {}) are outside the store's {} rows", m.file.path(),
                            offset, offset + count, m.rows));
  for (std::size_t c = 0; c < m.datasets.size(); ++c) {
    if (block.type(c) != m.schema.columns[c].type)
      throw Error(fmt::format("{}: column '{}' has another type in the block", m.file.path(),
                              m.schema.columns[c].name));
    if (m.schema.columns[c].constant) continue;  // its fill value
    const auto* base = static_cast<const unsigned char*>(block.raw(c));
    const std::size_t element = H5Tget_size(m.mem_types[c].get());
    h5::write(m.datasets[c].get(), m.mem_types[c].get(), offset, count, base + first * element,
              m.file.path(), m.collective);
  }
}

void StoreWriter::write_progress(std::uint64_t first, const std::vector<std::uint8_t>& done,
                                 const std::vector<std::uint64_t>& rows) {
  Impl& m = *impl_;
  if (done.size() != rows.size() || first + done.size() > m.chunks)
    throw Error(
        fmt::format("{}: progress marks outside the store's {} chunks", m.file.path(), m.chunks));
  h5::write(m.chunk_rows.get(), H5T_NATIVE_UINT64, first, rows.size(), rows.data(), m.file.path());
  h5::write(m.chunk_done.get(), H5T_NATIVE_UINT8, first, done.size(), done.data(), m.file.path());
}

void StoreWriter::close() {
  if (impl_) impl_->close();
}

Progress read_progress(const std::string& path) {
  h5::File file = format::open_store(path, /*writable=*/false);
  try {
    h5::Id done = h5::open_dataset(file.get(), "progress/chunk_done", path);
    h5::Id rows = h5::open_dataset(file.get(), "progress/chunk_rows", path);
    Progress p;
    const std::uint64_t chunks = h5::extent(done.get(), path);
    if (h5::extent(rows.get(), path) != chunks)
      throw format::damaged(path, "its progress marks disagree on the number of chunks");
    p.done.resize(chunks);
    p.rows.resize(chunks);
    h5::read(done.get(), H5T_NATIVE_UINT8, 0, chunks, p.done.data(), path);
    h5::read(rows.get(), H5T_NATIVE_UINT64, 0, chunks, p.rows.data(), path);
    return p;
  } catch (const h5::Failed& e) {
    format::rethrow_read_failure(path, e);
  }
}

}  // namespace clustersweep::engine
