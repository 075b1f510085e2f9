#include "engine/mpi_gather.h"

#include <fmt/format.h>
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  // the C API only; the C++ bindings warn under -Wextra
#endif
#include <mpi.h>

#include <climits>
#include <cstdlib>

#include "base/error.h"
#include "engine/h5.h"

namespace clustersweep::engine {
namespace {

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(
      fmt::format("{} failed: {}", what, std::string(text, static_cast<std::size_t>(length))));
}

}  // namespace

bool launched_by_mpi() noexcept {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(name)) return true;
  return false;
}

MpiShare::MpiShare() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    if (!launched_by_mpi()) return;
    h5::init();  // before MPI: see mpi::Env
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided), "MPI_Init_thread");
    initialized_here_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiShare::~MpiShare() {
  if (!initialized_here_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  h5::shutdown();
  MPI_Finalize();
}

std::uint64_t MpiShare::share_begin(std::uint64_t rows) const noexcept {
  const auto r = static_cast<std::uint64_t>(rank_), n = static_cast<std::uint64_t>(size_);
  return rows / n * r + std::min(r, rows % n);
}

std::uint64_t MpiShare::share_end(std::uint64_t rows) const noexcept {
  const auto r = static_cast<std::uint64_t>(rank_) + 1, n = static_cast<std::uint64_t>(size_);
  return rows / n * r + std::min(r, rows % n);
}

std::vector<double> MpiShare::gather(const std::vector<double>& local) const {
  if (size_ == 1) return local;
  if (local.size() > static_cast<std::size_t>(INT_MAX))
    throw Error(fmt::format("rank {}: {} values are too many to gather", rank_, local.size()));
  int count = static_cast<int>(local.size());
  std::vector<int> counts(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
  check(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
  std::vector<int> displacements(counts.size());
  std::size_t total = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (total > static_cast<std::size_t>(INT_MAX))
      throw Error("too many values to gather on rank 0");
    displacements[i] = static_cast<int>(total);
    total += static_cast<std::size_t>(counts[i]);
  }
  std::vector<double> out(total);
  check(MPI_Gatherv(local.data(), count, MPI_DOUBLE, out.data(), counts.data(),
                    displacements.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD),
        "MPI_Gatherv");
  return out;
}

}  // namespace clustersweep::engine
