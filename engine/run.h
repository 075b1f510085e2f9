#pragma once
// `clustersweep run`: one sweep job on the ranks of MPI_COMM_WORLD into one store
// (docs/engine.md). Collective: every rank calls run() with the same job.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "jobs/job.h"

namespace clustersweep::engine {

// Runs the job and returns the process exit code: 0 when the store is complete (now or already).
// Rank 0 throws clustersweep::Error for anything it reports (InputError for bad input,
// Interrupted after a signal: the work done is kept, --resume continues, exit code
// kExitInterrupted); the other ranks then return 0, so that mpiexec does not end rank 0 before it
// has reported, and rank 0's code is the job's (mpiexec's and srun's). Progress goes to stderr and
// the final report to `out` (rank 0).
int run(const jobs::Job& job, const std::vector<std::string>& command_line, std::ostream& out);

// What the files of a store say about its run, without MPI (for `clustersweep status`).
struct StoreState {
  enum Kind : std::uint8_t { missing, unfinished, complete } kind = missing;
  std::string path;  // the file looked at: the store or its .partial
  std::string spec_hash;
  std::uint64_t chunks = 0;
  std::uint64_t chunks_done = 0;
  std::uint64_t points = 0;  // of the store's range
  std::uint64_t points_done = 0;
};
StoreState store_state(const std::string& store_path);

}  // namespace clustersweep::engine
