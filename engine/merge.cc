#include "engine/merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>

#include "base/error.h"
#include "base/format.h"
#include "engine/chunks.h"
#include "engine/h5.h"
#include "engine/output.h"
#include "engine/store_reader.h"
#include "engine/store_writer.h"
#include "jobs/job.h"
#include "spaces/space.h"

namespace clustersweep::engine {
namespace {

namespace fs = std::filesystem;

// One input store and what its root attributes say about the shard it holds.
struct ShardStore {
  std::string path;
  StoreReader reader;
  std::string spec_hash;
  std::uint64_t index = 0;
  std::uint64_t count = 1;
  std::uint64_t design_begin = 0;
  std::uint64_t design_end = 0;

  explicit ShardStore(const std::string& p) : path(p), reader(open(p)) {
    if (!reader.complete())
      throw InputError(
          fmt::format("'{}' is not complete; finish its run with 'clustersweep run SPEC -o {} "
                      "--shard I/K --resume' before merging",
                      path, path));
    const StoreHeader& h = reader.header();
    spec_hash = h.spec_hash;
    index = static_cast<std::uint64_t>(h.shard_index);
    count = static_cast<std::uint64_t>(h.shard_count);
    design_begin = h.design_begin;
    design_end = h.design_end;
  }

  const StoreHeader& header() const noexcept { return reader.header(); }

