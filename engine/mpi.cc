#include "engine/mpi.h"

#include <fmt/format.h>

#include <climits>

#include "base/error.h"
#include "engine/h5.h"

namespace clustersweep::engine::mpi {

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(
      fmt::format("{} failed: {}", what, std::string(text, static_cast<std::size_t>(length))));
}

Env::Env() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  // HDF5 started after MPI would shut itself down inside MPI_Finalize, where a file it failed to
  // close crashes it; started first, it shuts down when ~Env says so.
  h5::init();
  int provided = 0;
  // Funneled: the run's row writer is a second thread, which makes no MPI call.
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  initialized_here_ = true;
  // Errors come back as codes that check() turns into exceptions instead of aborting the job.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

Env::~Env() {
  if (!initialized_here_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  h5::shutdown();
  MPI_Finalize();
}

Comm::Comm(MPI_Comm comm) : comm_(comm) {
  check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

void Comm::barrier() const { check(MPI_Barrier(comm_), "MPI_Barrier"); }

namespace {

int count_of(std::size_t size) {
  if (size > static_cast<std::size_t>(INT_MAX)) throw Error("MPI message too large");
  return static_cast<int>(size);
}

}  // namespace

void Comm::broadcast(std::string& text, int root) const {
  std::uint64_t size = text.size();
  check(MPI_Bcast(&size, 1, MPI_UINT64_T, root, comm_), "MPI_Bcast");
  text.resize(size);
  if (size) check(MPI_Bcast(text.data(), count_of(size), MPI_CHAR, root, comm_), "MPI_Bcast");
}

void Comm::broadcast(std::vector<std::uint8_t>& bytes, int root) const {
  std::uint64_t size = bytes.size();
  check(MPI_Bcast(&size, 1, MPI_UINT64_T, root, comm_), "MPI_Bcast");
  bytes.resize(size);
  if (size) check(MPI_Bcast(bytes.data(), count_of(size), MPI_UINT8_T, root, comm_), "MPI_Bcast");
}

void Comm::broadcast(std::vector<std::uint64_t>& values, int root) const {
  std::uint64_t size = values.size();
  check(MPI_Bcast(&size, 1, MPI_UINT64_T, root, comm_), "MPI_Bcast");
  values.resize(size);
  if (size) check(MPI_Bcast(values.data(), count_of(size), MPI_UINT64_T, root, comm_), "MPI_Bcast");
}

std::int64_t Comm::broadcast(std::int64_t value, int root) const {
  check(MPI_Bcast(&value, 1, MPI_INT64_T, root, comm_), "MPI_Bcast");
  return value;
}

std::int64_t Comm::max(std::int64_t value) const {
  std::int64_t out = 0;
  check(MPI_Allreduce(&value, &out, 1, MPI_INT64_T, MPI_MAX, comm_), "MPI_Allreduce");
  return out;
}

std::uint64_t Comm::sum(std::uint64_t value) const {
  std::uint64_t out = 0;
  check(MPI_Allreduce(&value, &out, 1, MPI_UINT64_T, MPI_SUM, comm_), "MPI_Allreduce");
  return out;
}

double Comm::max(double value) const {
  double out = 0;
  check(MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, comm_), "MPI_Allreduce");
  return out;
}

std::vector<double> Comm::gather(double value, int root) const {
  std::vector<double> out(rank_ == root ? static_cast<std::size_t>(size_) : 0);
  check(MPI_Gather(&value, 1, MPI_DOUBLE, out.data(), 1, MPI_DOUBLE, root, comm_), "MPI_Gather");
  return out;
}

void Comm::send(const std::int64_t* values, int count, int dest, int tag) const {
  check(MPI_Send(values, count, MPI_INT64_T, dest, tag, comm_), "MPI_Send");
}

int Comm::receive(std::int64_t* values, int count, int tag, int source) const {
  MPI_Status status;
  check(MPI_Recv(values, count, MPI_INT64_T, source, tag, comm_, &status), "MPI_Recv");
  return status.MPI_SOURCE;
}

bool Comm::probe(int tag, int& source, int from) const {
  int flag = 0;
  MPI_Status status;
  check(MPI_Iprobe(from, tag, comm_, &flag, &status), "MPI_Iprobe");
  if (flag) source = status.MPI_SOURCE;
  return flag != 0;
}

void Comm::send_text(const std::string& text, int dest, int tag) const {
  check(MPI_Send(text.data(), count_of(text.size()), MPI_CHAR, dest, tag, comm_), "MPI_Send");
}

std::string Comm::receive_text(int source, int tag) const {
  MPI_Status status;
  check(MPI_Probe(source, tag, comm_, &status), "MPI_Probe");
  int count = 0;
  check(MPI_Get_count(&status, MPI_CHAR, &count), "MPI_Get_count");
  std::string text(static_cast<std::size_t>(count), '\0');
  check(MPI_Recv(text.data(), count, MPI_CHAR, source, tag, comm_, MPI_STATUS_IGNORE), "MPI_Recv");
  return text;
}

}  // namespace clustersweep::engine::mpi
