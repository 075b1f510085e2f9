#include "engine/h5.h"

#include <fmt/format.h>
#include <hdf5_hl.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <tuple>
#include <utility>

namespace clustersweep::engine::h5 {

namespace {

bool g_lost_file = false;

}  // namespace

void init() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Only before the library starts (after, it fails and changes nothing): HDF5 then never
    // shuts itself down at exit, where a file it failed to close would crash it.
    H5dont_atexit();
    H5open();
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  });
}

bool lost_file() noexcept { return g_lost_file; }

void shutdown() noexcept {
  if (!g_lost_file) H5close();
}

namespace {

struct Entry {
  hid_t minor = H5I_INVALID_HID;
  std::string description;
};

herr_t collect(unsigned, const H5E_error2_t* error, void* out) {
  // Walking upward, the first entry is where HDF5 detected the failure: the most specific one.
  static_cast<std::vector<Entry>*>(out)->push_back(
      Entry{error->min_num, error->desc ? error->desc : ""});
  return 0;
}

// The number after `key` in `text` ("errno = 28, ..."), if any.
std::optional<unsigned long long> number_after(const std::string& text, const char* key) {
  const auto at = text.find(key);
  if (at == std::string::npos) return std::nullopt;
  const char* begin = text.c_str() + at + std::strlen(key);
  char* end = nullptr;
  const unsigned long long value = std::strtoull(begin, &end, 10);
  if (end == begin) return std::nullopt;
  return value;
}

// MPI-IO reports the error class of a failed file operation as text ("MPI_ERR_NO_SPACE: ..."):
// the errno it stands for, so that both drivers explain a failure with the same words.
int errno_of_mpi_error(const std::string& text) {
  static constexpr std::pair<const char*, int> kClasses[] = {
      {"MPI_ERR_NO_SUCH_FILE", ENOENT},
      {"MPI_ERR_ACCESS", EACCES},
      {"MPI_ERR_READ_ONLY", EROFS},
      {"MPI_ERR_NO_SPACE", ENOSPC},
      {"MPI_ERR_QUOTA", EDQUOT},
      {"MPI_ERR_FILE_EXISTS", EEXIST},
      {"MPI_ERR_IO", EIO},
  };
  for (const auto& [name, error] : kClasses)
    if (text.rfind(name, 0) == 0 &&
        (text.size() == std::strlen(name) || text[std::strlen(name)] == ':'))
      return error;
  return 0;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      out += c < 0x20 || c == 0x7f ? ' ' : static_cast<char>(c);
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence stays; any other byte becomes '?'.
    const std::size_t length = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    bool ok = length > 0 && c < 0xf5 && i + length <= text.size();
    for (std::size_t k = 1; ok && k < length; ++k)
      ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (ok) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

Failure take_failure() {
  std::vector<Entry> entries;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect, &entries);
  H5Eclear2(H5E_DEFAULT);
  Failure f;
  for (const auto& e : entries) {
    // The file drivers append the system's errno to their messages (sec2: "..., errno = 28,
    // error message = '...', ..."); MPI-IO pushes its error class as a message of its own.
    if (const auto error = number_after(e.description, "errno = "); error && *error > 0) {
      f.os_error = static_cast<int>(*error);
      break;
    }
    if (e.minor == H5E_MPIERRSTR) {
      f.os_error = errno_of_mpi_error(e.description);
      if (!f.os_error) {
        const auto colon = e.description.find(": ");
        f.text =
            printable(colon == std::string::npos ? e.description : e.description.substr(colon + 2));
      }
      break;
    }
  }
  if (f.os_error) {
    f.text = std::strerror(f.os_error);
    return f;
  }
  if (!f.text.empty()) return f;
  for (const auto& e : entries) {
    // "truncated file: eof = 1000, sblock->base_addr = 0, stored_eof = 30296032"
    if (e.description.rfind("truncated file", 0) != 0) continue;
    const auto eof = number_after(e.description, "eof = ");
    const auto stored = number_after(e.description, "stored_eof = ");
    f.truncated = true;
    f.text = eof && stored ? fmt::format("the file is truncated: {} of {} bytes", *eof, *stored)
                           : std::string("the file is truncated");
    return f;
  }
  if (!entries.empty() && !entries.front().description.empty())
    f.text = printable(entries.front().description);
  if (f.text == "file signature not found") f.text = "not an HDF5 file";
  if (f.text.empty()) f.text = "unknown HDF5 error";
  return f;
}

bool is_path_error(int os_error) noexcept {
  switch (os_error) {
    case ENOENT:
    case ENOTDIR:
    case EISDIR:
    case EACCES:
    case EPERM:
    case EROFS:
    case ENAMETOOLONG:
    case ELOOP:
    case EEXIST:
      return true;
    default:
      return false;
  }
}

std::int64_t check(std::int64_t status, const std::string& context, const char* what) {
  if (status >= 0) return status;
  Failure failure = take_failure();
  const std::string message = fmt::format("{}: {}: {}", context, what, failure.text);
  throw Failed(message, std::move(failure));
}

Id& Id::operator=(Id&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = other.id_;
    closer_ = other.closer_;
    other.id_ = H5I_INVALID_HID;
  }
  return *this;
}

