#pragma once
// A Scheduler that records what it was asked and answers from a script (ninja's FakeCommandRunner).
#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "base/error.h"
#include "slurm/scheduler.h"

namespace clustersweep::slurm::testing {

class FakeScheduler : public Scheduler {
 public:
  struct Submit {
    std::vector<std::string> args;
    std::string script;
  };
  std::vector<Submit> submitted;
  std::vector<std::string> started_now;
  std::map<std::string, JobState> states;  // what query() answers
  int refuse_at = -1;                      // the submit call (0-based) that Slurm refuses
  int next_id = 100;

  std::string submit(const std::vector<std::string>& args, const std::string& script) override {
    if (static_cast<int>(submitted.size()) == refuse_at)
      throw InputError(
          "Slurm refused the job: sbatch: error: Batch job submission failed: Invalid account");
    submitted.push_back({args, script});
    return std::to_string(next_id++);
  }
  std::vector<JobState> query(const std::vector<std::string>& ids) override {
    std::vector<JobState> out;
    for (const auto& id : ids)
      if (auto it = states.find(id); it != states.end()) out.push_back(it->second);
    return out;
  }
  void start_now(const std::string& id) override { started_now.push_back(id); }
};

}  // namespace clustersweep::slurm::testing
