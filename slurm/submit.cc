#include "slurm/submit.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "base/files.h"

namespace clustersweep::slurm {
namespace {

namespace fs = std::filesystem;
constexpr std::string_view kRecordMagic = "clustersweep-slurm-jobs";
constexpr int kRecordVersion = 1;

std::string utc_now() {
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                     fmt::gmtime(std::chrono::system_clock::to_time_t(now)));
}

std::string joined(const std::vector<std::string>& ids) {
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : ", ") + id;
  return out;
}

}  // namespace

std::vector<PlannedJob> plan_jobs(const SubmitRequest& request) {
  const SweepJob& job = request.job;
  std::vector<PlannedJob> plan;
  if (job.array.tasks > 0) {
    plan.push_back({"array", job.store + ".sbatch", sweep_script(job), -1, ""});
    plan.push_back({"merge", job.store + ".merge.sbatch", merge_script(job), 0, "afterok"});
  } else if (request.segments > 1) {
    SweepJob segment = job;
    segment.continuation = Continuation::segments;
    const std::string text = sweep_script(segment);
    for (std::uint32_t i = 0; i < request.segments; ++i)
      plan.push_back({"segment", job.store + ".sbatch", text, static_cast<int>(i) - 1,
                      i == 0 ? "" : "afterany"});
  } else {
    plan.push_back({"sweep", job.store + ".sbatch", sweep_script(job), -1, ""});
  }
  const int last = static_cast<int>(plan.size()) - 1;
  for (std::size_t i = 0; i < request.then.size(); ++i)
    plan.push_back({"then", fmt::format("{}.then-{}.sbatch", job.store, i + 1),
                    analysis_script(job, request.then[i]), last, "afterok"});
  return plan;
}

std::vector<std::string> sbatch_args(const std::vector<PlannedJob>& plan, std::size_t index,
                                     const std::vector<std::string>& ids) {
  const PlannedJob& p = plan.at(index);
  if (p.after < 0) return {};
  std::vector<std::string> args = {
      fmt::format("--dependency={}:{}", p.dependency, ids.at(p.after))};
  // Analysis of a sweep that failed would wait forever; let Slurm cancel it instead.
  if (p.dependency == "afterok") args.push_back("--kill-on-invalid-dep=yes");
  return args;
}

Submission submit(const SubmitRequest& request, Scheduler& scheduler) {
  const auto plan = plan_jobs(request);
  std::vector<std::string> created;  // the files no earlier submission had written
  auto write = [&created](const std::string& path, std::string_view text, bool executable) {
    if (!fs::exists(path)) created.push_back(path);
    write_file_atomically(path, text, "submit", executable);
  };
  // The frozen copies are read-only: they are what every job of the sweep runs.
  auto freeze = [&write](const std::string& path, std::string_view text) {
    write(path, text, false);
    fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  };
  if (!request.calibration_text.empty())
    freeze(frozen_calibration_path(request.job.store), request.calibration_text);
  freeze(request.job.spec, request.spec_text);
  for (const auto& p : plan) write(p.script, p.text, true);
  Submission submission;
  submission.time = utc_now();
  submission.shards = request.job.array.tasks;
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    try {
      ids.push_back(scheduler.submit(sbatch_args(plan, i, ids), plan[i].script));
    } catch (const Error& e) {
      if (!submission.jobs.empty()) append_job_record(request.job.store, submission);
      if (ids.empty()) {
        for (const auto& path : created) fs::remove(path);
        throw;
      }
      throw InputError(
          fmt::format("{} (while submitting {}; already submitted: job {}; "
                      "cancel them with scancel {})",
                      e.what(), plan[i].script, joined(ids), fmt::join(ids, " ")));
    }
    submission.jobs.push_back({plan[i].role, ids.back(), plan[i].script});
  }
  append_job_record(request.job.store, submission);
  return submission;
}

std::string job_record_path(const std::string& store) { return store + ".slurm-jobs"; }

std::vector<Submission> read_job_record(const std::string& store) {
  const std::string path = job_record_path(store);
  std::ifstream in(path);
  if (!in) return {};
  std::vector<Submission> submissions;
  std::string line;
  int number = 0;
  bool seen_magic = false;
  const auto bad = [&](std::string_view what) {
    return InputError(fmt::format("{}:{}: {}", path, number, what));
  };
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    if (!seen_magic) {
      seen_magic = true;
      int version = 0;
      if (kind != kRecordMagic || !(words >> version))
        throw bad(fmt::format("not a clustersweep job record (expected '{} {}')", kRecordMagic,
                              kRecordVersion));
      if (version != kRecordVersion)
        throw bad(
            fmt::format("job record format {} is not supported; this clustersweep reads format {}",
                        version, kRecordVersion));
    } else if (kind == "submission") {
      Submission s;
      if (!(words >> s.time >> s.shards)) throw bad("expected 'submission TIME SHARDS'");
      submissions.push_back(s);
    } else if (kind == "job") {
      SubmittedJob j;
      if (submissions.empty() || !(words >> j.role >> j.id) ||
          !std::getline(words >> std::ws, j.script))
        throw bad("expected 'job ROLE ID SCRIPT' after a 'submission' line");
      submissions.back().jobs.push_back(j);
    } else {
      throw bad(fmt::format("unknown line '{}'", line));
    }
  }
  return submissions;
}

void append_job_record(const std::string& store, const Submission& submission) {
  const std::string path = job_record_path(store);
  const bool fresh = !fs::exists(path);
  std::ofstream out(path, std::ios::app);
  if (fresh)
    out << "# Slurm jobs submitted by `clustersweep submit` for this store; read by `clustersweep "
           "status`.\n"
        << kRecordMagic << ' ' << kRecordVersion << '\n';
  out << "submission " << submission.time << ' ' << submission.shards << '\n';
  for (const auto& j : submission.jobs)
    out << "job " << j.role << ' ' << j.id << ' ' << j.script << '\n';
  out.close();
  if (!out) throw Error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
}

}  // namespace clustersweep::slurm