bool Id::reset() noexcept {
  if (id_ < 0) return true;
  const herr_t status = closer_(id_);
  id_ = H5I_INVALID_HID;
  if (status < 0) {
    if (closer_ == &H5Fclose) g_lost_file = true;
    H5Eclear2(H5E_DEFAULT);
  }
  return status >= 0;
}

Id property_list(hid_t cls, const std::string& context) {
  init();
  return Id(check(H5Pcreate(cls), context, "cannot create a property list"), H5Pclose);
}

Id datatype(hid_t id, const std::string& context) {
  return Id(check(id, context, "cannot create a datatype"), H5Tclose);
}

Id dataspace_1d(std::uint64_t size, const std::string& context) {
  const hsize_t dims[1] = {size};
  return Id(check(H5Screate_simple(1, dims, nullptr), context, "cannot create a dataspace"),
            H5Sclose);
}

Id scalar_dataspace(const std::string& context) {
  return Id(check(H5Screate(H5S_SCALAR), context, "cannot create a dataspace"), H5Sclose);
}

Id string_type(const std::string& context) {
  Id type = datatype(H5Tcopy(H5T_C_S1), context);
  check(H5Tset_size(type.get(), H5T_VARIABLE), context, "cannot make a string type");
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), context, "cannot make a string type");
  return type;
}

Id enum_type(const std::vector<std::string>& labels, const std::string& context, bool one_byte) {
  Id type = datatype(H5Tenum_create(one_byte ? H5T_NATIVE_UINT8 : H5T_NATIVE_UINT16), context);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::uint16_t value16 = static_cast<std::uint16_t>(i);
    const std::uint8_t value8 = static_cast<std::uint8_t>(i);
    check(H5Tenum_insert(type.get(), labels[i].c_str(),
                         one_byte ? static_cast<const void*>(&value8) : &value16),
          context, "cannot add a label to an enum type");
  }
  return type;
}

Id bool_type(const std::string& context) {
  Id type = datatype(H5Tenum_create(H5T_NATIVE_INT8), context);
  const std::int8_t no = 0, yes = 1;
  check(H5Tenum_insert(type.get(), "FALSE", &no), context, "cannot make the bool type");
  check(H5Tenum_insert(type.get(), "TRUE", &yes), context, "cannot make the bool type");
  return type;
}

namespace {

// A file HDF5 could not create or open: bad input when the path is wrong, else a failure.
[[noreturn]] void refuse(const std::string& path, const char* what,
                         Failure failure = take_failure()) {
  const int code = is_path_error(failure.os_error) ? kExitBadInput : kExitFailure;
  const std::string message = fmt::format("{}: {}: {}", path, what, failure.text);
  throw Failed(message, std::move(failure), code);
}

}  // namespace

