#include "jobs/job.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>

#include "base/error.h"
#include "base/files.h"
#include "base/numbers.h"
#include "clustersweep/version.h"

namespace clustersweep::jobs {

namespace {

bool parse_uint(std::string_view text, std::uint32_t& out) {
  std::uint64_t value = 0;
  if (!read_uint64(text, 0, std::numeric_limits<std::uint32_t>::max(), value).empty()) return false;
  out = static_cast<std::uint32_t>(value);
  return true;
}

}  // namespace

std::string Shard::text() const { return fmt::format("{}/{}", index, count); }

Shard Shard::parse(std::string_view text, std::string_view flag) {
  const auto slash = text.find('/');
  Shard s;
  if (slash == std::string_view::npos || !parse_uint(text.substr(0, slash), s.index) ||
      !parse_uint(text.substr(slash + 1), s.count) || s.count == 0 || s.index >= s.count)
    throw InputError(
        fmt::format("{}: expected I/K with 0 <= I < K (shard I of K), got '{}'", flag, text));
  return s;
}

ProgressMode parse_progress_mode(std::string_view text, std::string_view flag) {
  if (text == "auto") return ProgressMode::automatic;
  if (text == "bar") return ProgressMode::bar;
  if (text == "lines") return ProgressMode::lines;
  if (text == "none") return ProgressMode::none;
  throw InputError(fmt::format("{}: expected auto, bar, lines or none, got '{}'", flag, text));
}

void Job::validate() const {
  if (options.resume && options.force)
    throw InputError(
        "--resume and --force contradict each other: --resume continues the store, "
        "--force deletes it");
  if (store_path.empty()) throw InputError("--output: the store path is empty");
  if (!(options.progress_interval_s > 0))
    throw InputError(
        fmt::format("--progress-interval: must be a positive number of seconds, got {}",
                    options.progress_interval_s));
}

void Job::refuse_clobbering(const std::string& calibration_file) const {
  const std::string partial = partial_path(store_path), assembly = assembly_path(store_path);
  clustersweep::refuse_clobbering(
      {{spec_path, "the spec being read"}, {calibration_file, "the calibration file it names"}},
      {{store_path, "-o"},
       {partial, "-o (its unfinished run)"},
       {partial + ".new", "-o (its unfinished run)"},
       {assembly, "-o (its assembly)"},
       {assembly + ".new", "-o (its assembly)"},
       {store_path + ".lock", "-o (its lock)"}});
}

std::vector<std::string> Job::run_arguments() const {
  std::vector<std::string> args = {"run", spec_path, "-o", store_path};
  if (options.resume) args.push_back("--resume");
  if (options.force) args.push_back("--force");
  if (options.chunk_points) {
    args.push_back("--chunk-points");
    args.push_back(std::to_string(options.chunk_points));
  }
  if (!options.shard.whole()) {
    args.push_back("--shard");
    args.push_back(options.shard.text());
  }
  static constexpr const char* kModes[] = {"auto", "bar", "lines", "none"};
  if (options.progress != ProgressMode::automatic) {
    args.push_back("--progress");
    args.push_back(kModes[static_cast<int>(options.progress)]);
  }
  if (options.progress_interval_s != RunOptions{}.progress_interval_s) {
    args.push_back("--progress-interval");
    args.push_back(fmt::format("{}", options.progress_interval_s));
  }
  if (!options.summary) args.push_back("--no-summary");
  if (options.exhaustive) args.push_back("--exhaustive");
  return args;
}

std::string read_spec(const std::string& path) {
  auto text = read_file(path);
  if (!text) throw InputError(fmt::format("cannot read spec '{}': {}", path, std::strerror(errno)));
  return std::move(*text);
}

std::string spec_hash(std::string_view spec_text) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : spec_text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

std::string partial_path(const std::string& store_path) { return store_path + ".partial"; }
std::string assembly_path(const std::string& store_path) { return store_path + ".assembling"; }

Provenance Provenance::current(const std::vector<std::string>& command_line) {
  Provenance p;
  p.tool_version = kVersion;
  p.git_revision = kGitRevision;
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  p.created_utc = stamp;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) p.host = host;
  if (const char* user = std::getenv("USER")) p.user = user;
  for (const auto& a : command_line) p.command += (p.command.empty() ? "" : " ") + a;
  return p;
}

}  // namespace clustersweep::jobs
