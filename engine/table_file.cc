#include "engine/table_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "base/error.h"
#include "engine/h5.h"
#include "engine/store_format.h"

namespace clustersweep::engine {

namespace {

// Rows per HDF5 chunk: large enough that deflate works on whole pages of a column, small enough
// that an export of a few rows stays a few kB.
constexpr hsize_t kChunkRows = 1 << 16;

// Labels as fixed-length UTF-8 text as wide as the longest label: unlike variable-length strings
// (a heap entry per row) they compress to almost nothing.
h5::Id fixed_string_type(const std::vector<std::string>& labels, const std::string& context) {
  std::size_t width = 1;
  for (const auto& l : labels) width = std::max(width, l.size());
  h5::Id type = h5::datatype(H5Tcopy(H5T_C_S1), context);
  h5::check(H5Tset_size(type.get(), width), context, "cannot make a text type");
  h5::check(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), context, "cannot make a text type");
  h5::check(H5Tset_cset(type.get(), H5T_CSET_UTF8), context, "cannot make a text type");
  return type;
}

}  // namespace

struct TableWriter::Impl {
  // Declared first, destroyed last: the datasets close before the file.
  h5::File file;
  std::vector<Column> columns;
  std::vector<h5::Id> datasets, mem_types;
  std::uint64_t rows = 0;
  std::vector<unsigned char> buffer;
};

TableWriter::TableWriter(const std::string& path, const std::vector<Column>& columns,
                         const std::vector<std::pair<std::string, std::string>>& attributes)
    : impl_(std::make_unique<Impl>()) {
  impl_->file = h5::File::create(path);
  impl_->columns = columns;
  const hid_t root = impl_->file.get();
  for (const auto& [name, value] : attributes) h5::write_attribute(root, name, value, path);
  for (const auto& column : columns) {
    const std::string what = fmt::format("cannot create variable '{}'", column.name);
    const bool text = is_label(column.type);
    h5::Id type = text ? fixed_string_type(column.labels, path) : format::file_type(column, path);
    h5::Id mem = text ? fixed_string_type(column.labels, path) : format::memory_type(column, path);
    h5::Id dcpl = h5::property_list(H5P_DATASET_CREATE, path);
    const hsize_t chunk[1] = {kChunkRows};
    h5::check(H5Pset_chunk(dcpl.get(), 1, chunk), path, what.c_str());
    if (!text) h5::check(H5Pset_shuffle(dcpl.get()), path, what.c_str());
    h5::check(H5Pset_deflate(dcpl.get(), 1), path, what.c_str());
    const hsize_t size[1] = {0}, max[1] = {H5S_UNLIMITED};
    h5::Id space(h5::check(H5Screate_simple(1, size, max), path, what.c_str()), H5Sclose);
    h5::Id dataset(h5::check(H5Dcreate2(root, column.name.c_str(), type.get(), space.get(),
                                        H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                             path, what.c_str()),
                   H5Dclose);
    if (!column.unit.empty()) h5::write_attribute(dataset.get(), "units", column.unit, path);
    // xarray decodes fixed-length text marked with its encoding to str.
    if (text) h5::write_attribute(dataset.get(), "_Encoding", std::string("utf-8"), path);
    impl_->datasets.push_back(std::move(dataset));
    impl_->mem_types.push_back(std::move(mem));
  }
  if (!impl_->datasets.empty()) {
    std::vector<hid_t> attached;
    for (std::size_t i = 1; i < impl_->datasets.size(); ++i)
      attached.push_back(impl_->datasets[i].get());
    h5::attach_dimension(impl_->datasets.front().get(), columns.front().name, attached, path);
  }
}

TableWriter::~TableWriter() = default;

void TableWriter::append(const std::vector<const double*>& values, std::size_t rows) {
  if (rows == 0) return;
  Impl& m = *impl_;
  const std::string& path = m.file.path();
  const hsize_t extent[1] = {m.rows + rows};
  for (std::size_t c = 0; c < m.columns.size(); ++c) {
    const Column& column = m.columns[c];
    const hid_t dataset = m.datasets[c].get();
    h5::check(H5Dset_extent(dataset, extent), path, "cannot extend a variable");
    const double* v = values[c];
    const void* data = nullptr;
    if (is_label(column.type)) {
      const std::size_t width = H5Tget_size(m.mem_types[c].get());
      m.buffer.assign(rows * width, 0);
      for (std::size_t i = 0; i < rows; ++i) {
        const double code = v[i];
        if (code >= 0 && code < static_cast<double>(column.labels.size())) {
          const std::string& label = column.labels[static_cast<std::size_t>(code)];
          std::copy(label.begin(), label.end(), m.buffer.begin() + static_cast<long>(i * width));
        }
      }
      data = m.buffer.data();
    } else {
      visit(column.type, [&](auto* type) {
        using T = std::remove_pointer_t<decltype(type)>;
        m.buffer.resize(rows * sizeof(T));
        T* out = reinterpret_cast<T*>(m.buffer.data());
        for (std::size_t i = 0; i < rows; ++i) {
          if constexpr (std::is_floating_point_v<T>)
            out[i] = static_cast<T>(v[i]);
          else  // integral columns hold no NaN; 0 keeps the conversion defined if one did
            out[i] = std::isnan(v[i]) ? T{} : static_cast<T>(v[i]);
        }
      });
      data = m.buffer.data();
    }
    h5::write(dataset, m.mem_types[c].get(), m.rows, rows, data, path);
  }
  m.rows += rows;
}

void TableWriter::close() {
  impl_->datasets.clear();
  impl_->file.close();
}

}  // namespace clustersweep::engine
