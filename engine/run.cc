#include "engine/run.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <ostream>

#include "base/error.h"
#include "base/format.h"
#include "clustersweep/version.h"
#include "engine/chunks.h"
#include "engine/evaluate.h"
#include "engine/h5.h"
#include "engine/mpi.h"
#include "engine/output.h"
#include "engine/progress.h"
#include "engine/row_writer.h"
#include "engine/scheduler.h"
#include "engine/signals.h"
#include "engine/store_format.h"
#include "engine/store_reader.h"
#include "engine/store_writer.h"
#include "engine/summary.h"
#include "spaces/space.h"

namespace clustersweep::engine {

namespace fs = std::filesystem;

namespace {

constexpr int kFailureText = 7201;

// Thrown on ranks other than 0 once a failure is known everywhere; rank 0 reports it.
struct Quiet {
  int code;
};

// Runs `step` on every rank. When it throws on any rank, every rank learns it: rank 0 rethrows the
// lowest failing rank's error (message and exit code), the other ranks throw Quiet.
template <class Step>
void together(const mpi::Comm& comm, Step&& step) {
  std::int64_t code = 0;
  std::string message;
  try {
    step();
  } catch (const Error& e) {
    code = e.exit_code();
    message = e.what();
  } catch (const std::exception& e) {
    code = kExitFailure;
    message = e.what();
  }
  if (comm.max(std::int64_t{code != 0}) == 0) return;
  const std::int64_t first =
      -comm.max(code != 0 ? -std::int64_t{comm.rank()} : -std::int64_t{comm.size()});
  const std::int64_t failing_code = comm.broadcast(code, static_cast<int>(first));
  if (comm.rank() == 0) {
    if (first != 0) message = comm.receive_text(static_cast<int>(first), kFailureText);
    throw Error(message, static_cast<int>(failing_code));
  }
  if (comm.rank() == first) comm.send_text(message, 0, kFailureText);
  throw Quiet{static_cast<int>(failing_code)};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

const char* signal_name(int number) {
  switch (number) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGUSR1:
      return "SIGUSR1";
    default:
      return "a signal";
  }
}

bool exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

void remove_file(const std::string& path) {
  std::error_code ec;
  fs::remove(path, ec);
  if (ec) throw Error(fmt::format("cannot delete '{}': {}", path, ec.message()));
}

void rename_file(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec) throw Error(fmt::format("cannot rename '{}' to '{}': {}", from, to, ec.message()));
}

// The room a fresh run's store takes, checked before it is created: a keep = "all" store is
// allocated whole; a filtered run's staging file has a slot of rows per chunk but stays sparse,
// holding only the kept rows, which for best-per-design are at most one per design, and those
// rows are copied once more into the final store before the staging file goes. The rows of
// feasible and pareto-per-design are known only as the run goes: for them only the staging file's
// size is checked (a full disk later stops the run with its work kept for --resume).
void check_room_for(const std::string& store, const StoreHeader& header) {
  const std::uint64_t row = header.schema.row_bytes();
  // The metadata (attributes, axis tables, progress marks): generously.
  const std::uint64_t metadata = (std::uint64_t{1} << 20) + header.chunks * 9;
  const double rows = static_cast<double>(header.rows);
  // Compared as doubles: a space of 10^15 designs overflows 64 bits of bytes.
  const double file = rows * static_cast<double>(row) + static_cast<double>(metadata);
  const auto clamp = [](double bytes) {
    return bytes >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max()
                           : static_cast<std::uint64_t>(bytes);
  };
  std::uint64_t used = 0;
  std::string what;
  if (header.keep == "all") {
    used = clamp(file);
    what = fmt::format("the store needs {} ({} rows of {} B)", format_bytes(file),
                       with_commas(header.rows), row);
  } else if (header.keep == "best-per-design") {
    // Each chunk's slot writes also fill the partly used pages at its ends, of every column: the
    // slots are what lets every rank write its chunks at offsets known in advance, without
    // agreeing with the other ranks on where the kept rows go (docs/engine.md).
    const double pages = static_cast<double>(header.chunks) *
                         static_cast<double>(header.schema.columns.size()) * 2 * 4096;
    const double need = 2 * file + pages;
    used = clamp(need);
    what = fmt::format(
        "the run needs up to {}: the staging file {} (a row of {} B for each of {} designs, and "
        "{} of file-system pages, 2 of 4 kB for each of the {} columns of each of the {} chunks, "
        "which write their rows in slots of their own), then the store {}",
        format_bytes(need), format_bytes(file + pages), row, with_commas(header.rows),
        format_bytes(pages), header.schema.columns.size(), with_commas(header.chunks),
        format_bytes(file));
  }
  check_room("--output", store, used, clamp(file), what);
}

// An advisory lock (flock) on STORE.lock, held by rank 0 for the whole run, so two runs never write
// one store at once. The kernel drops it when the process dies, so a killed run never blocks its
// resume; file systems without flock support run unlocked.
class StoreLock {
 public:
  explicit StoreLock(const std::string& store) : path_(store + ".lock") {
    fd_ = open(path_.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (fd_ < 0) return;  // the directory check reports unwritable directories
    if (flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
    const int error = errno;
    close(fd_);
    fd_ = -1;
    if (error == EWOULDBLOCK)
      throw InputError(
          fmt::format("'{}' is being written by another clustersweep run (it holds '{}'); wait "
                      "for it to finish or stop it",
                      store, path_));
  }
  ~StoreLock() {
    if (fd_ < 0) return;
    unlink(path_.c_str());
    close(fd_);
  }
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

std::uint64_t auto_chunk_points(std::uint64_t points, int ranks, spaces::Keep keep) {
  const auto r = static_cast<std::uint64_t>(ranks);
  if (keep == spaces::Keep::best_per_design || keep == spaces::Keep::pareto_per_design) {
    // A chunk stores a row (or a front) per design, so its buffers stay small at any size; but
    // each chunk costs a message and a write per column (about 60 us) however little it
    // evaluated, and the plan search settles a design in about 0.1 ms. About 32 chunks per rank
    // (a tail of about 3% of a rank's work) of 1k..4M points (4M: a few tenths of a second
    // exhaustively, the work a kill can lose per rank).
    return std::clamp<std::uint64_t>(points / (r * 32), 1024, std::uint64_t{1} << 22);
  }
  // About 128 chunks per rank keep the tail (the last chunks, when some ranks are done) short;
  // chunks of 1k..128k points keep the per-chunk cost (a message, one write per column) small and
  // the buffers (a row per point) within tens of MB.
  return std::clamp<std::uint64_t>(points / (r * 128), 1024, 131072);
}

// What rank 0 decided before any work, shared with every rank.
struct Decision {
  enum Action : std::uint64_t { work = 0, already_complete = 1 };
  std::uint64_t action = work;
  std::uint64_t resumed = 0;
  std::uint64_t designs_per_chunk = 1;
  std::uint64_t splits_per_design = 1;
  std::uint64_t chunk_points = 0;

  void broadcast(const mpi::Comm& comm) {
    std::vector<std::uint64_t> v = {action, resumed, designs_per_chunk, splits_per_design,
                                    chunk_points};
    comm.broadcast(v);
    action = v[0];
    resumed = v[1];
    designs_per_chunk = v[2];
    splits_per_design = v[3];
    chunk_points = v[4];
  }
};

// Refuses to resume `path` unless it was written for this spec and shard.
void check_same_job(hid_t file, const std::string& path, const jobs::Job& job,
                    const std::string& hash) {
  const StoreHeader stored = read_header(file);
  if (stored.spec_hash != hash)
    throw InputError(
        fmt::format("--resume: '{}' was written for a different spec (spec hash {} from '{}'; '{}' "
                    "has hash {}); "
                    "use --force to start over, or another --output",
                    path, stored.spec_hash.empty() ? "(none)" : stored.spec_hash,
                    stored.spec_file.empty() ? "?" : stored.spec_file, job.spec_path, hash));
  const auto index = static_cast<std::uint64_t>(stored.shard_index);
  const auto count = static_cast<std::uint64_t>(stored.shard_count);
  if (index != job.options.shard.index || count != job.options.shard.count)
    throw InputError(fmt::format("--resume: '{}' was written for --shard {}/{}, not {}", path,
                                 index, count, job.options.shard.text()));
}

// Whether the run's rows go to a staging file and are assembled into the store at the end: the
// kept rows of a filtered mode are known only then, and a compressed store is written
// collectively, a whole chunk at a time, which the ranks' independent chunks cannot do.
bool needs_assembly(const spaces::Space& space) {
  return space.keep() != spaces::Keep::all || space.compression() != spaces::Compression::none;
}

StoreHeader make_header(const spaces::Space& space, const jobs::Job& job, const ChunkLayout& layout,
                        std::uint64_t chunk_points, const jobs::Provenance& provenance, int ranks) {
  StoreHeader h;
  h.schema = make_schema(space);
  h.axes = space.axes();
  h.spec = space.text();
  h.spec_file = job.spec_path;
  h.spec_hash = jobs::spec_hash(space.text());
  h.family = estimator::to_string(space.family());
  h.keep = spaces::to_string(space.keep());
  h.objective = spaces::to_string(space.objective());
  h.kept_columns = space.output_columns().text();
  h.omitted_columns = fmt::format("{}", fmt::join(h.schema.omitted, " "));
  h.compression = spaces::to_string(space.compression());
  if (space.keep() == spaces::Keep::best_per_design ||
      space.keep() == spaces::Keep::pareto_per_design)
    h.plan_search = job.options.exhaustive ? "exhaustive" : "exact-search";
  h.space_points = space.size();
  h.space_designs = space.designs();
  h.plan_points = space.plan_points();
  h.design_begin = layout.design_begin();
  h.design_end = layout.design_end();
  h.shard_index = job.options.shard.index;
  h.shard_count = job.options.shard.count;
  h.pricing = space.pricing();
  h.reliability = space.reliability();
  h.training_tokens = space.training_tokens();
  h.chunk_points = chunk_points;
  h.designs_per_chunk = layout.designs_per_chunk();
  h.splits_per_design = layout.splits_per_design();
  h.chunks = layout.chunks();
  h.staging = needs_assembly(space);
  h.rows = layout.slots();
  h.provenance = provenance;
  h.mpi_size = ranks;
  return h;
}

// Creates a store under a temporary name and renames it into place, so `path` is either absent or
// a complete, valid file even if the process dies while creating it.
void create_atomically(const std::string& path, const StoreHeader& header) {
  const std::string temporary = path + ".new";
  try {
    create_store(temporary, header);  // removes what it created when it fails
  } catch (const h5::Failed& e) {
    // Named by the file the user will look for, not its temporary name.
    throw Error(fmt::format("cannot create '{}': {}", path, e.failure().text), e.exit_code());
  }
  try {
    rename_file(temporary, path);
  } catch (...) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw;
  }
}

// Evaluates chunks and hands their rows to the run's writer, which writes one chunk while the next
// is evaluated.
class StoreChunkWorker : public ChunkWorker {
 public:
  StoreChunkWorker(const spaces::Space& space, const Schema& schema, const ChunkLayout& layout,
                   RowWriter& writer, bool exhaustive)
      : evaluator_(space, schema, exhaustive), layout_(layout), writer_(writer) {}

  void start(std::uint64_t chunk) override {
    chunk_ = chunk;
    evaluator_.start(layout_.chunk(chunk));
  }
  bool advance(std::uint64_t points) override { return evaluator_.advance(points); }
  std::uint64_t estimates() const noexcept { return evaluator_.estimates(); }
  std::uint64_t commit() override {
    const std::uint64_t rows = evaluator_.rows().rows();
    if (rows > layout_.slot_capacity(chunk_))
      throw Error(fmt::format("internal error: chunk {} has {} rows for a slot of {}", chunk_, rows,
                              layout_.slot_capacity(chunk_)));
    // The writer takes the chunk's rows; the evaluator fills the block it finished with.
    RowBlock block;
    evaluator_.swap_rows(block);
    writer_.submit(chunk_, layout_.slot_offset(chunk_), block);
    evaluator_.swap_rows(block);
    return rows;
  }

 private:
  ChunkEvaluator evaluator_;
  const ChunkLayout& layout_;
  RowWriter& writer_;
  std::uint64_t chunk_ = 0;
};

// Reads a staging file's slots (serial HDF5; any number of readers).
class StagingReader {
 public:
  explicit StagingReader(const std::string& path) : file_(format::open_store(path, false)) {
    schema_ = format::read_schema(file_.get(), path);
    for (const auto& c : schema_.columns) {
      datasets_.push_back(h5::open_dataset(file_.get(), c.name, path));
      types_.push_back(format::memory_type(c, path));
    }
  }
  // Appends rows [offset, offset + count) to `block`.
  void append(std::uint64_t offset, std::uint64_t count, RowBlock& block) {
    const std::size_t at = block.rows();
    block.resize(at + count);
    for (std::size_t c = 0; c < datasets_.size(); ++c) {
      auto* base = static_cast<unsigned char*>(block.raw(c));
      const std::size_t element = H5Tget_size(types_[c].get());
      h5::read(datasets_[c].get(), types_[c].get(), offset, count, base + at * element,
               file_.path());
    }
  }
  const Schema& schema() const { return schema_; }

 private:
  h5::File file_;
  Schema schema_;
  std::vector<h5::Id> datasets_;
  std::vector<h5::Id> types_;
};

class Run {
 public:
  Run(const jobs::Job& job, const std::vector<std::string>& command_line, std::ostream& out,
      const mpi::Comm& comm)
      : job_(job),
        command_line_(command_line),
        out_(out),
        comm_(comm),
        partial_(jobs::partial_path(job.store_path)),
        assembly_(jobs::assembly_path(job.store_path)) {}

  int execute() {
    start_ = std::chrono::steady_clock::now();
    std::string text;
    together(comm_, [&] {
      if (comm_.rank() == 0) {
        job_.validate();
        text = jobs::read_spec(job_.spec_path);
      }
    });
    comm_.broadcast(text);
    std::optional<spaces::Space> space;
    together(comm_, [&] { space.emplace(spaces::Space::parse(text, job_.spec_path)); });
    space_ = &*space;
    const std::uint64_t designs = space_->designs();
    const std::uint64_t begin =
        shard_design_begin(designs, job_.options.shard.index, job_.options.shard.count);
    const std::uint64_t end =
        shard_design_begin(designs, job_.options.shard.index + 1, job_.options.shard.count);

    Decision decision;
    together(comm_, [&] {
      if (comm_.rank() == 0) decision = decide(begin, end);
    });
    decision.broadcast(comm_);
    layout_ = ChunkLayout::stored(begin, end, space_->plan_points(), space_->keep(),
                                  decision.designs_per_chunk, decision.splits_per_design);
    resumed_ = decision.resumed != 0;
    if (decision.action == Decision::already_complete) {
      if (comm_.rank() == 0) report_complete(true);
      return kExitOk;
    }

    const ScheduleResult result = evaluate();
    if (result.status == ScheduleResult::failed) {
      if (comm_.rank() == 0) throw Error(result.error);
      return kExitOk;  // as for Quiet: rank 0 reports it, with the job's exit code
    }
    if (result.status == ScheduleResult::interrupted) {
      if (comm_.rank() == 0) {
        const Progress p = read_progress(partial_);
        const auto done = static_cast<std::uint64_t>(std::count(p.done.begin(), p.done.end(), 1));
        throw Interrupted(
            fmt::format("interrupted by {}: {} of {} chunks are done and kept in '{}'; rerun with "
                        "--resume to finish",
                        signal_name(SignalGuard::signal()), done, p.done.size(), partial_));
      }
      // Rank 0 exits with 75, which mpiexec and srun make the job's; exiting with it here too
      // would let mpiexec end rank 0 before it said how to resume (as for Quiet).
      return kExitOk;
    }
    if (!needs_assembly(*space_)) {
      together(comm_, [&] {
        if (comm_.rank() == 0) {
          finalize_store(partial_, stats());
          rename_file(partial_, job_.store_path);
        }
      });
    } else {
      bool compacted = false;
      // The final store being assembled is no result: it goes (the staging file stays, and a
      // resume assembles it again).
      const auto remove_assembly = [&] {
        if (comm_.rank() != 0) return;
        for (const auto& path : {assembly_, assembly_ + ".new"}) {
          std::error_code ignored;
          fs::remove(path, ignored);
        }
      };
      try {
        compacted = compact();
      } catch (const Interrupted&) {
        remove_assembly();
        throw;
      } catch (const Error& e) {
        remove_assembly();
        // After the work, whatever the cause: not the "nothing was started" of exit code 2.
        throw Error(
            fmt::format("{}; every chunk is done and kept in '{}': fix the cause (free "
                        "disk space?), then rerun with --resume",
                        e.what(), partial_));
      } catch (const Quiet&) {
        throw Quiet{kExitFailure};  // as rank 0's
      } catch (...) {
        remove_assembly();
        throw;
      }
      if (!compacted) return kExitOk;  // rank 0 threw Interrupted: its 75 is the job's
    }
    if (comm_.rank() == 0) report_complete(false);
    return kExitOk;
  }

 private:
  // Rank 0: what to do with the files that exist; creates the store of a fresh run.
  Decision decide(std::uint64_t begin, std::uint64_t end) {
    const std::string& store = job_.store_path;
    const std::string hash = jobs::spec_hash(space_->text());
    job_.refuse_clobbering(space_->calibration_file());
    check_output_path("--output", store);
    lock_ = std::make_unique<StoreLock>(store);
    Decision d;
    if (job_.options.force) {
      for (const auto& path : {store, partial_, partial_ + ".new", assembly_, assembly_ + ".new"})
        if (exists(path)) remove_file(path);
    } else if (exists(store)) {
      if (!job_.options.resume)
        throw InputError(fmt::format(
            "'{}' exists; use --resume to continue (or confirm) it, or --force to overwrite it",
            store));
      h5::File file = format::open_store(store, false);
      check_same_job(file.get(), store, job_, hash);
      if (!read_run_stats(file.get()).complete)
        throw InputError(
            fmt::format("'{}' is not marked complete, and a run never leaves an unfinished "
                        "store under its final name; use --force to start over",
                        store));
      file.close();
      for (const auto& path : {partial_, assembly_})
        if (exists(path)) remove_file(path);
      d.action = Decision::already_complete;
      return d;
    } else if (exists(partial_)) {
      if (!job_.options.resume)
        throw InputError(
            fmt::format("'{}' holds an unfinished run of '{}'; use --resume to continue it, "
                        "or --force to start over",
                        partial_, store));
      h5::File file = format::open_store(partial_, false);
      check_same_job(file.get(), partial_, job_, hash);
      const StoreHeader started = read_header(file.get());
      const std::string& revision = started.provenance.git_revision;
      if (revision != kGitRevision)
        std::cerr << fmt::format(
            "clustersweep run: warning: '{}' was started by clustersweep git {}, this is "
            "git {}; if the estimator changed, old and new rows differ\n",
            partial_, revision, kGitRevision);
      d.resumed = 1;
      d.designs_per_chunk = started.designs_per_chunk;
      d.splits_per_design = started.splits_per_design;
      d.chunk_points = started.chunk_points;
      const ChunkLayout layout =
          ChunkLayout::stored(begin, end, space_->plan_points(), space_->keep(),
                              d.designs_per_chunk, d.splits_per_design);
      // The same spec text makes another space when this clustersweep has other axes (a run
      // started by an older version): its points would not line up.
      if (started.chunks != layout.chunks() || started.design_begin != begin ||
          started.design_end != end || started.plan_points != space_->plan_points())
        throw InputError(
            fmt::format("--resume: '{}' has a chunk layout this clustersweep cannot continue; "
                        "use --force to start over",
                        partial_));
      // Axes with one value keep the layout but not the columns (the stack's, which older
      // versions lack): rows of other columns cannot be continued either.
      std::vector<std::string> stored, ours;
      for (const Column& c : format::read_schema(file.get(), partial_).columns)
        stored.push_back(c.name);
      for (const Column& c : make_schema(*space_).columns) ours.push_back(c.name);
      if (stored != ours)
        throw InputError(
            fmt::format("--resume: '{}' has other columns than this clustersweep writes (was it "
                        "started by another version?); use --force to start over",
                        partial_));
      return d;
    }
    // A fresh run.
    for (const auto& path : {partial_ + ".new", assembly_})
      if (exists(path)) remove_file(path);
    const std::uint64_t points = (end - begin) * space_->plan_points();
    d.chunk_points = job_.options.chunk_points
                         ? job_.options.chunk_points
                         : auto_chunk_points(points, comm_.size(), space_->keep());
    const ChunkLayout layout =
        ChunkLayout::make(begin, end, space_->plan_points(), space_->keep(), d.chunk_points);
    d.designs_per_chunk = layout.designs_per_chunk();
    d.splits_per_design = layout.splits_per_design();
    const StoreHeader header = make_header(*space_, job_, layout, d.chunk_points,
                                           jobs::Provenance::current(command_line_), comm_.size());
    check_room_for(store, header);
    create_atomically(partial_, header);
    return d;
  }

  // Every rank: evaluates the chunks still to do into the staging/partial store.
  ScheduleResult evaluate() {
    std::vector<std::uint64_t> todo;
    std::uint64_t done_points = 0;
    together(comm_, [&] {
      if (comm_.rank() != 0) return;
      const Progress p = read_progress(partial_);
      for (std::uint64_t k = 0; k < p.done.size(); ++k) {
        if (p.done[k])
          done_points += layout_.chunk(k).points();
        else
          todo.push_back(k);
      }
    });
    const Schema schema = make_schema(*space_);
    std::optional<RowWriter> writer;
    together(comm_, [&] { writer.emplace(partial_, read_row_layout(partial_), schema); });

    ProgressMeter meter(layout_.point_end() - layout_.point_begin(), done_points,
                        job_.options.progress, job_.options.progress_interval_s);
    ScheduleOptions options;
    options.interrupted = [&] {
      if (comm_.rank() == 0) meter.tick();
      return SignalGuard::raised();
    };
    options.on_done = [&](std::uint64_t chunk, std::uint64_t) {
      const std::uint64_t points = layout_.chunk(chunk).points();
      points_evaluated_ += points;
      meter.add(points);
    };
    StoreChunkWorker worker(*space_, schema, layout_, *writer, job_.options.exhaustive);
    const auto started = std::chrono::steady_clock::now();
    ScheduleResult result = schedule(comm_, todo, worker, options);
    evaluate_time_s_ = seconds_since(started);
    estimates_ = comm_.sum(worker.estimates());
    busy_ = comm_.gather(result.wall_s > 0 ? 1 - result.idle_s / result.wall_s : 1);
    if (comm_.rank() == 0) meter.finish();
    // The last chunk's rows and mark are on disk (or its failure known) before the run goes on.
    together(comm_, [&] { writer->finish(); });
    return result;
  }

  // Filtered modes: copies the kept rows from their staging slots, in chunk order, into the final
  // store (built under a temporary name, renamed into place). False when interrupted.
  bool compact() {
    const auto started = std::chrono::steady_clock::now();
    std::vector<std::uint64_t> rows;
    together(comm_, [&] {
      if (comm_.rank() != 0) return;
      rows = read_progress(partial_).rows;
      std::uint64_t total = 0;
      for (auto r : rows) total += r;
      h5::File staging = format::open_store(partial_, false);
      const StoreHeader started = read_header(staging.get());
      staging.close();
      StoreHeader header = make_header(*space_, job_, layout_, started.chunk_points,
                                       jobs::Provenance::current(command_line_), comm_.size());
      // The provenance is the run's, from when it started, not the compaction's.
      const std::string revision = header.provenance.git_revision;
      const std::string tool_version = header.provenance.tool_version;
      header.provenance = started.provenance;
      header.provenance.git_revision = revision;
      header.provenance.tool_version = tool_version;
      header.rows = total;
      header.staging = false;
      create_atomically(assembly_, header);
    });
    comm_.broadcast(rows);
    std::vector<std::uint64_t> offset(rows.size() + 1, 0);
    for (std::size_t k = 0; k < rows.size(); ++k) offset[k + 1] = offset[k] + rows[k];
    const std::uint64_t total = offset.back();
    // The store's rows in pieces of a compressed chunk (HDF5 writes compressed chunks collectively:
    // whole chunks, each from one rank, keep that cheap), dealt to the ranks in rounds.
    const std::uint64_t piece = format::kCompressedChunkRows;
    const std::uint64_t pieces = (total + piece - 1) / piece;
    const auto ranks = static_cast<std::uint64_t>(comm_.size());
    const std::uint64_t rounds = (pieces + ranks - 1) / ranks;

    StoreWriter writer;
    together(comm_, [&] { writer = StoreWriter::open(assembly_, comm_); });
    bool stopped = false;
    together(comm_, [&] {
      std::optional<StagingReader> staging;
      RowBlock block;
      std::exception_ptr failure;
      for (std::uint64_t round = 0; round < rounds; ++round) {
        try {
          if (!staging) {
            staging.emplace(partial_);
            block = RowBlock(staging->schema());
          }
          const std::uint64_t k = round * ranks + static_cast<std::uint64_t>(comm_.rank());
          const std::uint64_t begin = std::min(total, k * piece);
          const std::uint64_t end = std::min(total, begin + piece);
          // Rows [begin, end) of the store, from the staging slots of the chunks that hold them.
          block.clear();
          auto chunk = static_cast<std::size_t>(
              std::upper_bound(offset.begin(), offset.end(), begin) - offset.begin() - 1);
          for (std::uint64_t at = begin; at < end; ++chunk) {
            const std::uint64_t to = std::min(end, offset[chunk + 1]);
            if (to > at)
              staging->append(layout_.slot_offset(chunk) + (at - offset[chunk]), to - at, block);
            at = std::max(at, to);
          }
          writer.write(begin, block, 0, block.rows());
        } catch (...) {
          failure = std::current_exception();
        }
        // Every rank leaves after the same round, so that the collective writes stay matched: on
        // a failure anywhere (rethrown below by the rank that had it) or a signal.
        const std::int64_t state = comm_.max(std::int64_t{failure ? 2 : SignalGuard::raised()});
        if (failure) std::rethrow_exception(failure);
        if (state == 2) return;
        stopped = state == 1;
        if (stopped) break;
      }
      if (comm_.rank() == 0 && !stopped)
        writer.write_progress(0, std::vector<std::uint8_t>(rows.size(), 1), rows);
    });
    together(comm_, [&] { writer.close(); });
    if (stopped) {
      if (comm_.rank() == 0) {
        remove_file(assembly_);
        throw Interrupted(
            fmt::format("interrupted by {} while assembling the store; every chunk is done "
                        "and kept in '{}'; rerun with --resume to finish",
                        signal_name(SignalGuard::signal()), partial_));
      }
      return false;
    }
    compact_time_s_ = seconds_since(started);
    together(comm_, [&] {
      if (comm_.rank() != 0) return;
      finalize_store(assembly_, stats());
      rename_file(assembly_, job_.store_path);
      remove_file(partial_);
    });
    return true;
  }

  RunStats stats() const {
    RunStats s;
    s.mpi_size = comm_.size();
    s.wall_time_s = seconds_since(start_);
    s.points_evaluated = points_evaluated_;
    s.points_per_s =
        evaluate_time_s_ > 0 ? static_cast<double>(points_evaluated_) / evaluate_time_s_ : 0;
    s.compact_time_s = compact_time_s_;
    s.resumed = resumed_;
    return s;
  }

  // Rank 0: the final report and the best designs.
  void report_complete(bool already) {
    const StoreReader store(job_.store_path);
    const std::uint64_t points = layout_.point_end() - layout_.point_begin();
    if (already) {
      out_ << fmt::format("'{}' is already complete ({} rows); nothing to do\n", job_.store_path,
                          store.rows());
    } else {
      out_ << fmt::format(
          "wrote '{}': {} rows (keep = {}) from {} points; {} points evaluated in {:.3f} s on {} "
          "rank{} ({:.0f} points/s){}\n",
          job_.store_path, store.rows(), spaces::to_string(space_->keep()), points,
          points_evaluated_, evaluate_time_s_, comm_.size(), comm_.size() == 1 ? "" : "s",
          evaluate_time_s_ > 0 ? static_cast<double>(points_evaluated_) / evaluate_time_s_ : 0,
          resumed_ ? " (resumed)" : "");
      const spaces::Keep keep = space_->keep();
      if ((keep == spaces::Keep::best_per_design || keep == spaces::Keep::pareto_per_design) &&
          points_evaluated_ > 0) {
        const double designs = static_cast<double>(points_evaluated_) / space_->plan_points();
        out_ << fmt::format("plans estimated ({}): {} of {}, {:.0f} per design of {}\n",
                            job_.options.exhaustive ? "exhaustive" : "exact search",
                            with_commas(estimates_), with_commas(points_evaluated_),
                            static_cast<double>(estimates_) / designs,
                            with_commas(space_->plan_points()));
      }
      if (comm_.size() > 1 && points_evaluated_ > 0) {
        std::string busy;
        for (double b : busy_) busy += fmt::format(" {:.1f}%", 100 * b);
        out_ << fmt::format("ranks busy (evaluating or writing, not waiting for work):{}\n", busy);
      }
    }
    if (!job_.options.summary) return;
    const std::uint64_t feasible = count_feasible(store);
    out_ << fmt::format("feasible rows: {} of {}\n", feasible, store.rows());
    print_best_designs(store, *space_, 5, out_);
  }

  const jobs::Job& job_;
  const std::vector<std::string>& command_line_;
  std::ostream& out_;
  const mpi::Comm& comm_;
  const std::string partial_;
  const std::string assembly_;
  const spaces::Space* space_ = nullptr;
  ChunkLayout layout_;
  bool resumed_ = false;
  std::chrono::steady_clock::time_point start_;
  std::uint64_t points_evaluated_ = 0;
  std::uint64_t estimates_ = 0;  // the estimator's evaluations, all ranks
  double evaluate_time_s_ = 0;
  double compact_time_s_ = 0;
  std::vector<double> busy_;         // rank 0: each rank's busy fraction of the evaluation
  std::unique_ptr<StoreLock> lock_;  // rank 0
};

}  // namespace

int run(const jobs::Job& job, const std::vector<std::string>& command_line, std::ostream& out) {
  // Installed first, so a signal at any moment (even during MPI start-up) stops the run cleanly.
  SignalGuard signals;
  mpi::Env env;
  const mpi::Comm comm;
  try {
    return Run(job, command_line, out, comm).execute();
  } catch (const Quiet&) {
    // Rank 0 says what failed and exits with its code, which mpiexec and srun make the job's.
    // Exiting non-zero here too would let mpiexec kill rank 0 before it printed its line.
    return kExitOk;
  }
}

StoreState store_state(const std::string& store_path) {
  StoreState s;
  const std::string partial = jobs::partial_path(store_path);
  if (exists(store_path)) {
    s.path = store_path;
  } else if (exists(partial)) {
    s.path = partial;
  } else {
    s.path = store_path;
    return s;
  }
  h5::File file = format::open_store(s.path, false);
  const StoreHeader h = read_header(file.get());
  const bool complete = read_run_stats(file.get()).complete;
  file.close();
  s.spec_hash = h.spec_hash;
  spaces::Keep keep = spaces::Keep::all;
  parse_keep(h.keep.empty() ? "all" : h.keep, keep);
  const ChunkLayout layout = ChunkLayout::stored(h.design_begin, h.design_end, h.plan_points, keep,
                                                 h.designs_per_chunk, h.splits_per_design);
  const Progress p = read_progress(s.path);
  s.kind = complete ? StoreState::complete : StoreState::unfinished;
  s.chunks = p.done.size();
  s.points = layout.point_end() - layout.point_begin();
  for (std::uint64_t k = 0; k < p.done.size(); ++k) {
    if (!p.done[k]) continue;
    ++s.chunks_done;
    if (k < layout.chunks()) s.points_done += layout.chunk(k).points();
  }
  return s;
}

}  // namespace clustersweep::engine