File File::create(const std::string& path) {
  init();
  const hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (id < 0) refuse(path, "cannot create the file");
  return File(Id(id, H5Fclose), path);
}

File File::open(const std::string& path, bool writable) {
  init();
  // HDF5 locks the files it opens (flock: shared to read, exclusive to write), and an open that
  // meets the other kind fails at once with EWOULDBLOCK. A reader peeking at a running sweep's
  // store (`clustersweep status`, h5py) holds it for milliseconds: wait for it, a while, rather
  // than fail the sweep or the reader.
  using namespace std::chrono_literals;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  auto pause = 2ms;
  while (true) {
    const hid_t id = H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT);
    if (id >= 0) return File(Id(id, H5Fclose), path);
    Failure failure = take_failure();
    const bool locked = failure.os_error == EWOULDBLOCK || failure.os_error == EAGAIN;
    if (!locked || std::chrono::steady_clock::now() >= deadline)
      refuse(path, "cannot open the file", std::move(failure));
    std::this_thread::sleep_for(pause);
    pause = std::min(2 * pause, std::chrono::milliseconds(100));
  }
}

File File::open_parallel(const std::string& path, const mpi::Comm& comm, bool writable) {
  init();
  Id fapl = property_list(H5P_FILE_ACCESS, path);
  check(H5Pset_fapl_mpio(fapl.get(), comm.get(), MPI_INFO_NULL), path, "cannot set up MPI-IO");
  const hid_t id = H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl.get());
  if (id < 0) refuse(path, "cannot open the file");
  return File(Id(id, H5Fclose), path);
}

void File::close() {
  if (!id_.valid()) return;
  // Released first: a failed close is reported once, never retried by the destructor.
  if (H5Fclose(id_.release()) < 0) {
    g_lost_file = true;
    Failure failure = take_failure();
    const std::string message = fmt::format("{}: cannot close the file: {}", path_, failure.text);
    throw Failed(message, std::move(failure));
  }
}

Id open_dataset(hid_t parent, const std::string& name, const std::string& context) {
  return Id(check(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), context,
                  fmt::format("cannot open dataset '{}'", name).c_str()),
            H5Dclose);
}

Id create_group(hid_t parent, const std::string& name, const std::string& context) {
  return Id(check(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), context,
                  fmt::format("cannot create group '{}'", name).c_str()),
            H5Gclose);
}

bool exists(hid_t parent, const std::string& name) {
  const htri_t found = H5Lexists(parent, name.c_str(), H5P_DEFAULT);
  if (found < 0) H5Eclear2(H5E_DEFAULT);
  return found > 0;
}

Id create_dataset(hid_t parent, const std::string& name, hid_t type, std::uint64_t rows,
                  const std::string& context, const Filters& filters, const Fill* fill) {
  const std::string what = fmt::format("cannot create dataset '{}'", name);
  Id dcpl = property_list(H5P_DATASET_CREATE, context);
  if (filters.any() && rows > 0) {
    const hsize_t chunk[1] = {std::clamp<hsize_t>(filters.chunk_rows, 1, rows)};
    check(H5Pset_chunk(dcpl.get(), 1, chunk), context, what.c_str());
    if (filters.shuffle) check(H5Pset_shuffle(dcpl.get()), context, what.c_str());
    if (filters.deflate > 0)
      check(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(filters.deflate)), context,
            what.c_str());
  } else {
    check(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), context, what.c_str());
    check(H5Pset_alloc_time(dcpl.get(), fill ? H5D_ALLOC_TIME_LATE : H5D_ALLOC_TIME_EARLY), context,
          what.c_str());
  }
  // A dataset without storage reads as its fill value only if fill values are written "if set"
  // (HDF5's default); with "never" a read of it leaves the reader's buffer as it was.
  if (fill)
    check(H5Pset_fill_value(dcpl.get(), fill->mem_type, fill->value), context, what.c_str());
  else
    check(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), context, what.c_str());
  Id space = dataspace_1d(rows, context);
  return Id(check(H5Dcreate2(parent, name.c_str(), type, space.get(), H5P_DEFAULT, dcpl.get(),
                             H5P_DEFAULT),
                  context, what.c_str()),
            H5Dclose);
}

