#pragma once
// Writes results stores (docs/store-format.md). A store is created whole, on one process: every
// column dataset at its final size (contiguous, allocated, never filled; or, compressed, chunked
// and written once) and every attribute written. From then on writers only put raw data into rows
// (and the progress marks), which is what makes a store safe to kill at any instant: its metadata
// never changes during a run.
//
// Used by `clustersweep run` to assemble the store of a filtered or compressed run (on every rank,
// collectively when compressed; the run's chunks themselves go through engine/row_writer.h) and by
// `clustersweep merge` (serially).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/mpi.h"
#include "engine/schema.h"
#include "engine/store_header.h"
#include "jobs/job.h"
#include "spaces/space.h"

namespace clustersweep::engine {

// Creates the store at `path` (serial HDF5; truncates an existing file) and closes it.
void create_store(const std::string& path, const StoreHeader& header);

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
  // A compressed store opened on ranks is written collectively (HDF5 1.10 writes filtered datasets
  // no other way): every rank calls write() as often as the others, with count 0 for no rows.
  void write(std::uint64_t offset, const RowBlock& block, std::size_t first, std::size_t count);
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
