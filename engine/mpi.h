#pragma once
// A thin, move-only RAII layer over the MPI calls the engine uses. Only engine/ includes <mpi.h>;
// everything here throws clustersweep::Error on failure and never throws from a destructor.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  // the C API only; the C++ bindings warn under -Wextra
#endif
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace clustersweep::engine::mpi {

// Throws Error("<what> failed: <MPI error string>") unless code is MPI_SUCCESS.
void check(int code, const char* what);

// Initializes MPI (unless it already is) and finalizes it on destruction if it initialized it.
// Works without a launcher: a plain process is rank 0 of 1 (MPI singleton).
class Env {
 public:
  Env();
  ~Env();
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

 private:
  bool initialized_here_ = false;
};

// A non-owning view of a communicator (MPI_COMM_WORLD unless told otherwise) with the few
// collectives the engine needs.
class Comm {
 public:
  explicit Comm(MPI_Comm comm = MPI_COMM_WORLD);
  MPI_Comm get() const noexcept { return comm_; }
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }

  void barrier() const;
  // Rank `root`'s value on every rank.
  void broadcast(std::string& text, int root = 0) const;
  void broadcast(std::vector<std::uint8_t>& bytes, int root = 0) const;
  void broadcast(std::vector<std::uint64_t>& values, int root = 0) const;
  std::int64_t broadcast(std::int64_t value, int root = 0) const;
  std::int64_t max(std::int64_t value) const;    // allreduce
  std::uint64_t sum(std::uint64_t value) const;  // allreduce
  double max(double value) const;                // allreduce
  // Every rank's value, in rank order, on `root` (empty elsewhere).
  std::vector<double> gather(double value, int root = 0) const;

  // Point-to-point messages of a few int64 (the scheduler's protocol) and of text.
  void send(const std::int64_t* values, int count, int dest, int tag) const;
  // Blocks until a message with `tag` arrives from any rank; returns its source.
  int receive(std::int64_t* values, int count, int tag, int source = MPI_ANY_SOURCE) const;
  // True (and the message's source in `source`) when a message with `tag` is waiting.
  bool probe(int tag, int& source, int from = MPI_ANY_SOURCE) const;
  void send_text(const std::string& text, int dest, int tag) const;
  std::string receive_text(int source, int tag) const;

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace clustersweep::engine::mpi
