#pragma once
// Running the real binary through the shell for the end-to-end tests of analysis/: exit code,
// standard output and standard error of one command line (MPI allowed as root).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace clustersweep::analysis::testing {

struct Result {
  int code = -1;
  std::string out, err;
};

// The whole file (binary), "" when it cannot be read.
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline Result run(const std::string& arguments) {
  namespace fs = std::filesystem;
  static int counter = 0;
  const std::string stem =
      "clustersweep-shell-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  const fs::path out = fs::temp_directory_path() / (stem + ".out"),
                 err = fs::temp_directory_path() / (stem + ".err");
  const std::string command = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
                              arguments + " >" + out.string() + " 2>" + err.string();
  const int status = std::system(command.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

inline const std::string kBinary = CLUSTERSWEEP_BINARY;

}  // namespace clustersweep::analysis::testing
