#include "engine/scheduler.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <exception>

namespace clustersweep::engine {

namespace {

// The protocol. Rank r > 0 sends rank 0 messages {kind, chunk, rows, want} on kToMaster; rank 0
// answers every want with one batch {first chunk, count} on kToWorker (count 0: no more work).
// Batches are guided: about 1/(4 x ranks) of the chunks left, so early batches are large (few
// messages, a deep reserve however late rank 0 answers) and the last ones single chunks (a short
// tail). A rank asks for its next batch while it still holds half of its last one.
constexpr int kToMaster = 7101;
constexpr int kToWorker = 7102;
constexpr int kErrorText = 7103;

enum Kind : std::int64_t {
  kRequest = 0,      // want more chunks
  kDone = 1,         // chunk done with rows; want more
  kInterrupted = 2,  // this rank saw a signal: stop handing out work
  kFailed = 3,       // followed by the message on kErrorText
  kBye = 4,          // this rank is finished and expects no more replies
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string what_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown error";
  }
}

// Evaluates and commits one chunk in slices, stopping early on interruption. Returns false when
// interrupted (the chunk is abandoned).
bool run_chunk(ChunkWorker& worker, std::uint64_t chunk, const ScheduleOptions& options,
               std::uint64_t& rows) {
  worker.start(chunk);
  while (!worker.advance(options.slice_points)) {
    if (options.interrupted()) {
      worker.abandon();
      return false;
    }
  }
  rows = worker.commit();
  return true;
}

class Master {
 public:
  Master(const mpi::Comm& comm, const std::vector<std::uint64_t>& todo, ChunkWorker& worker,
         const ScheduleOptions& options)
      : comm_(comm),
        todo_(todo.begin(), todo.end()),
        total_(todo.size()),
        worker_(worker),
        options_(options),
        alive_(comm.size() - 1) {}

  ScheduleResult run() {
    while (true) {
      handle_messages();
      if (!stopping_ && options_.interrupted()) stop(ScheduleResult::interrupted);
      if (active_) {
        step();
      } else if (!stopping_ && !todo_.empty()) {
        start(next());
      } else if (alive_ > 0) {
        wait_for_message();
      } else {
        break;
      }
    }
    if (result_.status == ScheduleResult::complete && result_.chunks_done != total_)
      result_.status = ScheduleResult::interrupted;
    return result_;
  }

 private:
  std::int64_t next() {
    if (stopping_ || todo_.empty()) return -1;
    const std::uint64_t chunk = todo_.front();
    todo_.pop_front();
    return static_cast<std::int64_t>(chunk);
  }

  // A guided batch of consecutive chunks for another rank: {first, count}, count 0 when none.
  void next_batch(std::int64_t (&batch)[2]) {
    batch[0] = 0;
    batch[1] = 0;
    if (stopping_ || todo_.empty()) return;
    const std::uint64_t size =
        std::max<std::uint64_t>(1, todo_.size() / (4 * static_cast<std::uint64_t>(comm_.size())));
    batch[0] = static_cast<std::int64_t>(todo_.front());
    while (static_cast<std::uint64_t>(batch[1]) < size && !todo_.empty() &&
           todo_.front() == static_cast<std::uint64_t>(batch[0] + batch[1])) {
      todo_.pop_front();
      ++batch[1];
    }
  }

  void stop(ScheduleResult::Status why) {
    stopping_ = true;
    if (why > result_.status) result_.status = why;
    if (active_) {
      worker_.abandon();
      active_ = false;
    }
  }

  void fail(const std::string& message) {
    if (result_.error.empty()) result_.error = message;
    stop(ScheduleResult::failed);
  }

  void done(std::uint64_t chunk, std::uint64_t rows) {
    ++result_.chunks_done;
    if (options_.on_done) options_.on_done(chunk, rows);
  }

  void start(std::int64_t chunk) {
    try {
      worker_.start(static_cast<std::uint64_t>(chunk));
      chunk_ = static_cast<std::uint64_t>(chunk);
      active_ = true;
    } catch (...) {
      fail(what_of(std::current_exception()));
    }
  }

  // One slice of rank 0's own chunk.
  void step() {
    try {
      if (!worker_.advance(options_.slice_points)) return;
      active_ = false;
      const std::uint64_t rows = worker_.commit();
      done(chunk_, rows);
    } catch (...) {
      active_ = false;
      fail(what_of(std::current_exception()));
    }
  }

