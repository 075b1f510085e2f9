#pragma once
// The one error hierarchy of clustersweep (CLI11 style): every class carries the process exit code
// that `main` returns after printing what() once, on one line.
#include <stdexcept>
#include <string>

namespace clustersweep {

// Documented exit codes (docs/cli.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,       // an unexpected failure (I/O, MPI, HDF5)
  kExitBadInput = 2,      // bad flag, spec, file or store: nothing was started or clobbered
  kExitInterrupted = 75,  // SIGINT/SIGTERM/SIGUSR1: work was flushed; rerun with --resume
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, int exit_code = kExitFailure)
      : std::runtime_error(what), exit_code_(exit_code) {}
  int exit_code() const noexcept { return exit_code_; }

 private:
  int exit_code_;
};

// Bad input from the user: a flag, a spec or catalog file, a CSV, a store of the wrong kind.
// The message names the flag/file:line:column/key and what would be valid.
class InputError : public Error {
 public:
  explicit InputError(const std::string& what) : Error(what, kExitBadInput) {}
};

// The run stopped early on a signal after flushing its work; `--resume` continues it.
class Interrupted : public Error {
 public:
  explicit Interrupted(const std::string& what) : Error(what, kExitInterrupted) {}
};

}  // namespace clustersweep
