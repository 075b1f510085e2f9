// The chunk scheduler on real MPI ranks with a fake worker: every chunk exactly once, and clean
// stops on interruption and on failure.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "engine/scheduler.h"

namespace clustersweep::engine {
namespace {

class FakeWorker : public ChunkWorker {
 public:
  explicit FakeWorker(std::uint64_t chunks) : count(chunks, 0) {}
  void start(std::uint64_t chunk) override {
    current = chunk;
    left = 3;  // three slices per chunk
  }
  bool advance(std::uint64_t) override {
    if (stalled) return false;
    if (slice_sleep_ms) std::this_thread::sleep_for(std::chrono::milliseconds(slice_sleep_ms));
    return --left == 0;
  }
  std::uint64_t commit() override {
    if (fail_at && ++commits == fail_at) throw std::runtime_error("boom on the fake worker");
    ++count[current];
    ++done;
    return current * 2;
  }
  std::vector<std::uint64_t> count;
  std::uint64_t current = 0;
  int left = 0;
  int done = 0;
  int commits = 0;
  int fail_at = 0;  // fail the n-th commit (0: never)
  // Rank 0 alone may finish a list of trivial chunks before another rank is even scheduled (a
  // loaded machine). A stalled worker never finishes its chunk, so the other ranks must do the
  // work: the tests of a stop on another rank then hold on any machine.
  bool stalled = false;
  int slice_sleep_ms = 0;
};

std::vector<std::uint64_t> range(std::uint64_t n) {
  std::vector<std::uint64_t> v(n);
  for (std::uint64_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

// Sum of every rank's counts.
std::vector<std::uint64_t> total(const std::vector<std::uint64_t>& local) {
  std::vector<std::uint64_t> out(local.size());
  MPI_Allreduce(local.data(), out.data(), static_cast<int>(local.size()), MPI_UINT64_T, MPI_SUM,
                MPI_COMM_WORLD);
  return out;
}

TEST(Scheduler, EveryChunkExactlyOnce) {
  const mpi::Comm comm;
  for (std::uint64_t n : {0, 1, 2, 5, 200}) {
    FakeWorker worker(n);
    std::uint64_t rows = 0;
    ScheduleOptions options;
    options.on_done = [&](std::uint64_t, std::uint64_t r) { rows += r; };
    const ScheduleResult result =
        schedule(comm, comm.rank() == 0 ? range(n) : std::vector<std::uint64_t>{}, worker, options);
    EXPECT_EQ(result.status, ScheduleResult::complete);
    for (std::uint64_t c : total(worker.count)) EXPECT_EQ(c, 1u);
    if (comm.rank() == 0) {
      EXPECT_EQ(result.chunks_done, n);
      EXPECT_EQ(rows, n * (n - (n > 0 ? 1 : 0)));  // sum of 2k for k < n
    }
  }
}

TEST(Scheduler, OnlyTheChunksToDo) {
  const mpi::Comm comm;
  FakeWorker worker(50);
  std::vector<std::uint64_t> odd;
  for (std::uint64_t k = 1; k < 50; k += 2) odd.push_back(k);
  const ScheduleResult result =
      schedule(comm, comm.rank() == 0 ? odd : std::vector<std::uint64_t>{}, worker, {});
  EXPECT_EQ(result.status, ScheduleResult::complete);
  const auto counts = total(worker.count);
  for (std::uint64_t k = 0; k < 50; ++k) EXPECT_EQ(counts[k], k % 2) << k;
}

TEST(Scheduler, EveryRankWorks) {
  const mpi::Comm comm;
  FakeWorker worker(400);
  // Chunks that take time (3 ms each, 1.2 s for rank 0 alone) give the other ranks time to ask.
  worker.slice_sleep_ms = 1;
  schedule(comm, comm.rank() == 0 ? range(400) : std::vector<std::uint64_t>{}, worker, {});
  // Rank 0 evaluates too: no rank is left idle on a long list.
  EXPECT_GT(worker.done, 0) << "rank " << comm.rank();
}

TEST(Scheduler, AnInterruptOnAnyRankStopsEveryRank) {
  const mpi::Comm comm;
  FakeWorker worker(300);
  worker.stalled = comm.rank() == 0 && comm.size() > 1;
  ScheduleOptions options;
  options.interrupted = [&] { return comm.rank() > 0 && worker.done >= 3; };
  const ScheduleResult result =
      schedule(comm, comm.rank() == 0 ? range(300) : std::vector<std::uint64_t>{}, worker, options);
  EXPECT_EQ(result.status, ScheduleResult::interrupted);
  std::uint64_t done = 0;
  for (std::uint64_t c : total(worker.count)) {
    EXPECT_LE(c, 1u);
    done += c;
  }
  EXPECT_LT(done, 300u);
  if (comm.rank() == 0) {
    EXPECT_EQ(result.chunks_done, done);
  }
}

TEST(Scheduler, AFailureOnAnyRankFailsEveryRankWithItsMessage) {
  const mpi::Comm comm;
  FakeWorker worker(300);
  worker.stalled = comm.rank() == 0 && comm.size() > 1;
  if (comm.rank() > 0) worker.fail_at = 2;
  const ScheduleResult result =
      schedule(comm, comm.rank() == 0 ? range(300) : std::vector<std::uint64_t>{}, worker, {});
  EXPECT_EQ(result.status, ScheduleResult::failed);
  if (comm.rank() == 0) {
    EXPECT_EQ(result.error, "boom on the fake worker");
  }
  for (std::uint64_t c : total(worker.count)) EXPECT_LE(c, 1u);
}

}  // namespace
}  // namespace clustersweep::engine
