#include "base/files.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/error.h"

namespace clustersweep {

namespace {

bool is_folder(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Errors of a path the user gave (bad input, exit 2) rather than of the machine (exit 1).
bool is_path_error(int error) {
  return error == ENOENT || error == ENOTDIR || error == EACCES || error == EISDIR ||
         error == EROFS || error == ENAMETOOLONG || error == ELOOP;
}

}  // namespace

AtomicFile::AtomicFile(std::string path, std::string what, bool executable)
    : path_(std::move(path)), what_(std::move(what)), executable_(executable) {
  if (is_folder(path_))
    throw InputError(fmt::format("{}: '{}' is a folder; name a file", what_, path_));
  std::string pattern = path_ + ".XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  fd_ = ::mkstemp(name.data());
  if (fd_ < 0) fail(errno);
  temporary_ = name.data();
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temporary_.empty()) std::remove(temporary_.c_str());
}

void AtomicFile::fail(int error) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temporary_.empty()) std::remove(temporary_.c_str());
  temporary_.clear();
  const std::string message =
      fmt::format("{}: cannot write {}: {}", what_, path_, std::strerror(error));
  if (is_path_error(error)) throw InputError(message);
  throw Error(message);
}

void AtomicFile::write(std::string_view text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(errno);
    done += static_cast<std::size_t>(n);
  }
}

void AtomicFile::commit() {
  // mkstemp creates the file 0600; give it the permissions an ordinary new file gets.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd_, (executable_ ? 0777 : 0666) & ~mask) != 0) fail(errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(errno);
  if (std::rename(temporary_.c_str(), path_.c_str()) != 0) fail(errno);
  temporary_.clear();
}

void write_file_atomically(const std::string& path, std::string_view text, std::string_view what,
                           bool executable) {
  AtomicFile file(path, std::string(what), executable);
  file.write(text);
  file.commit();
}

std::optional<std::string> read_file(const std::string& path) {
  // A folder opens as a stream on Linux and reads as an empty file.
  if (is_folder(path)) {
    errno = EISDIR;
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

void refuse_clobbering(const std::vector<CommandFile>& inputs,
                       const std::vector<CommandFile>& outputs) {
  namespace fs = std::filesystem;
  const auto normal = [](const std::string& path) {
    std::error_code ec;
    const fs::path full = fs::weakly_canonical(fs::absolute(path, ec), ec);
    return ec ? fs::absolute(path).lexically_normal() : full;
  };
  const auto same = [&](const std::string& a, const std::string& b) {
    return same_file(a, b) || normal(a) == normal(b);
  };
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const CommandFile& out = outputs[i];
    if (out.path.empty()) continue;
    for (const CommandFile& in : inputs)
      if (!in.path.empty() && same(out.path, in.path))
        throw InputError(fmt::format(
            "{}: '{}' is {}{}; name another file (an output never replaces an input)", out.role,
            out.path, in.path == out.path ? "" : fmt::format("'{}', ", in.path), in.role));
    if (!out.folder) {
      if (is_folder(out.path))
        throw InputError(fmt::format("{}: '{}' is a folder; name a file", out.role, out.path));
      const fs::path parent = fs::absolute(out.path).parent_path();
      if (!is_folder(parent.string()))
        throw InputError(fmt::format("{}: cannot write '{}': the folder '{}' does not exist",
                                     out.role, out.path, parent.string()));
    }
    for (std::size_t j = 0; j < i; ++j)
      if (!outputs[j].path.empty() && same(out.path, outputs[j].path))
        throw InputError(
            fmt::format("{}: '{}' is also the file of {}; give each output its own file", out.role,
                        out.path, outputs[j].role));
  }
}

}  // namespace clustersweep