  void handle(int source, const std::int64_t (&m)[4]) {
    switch (m[0]) {
      case kDone:
        done(static_cast<std::uint64_t>(m[1]), static_cast<std::uint64_t>(m[2]));
        break;
      case kInterrupted:
        stop(ScheduleResult::interrupted);
        break;
      case kFailed:
        fail(comm_.receive_text(source, kErrorText));
        break;
      case kBye:
        --alive_;
        break;
      default:
        break;
    }
    for (std::int64_t i = 0; i < m[3]; ++i) {
      std::int64_t batch[2];
      next_batch(batch);
      comm_.send(batch, 2, source, kToWorker);
    }
  }

  void handle_messages() {
    int source = 0;
    while (alive_ > 0 && comm_.probe(kToMaster, source)) {
      std::int64_t m[4];
      comm_.receive(m, 4, kToMaster, source);
      handle(source, m);
    }
  }

  void wait_for_message() {
    std::int64_t m[4];
    const double start = now_s();
    const int source = comm_.receive(m, 4, kToMaster);
    result_.idle_s += now_s() - start;
    handle(source, m);
  }

  const mpi::Comm& comm_;
  std::deque<std::uint64_t> todo_;
  std::uint64_t total_;
  ChunkWorker& worker_;
  const ScheduleOptions& options_;
  int alive_;
  bool stopping_ = false;
  bool active_ = false;
  std::uint64_t chunk_ = 0;
  ScheduleResult result_;
};

ScheduleResult::Status run_worker(const mpi::Comm& comm, ChunkWorker& worker,
                                  const ScheduleOptions& options, double& idle_s) {
  ScheduleResult::Status status = ScheduleResult::complete;
  std::deque<std::uint64_t> queue;
  std::int64_t outstanding = 0;
  bool no_more = false;
  bool stopped = false;  // interrupted or failed: evaluate nothing more

  auto send = [&](Kind kind, std::int64_t chunk, std::int64_t rows, std::int64_t want) {
    const std::int64_t m[4] = {kind, chunk, rows, want};
    comm.send(m, 4, 0, kToMaster);
    outstanding += want;
  };
  std::uint64_t last_batch = 1;
  auto take_reply = [&] {
    std::int64_t batch[2];
    comm.receive(batch, 2, kToWorker, 0);
    --outstanding;
    if (batch[1] == 0) no_more = true;
    if (stopped || batch[1] == 0) return;
    last_batch = static_cast<std::uint64_t>(batch[1]);
    for (std::int64_t i = 0; i < batch[1]; ++i)
      queue.push_back(static_cast<std::uint64_t>(batch[0] + i));
  };
  // Ask for the next batch while half of the last one is still queued.
  auto want_more = [&]() -> std::int64_t {
    return !no_more && !stopped && outstanding == 0 && queue.size() <= last_batch / 2 ? 1 : 0;
  };

  send(kRequest, -1, 0, 1);
  while (true) {
    int source = 0;
    while (outstanding > 0 && comm.probe(kToWorker, source, 0)) take_reply();
    auto interrupt = [&] {
      stopped = true;
      status = ScheduleResult::interrupted;
      queue.clear();
      send(kInterrupted, -1, 0, 0);
    };
    if (!stopped && options.interrupted()) interrupt();
    if (queue.empty()) {
      if (outstanding == 0 && (no_more || stopped)) break;
      const double start = now_s();
      take_reply();
      idle_s += now_s() - start;
      continue;
    }
    const std::uint64_t chunk = queue.front();
    queue.pop_front();
    try {
      std::uint64_t rows = 0;
      if (run_chunk(worker, chunk, options, rows)) {
        send(kDone, static_cast<std::int64_t>(chunk), static_cast<std::int64_t>(rows), want_more());
      } else {
        interrupt();
      }
    } catch (...) {
      stopped = true;
      status = ScheduleResult::failed;
      queue.clear();
      send(kFailed, -1, 0, 0);
      comm.send_text(what_of(std::current_exception()), 0, kErrorText);
    }
  }
  send(kBye, -1, 0, 0);
  return status;
}

}  // namespace

ScheduleResult schedule(const mpi::Comm& comm, const std::vector<std::uint64_t>& todo,
                        ChunkWorker& worker, const ScheduleOptions& options) {
  const double start = now_s();
  ScheduleResult result;
  if (comm.rank() == 0) {
    result = Master(comm, todo, worker, options).run();
  } else {
    result.status = run_worker(comm, worker, options, result.idle_s);
  }
  result.wall_s = now_s() - start;
  result.status = static_cast<ScheduleResult::Status>(comm.max(std::int64_t{result.status}));
  return result;
}

}  // namespace clustersweep::engine
