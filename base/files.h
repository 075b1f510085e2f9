#pragma once
// Whole-file writes that never leave half a file and never touch another file: the text goes to a
// fresh temporary beside `path` (a name no other file has) and is renamed over `path` once
// complete, so a reader sees the old file or the new one, and a user's `path.tmp` is left alone.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clustersweep {

// A file written under a fresh temporary name beside `path` and renamed over `path` by commit().
// Destroyed uncommitted (an error, an exception), it removes the temporary. Errors read
// "<what>: cannot write <path>: <reason>".
class AtomicFile {
 public:
  AtomicFile(std::string path, std::string what, bool executable = false);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // The temporary's name, for a library that writes the file itself (HDF5).
  const std::string& temporary() const noexcept { return temporary_; }
  void write(std::string_view text);  // appends
  void commit();

 private:
  [[noreturn]] void fail(int error);
  std::string path_, what_, temporary_;
  bool executable_;
  int fd_ = -1;
};

void write_file_atomically(const std::string& path, std::string_view text, std::string_view what,
                           bool executable = false);

// The whole file, or nullopt when it cannot be opened or is a folder (errno says why: EISDIR for a
// folder): callers name the file in their own words.
std::optional<std::string> read_file(const std::string& path);

// True when both paths name one existing file (same device and inode: a hard link, a symbolic
// link or another spelling of the path counts), so that no output ever replaces an input.
bool same_file(const std::string& a, const std::string& b);

// A file a command reads or writes, as its messages name it: an input by what it is ("the store
// being read"), an output by its flag ("--csv"). An empty path is a file not asked for.
struct CommandFile {
  std::string path;
  std::string role;
  bool folder = false;  // a folder the command writes into (or a file in one it creates)
};

// Refuses (InputError, before anything is written) an output that is one of the inputs or another
// output (the same file by device and inode once it exists, else the same normalised absolute
// path), a file output that is a folder, and one whose folder does not exist. Messages read
// "--csv: 'r.h5' is the store being read; name another file (an output never replaces an input)".
void refuse_clobbering(const std::vector<CommandFile>& inputs,
                       const std::vector<CommandFile>& outputs);

}  // namespace clustersweep