bool fill_value(hid_t dataset, hid_t mem_type, void* value, const std::string& context) {
  Id dcpl(check(H5Dget_create_plist(dataset), context, "cannot read a dataset's properties"),
          H5Pclose);
  H5D_fill_value_t status{};
  check(H5Pfill_value_defined(dcpl.get(), &status), context, "cannot read a dataset's fill value");
  if (status != H5D_FILL_VALUE_USER_DEFINED) return false;
  check(H5Pget_fill_value(dcpl.get(), mem_type, value), context,
        "cannot read a dataset's fill value");
  return true;
}

namespace {

// The file and memory dataspaces of rows [offset, offset + count).
std::pair<Id, Id> selection(hid_t dataset, std::uint64_t offset, std::uint64_t count,
                            const std::string& context) {
  Id file_space(check(H5Dget_space(dataset), context, "cannot get a dataspace"), H5Sclose);
  const hsize_t start[1] = {offset};
  const hsize_t size[1] = {count};
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, size, nullptr),
        context, "cannot select rows");
  return {std::move(file_space), dataspace_1d(count, context)};
}

}  // namespace

bool is_filtered(hid_t dataset, const std::string& context) {
  Id dcpl(check(H5Dget_create_plist(dataset), context, "cannot read a dataset's layout"), H5Pclose);
  return H5Pget_layout(dcpl.get()) == H5D_CHUNKED && H5Pget_nfilters(dcpl.get()) > 0;
}

void write(hid_t dataset, hid_t mem_type, std::uint64_t offset, std::uint64_t count,
           const void* data, const std::string& context, bool collective) {
  if (count == 0 && !collective) return;
  Id dxpl;
  if (collective) {
    dxpl = property_list(H5P_DATASET_XFER, context);
    check(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), context, "cannot write collectively");
  }
  Id file_space, mem_space;
  if (count > 0) {
    std::tie(file_space, mem_space) = selection(dataset, offset, count, context);
  } else {  // this rank's part of a collective write: no rows
    file_space = Id(check(H5Dget_space(dataset), context, "cannot get a dataspace"), H5Sclose);
    mem_space = dataspace_1d(1, context);
    check(H5Sselect_none(file_space.get()), context, "cannot select rows");
    check(H5Sselect_none(mem_space.get()), context, "cannot select rows");
  }
  if (H5Dwrite(dataset, mem_type, mem_space.get(), file_space.get(),
               collective ? dxpl.get() : H5P_DEFAULT, data) >= 0)
    return;
  Failure failure = take_failure();
  // MPI-IO (OpenMPI's OMPIO) reports a failed write as a short one, without the system's
  // reason; a full file system is the usual one, and it can be seen (under 1 MiB free, a write
  // that failed for no reason given found no room).
  if (!failure.os_error) {
    std::string name(4096, '\0');
    const ssize_t length = H5Fget_name(dataset, name.data(), name.size());
    H5Eclear2(H5E_DEFAULT);
    if (length > 0) {
      name.resize(static_cast<std::size_t>(length));
      const auto slash = name.rfind('/');
      const std::string folder = slash == std::string::npos ? "." : name.substr(0, slash + 1);
      struct statvfs info {};
      const double bytes = static_cast<double>(count) * static_cast<double>(H5Tget_size(mem_type));
      if (::statvfs(folder.c_str(), &info) == 0 &&
          static_cast<double>(info.f_bavail) * static_cast<double>(info.f_frsize) <
              bytes + (1 << 20)) {
        failure.os_error = ENOSPC;
        failure.text = std::strerror(ENOSPC);
      }
    }
  }
  const std::string message = fmt::format("{}: cannot write: {}", context, failure.text);
  throw Failed(message, std::move(failure));
}

