#include "tests/slurm/cluster/cluster_util.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "tests/slurm/cluster/local_slurm.h"
#include "tests/slurm/test_util.h"

namespace clustersweep::slurm::testing {

ProcessResult mpirun_sweep(const std::string& spec, const std::string& store, int ranks) {
  const auto run = [&](const std::string& out) {
    return run_process({"mpirun", "-n", std::to_string(ranks), "--oversubscribe",
                        CLUSTERSWEEP_BINARY, "run", spec, "-o", out, "--progress", "none",
                        "--no-summary"});
  };
  const char* shared = std::getenv("CLUSTERSWEEP_SLURM_REFERENCES");
  if (!shared || !*shared) return run(store);
  // Keyed by the spec's text, not its path: the tests run copies of the same spec.
  const std::string key =
      fmt::format("{}/{:016x}-{}-ranks", shared, std::hash<std::string>{}(read_text(spec)), ranks);
  std::filesystem::create_directories(shared);
  const int lock = ::open((key + ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock < 0) return run(store);
  ::flock(lock, LOCK_EX);  // released by close(), or by the process's end
  ProcessResult result;
  if (!std::filesystem::exists(key + ".h5")) {
    result = run(key + ".partial.h5");
    if (result.exit_code == 0) std::filesystem::rename(key + ".partial.h5", key + ".h5");
  }
  if (result.exit_code == 0) std::filesystem::copy_file(key + ".h5", store);
  ::close(lock);
  return result;
}

Waited wait_for_jobs(const std::vector<std::string>& ids, double timeout_s,
                     const std::function<bool()>& stop) {
  SlurmScheduler slurm;
  Waited w;
  // Requeued runs ("id/restarts") seen waiting for their begin time, and those released.
  std::map<std::string, std::chrono::steady_clock::time_point> begin_time_seen;
  std::set<std::string> released;
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    w.jobs = slurm.query(ids);
    bool done = !w.jobs.empty();
    for (const auto& id : ids) {
      bool seen = false;
      for (const auto& j : w.jobs) {
        if (j.id != id && !j.id.starts_with(id + "_")) continue;
        seen = true;
        if (is_active(j.state)) done = false;
        if (j.state != "PENDING" || j.reason != "BeginTime") continue;
        // Released while its last run is still completing, a job can be started before Slurm let
        // go of that run ("Killing non-startable batch job: Job credential revoked"), so wait a
        // few seconds first.
        const auto key = j.id + "/" + std::to_string(j.restarts);
        const auto now = std::chrono::steady_clock::now();
        const auto [first_seen, fresh] = begin_time_seen.emplace(key, now);
        if (!fresh && now - first_seen->second > std::chrono::seconds(3) &&
            released.insert(key).second) {
          slurm.start_now(j.id);
          ++w.releases;
        }
      }
      if (!seen) done = false;
    }
    w.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (done) return w;
    if (stop && stop()) {
      w.stopped = true;
      return w;
    }
    if (w.seconds > timeout_s) {
      w.timed_out = true;
      return w;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

std::string jobs_text(const Waited& w) {
  std::string text;
  for (const auto& j : w.jobs)
    text +=
        fmt::format("{} {} {} restarts={} on {}\n", j.id, j.state, j.reason, j.restarts, j.nodes);
  return text;
}

std::string logs(const std::string& folder) {
  std::string text;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    if (entry.path().extension() == ".out")
      text += fmt::format("---- {}\n{}", entry.path().string(), read_text(entry.path().string()));
  text += "---- slurmctld.log\n" + LocalSlurm::get()->log("slurmctld");
  // The nodes' errors (the multi-node cluster's slurmd.nN.log): a job step's PMIx collectives
  // fail there, not in the controller.
  for (const auto& entry : std::filesystem::directory_iterator(LocalSlurm::get()->dir() + "/log")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("slurmd", 0) != 0 || entry.path().extension() != ".log") continue;
    const auto errors = run_process({"grep", "-i", "-m", "40", "error", entry.path().string()});
    text += fmt::format("---- {} (errors)\n{}", name, errors.out);
  }
  return text;
}

}  // namespace clustersweep::slurm::testing
