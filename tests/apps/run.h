#pragma once
// Runs the built clustersweep binary with arguments and captures stdout, stderr and the exit code.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace clustersweep::apps_test {

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  out += '\'';
  return out;
}

// A fresh temporary directory per test, removed at the end.
class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            fmt::format("clustersweep-apps-test-{}-{}", ::getpid(), counter()++);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name, const std::string& text) const {
    const auto p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::filesystem::path path_;
};

inline Result run(const std::vector<std::string>& args) {
  TempDir dir;
  std::string command = shell_quote(CLUSTERSWEEP_BINARY);
  for (const auto& a : args) command += fmt::format(" {}", shell_quote(a));
  const auto out = dir.path() / "out", err = dir.path() / "err";
  command += fmt::format(" >{} 2>{}", shell_quote(out.string()), shell_quote(err.string()));
  const int status = std::system(command.c_str());
  Result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

// `args` followed by `more`.
inline std::vector<std::string> with(std::vector<std::string> args,
                                     const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// The command args.front() exits 2 with the one error line `message` and prints nothing else.
inline void expect_error(const std::vector<std::string>& args, const std::string& message) {
  const Result r = run(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, fmt::format("clustersweep {}: error: {}\n", args.front(), message));
  EXPECT_EQ(r.out, "");
}

inline std::string source_path(const std::string& relative) {
  return fmt::format("{}/{}", CLUSTERSWEEP_SOURCE_DIR, relative);
}

}  // namespace clustersweep::apps_test
