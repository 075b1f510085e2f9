#include "slurm/script.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "clustersweep/version.h"

namespace clustersweep::slurm {
namespace {

namespace fs = std::filesystem;

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// sbatch expands %j, %A, %a... in --output; a literal '%' is written "%%".
std::string output_pattern(const std::string& store, std::string_view suffix) {
  return replace_all(store, "%", "%%") + std::string(suffix);
}

// "dir/results.h5" -> {"dir/results", ".h5"}; no extension -> {"dir/results", ""}.
std::pair<std::string, std::string> split_extension(const std::string& path) {
  const fs::path p(path);
  if (!p.has_extension() || p.stem().empty()) return {path, ""};
  const std::string ext = p.extension().string();
  return {path.substr(0, path.size() - ext.size()), ext};
}

// Digits of the largest shard index, so that shard file names sort in shard order.
int index_width(std::uint32_t count) {
  return static_cast<int>(std::to_string(std::max(count, 1u) - 1).size());
}

std::string header(const SweepJob& job, std::string_view what) {
  std::string text = "#!/bin/bash\n";
  text += fmt::format("# {}\n", what);
  text += fmt::format("# Written by clustersweep {} (git {})", kVersion, kGitRevision);
  // The command line goes into a comment: no newline may end the comment early.
  std::string command = job.submitted_by;
  std::replace(command.begin(), command.end(), '\n', ' ');
  if (!command.empty()) text += fmt::format(":\n#   {}", command);
  return text + "\n#\n";
}

// The #SBATCH lines every job of a submission shares, with the job's time limit.
std::string common_sbatch(const SweepJob& job, std::uint64_t time_limit_s) {
  std::string text;
  const auto line = [&](std::string_view option, const std::string& value) {
    if (!value.empty()) text += fmt::format("#SBATCH --{}={}\n", option, shell_quote(value));
  };
  line("partition", job.partition);
  line("account", job.account);
  line("qos", job.qos);
  line("time", format_time_limit(time_limit_s));
  return text;
}

std::string extra_sbatch(const SweepJob& job) {
  std::string text;
  for (const auto& arg : job.sbatch_args) text += fmt::format("#SBATCH {}\n", arg);
  return text;
}

std::string q(const std::string& word) { return shell_quote(word); }

}  // namespace

std::uint64_t default_signal_margin(std::uint64_t time_limit_s) {
  return std::clamp<std::uint64_t>(time_limit_s / 10, 30, 600);
}

std::string frozen_spec_path(const std::string& store) { return store + ".spec.toml"; }
std::string frozen_calibration_path(const std::string& store) {
  return store + ".calibration.toml";
}

std::string shard_path(const std::string& store, std::uint32_t index, std::uint32_t count) {
  const auto [stem, ext] = split_extension(store);
  const int width = index_width(count);
  return fmt::format("{}.shard-{:0{}}-of-{}{}", stem, index, width, count, ext);
}

std::string sweep_script(const SweepJob& job) {
  const bool array = job.array.tasks > 0;
  const bool requeue = job.continuation == Continuation::requeue;
  std::string s =
      header(job, array ? fmt::format("clustersweep sweep of {} as {} shards (a job array)",
                                      job.spec, job.array.tasks)
                        : fmt::format("clustersweep sweep of {} into {}", job.spec, job.store));
  s += requeue
           ? "# Near the time limit the sweep checkpoints and the job requeues itself to resume.\n"
           : "# Near the time limit the sweep checkpoints; the next job of the chain resumes it.\n";
  s += "# Submitting this file again continues the sweep where the store stops.\n";
  if (!job.original_spec.empty())
    s += fmt::format(
        "# It runs a frozen, read-only copy of the spec {}: editing, moving or\n"
        "# deleting the original changes nothing here.\n",
        job.original_spec);
  s += fmt::format("#SBATCH --job-name={}\n", q(job.job_name));
  s += fmt::format("#SBATCH --nodes={}\n#SBATCH --ntasks-per-node={}\n", job.nodes,
                   job.ntasks_per_node);
  s += common_sbatch(job, job.time_limit_s);
  if (!job.mem.empty()) s += fmt::format("#SBATCH --mem={}\n", q(job.mem));
  if (!job.constraint.empty()) s += fmt::format("#SBATCH --constraint={}\n", q(job.constraint));
  if (array) {
    s += fmt::format("#SBATCH --array=0-{}{}\n", job.array.tasks - 1,
                     job.array.at_once ? fmt::format("%{}", job.array.at_once) : "");
    s += fmt::format("#SBATCH --output={}\n", q(output_pattern(job.store, ".slurm-%A_%a.out")));
  } else {
    s += fmt::format("#SBATCH --output={}\n", q(output_pattern(job.store, ".slurm-%j.out")));
  }
  s += "#SBATCH --open-mode=append\n";
  s += fmt::format("#SBATCH --signal=B:USR1@{}\n", job.signal_margin_s);
  s += requeue ? "#SBATCH --requeue\n" : "#SBATCH --no-requeue\n";
  s += extra_sbatch(job);

  s += "\nset -u\n";
  s += fmt::format("clustersweep={}\nspec={}\n", q(job.clustersweep), q(job.spec));
  if (array) {
    const auto [stem, ext] = split_extension(job.store);
    const int width = index_width(job.array.tasks);
    s += "# This task's shard of the space, in its own store; the merge job joins them.\n";
    s += fmt::format("shard=\"$SLURM_ARRAY_TASK_ID/{}\"\n", job.array.tasks);
    s += fmt::format("store=$(printf {} \"$SLURM_ARRAY_TASK_ID\")\n",
                     q(fmt::format("{}.shard-%0{}d-of-{}{}", replace_all(stem, "%", "%%"), width,
                                   job.array.tasks, replace_all(ext, "%", "%%"))));
  } else {
    s += fmt::format("store={}\n", q(job.store));
  }
  s += fmt::format("requeue={}\nmax_requeues={}\n", requeue ? 1 : 0, job.max_requeues);
  s += "# Parallel file systems (Lustre, GPFS, NFS) often lack the locks HDF5 would take.\n";
  s += "export HDF5_USE_FILE_LOCKING=FALSE\n\n";
  s += "echo \"clustersweep: job ${SLURM_JOB_ID} run $((${SLURM_RESTART_COUNT:-0} + 1)) starts "
       "$(date -Is) on ${SLURM_JOB_NODELIST:-$(hostname)}\"\n\n";

  s += "# Slurm sends SIGUSR1 to this shell (--signal=B:USR1@...) as the time limit nears. The "
       "sweep\n"
       "# runs in the background so that the trap fires at once; it passes the signal on, and the\n"
       "# sweep stops handing out work, flushes the store and exits 75 (resumable).\n";
  s += "signalled=0\ntrapped=0\n"
       "on_usr1() {\n"
       "  signalled=1\n  trapped=1\n"
       "  echo \"clustersweep: SIGUSR1 at $(date -Is): time limit near, checkpointing\"\n"
       "  kill -USR1 \"$sweep\" 2>/dev/null\n"
       "}\n"
       "trap on_usr1 USR1\n\n";
  const std::string run_args = array ? "run \"$spec\" -o \"$store\" --shard \"$shard\" --resume"
                                     : "run \"$spec\" -o \"$store\" --resume";
  // Not --kill-on-bad-exit: the ranks leave a checkpoint (exit 75) moments apart, and srun would
  // then kill the last ones and report 143, a failure, instead of the checkpoint.
  s += job.launcher == Launcher::srun
           ? fmt::format("srun --mpi=pmix \"$clustersweep\" {} &\n", run_args)
           : fmt::format("mpirun \"$clustersweep\" {} &\n", run_args);
  s += "sweep=$!\n"
       "# `wait` returns early when the trap runs; wait again for the sweep's own exit code.\n"
       "while :; do\n  trapped=0\n  wait \"$sweep\"\n  status=$?\n  (( trapped )) || "
       "break\ndone\n\n";
  // srun can exit 0 when a node failed as the step launched and no task ran: only the store says
  // whether the sweep finished.
  s += "if (( status == 0 )) && ! \"$clustersweep\" status \"$store\" --interval 0 --json "
       "2>/dev/null |\n"
       "    grep -q '\"state\": \"complete\"'; then\n"
       "  echo \"clustersweep: the launcher exited 0 but $store is not complete (a task that never "
       "started?); resuming it as an interrupted run\" >&2\n"
       "  status=75\n"
       "fi\n";
  s += "if (( status == 0 )); then\n"
       "  echo \"clustersweep: sweep complete $(date -Is)\"\n"
       "  exit 0\n"
       "fi\n"
       "if (( status == 75 || signalled )); then\n"
       "  if (( ! requeue )); then\n"
       "    echo \"clustersweep: checkpointed (exit $status); the next job of the chain resumes\"\n"
       "    exit 75\n"
       "  fi\n"
       "  if (( ${SLURM_RESTART_COUNT:-0} >= max_requeues )); then\n"
       "    echo \"clustersweep: checkpointed, but requeued $max_requeues times already; resubmit "
       "to "
       "continue\" >&2\n"
       "    exit 75\n"
       "  fi\n"
       "  echo \"clustersweep: checkpointed (exit $status); requeueing job $SLURM_JOB_ID to "
       "resume\"\n"
       "  scontrol requeue \"$SLURM_JOB_ID\" && exit 75\n"
       "  echo \"clustersweep: scontrol requeue failed; resubmit this script to continue\" >&2\n"
       "  exit 75\n"
       "fi\n"
       "echo \"clustersweep: sweep failed with exit code $status\" >&2\n"
       "exit \"$status\"\n";
  return s;
}

std::string merge_script(const SweepJob& job) {
  std::string s = header(
      job, fmt::format("Merges the {} shards of the array into {}", job.array.tasks, job.store));
  s += fmt::format("#SBATCH --job-name={}\n", q(job.job_name + "-merge"));
  s += "#SBATCH --nodes=1\n#SBATCH --ntasks=1\n";
  s += common_sbatch(job, job.time_limit_s);
  s += fmt::format("#SBATCH --output={}\n", q(output_pattern(job.store, ".merge-%j.out")));
  s += extra_sbatch(job);
  s += "\nset -u\nexport HDF5_USE_FILE_LOCKING=FALSE\n";
  s += fmt::format("exec {} merge \\\n", q(job.clustersweep));
  for (std::uint32_t i = 0; i < job.array.tasks; ++i)
    s += fmt::format("  {} \\\n", q(shard_path(job.store, i, job.array.tasks)));
  s += fmt::format("  -o {} --force\n", q(job.store));
  return s;
}

std::string analysis_script(const SweepJob& job, const std::vector<std::string>& words) {
  const std::string folder = fs::path(job.store).parent_path().string();
  std::string command = q(words.at(0)) + " " + q(job.store);
  for (std::size_t i = 1; i < words.size(); ++i) command += fmt::format(" {}", q(words[i]));
  std::string s = header(
      job, fmt::format("Runs `clustersweep {}` on {} once the sweep is done", words[0], job.store));
  s += fmt::format("#SBATCH --job-name={}\n", q(job.job_name + "-" + words[0]));
  s += "#SBATCH --nodes=1\n#SBATCH --ntasks=1\n";
  s += common_sbatch(job, job.then_time_limit_s);
  s += fmt::format("#SBATCH --output={}\n",
                   q(output_pattern(job.store, fmt::format(".{}-%j.out", words[0]))));
  s += extra_sbatch(job);
  s += "\nset -eu\nexport HDF5_USE_FILE_LOCKING=FALSE\n";
  s += "# Relative output paths land next to the store.\n";
  s += fmt::format("cd {}\n", q(folder.empty() ? "." : folder));
  s += fmt::format("exec {} {}\n", q(job.clustersweep), command);
  return s;
}

}  // namespace clustersweep::slurm
