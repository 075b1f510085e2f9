#pragma once
// Runs an external program (the Slurm client commands) and captures what it prints.
#include <optional>
#include <string>
#include <vector>

namespace clustersweep::slurm {

struct ProcessResult {
  int exit_code = 0;  // the program's exit status, or 128 + signal when a signal killed it
  std::string out;    // everything it wrote to standard output
  std::string err;    // everything it wrote to standard error
};

// The absolute path of `program` found on $PATH (or `program` itself when it contains a '/' and
// is executable); nullopt when there is none.
std::optional<std::string> find_on_path(const std::string& program);

// Runs argv[0] (looked up on $PATH) with argv, standard input from /dev/null, and waits for it.
// Throws Error when the program cannot be started at all.
ProcessResult run_process(const std::vector<std::string>& argv);

}  // namespace clustersweep::slurm
