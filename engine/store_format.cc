#include "engine/store_format.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>

#include "base/error.h"
#include "engine/store_header.h"
#include "estimator/family.h"

namespace clustersweep::engine::format {

namespace {

// The first bytes of every HDF5 file (its superblock signature).
constexpr char kSignature[] = "\x89HDF\r\n\x1a\n";
constexpr std::size_t kSignatureBytes = 8;
// Reading a store's metadata takes milliseconds; a damaged one can make HDF5 loop for ever.
constexpr unsigned kProbeSeconds = 30;

std::string file_error(const std::string& path, int error) {
  return fmt::format("cannot open store '{}': {}", path, std::strerror(error));
}

// What the file system says about `path` before HDF5 reads it: there, a file, readable, not empty,
// longer than the signature it starts with.
void check_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    const int error = errno;
    if (error != ENOENT) throw InputError(file_error(path, error));
    std::string hint;
    if (struct stat partial{}; ::stat((path + ".partial").c_str(), &partial) == 0)
      hint = fmt::format(
          " (an unfinished run left '{}.partial'; finish it with 'clustersweep run "
          "SPEC -o {} --resume')",
          path, path);
    throw InputError(fmt::format("cannot open store '{}': no such file{}", path, hint));
  }
  if (S_ISDIR(info.st_mode))
    throw InputError(fmt::format("cannot open store '{}': it is a directory", path));
  if (!S_ISREG(info.st_mode))
    throw InputError(
        fmt::format("'{}' is not an HDF5 file (expected a clustersweep results store)", path));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(file_error(path, errno));
  char head[kSignatureBytes] = {};
  const ssize_t got = ::pread(fd, head, sizeof head, 0);
  const int error = errno;
  ::close(fd);
  if (got < 0) throw Error(fmt::format("cannot read store '{}': {}", path, std::strerror(error)));
  if (info.st_size == 0) throw damaged(path, "the file is empty");
  // HDF5 does not recognise a file cut inside its signature; it is still a cut store.
  if (static_cast<std::size_t>(got) < kSignatureBytes &&
      std::memcmp(head, kSignature, static_cast<std::size_t>(got)) == 0)
    throw damaged(path, fmt::format("the file is truncated: only {} bytes", got));
}

// Opens the store as StoreReader does and reads every piece of metadata that the engine and the
// analysis commands read: its root attributes, its columns' types, lengths and attributes, and its
// progress marks.
void read_all_metadata(const std::string& path) {
  h5::File file = h5::File::open(path, false);
  check_store(file.get(), path);
  read_header(file.get());
  read_run_stats(file.get());
  read_schema(file.get(), path);
  h5::Id done = h5::open_dataset(file.get(), "progress/chunk_done", path);
  h5::Id rows = h5::open_dataset(file.get(), "progress/chunk_rows", path);
  const std::uint64_t chunks = h5::extent(done.get(), path);
  std::vector<std::uint8_t> marks(chunks);
  std::vector<std::uint64_t> counts(chunks);
  h5::read(done.get(), H5T_NATIVE_UINT8, 0, chunks, marks.data(), path);
  h5::read(rows.get(), H5T_NATIVE_UINT64, 0, chunks, counts.data(), path);
}

