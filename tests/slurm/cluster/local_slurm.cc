#include "tests/slurm/cluster/local_slurm.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <sstream>

#include "slurm/process.h"

namespace clustersweep::slurm::testing {
namespace {

// The cluster's script: the single-node one, or (CLUSTERSWEEP_SLURM_SCRIPT) the multi-node one.
#ifndef CLUSTERSWEEP_SLURM_SCRIPT
#define CLUSTERSWEEP_SLURM_SCRIPT "scripts/local-slurm.sh"
#endif
const std::string kScript = std::string(CLUSTERSWEEP_SOURCE_DIR) + "/" + CLUSTERSWEEP_SLURM_SCRIPT;

std::unique_ptr<LocalSlurm>& instance() {
  static std::unique_ptr<LocalSlurm> cluster;
  return cluster;
}
bool tried = false;
std::string reason;

// Stops the cluster when the test program ends, even when a test failed.
class StopAtExit : public ::testing::Environment {
 public:
  void TearDown() override { instance().reset(); }
};
const auto* const registered = ::testing::AddGlobalTestEnvironment(new StopAtExit);

}  // namespace

// Under CTest, one cluster serves every test of the run: a fixture (tests/slurm/cluster/fixture.sh)
// starts it in CLUSTERSWEEP_SLURM_DIR before the first test that needs it and stops it after the
// last, and each test process only points its clients at it. Without that variable (a test binary
// run by hand) the process starts a cluster of its own and stops it when it ends.
LocalSlurm* LocalSlurm::get() {
  if (tried) return instance().get();
  tried = true;
  const char* shared = std::getenv("CLUSTERSWEEP_SLURM_DIR");
  std::string dir;
  if (shared && *shared) {
    dir = shared;
    if (std::filesystem::exists(dir + "/skip")) {
      reason = fmt::format(
          "Slurm cannot run on this machine, so the real-scheduler tests are skipped: {}",
          run_process({"cat", dir + "/skip"}).out);
      return nullptr;
    }
    const auto status = run_process({"bash", kScript, "status", dir});
    if (status.exit_code != 0) {
      ADD_FAILURE() << "the shared Slurm cluster in " << dir << " (CLUSTERSWEEP_SLURM_DIR) does "
                    << "not answer; ctest starts it (fixture.sh), or unset the variable to start "
                    << "one in this process:\n"
                    << status.err;
      reason = "the shared Slurm cluster does not answer";
      return nullptr;
    }
  } else {
    const char* tmp = std::getenv("TMPDIR");
    dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/clustersweep-local-slurm-XXXXXX";
    if (!::mkdtemp(dir.data())) {
      reason = "cannot create a folder for the local Slurm";
      return nullptr;
    }
    // With our PID, the cluster also stops if this process is killed (a test timeout).
    const auto started = run_process({"bash", kScript, "start", dir, std::to_string(::getpid())});
    if (started.exit_code == 77) {
      reason = fmt::format(
          "Slurm cannot run on this machine, so the real-scheduler tests are skipped: {}",
          started.err);
      std::filesystem::remove_all(dir);
      return nullptr;
    }
    if (started.exit_code != 0) {
      ADD_FAILURE() << CLUSTERSWEEP_SLURM_SCRIPT << " start " << dir << " failed (exit "
                    << started.exit_code << "):\n"
                    << started.err;
      reason = "the local Slurm did not start";
      return nullptr;
    }
  }
  // DIR/env: SLURM_CONF, PATH, and what the jobs' MPI needs on this cluster (the multi-node one
  // keeps Open MPI to its nodes' network).
  std::istringstream env(run_process({"cat", dir + "/env"}).out);
  for (std::string line; std::getline(env, line);) {
    if (!line.starts_with("export ") || line.find('=') == std::string::npos) continue;
    const std::string name = line.substr(7, line.find('=') - 7);
    const std::string value = line.substr(line.find('=') + 1);
    if (name != "PATH") ::setenv(name.c_str(), value.c_str(), 1);
  }
  ::setenv("PATH", (std::string(std::getenv("PATH")) + ":/usr/sbin").c_str(), 1);
  // Open MPI refuses to run as root unless told; the jobs inherit this environment.
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  // Our jobs may run anywhere in the test's environment; none of them is inside a Slurm job.
  for (const char* v : {"SLURM_JOB_ID", "SLURM_JOBID", "SLURM_NODELIST", "SLURM_NTASKS"})
    ::unsetenv(v);
  instance().reset(new LocalSlurm(dir, !(shared && *shared)));
  return instance().get();
}

const std::string& LocalSlurm::skip_reason() { return reason; }

ProcessResult LocalSlurm::script(const std::string& action, const std::string& arg) const {
  return run_process({"bash", kScript, action, dir_, arg});
}

std::string LocalSlurm::log(const std::string& daemon) const {
  return run_process({"tail", "-n", "40", dir_ + "/log/" + daemon + ".log"}).out;
}

LocalSlurm::~LocalSlurm() {
  if (!owned_) return;  // the fixture's cluster: the fixture stops it
  const auto stopped = run_process({"bash", kScript, "stop", dir_});
  if (stopped.exit_code != 0)
    std::fprintf(stderr, "local-slurm stop failed: %s\n", stopped.err.c_str());
  if (!std::getenv("CLUSTERSWEEP_KEEP_SLURM_DIR")) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

}  // namespace clustersweep::slurm::testing
