#pragma once
// Internal to engine/: what the store writer and reader share about the on-disk format.
#include <string>

#include "engine/h5.h"
#include "engine/schema.h"

namespace clustersweep::engine::format {

// Opens `path` read-only (serial) after checking it exists and is HDF5, then checks that it is a
// clustersweep store of a supported version; InputError otherwise (docs/store-format.md has the
// messages). `writable` opens it read-write instead.
h5::File open_store(const std::string& path, bool writable);
// The same checks on an open file.
void check_store(hid_t file, const std::string& path);

// The columns, in order, from the root attribute "columns" and each dataset's type and attributes.
Schema read_schema(hid_t file, const std::string& path);

// The HDF5 type of a column in the file, and the native type rows are kept in memory as.
h5::Id file_type(const Column& column, const std::string& context);
h5::Id memory_type(const Column& column, const std::string& context);

}  // namespace clustersweep::engine::format