// HDF5 1.10 checks little of a file's metadata (the 1.8-compatible format has no checksums): some
// damage makes it report an error, but some makes it crash or loop for ever. So a store is first
// read by a child process; if that child dies or hangs, the store is damaged. A child that fails
// with an error changes nothing: the caller meets the same error and reports it. Each version of
// a file (device, inode, size, modification time) is probed once per process.
void probe_store(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return;
  using Key = std::tuple<dev_t, ino_t, off_t, time_t, long>;
  static std::mutex mutex;
  static std::set<Key> probed;
  const Key key{info.st_dev, info.st_ino, info.st_size, info.st_mtim.tv_sec, info.st_mtim.tv_nsec};
  {
    const std::lock_guard lock(mutex);
    if (probed.count(key)) return;
  }
  const pid_t child = ::fork();
  if (child < 0) return;  // no probe, no harm: the store is read as before
  if (child == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
    }
    ::signal(SIGALRM, SIG_DFL);
    ::alarm(kProbeSeconds);
    int code = 0;
    try {
      read_all_metadata(path);
    } catch (...) {
      code = 1;
    }
    ::_exit(code);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return;  // e.g. SIGCHLD ignored: nothing to learn
  }
  if (WIFSIGNALED(status)) {
    switch (WTERMSIG(status)) {
      case SIGALRM:
        throw damaged(path, fmt::format("the file is damaged: HDF5 did not finish reading its "
                                        "metadata in {} s",
                                        kProbeSeconds));
      case SIGSEGV:
      case SIGBUS:
      case SIGABRT:
      case SIGFPE:
      case SIGILL:
        throw damaged(path, "the file is damaged: HDF5 crashed reading its metadata");
      default:
        return;  // stopped from outside (SIGKILL, SIGTERM...): it says nothing about the file
    }
  }
  const std::lock_guard lock(mutex);
  probed.insert(key);
}

// How messages name an HDF5 type that the format does not give a column.
std::string type_name(hid_t type) {
  const std::size_t bits = H5Tget_size(type) * 8;
  switch (H5Tget_class(type)) {
    case H5T_INTEGER:
      return fmt::format("{}int{}", H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "", bits);
    case H5T_FLOAT:
      return fmt::format("float{}", bits);
    case H5T_STRING:
      return "text";
    case H5T_ENUM:
      return fmt::format("an enum of {} bits", bits);
    case H5T_COMPOUND:
      return "a compound type";
    case H5T_ARRAY:
      return "an array type";
    default:
      return "an unsupported type";
  }
}

const char* type_name(ColumnType type) {
  switch (type) {
    case ColumnType::u64:
      return "uint64";
    case ColumnType::u32:
      return "uint32";
    case ColumnType::u16:
      return "uint16";
    case ColumnType::u8:
      return "uint8";
    case ColumnType::i32:
      return "int32";
    case ColumnType::f64:
      return "float64";
    case ColumnType::f32:
      return "float32";
    case ColumnType::boolean:
      return "bool";
    case ColumnType::label8:
    case ColumnType::label:
      return "labels";
  }
  return "?";
}

// The types the format gives a column of this name in a store of `family`, when it fixes them (an
// axis column's type depends on the values the spec gives it).
std::vector<ColumnType> fixed_types(const std::string& name, estimator::Family family) {
  if (name == "point_id") return {ColumnType::u64, ColumnType::u32};
  if (name == "design_id") return {ColumnType::u32, ColumnType::u64};
  if (name == "feasible") return {ColumnType::boolean};
  if (name == "infeasible_reason") return {ColumnType::label8, ColumnType::label};
  // Version 3 stored some of today's float32 metrics as float64.
  const auto find = [&](const auto& table) -> std::vector<ColumnType> {
    for (const auto& m : table)
      if (name == m.name)
        return m.type == ColumnType::f64 ? std::vector{m.type}
                                         : std::vector{m.type, ColumnType::f64};
    return {};
  };
  switch (family) {
    case estimator::Family::transformer:
      return find(kTransformerMetrics);
    case estimator::Family::dlrm:
      return find(kDlrmMetrics);
  }
  return {};
}

