#pragma once
// A tiny MPI service for the analysis commands (owned by analysis; MPI stays inside engine/):
// under mpirun/srun each rank takes a share of the rows and rank 0 gathers the partial results.
// Run without a launcher, it is one process and touches no MPI at all.
#include <cstdint>
#include <vector>

namespace clustersweep::engine {

class MpiShare {
 public:
  // Initializes MPI when the process was started by a launcher (mpirun, mpiexec, srun) and MPI is
  // not initialized yet; otherwise rank 0 of 1.
  MpiShare();
  ~MpiShare();  // finalizes MPI if this object initialized it
  MpiShare(const MpiShare&) = delete;
  MpiShare& operator=(const MpiShare&) = delete;

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }

  // This rank's share [begin, end) of `rows` rows: contiguous, in rank order, sizes within one.
  std::uint64_t share_begin(std::uint64_t rows) const noexcept;
  std::uint64_t share_end(std::uint64_t rows) const noexcept;

  // Every rank's `local`, concatenated in rank order, on rank 0; empty on the other ranks.
  // Collective: every rank must call it.
  std::vector<double> gather(const std::vector<double>& local) const;

 private:
  int rank_ = 0;
  int size_ = 1;
  bool initialized_here_ = false;
};

// True when the environment shows an MPI launcher started this process.
bool launched_by_mpi() noexcept;

}  // namespace clustersweep::engine
