#include "tests/slurm/cluster/cluster_util.h"

#include <chrono>
#include <set>
#include <thread>

namespace clustersweep::slurm::testing {

Waited wait_for_jobs(const std::vector<std::string>& ids, double timeout_s) {
  SlurmScheduler slurm;
  Waited w;
  std::set<std::string> released_at_restart;  // "id/restarts" already released
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    w.jobs = slurm.query(ids);
    bool done = !w.jobs.empty();
    for (const auto& id : ids) {
      bool seen = false;
      for (const auto& j : w.jobs) {
        if (j.id != id && !j.id.starts_with(id + "_")) continue;
        seen = true;
        if (!finished(j.state)) done = false;
        // An array's pending remainder shows as "7_[2-3]"; its tasks are not requeued ones.
        if (j.state == "PENDING" && j.reason == "BeginTime" &&
            released_at_restart.insert(j.id + "/" + std::to_string(j.restarts)).second) {
          slurm.start_now(j.id);
          ++w.releases;
        }
      }
      if (!seen) done = false;
    }
    w.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (done) return w;
    if (w.seconds > timeout_s) {
      w.timed_out = true;
      return w;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace clustersweep::slurm::testing