// A column's type as stored, or nullopt when the format has no such type (`why` says what it is).
std::optional<Column> column_of(hid_t dataset, const std::string& name, const std::string& path,
                                std::string& why) {
  h5::Id type = h5::datatype(H5Dget_type(dataset), path);
  Column c;
  c.name = name;
  c.unit = h5::read_string_attribute(dataset, "units").value_or("");
  c.role = h5::read_string_attribute(dataset, "role").value_or("");
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
  } else if (cls == H5T_ENUM && (size == 1 || size == 2)) {
    const int members = H5Tget_nmembers(type.get());
    std::vector<std::string> labels(static_cast<std::size_t>(std::max(members, 0)));
    h5::Id base = h5::datatype(H5Tget_super(type.get()), path);
    for (int m = 0; m < members; ++m) {
      char* label = H5Tget_member_name(type.get(), static_cast<unsigned>(m));
      // Member values come in the base type; read them as a wide integer.
      unsigned char raw[16] = {};
      long long value = -1;
      if (H5Tget_member_value(type.get(), static_cast<unsigned>(m), raw) >= 0 &&
          H5Tconvert(base.get(), H5T_NATIVE_LLONG, 1, raw, nullptr, H5P_DEFAULT) >= 0)
        std::memcpy(&value, raw, sizeof value);
      const std::string text = label ? label : "";
      if (label) H5free_memory(label);
      if (value < 0 || value >= members) {
        H5Eclear2(H5E_DEFAULT);
        why = fmt::format("its enum codes are not 0 to {}", members - 1);
        return std::nullopt;
      }
      labels[static_cast<std::size_t>(value)] = text;
    }
    if (size == 1 && members == 2 && labels[0] == "FALSE" && labels[1] == "TRUE") {
      c.type = ColumnType::boolean;
    } else {
      c.type = size == 1 ? ColumnType::label8 : ColumnType::label;
      c.labels = std::move(labels);
    }
  } else {
    why = fmt::format("it holds {}", type_name(type.get()));
    return std::nullopt;
  }
  return c;
}

Schema read_columns(hid_t file, const std::string& path) {
  const auto names = h5::read_strings_attribute(file, "columns");
  if (!names) throw damaged(path, "its root attribute 'columns' is missing or unreadable");
  estimator::Family family = estimator::Family::transformer;
  if (const auto text = h5::read_string_attribute(file, "family"))
    estimator::parse_family(*text, family);
  const auto stored_rows = h5::read_number_attribute(file, "rows");
  std::optional<std::uint64_t> rows;
  if (stored_rows && *stored_rows >= 0) rows = static_cast<std::uint64_t>(*stored_rows);
  Schema schema;
  for (const auto& name : *names) {
    const std::string shown = h5::printable(name);
    if (!h5::exists(file, name)) throw damaged(path, fmt::format("column '{}' is missing", shown));
    h5::Id dataset = h5::open_dataset(file, name, path);
    std::string why;
    auto column = column_of(dataset.get(), name, path, why);
    if (!column)
      throw damaged(path, fmt::format("column '{}' is of no store type: {}", shown, why));
    const auto allowed = fixed_types(name, family);
    if (!allowed.empty() &&
        std::find(allowed.begin(), allowed.end(), column->type) == allowed.end()) {
      std::string expected;
      for (auto t : allowed)
        expected += fmt::format("{}{}", expected.empty() ? "" : " or ", type_name(t));
      throw damaged(path, fmt::format("column '{}' holds {}, not {}", shown,
                                      type_name(column->type), expected));
    }
    h5::Id space(H5Dget_space(dataset.get()), H5Sclose);
    if (!space.valid() || H5Sget_simple_extent_ndims(space.get()) != 1)
      throw damaged(path, fmt::format("column '{}' is not a 1-D array", shown));
    const std::uint64_t length = h5::extent(dataset.get(), path);
    if (!rows) rows = length;
    if (length != *rows)
      throw damaged(path,
                    fmt::format("column '{}' has {} rows, the store {}", shown, length, *rows));
    // A constant column (Column::constant) is the one with a fill value of its own.
    h5::Id mem_type = memory_type(*column, path);
    visit(column->type, [&](auto* tag) {
      std::remove_pointer_t<decltype(tag)> value{};
      if (h5::fill_value(dataset.get(), mem_type.get(), &value, path))
        column->constant = static_cast<double>(value);
    });
    schema.columns.push_back(std::move(*column));
  }
  // Rows are identified by it (merge orders and counts them by it).
  if (schema.index("point_id") == Schema::npos) throw damaged(path, "it has no column 'point_id'");
  return schema;
}

}  // namespace

InputError damaged(const std::string& path, const std::string& why) {
  return InputError(fmt::format(
      "'{}' is not a complete clustersweep store ({}); copy it again, or rerun its sweep with "
      "--force",
      path, why));
}

