#pragma once
// Dynamic chunk scheduling over MPI ranks (docs/engine.md, "Scheduling").
//
// Rank 0 owns the list of chunks still to do and hands them out on demand, but it is not a
// dedicated master: it evaluates chunks too, in short slices, and between slices answers the
// other ranks' requests without blocking (MPI_Iprobe). So no core idles on bookkeeping, and a
// request waits at most one slice. Other ranks get guided batches of consecutive chunks (large
// while much work is left, single chunks at the end) and ask for the next batch while half of the
// current one is still queued, so they do not wait on rank 0 either, even when it is descheduled.
//
// The scheduler knows nothing about points or stores: a ChunkWorker evaluates and commits chunks.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/mpi.h"

namespace clustersweep::engine {

class ChunkWorker {
 public:
  virtual ~ChunkWorker() = default;
  virtual void start(std::uint64_t chunk) = 0;
  // Evaluates up to `points` more points of the started chunk; true once the chunk is evaluated.
  virtual bool advance(std::uint64_t points) = 0;
  // Writes the evaluated chunk and marks it done; returns the rows written.
  virtual std::uint64_t commit() = 0;
  // Drops a started chunk (on interruption); it stays to do.
  virtual void abandon() noexcept {}
};

struct ScheduleOptions {
  std::uint64_t slice_points = 2048;  // rank 0 answers requests between slices of this many points
  // Polled between slices on every rank: true stops the run (signals).
  std::function<bool()> interrupted = [] { return false; };
  // Rank 0: called as each chunk completes (on any rank) with the chunk and its rows.
  std::function<void(std::uint64_t chunk, std::uint64_t rows)> on_done = {};
};

struct ScheduleResult {
  enum Status : int { complete = 0, interrupted = 1, failed = 2 };
  Status status = complete;       // the same on every rank
  std::string error;              // rank 0: the first failure's message
  std::uint64_t chunks_done = 0;  // rank 0: chunks completed by this call (all ranks)
  // This rank: seconds in schedule() and of those, seconds blocked waiting for work or for the
  // other ranks to finish (the rest is evaluating and writing).
  double wall_s = 0;
  double idle_s = 0;
};

// Runs every chunk of `todo` (read on rank 0 only) exactly once across the ranks of `comm`,
// unless interrupted or failed. Collective.
ScheduleResult schedule(const mpi::Comm& comm, const std::vector<std::uint64_t>& todo,
                        ChunkWorker& worker, const ScheduleOptions& options);

}  // namespace clustersweep::engine
