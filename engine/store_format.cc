#include "engine/store_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "base/error.h"
#include "engine/store_writer.h"
#include "estimator/family.h"

namespace clustersweep::engine::format {

h5::File open_store(const std::string& path, bool writable) {
  h5::init();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    std::string hint;
    if (std::filesystem::exists(path + ".partial", ec))
      hint = fmt::format(
          " (an unfinished run left '{}.partial'; finish it with 'clustersweep run "
          "SPEC -o {} --resume')",
          path, path);
    throw InputError(fmt::format("cannot open store '{}': no such file{}", path, hint));
  }
  if (std::filesystem::is_directory(path, ec))
    throw InputError(fmt::format("cannot open store '{}': it is a directory", path));
  const htri_t hdf5 = H5Fis_hdf5(path.c_str());
  if (hdf5 < 0) {
    h5::error_stack();
    throw InputError(fmt::format("cannot open store '{}': the file is not readable", path));
  }
  if (hdf5 == 0)
    throw InputError(
        fmt::format("'{}' is not an HDF5 file (expected a clustersweep results store)", path));
  h5::File file = h5::File::open(path, writable);
  check_store(file.get(), path);
  return file;
}

void check_store(hid_t file, const std::string& path) {
  const auto name = h5::read_string_attribute(file, "format");
  if (!name || *name != kStoreFormat)
    throw InputError(fmt::format(
        "'{}' is an HDF5 file but not a clustersweep results store (no 'format' attribute "
        "\"{}\")",
        path, kStoreFormat));
  const auto version = h5::read_number_attribute(file, "format_version");
  if (!version || *version != static_cast<double>(kStoreFormatVersion))
    throw InputError(
        fmt::format("'{}' has store format version {}; this clustersweep reads version {} (use the "
                    "clustersweep that wrote it, or rerun the sweep)",
                    path, version ? fmt::format("{}", *version) : std::string("(missing)"),
                    kStoreFormatVersion));
  // A store without the attribute predates families: a transformer store.
  estimator::Family family;
  if (const auto name = h5::read_string_attribute(file, "family");
      name && !estimator::parse_family(*name, family))
    throw InputError(fmt::format(
        "'{}' holds results of the workload family '{}'; this clustersweep reads the families: {}",
        path, *name, estimator::family_names()));
}

Schema read_schema(hid_t file, const std::string& path) {
  const auto names = h5::read_strings_attribute(file, "columns");
  if (!names)
    throw InputError(
        fmt::format("'{}': damaged store: the root attribute 'columns' is missing", path));
  Schema schema;
  for (const auto& name : *names) {
    if (!h5::exists(file, name))
      throw InputError(fmt::format("'{}': damaged store: column '{}' is missing", path, name));
    h5::Id dataset = h5::open_dataset(file, name, path);
    h5::Id type = h5::datatype(H5Dget_type(dataset.get()), path);
    Column c;
    c.name = name;
    c.unit = h5::read_string_attribute(dataset.get(), "units").value_or("");
    c.role = h5::read_string_attribute(dataset.get(), "role").value_or("");
    const H5T_class_t cls = H5Tget_class(type.get());
    const std::size_t size = H5Tget_size(type.get());
    const bool is_unsigned = cls == H5T_INTEGER && H5Tget_sign(type.get()) == H5T_SGN_NONE;
    if (is_unsigned && size == 8) {
      c.type = ColumnType::u64;
    } else if (is_unsigned && size == 4) {
      c.type = ColumnType::u32;
    } else if (is_unsigned && size == 2) {
      c.type = ColumnType::u16;
    } else if (is_unsigned && size == 1) {
      c.type = ColumnType::u8;
    } else if (cls == H5T_INTEGER && size == 4 && H5Tget_sign(type.get()) == H5T_SGN_2) {
      c.type = ColumnType::i32;
    } else if (cls == H5T_FLOAT && size == 8) {
      c.type = ColumnType::f64;
    } else if (cls == H5T_FLOAT && size == 4) {
      c.type = ColumnType::f32;
    } else if (cls == H5T_ENUM) {
      const int members = H5Tget_nmembers(type.get());
      std::vector<std::string> labels(static_cast<std::size_t>(std::max(members, 0)));
      h5::Id native = h5::datatype(H5Tget_native_type(type.get(), H5T_DIR_ASCEND), path);
      for (int m = 0; m < members; ++m) {
        char* label = H5Tget_member_name(type.get(), static_cast<unsigned>(m));
        long long value = 0;
        // Member values come in the base type; read them as a wide integer.
        unsigned char raw[16] = {};
        H5Tget_member_value(type.get(), static_cast<unsigned>(m), raw);
        h5::Id base = h5::datatype(H5Tget_super(type.get()), path);
        H5Tconvert(base.get(), H5T_NATIVE_LLONG, 1, raw, nullptr, H5P_DEFAULT);
        std::memcpy(&value, raw, sizeof value);
        if (value < 0 || value >= members) {
          if (label) H5free_memory(label);
          throw InputError(
              fmt::format("'{}': column '{}': enum codes must be 0..{}", path, name, members - 1));
        }
        labels[static_cast<std::size_t>(value)] = label ? label : "";
        if (label) H5free_memory(label);
      }
      if (size == 1 && members == 2 && labels[0] == "FALSE" && labels[1] == "TRUE") {
        c.type = ColumnType::boolean;
      } else if (size == 1 || size == 2) {
        c.type = size == 1 ? ColumnType::label8 : ColumnType::label;
        c.labels = std::move(labels);
      } else {
        throw InputError(fmt::format("'{}': column '{}' has an unsupported enum type", path, name));
      }
    } else {
      throw InputError(fmt::format("'{}': column '{}' has an unsupported type", path, name));
    }
    schema.columns.push_back(std::move(c));
  }
  return schema;
}

namespace {
// The HDF5 type of a column in the file (explicit little-endian) or in memory (native).
h5::Id column_type(const Column& column, bool in_file, const std::string& context) {
  const auto pick = [&](hid_t file, hid_t native) {
    return h5::datatype(H5Tcopy(in_file ? file : native), context);
  };
  switch (column.type) {
    case ColumnType::u64:
      return pick(H5T_STD_U64LE, H5T_NATIVE_UINT64);
    case ColumnType::u32:
      return pick(H5T_STD_U32LE, H5T_NATIVE_UINT32);
    case ColumnType::u16:
      return pick(H5T_STD_U16LE, H5T_NATIVE_UINT16);
    case ColumnType::u8:
      return pick(H5T_STD_U8LE, H5T_NATIVE_UINT8);
    case ColumnType::i32:
      return pick(H5T_STD_I32LE, H5T_NATIVE_INT32);
    case ColumnType::f64:
      return pick(H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
    case ColumnType::f32:
      return pick(H5T_IEEE_F32LE, H5T_NATIVE_FLOAT);
    case ColumnType::boolean:
      return h5::bool_type(context);
    case ColumnType::label8:
    case ColumnType::label:
      return h5::enum_type(column.labels, context, column.type == ColumnType::label8);
  }
  throw Error("unknown column type");
}
}  // namespace

h5::Id file_type(const Column& column, const std::string& context) {
  return column_type(column, true, context);
}

h5::Id memory_type(const Column& column, const std::string& context) {
  return column_type(column, false, context);
}

}  // namespace clustersweep::engine::format
