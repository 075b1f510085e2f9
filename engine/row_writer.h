#pragma once
// Writes a run's rows into its store (or staging file) while the rank evaluates the next chunk
// (docs/engine.md, "Writing"). The store's columns are contiguous datasets allocated when it was
// created, and its metadata never changes during a run, so a column is a fixed byte range of the
// file: the rows go there with plain pwrite() calls, from a background thread, without HDF5 or
// MPI-IO in the way. One chunk is written while the next is evaluated (two row blocks take
// turns), and a chunk's progress mark is written only after its rows, so a kill at any moment
// leaves a store that --resume trusts.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/schema.h"

namespace clustersweep::engine {

// Where a store's raw data lie in its file (little-endian, as the store's types are).
struct RowLayout {
  std::vector<std::uint64_t> column_offset;  // file offset of each column's first row
  // Bytes of one value of each column in the file; 0 for a constant column (Column::constant),
  // whose dataset has no storage.
  std::vector<std::size_t> element_size;
  std::uint64_t rows = 0;
  std::uint64_t chunks = 0;
  std::uint64_t chunk_done_offset = 0;  // /progress/chunk_done: uint8 per chunk
  std::uint64_t chunk_rows_offset = 0;  // /progress/chunk_rows: uint64 per chunk
};

// Reads the layout of the store at `path` (serial HDF5, read-only); Error when a column is not a
// contiguous, allocated dataset (a compressed or hand-made file).
RowLayout read_row_layout(const std::string& path);

class RowWriter {
 public:
  // Opens `path` for writing and starts the writing thread. `schema` is the store's.
  RowWriter(std::string path, RowLayout layout, const Schema& schema);
  // Finishes the chunk in flight (its error, if any, is lost: call finish() to see it).
  ~RowWriter();
  RowWriter(const RowWriter&) = delete;
  RowWriter& operator=(const RowWriter&) = delete;

  // Hands over `block`, the rows of chunk `chunk` for rows [offset, offset + block.rows()) of the
  // store, to be written and then marked done; gives back in `block` the block of the chunk
  // written before (to fill again). Waits for that chunk's write first, and throws its error.
  void submit(std::uint64_t chunk, std::uint64_t offset, RowBlock& block);
  // Waits for the chunk in flight and closes the file; throws the first write error.
  void finish();

 private:
  void loop() noexcept;
  void write_chunk();  // the job in flight, on the writing thread
  void write_bytes(const void* data, std::size_t bytes, std::uint64_t at) const;
  void wait_idle(std::unique_lock<std::mutex>& lock);

  std::string path_;
  RowLayout layout_;
  int fd_ = -1;

  std::mutex mutex_;
  std::condition_variable changed_;
  bool busy_ = false;  // a chunk is handed over and not yet written
  bool stop_ = false;
  std::exception_ptr error_;
  // The job: what the writing thread owns while busy_.
  RowBlock block_;
  std::uint64_t chunk_ = 0;
  std::uint64_t offset_ = 0;
  std::thread thread_;  // last: started once everything above is set
};

}  // namespace clustersweep::engine
