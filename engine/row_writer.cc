#include "engine/row_writer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <utility>

#include "base/error.h"
#include "engine/h5.h"
#include "engine/store_format.h"

namespace clustersweep::engine {

// The columns' bytes in memory are their bytes in the file only on a little-endian host (every
// store type is little-endian); x86-64, aarch64 and ppc64le are.
static_assert(std::endian::native == std::endian::little,
              "RowWriter copies rows to the store's little-endian columns byte for byte");

namespace {

// The file offset of a contiguous dataset's data; Error for any other layout.
std::uint64_t data_offset(hid_t file, const std::string& name, std::uint64_t rows,
                          const std::string& path) {
  h5::Id dataset = h5::open_dataset(file, name, path);
  h5::Id dcpl(H5Dget_create_plist(dataset.get()), H5Pclose);
  const haddr_t at = H5Dget_offset(dataset.get());
  if (!dcpl.valid() || H5Pget_layout(dcpl.get()) != H5D_CONTIGUOUS ||
      (rows > 0 && at == HADDR_UNDEF))
    throw Error(
        fmt::format("{}: '{}' is not a contiguous, allocated dataset; a run writes only "
                    "into a store it created",
                    path, name));
  return rows > 0 ? static_cast<std::uint64_t>(at) : 0;
}

}  // namespace

RowLayout read_row_layout(const std::string& path) {
  h5::File file = h5::File::open(path, /*writable=*/false);
  const Schema schema = format::read_schema(file.get(), path);
  RowLayout layout;
  {
    h5::Id first = h5::open_dataset(file.get(), schema.columns.front().name, path);
    layout.rows = h5::extent(first.get(), path);
    h5::Id done = h5::open_dataset(file.get(), "progress/chunk_done", path);
    layout.chunks = h5::extent(done.get(), path);
  }
  for (const auto& c : schema.columns) {
    // A constant column is its dataset's fill value: no bytes in the file to write.
    layout.column_offset.push_back(c.constant ? 0
                                              : data_offset(file.get(), c.name, layout.rows, path));
    layout.element_size.push_back(c.constant ? 0 : element_size(c.type));
  }
  layout.chunk_done_offset = data_offset(file.get(), "progress/chunk_done", layout.chunks, path);
  layout.chunk_rows_offset = data_offset(file.get(), "progress/chunk_rows", layout.chunks, path);
  file.close();
  return layout;
}

RowWriter::RowWriter(std::string path, RowLayout layout, const Schema& schema)
    : path_(std::move(path)), layout_(std::move(layout)), block_(schema) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd_ < 0)
    throw Error(fmt::format("cannot open '{}' to write rows: {}", path_, std::strerror(errno)));
  if (layout_.column_offset.size() != schema.columns.size())
    throw Error(fmt::format("{}: a layout of {} columns for a store of {}", path_,
                            layout_.column_offset.size(), schema.columns.size()));
  // Signals are the main thread's to see (SignalGuard); the writing thread never takes one.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  thread_ = std::thread([this] { loop(); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

RowWriter::~RowWriter() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) ::close(fd_);
}

void RowWriter::wait_idle(std::unique_lock<std::mutex>& lock) {
  changed_.wait(lock, [this] { return !busy_; });
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void RowWriter::submit(std::uint64_t chunk, std::uint64_t offset, RowBlock& block) {
  if (block.columns() != layout_.column_offset.size() || offset + block.rows() > layout_.rows)
    throw Error(fmt::format("internal error: chunk {} has rows [{}, {}) for a store of {} rows",
                            chunk, offset, offset + block.rows(), layout_.rows));
  if (chunk >= layout_.chunks)
    throw Error(
        fmt::format("internal error: chunk {} of a store of {} chunks", chunk, layout_.chunks));
  {
    std::unique_lock lock(mutex_);
    wait_idle(lock);
    std::swap(block_, block);
    chunk_ = chunk;
    offset_ = offset;
    busy_ = true;
  }
  changed_.notify_all();
}

void RowWriter::finish() {
  {
    std::unique_lock lock(mutex_);
    wait_idle(lock);
  }
  if (fd_ >= 0 && ::close(std::exchange(fd_, -1)) != 0)
    throw Error(fmt::format("cannot write '{}': {}", path_, std::strerror(errno)));
}

void RowWriter::loop() noexcept {
  while (true) {
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return busy_ || stop_; });
      if (!busy_) return;  // stopped, nothing in flight
    }
    std::exception_ptr failure;
    try {
      write_chunk();
    } catch (...) {
      failure = std::current_exception();
    }
    {
      const std::lock_guard lock(mutex_);
      busy_ = false;
      if (failure && !error_) error_ = failure;
    }
    changed_.notify_all();
  }
}

void RowWriter::write_bytes(const void* data, std::size_t bytes, std::uint64_t at) const {
  const auto* p = static_cast<const unsigned char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd_, p, bytes, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    // A write that makes no progress has found no room.
    const int error = n < 0 ? errno : ENOSPC;
    if (n <= 0)
      throw Error(fmt::format(
          "cannot write chunk {}: {}: cannot write: {}; the store stays resumable: fix the cause "
          "(free disk space?), then rerun with --resume",
          chunk_, path_, std::strerror(error)));
    p += n;
    at += static_cast<std::uint64_t>(n);
    bytes -= static_cast<std::size_t>(n);
  }
}

void RowWriter::write_chunk() {
  const std::size_t rows = block_.rows();
  for (std::size_t c = 0; c < block_.columns(); ++c) {
    const std::size_t element = layout_.element_size[c];
    write_bytes(block_.raw(c), rows * element, layout_.column_offset[c] + offset_ * element);
  }
  // The mark after the rows: it is what a resumed run trusts.
  const std::uint64_t count = rows;
  const std::uint8_t done = 1;
  write_bytes(&count, sizeof count, layout_.chunk_rows_offset + chunk_ * sizeof count);
  write_bytes(&done, sizeof done, layout_.chunk_done_offset + chunk_);
}

}  // namespace clustersweep::engine
