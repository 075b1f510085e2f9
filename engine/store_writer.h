#pragma once
// Writes results stores (docs/store-format.md). A store is created whole, on one process: every
// column dataset at its final size (contiguous, allocated, never filled) and every attribute
// written. From then on writers only put raw data into rows (and the progress marks), which is what
// makes a store safe to kill at any instant: its metadata never changes during a run.
//
// Used by `clustersweep run` (in parallel, one StoreWriter per rank, independent MPI-IO writes)
// and by `clustersweep merge` (serially).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/mpi.h"
#include "engine/schema.h"
#include "jobs/job.h"
#include "spaces/space.h"

namespace clustersweep::engine {

inline constexpr const char* kStoreFormat = "clustersweep-store";  // root attribute "format"
inline constexpr std::int64_t kStoreFormatVersion = 2;

// Everything written when a store is created.
struct StoreHeader {
  Schema schema;
  std::uint64_t rows = 0;          // rows of every column dataset
  std::vector<spaces::Axis> axes;  // value tables under /axes

  // Root attributes (docs/store-format.md).
  std::string spec;       // the full spec text
  std::string spec_file;  // as given on the command line
  std::string spec_hash;  // jobs::spec_hash(spec)
  std::string keep;       // "all", "feasible", "best-per-design", "pareto-per-design"
  std::string objective;  // "step_time", "time_to_train", "energy", "cost"
  std::uint64_t space_points = 0;
  std::uint64_t space_designs = 0;
  std::uint64_t plan_points = 0;
  std::uint64_t design_begin = 0;  // the designs this store covers (a shard, or all)
  std::uint64_t design_end = 0;
  std::int64_t shard_index = 0;
  std::int64_t shard_count = 1;
  spaces::Pricing pricing;
  double training_tokens = 0;
  // The run's chunks (engine/chunks.h), kept for resume.
  std::uint64_t chunk_points = 0;
  std::uint64_t designs_per_chunk = 1;
  std::uint64_t splits_per_design = 1;
  std::uint64_t chunks = 0;
  // A filtered run's staging file: rows are per-chunk slots, not yet the result.
  bool staging = false;
  jobs::Provenance provenance;
  std::int64_t mpi_size = 1;
};

// Creates the store at `path` (serial HDF5; truncates an existing file) and closes it.
void create_store(const std::string& path, const StoreHeader& header);

// What a finished run records in a store's root attributes (overwritten in place).
struct RunStats {
  std::int64_t mpi_size = 1;
  double wall_time_s = 0;              // of the run that finished the store
  double points_per_s = 0;             // points evaluated per second of that run
  std::uint64_t points_evaluated = 0;  // by that run (less than the range after a resume)
  double compact_time_s = 0;           // filtered modes: ordering the kept rows
  bool resumed = false;
};

// Marks the store complete and records `stats` (serial; call on one process after every writer
// closed). Only fixed-size attributes change, in place.
void finalize_store(const std::string& path, const RunStats& stats);

class StoreWriter {
 public:
  // Opens an existing store for writing rows: serially, or collectively over `comm`.
  static StoreWriter open(const std::string& path);
  static StoreWriter open(const std::string& path, const mpi::Comm& comm);

  StoreWriter();
  ~StoreWriter();
  StoreWriter(StoreWriter&&) noexcept;
  StoreWriter& operator=(StoreWriter&&) noexcept;

  const std::string& path() const noexcept;
  const Schema& schema() const noexcept;
  std::uint64_t rows() const noexcept;

  // Writes rows [first, first + count) of `block` to rows [offset, offset + count) of the store.
  void write(std::uint64_t offset, const RowBlock& block, std::size_t first, std::size_t count);
  // Records that chunk `chunk` is complete with `rows` output rows. Call only after its rows were
  // written: the mark is what a resumed run trusts.
  void mark_done(std::uint64_t chunk, std::uint64_t rows);
  // Progress marks of chunks [first, first + count) (a merge or compaction copies them).
  void write_progress(std::uint64_t first, const std::vector<std::uint8_t>& done,
                      const std::vector<std::uint64_t>& rows);
  // Closes (collectively when opened so); throws when HDF5 cannot.
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The progress marks of a store: done flag and output rows per chunk.
struct Progress {
  std::vector<std::uint8_t> done;
  std::vector<std::uint64_t> rows;
};
Progress read_progress(const std::string& path);

}  // namespace clustersweep::engine
