#pragma once
// A sweep job: a spec, the store it writes and how to run it; the provenance stored with the
// results; and the files a run leaves while it is unfinished (docs/engine.md).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace clustersweep::jobs {

// Run only shard `index` of `count` (0 <= index < count): a contiguous range of designs, written to
// its own store; `clustersweep merge` joins the shards' stores in order.
struct Shard {
  std::uint32_t index = 0;
  std::uint32_t count = 1;
  bool whole() const noexcept { return count == 1; }
  std::string text() const;  // "I/K"
  // Parses "I/K"; InputError "<flag>: expected I/K with 0 <= I < K, got 'X'".
  static Shard parse(std::string_view text, std::string_view flag = "--shard");
};

enum class ProgressMode : std::uint8_t {
  automatic,  // a live bar on a terminal, plain lines otherwise
  bar,
  lines,
  none,
};
// "auto", "bar", "lines", "none"; InputError naming `flag` otherwise.
ProgressMode parse_progress_mode(std::string_view text, std::string_view flag = "--progress");

struct RunOptions {
  bool resume = false;             // continue an unfinished store (or start it when missing)
  bool force = false;              // delete an existing store and start over
  std::uint64_t chunk_points = 0;  // points per chunk; 0 = chosen from the space and rank count
  Shard shard;
  ProgressMode progress = ProgressMode::automatic;
  double progress_interval_s = 5;  // between plain progress lines
  bool summary = true;             // print the best designs at the end
  // Per-design keep modes: evaluate every plan instead of the exact plan search (same rows).
  bool exhaustive = false;
};

struct Job {
  std::string spec_path;
  std::string store_path;
  RunOptions options;

  // InputError naming the flag for contradictory or invalid options.
  void validate() const;
  // InputError when a file the run writes (the store, its unfinished run, their temporaries and
  // lock) is the spec or the calibration file it names: checked before --force deletes anything.
  void refuse_clobbering(const std::string& calibration_file) const;
  // The `clustersweep` arguments that run this job: {"run", spec, "-o", store, ...}.
  std::vector<std::string> run_arguments() const;
};

// Reads a spec file; InputError "cannot read spec 'PATH': REASON" when it cannot.
std::string read_spec(const std::string& path);

// 16 hex digits (FNV-1a, 64 bits) of the spec text: a store records the hash of its spec, and a
// resume with any other text is refused.
std::string spec_hash(std::string_view spec_text);

// Where an unfinished run keeps its rows and progress, and where a filtered run assembles the
// final store before renaming it into place (docs/engine.md, "Files").
std::string partial_path(const std::string& store_path);
std::string assembly_path(const std::string& store_path);

// Who ran what, when and where; stored in the results' root attributes.
struct Provenance {
  std::string tool_version;
  std::string git_revision;
  std::string created_utc;  // ISO 8601, e.g. 2026-11-22T09:47:16Z
  std::string host;
  std::string user;
  std::string command;  // the command line, arguments joined by spaces
  static Provenance current(const std::vector<std::string>& command_line);
};

}  // namespace clustersweep::jobs
