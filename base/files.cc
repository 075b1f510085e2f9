#include "base/files.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/error.h"

namespace clustersweep {

void write_file_atomically(const std::string& path, std::string_view text, std::string_view what,
                           bool executable) {
  std::string temporary = path + ".XXXXXX";
  std::vector<char> name(temporary.begin(), temporary.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  auto fail = [&](int error) {
    throw Error(fmt::format("{}: cannot write {}: {}", what, path, std::strerror(error)));
  };
  if (fd < 0) fail(errno);
  temporary = name.data();
  auto abandon = [&](int error) {
    ::close(fd);
    std::remove(temporary.c_str());
    fail(error);
  };
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) abandon(errno);
    done += static_cast<std::size_t>(n);
  }
  // mkstemp creates the file 0600; give it the permissions an ordinary new file gets.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, (executable ? 0777 : 0666) & ~mask) != 0) abandon(errno);
  if (::close(fd) != 0) {
    const int error = errno;
    std::remove(temporary.c_str());
    fail(error);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(temporary.c_str());
    fail(error);
  }
}

}  // namespace clustersweep
