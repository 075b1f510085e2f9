#include "engine/output.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "base/error.h"
#include "base/format.h"

namespace clustersweep::engine {

namespace {

namespace fs = std::filesystem;

std::string folder_of(const std::string& path) {
  const fs::path folder = fs::path(path).parent_path();
  return folder.empty() ? "." : folder.string();
}

// Creates an empty file next to `path` and returns its descriptor (and name), or -1 with errno.
int create_probe(const std::string& path, std::string& name) {
  name = fmt::format("{}/.{}.probe-XXXXXX", folder_of(path), fs::path(path).filename().string());
  return ::mkstemp(name.data());
}

}  // namespace

void check_output_path(const std::string& flag, const std::string& path) {
  const std::string folder = folder_of(path);
  std::error_code ec;
  if (!fs::exists(folder, ec))
    throw InputError(fmt::format("{} '{}': the directory '{}' does not exist", flag, path, folder));
  if (!fs::is_directory(folder, ec))
    throw InputError(fmt::format("{} '{}': '{}' is not a directory", flag, path, folder));
  if (::access(folder.c_str(), W_OK) != 0)
    throw InputError(fmt::format("{} '{}': cannot write to the directory '{}': {}", flag, path,
                                 folder, std::strerror(errno)));
  // Write permission does not make a folder take new files (/proc, a full inode table, a root
  // that the permission bits do not stop): only creating one tells.
  std::string probe;
  const int fd = create_probe(path, probe);
  if (fd < 0)
    throw InputError(fmt::format("{} '{}': cannot create a file in '{}': {}", flag, path, folder,
                                 std::strerror(errno)));
  ::close(fd);
  ::unlink(probe.c_str());
}

void check_room(const std::string& flag, const std::string& path, std::uint64_t used,
                std::uint64_t bytes, const std::string& what) {
  const std::string folder = folder_of(path);
  struct statvfs info {};
  if (used > 0 && ::statvfs(folder.c_str(), &info) == 0) {
    const double free_bytes =
        static_cast<double>(info.f_bavail) * static_cast<double>(info.f_frsize);
    if (static_cast<double>(used) > free_bytes)
      throw InputError(fmt::format("{} '{}': {} but only {} are free on '{}'", flag, path, what,
                                   format_bytes(free_bytes), folder));
  }
  // The largest file the file system holds: some say it (vfat: 32 bits); ext4's 16 TiB only shows
  // when a file is made that large, which a sparse probe does at no cost.
  const long bits = ::pathconf(folder.c_str(), _PC_FILESIZEBITS);
  const bool beyond_bits = bits > 0 && bits < 64 && bytes >= (std::uint64_t{1} << (bits - 1));
  int error = beyond_bits ? EFBIG : 0;
  if (!beyond_bits && bytes >= (std::uint64_t{1} << 40)) {
    std::string probe;
    const int fd = create_probe(path, probe);
    if (fd >= 0) {
      if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) error = errno;
      ::close(fd);
      ::unlink(probe.c_str());
    }
  }
  if (error == EFBIG || error == EINVAL)
    throw InputError(fmt::format(
        "{} '{}': the store would be a file of {}, more than the file system of '{}' holds in "
        "one file; split the sweep with --shard I/K (or narrow the spec)",
        flag, path, format_bytes(static_cast<double>(bytes)), folder));
  if (error == ENOSPC || error == EDQUOT)
    throw InputError(fmt::format("{} '{}': {} but the file system of '{}' says: {}", flag, path,
                                 what, folder, std::strerror(error)));
}

}  // namespace clustersweep::engine
