#pragma once
// Internal to engine/: what the store writer and reader share about the on-disk format, and the one
// place that recognises a file that is not a store, or not a whole one.
#include <cstdint>
#include <string>

#include "base/error.h"
#include "engine/h5.h"
#include "engine/schema.h"

namespace clustersweep::engine::format {

// Opens `path` read-only (serial) after checking that it is a readable file, HDF5 and whole, that
// HDF5 can read its metadata without crashing (checked in a child process, see probe_store in the
// .cc), and that it is a clustersweep store of a supported version whose columns are all there,
// of the same length and of their types; InputError otherwise, worded by damaged() when the file
// is not what a run wrote (docs/store-format.md has the messages). `writable` opens it read-write.
h5::File open_store(const std::string& path, bool writable);
// The root-attribute and layout checks of open_store on an open file.
void check_store(hid_t file, const std::string& path);

// The columns, in order, from the root attribute "columns" and each dataset's type and attributes;
// damaged() when a column is missing, of another length than the others or of a type the format
// does not give it.
Schema read_schema(hid_t file, const std::string& path);

// The one message for a store whose bytes are not what a run wrote (truncated, damaged, a column
// missing or of another length or type): "'PATH' is not a complete clustersweep store (WHY); ...".
InputError damaged(const std::string& path, const std::string& why);
// Rethrows a failed HDF5 call on the store at `path` as what it means: the system's reason (a path
// problem: InputError; an I/O error: Error), or damage.
[[noreturn]] void rethrow_read_failure(const std::string& path, const h5::Failed& failed);

// Rows of a chunk of a compressed store's columns: 64 Ki rows keep a float64 chunk at 512 KiB,
// within HDF5's default chunk cache of 1 MiB that h5py and netCDF readers use.
inline constexpr std::uint64_t kCompressedChunkRows = std::uint64_t{1} << 16;
// The filters of the columns under `[output] compression` ("none", "fast", "small";
// docs/store-format.md, "Compression"): none, or chunks of kCompressedChunkRows rows.
h5::Filters column_filters(const std::string& compression);

// The HDF5 type of a column in the file, and the native type rows are kept in memory as.
h5::Id file_type(const Column& column, const std::string& context);
h5::Id memory_type(const Column& column, const std::string& context);

}  // namespace clustersweep::engine::format