  static StoreReader open(const std::string& path) {
    // An unfinished run keeps its rows in STORE.partial and the store itself appears at the end.
    if (!fs::exists(path) && fs::exists(jobs::partial_path(path)))
      throw InputError(
          fmt::format("'{}' does not exist yet: its run is unfinished ('{}'); finish it with "
                      "'clustersweep run SPEC -o {} --shard I/K --resume' before merging",
                      path, jobs::partial_path(path), path));
    return StoreReader(path);
  }
};

std::string shard_name(std::uint64_t index, std::uint64_t count) {
  return fmt::format("{}/{}", index, count);
}

// Every check that the stores are the K shards of one sweep, exactly once; sorts them by shard.
void check_shards(std::vector<ShardStore>& stores) {
  const ShardStore& first = stores.front();
  for (const auto& s : stores) {
    if (s.spec_hash != first.spec_hash)
      throw InputError(
          fmt::format("'{}' was written for a different spec than '{}' (spec hash {} vs {}); the "
                      "shards of one sweep share one spec",
                      s.path, first.path, s.spec_hash, first.spec_hash));
    if (s.count != first.count)
      throw InputError(fmt::format(
          "'{}' is shard {} but '{}' is shard {}; the shards of one sweep share "
          "their count",
          s.path, shard_name(s.index, s.count), first.path, shard_name(first.index, first.count)));
  }
  std::map<std::uint64_t, const ShardStore*> by_index;
  for (const auto& s : stores) {
    const auto [it, fresh] = by_index.emplace(s.index, &s);
    if (!fresh)
      throw InputError(fmt::format("shard {} is given twice: '{}' and '{}'",
                                   shard_name(s.index, s.count), it->second->path, s.path));
  }
  if (by_index.size() != first.count) {
    std::string missing;
    for (std::uint64_t i = 0; i < first.count; ++i)
      if (!by_index.count(i))
        missing += fmt::format("{}{}", missing.empty() ? "" : ", ", shard_name(i, first.count));
    throw InputError(fmt::format("shards missing: {} (got {} of the {} shard stores)", missing,
                                 by_index.size(), first.count));
  }
  std::sort(stores.begin(), stores.end(),
            [](const ShardStore& a, const ShardStore& b) { return a.index < b.index; });
  const std::uint64_t designs = first.header().space_designs;
  std::uint64_t next = 0;
  for (const auto& s : stores) {
    if (s.design_begin != next)
      throw InputError(
          fmt::format("'{}' (shard {}) covers designs [{}, {}) but the shards before it end at "
                      "design {}",
                      s.path, shard_name(s.index, s.count), s.design_begin, s.design_end, next));
    next = s.design_end;
    std::vector<std::string> a, b;
    for (const auto& c : s.reader.schema().columns) a.push_back(c.name);
    for (const auto& c : first.reader.schema().columns) b.push_back(c.name);
    if (a != b)
      throw InputError(
          fmt::format("'{}' and '{}' have different columns; were they written by different "
                      "clustersweep versions?",
                      s.path, first.path));
  }
  if (next != designs)
    throw InputError(
        fmt::format("the shards cover designs [0, {}) of the space's {}", next, designs));
}

// The merged store's header: the spec's, over the whole space, with the chunk layout a single run
// would record.
StoreHeader merged_header(const ShardStore& first, const spaces::Space& space, std::uint64_t rows,
                          const ChunkLayout& layout, const std::vector<std::string>& command_line) {
  // The first shard's header with the whole space's range and no shard.
  StoreHeader h = first.header();
  h.schema = first.reader.schema();
  h.rows = rows;
  h.axes = space.axes();
  h.spec = space.text();
  h.design_begin = 0;
  h.design_end = h.space_designs;
  h.shard_index = 0;
  h.shard_count = 1;
  h.pricing = space.pricing();
  h.reliability = space.reliability();
  h.training_tokens = space.training_tokens();
  h.chunk_points = first.header().chunk_points;
  h.designs_per_chunk = layout.designs_per_chunk();
  h.splits_per_design = layout.splits_per_design();
  h.chunks = layout.chunks();
  h.staging = false;
  h.provenance = jobs::Provenance::current(command_line);
  h.mpi_size = 1;
  return h;
}

// Writes the shards' rows, in order, into a new store at `path`; returns the shards' run totals.
RunStats copy_rows(const std::vector<ShardStore>& stores, const std::string& path,
                   const StoreHeader& header, const ChunkLayout& layout) {
  create_store(path, header);
  StoreWriter writer = StoreWriter::open(path);
  const std::size_t point_column = header.schema.index("point_id");
  std::vector<std::uint64_t> chunk_rows(layout.chunks(), 0);
  std::uint64_t chunk = 0;
  std::uint64_t offset = 0;
  double points_evaluated = 0, shard_wall_time_s = 0;
  constexpr std::uint64_t kBlockRows = 1 << 16;
  RowBlock block;
  for (const auto& s : stores) {
    for (std::uint64_t at = 0; at < s.reader.rows(); at += kBlockRows) {
      const std::uint64_t count = std::min(kBlockRows, s.reader.rows() - at);
      s.reader.read_rows(at, count, block);
      writer.write(offset, block, 0, count);
      offset += count;
      for (std::uint64_t r = 0; r < count; ++r) {
        const auto point = static_cast<std::uint64_t>(block.number(point_column, r));
        while (chunk + 1 < layout.chunks() && point >= layout.chunk(chunk).point_end) ++chunk;
        ++chunk_rows[chunk];
      }
    }
    points_evaluated += s.reader.run_stats().points_evaluated;
    shard_wall_time_s += s.reader.run_stats().wall_time_s;
  }
  writer.write_progress(0, std::vector<std::uint8_t>(layout.chunks(), 1), chunk_rows);
  writer.close();

  RunStats stats;
  stats.mpi_size = 1;
  stats.wall_time_s = shard_wall_time_s;  // the shards' compute time, summed
  stats.points_evaluated = static_cast<std::uint64_t>(points_evaluated);
  stats.points_per_s = shard_wall_time_s > 0 ? points_evaluated / shard_wall_time_s : 0;
  return stats;
}

}  // namespace

MergeResult merge_shards(const std::vector<std::string>& paths, const std::string& output,
                         bool force, const std::vector<std::string>& command_line) {
  const auto started = std::chrono::steady_clock::now();
  if (paths.empty()) throw InputError("no shard stores given");
  check_output_path("--output", output);
  if (fs::exists(output) && !force)
    throw InputError(fmt::format("'{}' already exists; pass --force to replace it", output));
  std::vector<ShardStore> stores;
  for (const auto& p : paths) {
    if (fs::exists(output) && fs::equivalent(p, output))
      throw InputError(fmt::format("'{}' is both a shard and the output", p));
    stores.emplace_back(p);
  }
  check_shards(stores);

  const ShardStore& first = stores.front();
  const spaces::Space space = spaces::Space::parse(first.header().spec, first.header().spec_file);
  spaces::Keep keep = spaces::Keep::all;
  parse_keep(first.header().keep, keep);
  // The layout of a single run with the shards' chunk size, so the merged store's progress marks
  // read like that run's: every chunk done, with its row count.
  const ChunkLayout layout =
      ChunkLayout::stored(0, space.designs(), space.plan_points(), keep,
                          first.header().designs_per_chunk, first.header().splits_per_design);
  std::uint64_t rows = 0;
  for (const auto& s : stores) rows += s.reader.rows();
  const std::uint64_t bytes = rows * first.reader.schema().row_bytes() + (std::uint64_t{1} << 20);
  check_room("--output", output, bytes, bytes,
             fmt::format("the merged store needs {} ({} rows)",
                         format_bytes(static_cast<double>(bytes)), rows));

  const std::string temporary = output + ".merging";
  RunStats stats;
  try {
    stats = copy_rows(stores, temporary, merged_header(first, space, rows, layout, command_line),
                      layout);
    finalize_store(temporary, stats);
    fs::rename(temporary, output);
  } catch (const h5::Failed& e) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    // Named by the file asked for, not its temporary name.
    throw Error(fmt::format("cannot write '{}': {}", output, e.failure().text), e.exit_code());
  } catch (...) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw;
  }

  MergeResult result;
  result.rows = rows;
  result.shards = static_cast<std::uint32_t>(stores.size());
  result.wall_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace clustersweep::engine
