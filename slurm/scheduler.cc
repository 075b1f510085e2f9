#include "slurm/scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <string_view>

#include "base/error.h"

namespace clustersweep::slurm {

const char* const kSqueueFormat =
    "JobArrayID:|,Name:|,State:|,Reason:|,TimeUsed:|,TimeLimit:|,RestartCnt:|,NodeList:|";
const char* const kSacctFormat = "JobID,JobName,State,Elapsed,Timelimit,NodeList,ExitCode";

namespace {

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  while (true) {
    const auto at = text.find(separator);
    parts.emplace_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  for (auto& line : split(text, '\n'))
    if (auto t = trim(line); !t.empty()) out.push_back(std::move(t));
  return out;
}

// Slurm's message on one line: its stderr lines joined, or the exit code when it said nothing.
std::string slurm_message(const ProcessResult& r) {
  std::string message;
  for (const auto& line : lines(r.err)) message += (message.empty() ? "" : " / ") + line;
  return message.empty() ? fmt::format("exit code {} and no message", r.exit_code) : message;
}

std::string join(const std::vector<std::string>& words, std::string_view separator) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : std::string(separator)) + w;
  return out;
}

}  // namespace

bool is_active(const std::string& state) {
  static const std::set<std::string> active = {
      "PENDING",     "RUNNING",  "CONFIGURING", "COMPLETING", "REQUEUED",  "REQUEUE_HOLD",
      "REQUEUE_FED", "RESIZING", "SUSPENDED",   "SIGNALING",  "STAGE_OUT", "STOPPED"};
  return active.count(state) > 0;
}

void require_client(const std::string& program) {
  if (!find_on_path(program))
    throw InputError(fmt::format("Slurm's client is missing: {} not found on PATH", program));
}

std::string parse_job_id(const std::string& output) {
  // --parsable prints "ID" or "ID;CLUSTER".
  const auto first = lines(output);
  const std::string id = first.empty() ? "" : split(first.back(), ';')[0];
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    throw Error(fmt::format("sbatch printed no job id (got '{}')", trim(output)));
  return id;
}

std::vector<JobState> parse_squeue(const std::string& text) {
  std::vector<JobState> jobs;
  for (const auto& line : lines(text)) {
    const auto f = split(line, '|');
    if (f.size() < 8) continue;
    JobState j;
    j.id = trim(f[0]);
    j.name = trim(f[1]);
    j.state = trim(f[2]);
    j.reason = trim(f[3]);
    if (j.reason == "None") j.reason.clear();
    j.elapsed = trim(f[4]);
    j.time_limit = trim(f[5]);
    const auto restarts = trim(f[6]);
    std::from_chars(restarts.data(), restarts.data() + restarts.size(), j.restarts);
    j.nodes = trim(f[7]);
    jobs.push_back(std::move(j));
  }
  return jobs;
}

std::vector<JobState> parse_sacct(const std::string& text) {
  std::vector<JobState> jobs;
  for (const auto& line : lines(text)) {
    const auto f = split(line, '|');
    if (f.size() < 7) continue;
    JobState j;
    j.id = f[0];
    j.name = f[1];
    j.state = split(f[2], ' ')[0];  // "CANCELLED by 0" -> CANCELLED
    j.elapsed = f[3];
    j.time_limit = f[4];
    j.nodes = f[5];
    j.exit_code = f[6];
    // A requeued job has one record per run; the last one is its current state.
    const auto same =
        std::find_if(jobs.begin(), jobs.end(), [&](const JobState& o) { return o.id == j.id; });
    if (same != jobs.end())
      *same = std::move(j);
    else
      jobs.push_back(std::move(j));
  }
  return jobs;
}

SlurmScheduler::SlurmScheduler(CommandRunner runner) : runner_(std::move(runner)) {}

ProcessResult SlurmScheduler::run(const std::vector<std::string>& argv) {
  require_client(argv[0]);
  return runner_(argv);
}

std::string SlurmScheduler::submit(const std::vector<std::string>& sbatch_args,
                                   const std::string& script) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), sbatch_args.begin(), sbatch_args.end());
  argv.push_back(script);
  const auto r = run(argv);
  if (r.exit_code != 0)
    throw InputError(fmt::format("Slurm refused the job: {}", slurm_message(r)));
  return parse_job_id(r.out);
}

std::vector<JobState> SlurmScheduler::query(const std::vector<std::string>& job_ids) {
  if (job_ids.empty()) return {};
  const auto ids = join(job_ids, ",");
  const auto active = run({"squeue", "--noheader", "--array", "--states=all", "--jobs=" + ids,
                           std::string("--Format=") + kSqueueFormat});
  // squeue fails with "Invalid job id" when none of the jobs is known any more.
  if (active.exit_code != 0 && active.err.find("Invalid job id") == std::string::npos)
    throw Error(fmt::format("squeue failed: {}", slurm_message(active)));
  std::vector<JobState> jobs =
      active.exit_code == 0 ? parse_squeue(active.out) : std::vector<JobState>{};

  // Jobs the controller forgot (MinJobAge passed): ask the accounting, or the completion log.
  std::vector<std::string> missing;
  for (const auto& id : job_ids) {
    const bool known = std::any_of(jobs.begin(), jobs.end(), [&](const JobState& j) {
      return j.id == id || j.id.starts_with(id + "_");
    });
    if (!known) missing.push_back(id);
  }
  if (missing.empty() || !find_on_path("sacct")) return jobs;
  const std::vector<std::string> sacct = {"sacct",
                                          "--allocations",
                                          "--noheader",
                                          "--parsable2",
                                          "--jobs=" + join(missing, ","),
                                          std::string("--format=") + kSacctFormat};
  auto finished = run(sacct);
  if (finished.exit_code != 0 &&
      finished.err.find("accounting storage is disabled") != std::string::npos) {
    auto with_log = sacct;
    with_log.insert(with_log.begin() + 1, "--completion");
    finished = run(with_log);
  }
  if (finished.exit_code == 0)
    for (auto& j : parse_sacct(finished.out)) jobs.push_back(std::move(j));
  return jobs;
}

void SlurmScheduler::start_now(const std::string& job_id) {
  const auto r = run({"scontrol", "update", "JobId=" + job_id, "StartTime=now"});
  if (r.exit_code != 0)
    throw Error(fmt::format("scontrol could not release job {}: {}", job_id, slurm_message(r)));
}

}  // namespace clustersweep::slurm
