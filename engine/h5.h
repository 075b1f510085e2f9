#pragma once
// A thin RAII layer over the HDF5 C API (HighFive style): one move-only owner per hid_t whose
// destructor closes it without throwing; checked calls throw h5::Failed naming the file and what
// went wrong in plain words (take_failure()). HDF5's own stack printing is switched off.
#include <hdf5.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.h"
#include "engine/mpi.h"

namespace clustersweep::engine::h5 {

// Starts HDF5 with its automatic error printing off and without its exit-time shutdown (a file
// HDF5 failed to close would crash that shutdown; see lost_file()); idempotent, called by
// everything below and by mpi::Env before MPI starts.
void init();

// What HDF5 reported for the call that failed, in plain words.
struct Failure {
  // The operating system's reason (strerror) when a system call failed, also inside MPI-IO;
  // "the file is truncated: A of B bytes"; else HDF5's innermost description on one line.
  std::string text;
  int os_error = 0;  // the errno behind it, 0 when no system call failed
  bool truncated = false;
};

// Reads and clears the current HDF5 error stack: the one place that turns it into words.
Failure take_failure();

// `text` (HDF5's words, or names read from a possibly damaged file) safe to print on one line:
// control characters become blanks and bytes that are not UTF-8 become '?'.
std::string printable(std::string_view text);

// A failed HDF5 call: Error("<context>: <what>: <failure.text>") that keeps the failure, so that
// callers (the store reader) can tell a damaged file from an operating-system failure.
class Failed : public Error {
 public:
  Failed(const std::string& message, Failure failure, int exit_code = kExitFailure)
      : Error(message, exit_code), failure_(std::move(failure)) {}
  const Failure& failure() const noexcept { return failure_; }

 private:
  Failure failure_;
};

// True for the errno values that mean the path itself is wrong (a missing folder, no permission,
// a read-only file system...): bad input, not a failure of the machine.
bool is_path_error(int os_error) noexcept;

// Throws Failed("<context>: <what>: <reason>") when status < 0; returns status otherwise.
std::int64_t check(std::int64_t status, const std::string& context, const char* what);

// True once HDF5 failed to close a file in this process. HDF5 1.10 then keeps a dangling handle
// that its own shutdown would crash on, so the process must end without shutting HDF5 down (as
// mpi::Env does).
bool lost_file() noexcept;
// Shuts HDF5 down now (every file must be closed), before MPI_Finalize, unless a file was lost.
void shutdown() noexcept;

// Owns one hid_t; closes it with the function that matches its kind (file, dataset, ...).
class Id {
 public:
  using Closer = herr_t (*)(hid_t);
  Id() noexcept = default;
  Id(hid_t id, Closer closer) noexcept : id_(id), closer_(closer) {}
  ~Id() { reset(); }
  Id(Id&& other) noexcept : id_(other.id_), closer_(other.closer_) { other.id_ = H5I_INVALID_HID; }
  Id& operator=(Id&& other) noexcept;
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;

