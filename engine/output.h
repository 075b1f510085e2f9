#pragma once
// Checks of the place a command is about to write a store to, made before any work: a bad path, a
// full disk or a file system that cannot hold the file is one clear error (exit 2, nothing
// written), not an HDF5 failure halfway nor a giant sparse file left behind.
#include <cstdint>
#include <string>

namespace clustersweep::engine {

// `path` can be created: its folder exists, is a folder, and a file can be created in it (tried
// with an empty probe file, removed at once). InputError "<flag> '<path>': ..." with the system's
// reason otherwise.
void check_output_path(const std::string& flag, const std::string& path);

// A file of `bytes` bytes (its size as `ls` shows it) that will hold up to `used` bytes on disk
// (fewer than `bytes` when it stays sparse) fits where `path` goes: `used` within the free space
// of the file system and `bytes` within the largest file it holds (tried with a sparse probe file
// of that size, removed at once, when it is 1 TiB or more). InputError otherwise, with `what` (the
// need in words) in the message.
void check_room(const std::string& flag, const std::string& path, std::uint64_t used,
                std::uint64_t bytes, const std::string& what);

}  // namespace clustersweep::engine