void read(hid_t dataset, hid_t mem_type, std::uint64_t offset, std::uint64_t count, void* data,
          const std::string& context) {
  if (count == 0) return;
  auto [file_space, mem_space] = selection(dataset, offset, count, context);
  check(H5Dread(dataset, mem_type, mem_space.get(), file_space.get(), H5P_DEFAULT, data), context,
        "cannot read");
}

std::uint64_t extent(hid_t dataset, const std::string& context) {
  Id space(check(H5Dget_space(dataset), context, "cannot get a dataspace"), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank != 1) throw Error(fmt::format("{}: expected a 1-D dataset", context));
  hsize_t dims[1] = {0};
  check(H5Sget_simple_extent_dims(space.get(), dims, nullptr), context, "cannot get the extent");
  return dims[0];
}

bool has_attribute(hid_t object, const std::string& name) {
  const htri_t found = H5Aexists(object, name.c_str());
  if (found < 0) H5Eclear2(H5E_DEFAULT);
  return found > 0;
}

namespace {

Id open_attribute(hid_t object, const std::string& name) {
  const hid_t id = H5Aopen(object, name.c_str(), H5P_DEFAULT);
  if (id < 0) H5Eclear2(H5E_DEFAULT);
  return Id(id, H5Aclose);
}

// Writes `data` into attribute `name` of `file_type` and `space`, in place when one with the same
// type and size exists (so a finished run's bookkeeping allocates no file space).
void put_attribute(hid_t object, const std::string& name, hid_t file_type, hid_t mem_type,
                   hid_t space, const void* data, const std::string& context) {
  const std::string what = fmt::format("cannot write attribute '{}'", name);
  if (has_attribute(object, name)) {
    Id attribute = open_attribute(object, name);
    Id type(H5Aget_type(attribute.get()), H5Tclose);
    Id old_space(H5Aget_space(attribute.get()), H5Sclose);
    if (type.valid() && old_space.valid() && H5Tequal(type.get(), file_type) > 0 &&
        H5Sextent_equal(old_space.get(), space) > 0) {
      check(H5Awrite(attribute.get(), mem_type, data), context, what.c_str());
      return;
    }
    attribute.reset();
    check(H5Adelete(object, name.c_str()), context, what.c_str());
  }
  Id attribute(check(H5Acreate2(object, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT),
                     context, what.c_str()),
               H5Aclose);
  check(H5Awrite(attribute.get(), mem_type, data), context, what.c_str());
}

}  // namespace

void write_attribute(hid_t object, const std::string& name, const std::string& value,
                     const std::string& context) {
  Id type = string_type(context);
  Id space = scalar_dataspace(context);
  const char* text = value.c_str();
  put_attribute(object, name, type.get(), type.get(), space.get(), &text, context);
}

void write_attribute(hid_t object, const std::string& name, const std::vector<std::string>& values,
                     const std::string& context) {
  Id type = string_type(context);
  Id space = dataspace_1d(values.size(), context);
  std::vector<const char*> texts;
  for (const auto& v : values) texts.push_back(v.c_str());
  put_attribute(object, name, type.get(), type.get(), space.get(), texts.data(), context);
}

void write_attribute(hid_t object, const std::string& name, double value,
                     const std::string& context) {
  Id space = scalar_dataspace(context);
  put_attribute(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, space.get(), &value, context);
}

void write_attribute(hid_t object, const std::string& name, std::int64_t value,
                     const std::string& context) {
  Id space = scalar_dataspace(context);
  put_attribute(object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, space.get(), &value, context);
}

void write_attribute(hid_t object, const std::string& name, std::uint64_t value,
                     const std::string& context) {
  Id space = scalar_dataspace(context);
  put_attribute(object, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, space.get(), &value, context);
}