  hid_t get() const noexcept { return id_; }
  bool valid() const noexcept { return id_ >= 0; }
  // Closes now; false when HDF5 reported a failure (the destructor ignores it).
  bool reset() noexcept;
  // Gives up ownership: the caller closes the id.
  hid_t release() noexcept {
    const hid_t id = id_;
    id_ = H5I_INVALID_HID;
    return id;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

Id property_list(hid_t cls, const std::string& context);
Id datatype(hid_t id, const std::string& context);  // takes ownership of a datatype id
Id dataspace_1d(std::uint64_t size, const std::string& context);
Id scalar_dataspace(const std::string& context);

// A UTF-8 variable-length string type, and a 1-D enum type (values 0..n-1 named by `labels`;
// uint8 codes when `one_byte`, else uint16), and the enum h5py reads as numpy bool (int8 FALSE=0,
// TRUE=1).
Id string_type(const std::string& context);
Id enum_type(const std::vector<std::string>& labels, const std::string& context,
             bool one_byte = false);
Id bool_type(const std::string& context);

class File {
 public:
  File() = default;
  // Serial (sec2) access. create() truncates an existing file. A path that cannot be created or
  // opened (no such folder, no permission) is an InputError with the system's reason.
  static File create(const std::string& path);
  static File open(const std::string& path, bool writable);
  // Collective MPI-IO access over `comm` (independent raw-data transfers).
  static File open_parallel(const std::string& path, const mpi::Comm& comm, bool writable);

  hid_t get() const noexcept { return id_.get(); }
  const std::string& path() const noexcept { return path_; }
  bool is_open() const noexcept { return id_.valid(); }
  void close();  // throws when HDF5 cannot close (flush) the file

 private:
  File(Id id, std::string path) : id_(std::move(id)), path_(std::move(path)) {}
  Id id_;
  std::string path_;
};

Id open_dataset(hid_t parent, const std::string& name, const std::string& context);
Id create_group(hid_t parent, const std::string& name, const std::string& context);
bool exists(hid_t parent, const std::string& name);

// How a dataset's chunks are filtered: HDF5's built-in filters only, so that every HDF5 reader
// (h5py, netCDF-4, xarray) decodes them with no plugin. No filter: a contiguous dataset.
struct Filters {
  bool shuffle = false;  // byte shuffle, before deflate
  int deflate = 0;       // zlib level 1..9; 0: none
  std::uint64_t chunk_rows = 0;
  bool any() const noexcept { return shuffle || deflate > 0; }
};

// A dataset's fill value: what every row reads as until written, `value` of type `mem_type`.
struct Fill {
  hid_t mem_type;
  const void* value;
};

// A 1-D dataset of `rows` elements of `type`. Without filters: contiguous, allocated now and never
// filled, so the file's metadata is final at creation and later writes only touch raw data. With
// filters: chunked (filters.chunk_rows rows a chunk), each chunk allocated when written. With a
// `fill`: a dataset that is never written and reads as the fill value in every row; contiguous,
// it takes no room in the file (its storage would be allocated at the first write). Opened for
// writing in a file open on MPI ranks, HDF5 allocates and fills a dataset's storage: leave it
// unopened there, or give it filters.
Id create_dataset(hid_t parent, const std::string& name, hid_t type, std::uint64_t rows,
                  const std::string& context, const Filters& filters = {},
                  const Fill* fill = nullptr);
// The fill value `create_dataset` gave `dataset`, as `mem_type` into `value`; false (and `value`
// untouched) for a dataset with HDF5's default fill value.
bool fill_value(hid_t dataset, hid_t mem_type, void* value, const std::string& context);
// Whether a dataset is chunked and filtered: in a file opened on MPI ranks, HDF5 1.10 writes it
// only collectively.
bool is_filtered(hid_t dataset, const std::string& context);
// Rows [offset, offset + count) of a 1-D dataset from/to memory of `mem_type`. `collective`:
// every rank of the file's communicator calls it (with count 0 for no rows).
void write(hid_t dataset, hid_t mem_type, std::uint64_t offset, std::uint64_t count,
           const void* data, const std::string& context, bool collective = false);
void read(hid_t dataset, hid_t mem_type, std::uint64_t offset, std::uint64_t count, void* data,
          const std::string& context);
std::uint64_t extent(hid_t dataset, const std::string& context);

// Attributes on a file (its root group) or a dataset. write_* creates or overwrites; numbers
// overwrite in place when the attribute exists with the same type (no new file space).
void write_attribute(hid_t object, const std::string& name, const std::string& value,
                     const std::string& context);
void write_attribute(hid_t object, const std::string& name, const std::vector<std::string>& values,
                     const std::string& context);
void write_attribute(hid_t object, const std::string& name, double value,
                     const std::string& context);
void write_attribute(hid_t object, const std::string& name, std::int64_t value,
                     const std::string& context);
void write_attribute(hid_t object, const std::string& name, std::uint64_t value,
                     const std::string& context);
// A 1-D array of unsigned codes (uint8 or uint16 on disk, as the values' type).
void write_attribute(hid_t object, const std::string& name, const std::vector<std::uint8_t>& values,
                     const std::string& context);
void write_attribute(hid_t object, const std::string& name,
                     const std::vector<std::uint16_t>& values, const std::string& context);

// Makes `scale` the HDF5 dimension scale `name` of dimension 0 of every dataset in `attached`:
// netCDF-4 readers (xarray's h5netcdf and netcdf4 engines) take a dataset's dimensions from the
// scales attached to it and refuse, or skip, a dataset that has none.
void attach_dimension(hid_t scale, const std::string& name, const std::vector<hid_t>& attached,
                      const std::string& context);
bool has_attribute(hid_t object, const std::string& name);
// nullopt when absent or of another kind (a number attribute read as text, ...).
std::optional<std::string> read_string_attribute(hid_t object, const std::string& name);
std::optional<std::vector<std::string>> read_strings_attribute(hid_t object,
                                                               const std::string& name);
std::optional<double> read_number_attribute(hid_t object, const std::string& name);

}  // namespace clustersweep::engine::h5
