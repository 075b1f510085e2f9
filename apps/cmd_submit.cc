// clustersweep submit: run a sweep as Slurm batch job(s); see docs/slurm.md.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "apps/commands.h"
#include "base/error.h"
#include "base/files.h"
#include "base/names.h"
#include "engine/schema.h"
#include "jobs/job.h"
#include "slurm/options.h"
#include "slurm/process.h"
#include "slurm/scheduler.h"
#include "slurm/sizing.h"
#include "slurm/submit.h"
#include "spaces/forecast.h"
#include "spaces/space.h"

namespace clustersweep::cli {
namespace {

namespace fs = std::filesystem;

std::string absolute(const std::string& path) {
  return fs::absolute(path).lexically_normal().string();
}

std::string self_path() {
  std::error_code ec;
  const auto path = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error(fmt::format("cannot find the clustersweep binary: {}", ec.message()));
  return path.string();
}

// The command line as typed, for the scripts' header.
std::string command_line(const Args& args) {
  std::string line = "clustersweep submit";
  for (const auto& a : args) line += fmt::format(" {}", slurm::shell_quote(a));
  return line;
}

// Slurm's --mem: a whole number with an optional K, M, G or T suffix.
void check_mem(const std::string& mem) {
  const auto digits = mem.find_first_not_of("0123456789");
  const bool ok = digits != 0 && (digits == std::string::npos ||
                                  (digits + 1 == mem.size() &&
                                   std::string("KMGTkmgt").find(mem[digits]) != std::string::npos));
  if (!ok)
    throw InputError(fmt::format("--mem: expected a size such as 64G or 4000M, got '{}'", mem));
}

// Two jobs writing one store would ruin it: refuse while a job of the last submission may run.
void refuse_if_running(const std::string& store, slurm::Scheduler& scheduler) {
  const auto submissions = slurm::read_job_record(store);
  if (submissions.empty() || !slurm::find_on_path("squeue")) return;
  std::vector<std::string> ids;
  for (const auto& j : submissions.back().jobs)
    if (j.role != "then") ids.push_back(j.id);
  for (const auto& j : scheduler.query(ids))
    if (slurm::is_active(j.state))
      throw InputError(
          fmt::format("{} is still being written by job {} ({}); wait for it or scancel it first",
                      store, j.id, j.state));
}

}  // namespace

int submit(const Args& args) {
  po::options_description options("Options");
  options.add_options()("spec", po::value<std::string>(), "the sweep spec (TOML)")(
      "output,o", po::value<std::string>(), "the results store the job writes (HDF5)")(
      "nodes", po::value<std::string>(), "nodes per job (required)")(
      "ntasks-per-node", po::value<std::string>(), "MPI ranks per node (required)")(
      "time", po::value<std::string>(),
      "time limit per job in any form sbatch takes: minutes (90), MM:SS, HH:MM:SS, D-HH, D-HH:MM "
      "or D-HH:MM:SS (required)")("partition", po::value<std::string>()->default_value(""),
                                  "Slurm partition")(
      "account", po::value<std::string>()->default_value(""), "Slurm account to charge")(
      "qos", po::value<std::string>()->default_value(""), "Slurm quality of service")(
      "mem", po::value<std::string>()->default_value(""), "memory per node, e.g. 64G")(
      "constraint", po::value<std::string>()->default_value(""), "node features, e.g. 'skylake'")(
      "sbatch-arg", po::value<std::vector<std::string>>()->default_value({}, ""),
      "one more sbatch option, e.g. --exclusive (repeatable)")(
      "launcher", po::value<std::string>()->default_value("srun"),
      "how the job starts the MPI ranks: srun (srun --mpi=pmix) or mpirun")(
      "signal-margin", po::value<std::string>(),
      "seconds before the time limit when Slurm sends SIGUSR1 so the sweep checkpoints "
      "(default: a tenth of the time limit, 30 s to 600 s)")(
      "max-requeues", po::value<std::string>()->default_value("50"),
      "stop requeueing after this many restarts")(
      "segments", po::value<std::string>(),
      "instead of requeueing, chain this many jobs (afterany), each resuming the sweep")(
      "array", po::value<std::string>(),
      "K[%T]: split the space into K shards run as a job array, at most T at once; a final job "
      "merges the shards into the store")(
      "then", po::value<std::vector<std::string>>()->default_value({}, ""),
      "an analysis command run on the store once the sweep completed, e.g. "
      "\"pareto --objectives time_to_train_s,energy_to_train_j --svg front.svg\" (repeatable)")(
      "then-time", po::value<std::string>(),
      "time limit of each --then job, in --time's forms (default: from the forecast store size, "
      "at least 5 minutes, at most --time)")("job-name", po::value<std::string>(),
                                             "Slurm job name (default: cs-<store name>)")(
      "resume", "continue an existing store (or its unfinished run) instead of refusing it")(
      "force", "delete an existing store (its unfinished run, its shards) and start over")(
      "dry-run", "print the scripts and sbatch commands instead of submitting")(
      "quiet,q", "no warning when the request is far from the forecast");
  po::positional_options_description positional;
  positional.add("spec", 1);
  const auto vm = parse(
      args, options, positional,
      "submit SPEC -o STORE --nodes N --ntasks-per-node M --time LIMIT [options]",
      "Writes an sbatch script next to the store and submits it with sbatch. Near "
      "the time limit the sweep\ncheckpoints and the job requeues itself (or the "
      "next job of a --segments chain resumes it).\nPrints the first job's id on stdout (every job "
      "on stderr); `clustersweep status STORE` follows the sweep.");
  if (!vm) return 0;

  // Everything is checked before anything is written or submitted.
  slurm::SubmitRequest request;
  slurm::SweepJob& job = request.job;
  const auto spec_path = required<std::string>(*vm, "spec");
  job.store = absolute(required<std::string>(*vm, "output"));
  job.nodes = slurm::parse_positive("--nodes", required<std::string>(*vm, "nodes"));
  job.ntasks_per_node =
      slurm::parse_positive("--ntasks-per-node", required<std::string>(*vm, "ntasks-per-node"));
  job.time_limit_s = slurm::parse_time_limit(required<std::string>(*vm, "time"));
  job.signal_margin_s = slurm::default_signal_margin(job.time_limit_s);
  if (vm->count("then-time"))
    job.then_time_limit_s =
        slurm::parse_time_limit((*vm)["then-time"].as<std::string>(), "--then-time");
  if (vm->count("signal-margin")) {
    job.signal_margin_s =
        slurm::parse_positive("--signal-margin", (*vm)["signal-margin"].as<std::string>(), 65535);
    if (job.signal_margin_s >= job.time_limit_s)
      throw InputError(fmt::format("--signal-margin: {} s must be shorter than the time limit ({})",
                                   job.signal_margin_s,
                                   slurm::format_time_limit(job.time_limit_s)));
  }
  job.max_requeues =
      slurm::parse_positive("--max-requeues", (*vm)["max-requeues"].as<std::string>());
  job.partition = (*vm)["partition"].as<std::string>();
  job.account = (*vm)["account"].as<std::string>();
  job.qos = (*vm)["qos"].as<std::string>();
  job.mem = (*vm)["mem"].as<std::string>();
  if (!job.mem.empty()) check_mem(job.mem);
  job.constraint = (*vm)["constraint"].as<std::string>();
  job.sbatch_args = (*vm)["sbatch-arg"].as<std::vector<std::string>>();
  for (const auto& arg : job.sbatch_args)
    if (arg.size() < 2 || arg[0] != '-' || arg.find('\n') != std::string::npos)
      throw InputError(fmt::format(
          "--sbatch-arg: expected one sbatch option such as --exclusive or --gres=gpu:4, got '{}'",
          arg));
  const auto launcher = (*vm)["launcher"].as<std::string>();
  if (launcher != "srun" && launcher != "mpirun")
    throw InputError(fmt::format("--launcher: expected srun or mpirun, got '{}'", launcher));
  job.launcher = launcher == "srun" ? slurm::Launcher::srun : slurm::Launcher::mpirun;
  if (vm->count("segments") && vm->count("array"))
    throw InputError("--segments and --array cannot be combined: array tasks requeue themselves");
  if (vm->count("segments")) {
    request.segments =
        slurm::parse_positive("--segments", (*vm)["segments"].as<std::string>(), 1000);
    job.continuation = slurm::Continuation::segments;
  }
  if (vm->count("array")) job.array = slurm::parse_array((*vm)["array"].as<std::string>());
  for (const auto& command : (*vm)["then"].as<std::vector<std::string>>()) {
    request.then.push_back(slurm::split_words("--then", command));
    // Checked now: a typo found after the sweep would waste its analysis job.
    const std::string& name = request.then.back().front();
    const std::vector<std::string> known(std::begin(kStoreCommands), std::end(kStoreCommands));
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw InputError(fmt::format("--then: '{}' is not a command that reads the store{}", name,
                                   closest_names(name, known, 1).empty()
                                       ? fmt::format("; expected one of {}", fmt::join(known, ", "))
                                       : did_you_mean(name, known)));
  }
  const bool resume = vm->count("resume") > 0, force = vm->count("force") > 0;
  if (resume && force) throw InputError("--resume and --force cannot be combined");

  const auto space = spaces::Space::load(spec_path);
  // The jobs run a frozen copy of the spec (and of a calibration file it names) next to the
  // store: a spec edited or moved while the sweep waits in the queue or between requeues cannot
  // break or change it.
  job.original_spec = absolute(spec_path);
  job.spec = slurm::frozen_spec_path(job.store);
  const spaces::FrozenSpec frozen = spaces::freeze_spec(space.text(), job.original_spec,
                                                        slurm::frozen_calibration_path(job.store));
  request.spec_text = frozen.text;
  if (!frozen.calibration.empty()) {
    const auto text = read_file(frozen.calibration);
    if (!text)
      throw InputError(fmt::format("cannot open calibration file '{}': {}", frozen.calibration,
                                   std::strerror(errno)));
    request.calibration_text = *text;
  }
  if (job.array.tasks > space.designs())
    throw InputError(
        fmt::format("--array: {} shards for {} designs; a shard is a range of designs, so "
                    "use at most {}",
                    job.array.tasks, space.designs(), space.designs()));
  // What the sweep needs, from a short timed sample as `clustersweep plan` takes it: an analysis
  // job reads the store once, so it gets minutes, not the sweep's hours (backfill starts it soon
  // and it holds no allocation it does not use); a request far from the need is worth a word.
  const std::uint64_t valid = space.valid_points();
  const auto forecast = spaces::forecast(space, valid, 0.2);
  const slurm::SweepNeed need{forecast.core_seconds,
                              spaces::forecast_rows(space, valid, forecast) *
                                  static_cast<double>(engine::make_schema(space).row_bytes())};
  if (!vm->count("then-time"))
    job.then_time_limit_s = slurm::default_then_time_limit(need, job.time_limit_s);
  job.job_name = vm->count("job-name") ? (*vm)["job-name"].as<std::string>()
                                       : "cs-" + fs::path(job.store).filename().string();
  job.clustersweep = self_path();
  job.submitted_by = command_line(args);

  // The stores this submission writes (the store, or its shards and the merged store), and the
  // unfinished runs of them that a job, which always resumes, would continue.
  std::vector<std::string> outputs;
  const auto add_store = [&](const std::string& store) {
    outputs.insert(outputs.end(), {store, jobs::partial_path(store), jobs::assembly_path(store)});
  };
  add_store(job.store);
  for (std::uint32_t i = 0; i < job.array.tasks; ++i)
    add_store(slurm::shard_path(job.store, i, job.array.tasks));
  if (!fs::is_directory(fs::path(job.store).parent_path()))
    throw InputError(fmt::format("-o {}: the folder {} does not exist", job.store,
                                 fs::path(job.store).parent_path().string()));
  if (!resume && !force)
    for (const auto& path : outputs)
      if (fs::exists(path))
        throw InputError(fmt::format(
            "{} already exists; pass --resume to continue it or --force to start over", path));

  // A request far from the need is worth a word, once it is known to go through.
  const auto warn = [&] {
    if (vm->count("quiet")) return;
    if (const auto warning = slurm::allocation_warning(request, need); !warning.empty())
      std::cerr << "clustersweep submit: " << warning << '\n';
  };
  const auto plan = slurm::plan_jobs(request);
  // The frozen copies are left out: they are written byte for byte from the spec and the
  // calibration it names, so resubmitting the frozen spec itself loses nothing.
  std::vector<CommandFile> written;
  for (const auto& path : outputs) written.push_back({path, "-o"});
  for (const auto& planned : plan)  // the segments of a chain share one script
    if (std::none_of(written.begin(), written.end(),
                     [&](const CommandFile& f) { return f.path == planned.script; }))
      written.push_back({planned.script, "-o (its batch script)"});
  written.push_back({slurm::job_record_path(job.store), "-o (its job record)"});
  refuse_clobbering(
      {{spec_path, "the spec being read"}, {frozen.calibration, "the calibration file it names"}},
      written);
  if (vm->count("dry-run")) {
    warn();
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < plan.size(); ++i) {
      ids.push_back(fmt::format("<job {}>", i + 1));
      std::string sbatch = "sbatch --parsable";
      for (const auto& a : slurm::sbatch_args(plan, i, ids)) sbatch += fmt::format(" {}", a);
      std::cout << fmt::format("# ---- {} ({}): {} {}\n{}\n", plan[i].script, plan[i].role, sbatch,
                               plan[i].script, plan[i].text);
    }
    return 0;
  }

  slurm::require_client("sbatch");
  slurm::SlurmScheduler scheduler;
  refuse_if_running(job.store, scheduler);
  if (force)
    for (const auto& path : outputs) fs::remove(path);
  const auto submission = slurm::submit(request, scheduler);
  // Like sbatch --parsable: the (first) job id alone on stdout, for scripts; the rest on stderr.
  std::cout << submission.jobs.front().id << std::endl;
  warn();
  for (const auto& j : submission.jobs)
    std::cerr << fmt::format("clustersweep submit: {} job {} ({})\n", j.role, j.id, j.script);
  std::cerr << fmt::format("clustersweep submit: follow it with: clustersweep status {}\n",
                           job.store);
  return 0;
}

}  // namespace clustersweep::cli