void rethrow_read_failure(const std::string& path, const h5::Failed& failed) {
  const h5::Failure& f = failed.failure();
  if (f.truncated) throw damaged(path, f.text);
  if (h5::is_path_error(f.os_error)) throw InputError(file_error(path, f.os_error));
  if (f.os_error) throw Error(fmt::format("cannot read store '{}': {}", path, f.text));
  throw damaged(path, "the file is damaged: " + f.text);
}

h5::File open_store(const std::string& path, bool writable) {
  h5::init();
  check_file(path);
  const htri_t hdf5 = H5Fis_hdf5(path.c_str());
  if (hdf5 < 0) rethrow_read_failure(path, h5::Failed(path, h5::take_failure()));
  if (hdf5 == 0)
    throw InputError(
        fmt::format("'{}' is not an HDF5 file (expected a clustersweep results store)", path));
  probe_store(path);
  try {
    h5::File file = h5::File::open(path, writable);
    check_store(file.get(), path);
    read_schema(file.get(), path);
    return file;
  } catch (const h5::Failed& e) {
    rethrow_read_failure(path, e);
  }
}

void check_store(hid_t file, const std::string& path) {
  try {
    const auto name = h5::read_string_attribute(file, "format");
    if (!name || *name != kStoreFormat)
      throw InputError(fmt::format(
          "'{}' is an HDF5 file but not a clustersweep results store (no 'format' attribute "
          "\"{}\")",
          path, kStoreFormat));
    const auto version = h5::read_number_attribute(file, "format_version");
    if (!version || *version < static_cast<double>(kOldestReadableFormatVersion) ||
        *version > static_cast<double>(kStoreFormatVersion))
      throw InputError(fmt::format(
          "'{}' has store format version {}; this clustersweep reads versions {} to {} (use the "
          "clustersweep that wrote it, or rerun the sweep)",
          path, version ? fmt::format("{}", *version) : std::string("(missing)"),
          kOldestReadableFormatVersion, kStoreFormatVersion));
    // A store without the attribute predates families: a transformer store.
    estimator::Family family;
    const auto name_of_family = h5::read_string_attribute(file, "family");
    // A run always names it; an empty name is what a damaged string heap reads as.
    if (name_of_family && name_of_family->empty())
      throw damaged(path, "its root attribute 'family' is empty");
    if (const auto& name = name_of_family; name && !estimator::parse_family(*name, family))
      throw InputError(
          fmt::format("'{}' holds results of the workload family '{}'; this clustersweep reads the "
                      "families: {}",
                      path, h5::printable(*name), estimator::family_names()));
    // The resume state: every store has it (merge and compaction write it as done).
    for (const char* marks : {"progress/chunk_done", "progress/chunk_rows"})
      if (!h5::exists(file, "progress") || !h5::exists(file, marks))
        throw damaged(path, fmt::format("its progress marks '/{}' are missing", marks));
  } catch (const h5::Failed& e) {
    rethrow_read_failure(path, e);
  }
}

Schema read_schema(hid_t file, const std::string& path) {
  try {
    return read_columns(file, path);
  } catch (const h5::Failed& e) {
    rethrow_read_failure(path, e);
  }
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

h5::Filters column_filters(const std::string& compression) {
  h5::Filters f;
  if (compression == "none") return f;
  // Byte shuffle, then deflate: a sweep's columns repeat their values in long runs (axes, NaN
  // metrics of removed points), and the shuffle lines up the bytes of near numbers. "fast" is the
  // cheapest deflate; "small" deflate 6 (level 9 took 7x as long for 2% less on stress-10m, and
  // HDF5's integer scale-offset before the shuffle made the store larger, not smaller).
  f.chunk_rows = kCompressedChunkRows;
  f.shuffle = true;
  f.deflate = compression == "small" ? 6 : 1;
  return f;
}

h5::Id file_type(const Column& column, const std::string& context) {
  return column_type(column, true, context);
}

h5::Id memory_type(const Column& column, const std::string& context) {
  return column_type(column, false, context);
}

}  // namespace clustersweep::engine::format