void write_attribute(hid_t object, const std::string& name, const std::vector<std::uint8_t>& values,
                     const std::string& context) {
  Id space = dataspace_1d(values.size(), context);
  put_attribute(object, name, H5T_STD_U8LE, H5T_NATIVE_UINT8, space.get(), values.data(), context);
}

void write_attribute(hid_t object, const std::string& name,
                     const std::vector<std::uint16_t>& values, const std::string& context) {
  Id space = dataspace_1d(values.size(), context);
  put_attribute(object, name, H5T_STD_U16LE, H5T_NATIVE_UINT16, space.get(), values.data(),
                context);
}

void attach_dimension(hid_t scale, const std::string& name, const std::vector<hid_t>& attached,
                      const std::string& context) {
  check(H5DSset_scale(scale, name.c_str()), context,
        fmt::format("cannot make '{}' a dimension scale", name).c_str());
  for (hid_t dataset : attached)
    check(H5DSattach_scale(dataset, scale, 0), context,
          fmt::format("cannot attach dimension '{}'", name).c_str());
}

namespace {

// Reads every element of a string attribute (variable- or fixed-length) as text.
std::optional<std::vector<std::string>> read_strings(hid_t object, const std::string& name) {
  if (!has_attribute(object, name)) return std::nullopt;
  Id attribute = open_attribute(object, name);
  if (!attribute.valid()) return std::nullopt;
  Id type(H5Aget_type(attribute.get()), H5Tclose);
  Id space(H5Aget_space(attribute.get()), H5Sclose);
  if (!type.valid() || !space.valid() || H5Tget_class(type.get()) != H5T_STRING)
    return std::nullopt;
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0) return std::nullopt;
  std::vector<std::string> out;
  if (H5Tis_variable_str(type.get()) > 0) {
    Id mem = datatype(H5Tcopy(H5T_C_S1), name);
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    std::vector<char*> texts(static_cast<std::size_t>(n), nullptr);
    if (H5Aread(attribute.get(), mem.get(), texts.data()) < 0) {
      H5Eclear2(H5E_DEFAULT);
      return std::nullopt;
    }
    for (char* t : texts) {
      out.emplace_back(t ? t : "");
      if (t) H5free_memory(t);
    }
    return out;
  }
  const std::size_t size = H5Tget_size(type.get());
  std::vector<char> buffer(size * static_cast<std::size_t>(n) + 1, '\0');
  if (H5Aread(attribute.get(), type.get(), buffer.data()) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
  }
  for (hssize_t i = 0; i < n; ++i) {
    const char* begin = buffer.data() + static_cast<std::size_t>(i) * size;
    std::size_t length = 0;
    while (length < size && begin[length] != '\0') ++length;
    out.emplace_back(begin, length);
  }
  return out;
}

}  // namespace

std::optional<std::string> read_string_attribute(hid_t object, const std::string& name) {
  auto values = read_strings(object, name);
  if (!values || values->size() != 1) return std::nullopt;
  return std::move(values->front());
}

std::optional<std::vector<std::string>> read_strings_attribute(hid_t object,
                                                               const std::string& name) {
  return read_strings(object, name);
}

std::optional<double> read_number_attribute(hid_t object, const std::string& name) {
  if (!has_attribute(object, name)) return std::nullopt;
  Id attribute = open_attribute(object, name);
  if (!attribute.valid()) return std::nullopt;
  Id type(H5Aget_type(attribute.get()), H5Tclose);
  Id space(H5Aget_space(attribute.get()), H5Sclose);
  if (!type.valid() || !space.valid()) return std::nullopt;
  const H5T_class_t cls = H5Tget_class(type.get());
  if ((cls != H5T_INTEGER && cls != H5T_FLOAT) || H5Sget_simple_extent_npoints(space.get()) != 1)
    return std::nullopt;
  double value = 0;
  if (H5Aread(attribute.get(), H5T_NATIVE_DOUBLE, &value) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
  }
  return value;
}

}  // namespace clustersweep::engine::h5
