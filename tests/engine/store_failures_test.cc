// End to end: `clustersweep run` and `merge` where a store cannot be made or written (a folder
// that takes no files, a space too large for the disk or for one file, a full disk, a file in the
// way) or where --resume meets a damaged store. Each ends with one error line and a clean exit on
// every rank (no crash while MPI and HDF5 shut down), and leaves no file behind but the resumable
// one; the files it was given are unchanged.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "test_support.h"

namespace clustersweep::test {
namespace {

namespace fs = std::filesystem;

// The names in a folder.
std::set<std::string> listing(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename());
  return names;
}

std::size_t digest(const std::string& path) { return std::hash<std::string>{}(read_file(path)); }

// The lines clustersweep printed (mpiexec adds its own banners around them).
std::vector<std::string> our_lines(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("clustersweep ", 0) == 0) lines.push_back(line);
  return lines;
}

// Runs `argv` and expects exit code `code` with the one line `line` (or, when `prefix`, one line
// starting with it) and no sign of a crash.
std::string expect_one_error(const std::vector<std::string>& argv, int code,
                             const std::string& line, bool prefix = false) {
  std::string out;
  EXPECT_EQ(run(argv, &out), code) << out;
  const auto lines = our_lines(out);
  EXPECT_EQ(lines.size(), 1u) << out;
  if (!lines.empty()) {
    if (prefix)
      EXPECT_EQ(lines[0].rfind(line, 0), 0u) << lines[0];
    else
      EXPECT_EQ(lines[0], line);
  }
  for (const char* crash : {"Segmentation", "signal 11", "Signal:", "core dumped"})
    EXPECT_EQ(out.find(crash), std::string::npos) << out;
  return lines.empty() ? "" : lines[0];
}

class StoreFailures : public ::testing::Test {
 protected:
  TempDir dir_;
};

TEST_F(StoreFailures, AFolderThatTakesNoFilesIsBadInput) {
  if (!fs::is_directory("/proc/self")) GTEST_SKIP() << "no /proc";
  const std::string s = dir_.file("s.toml", small_spec());
  for (int ranks : {1, 2})
    expect_one_error(command(ranks, {"run", s, "-o", "/proc/x.h5"}), 2,
                     "clustersweep run: error: --output '/proc/x.h5': cannot create a file in "
                     "'/proc': No such file or directory");
  EXPECT_EQ(listing(dir_.path()), (std::set<std::string>{"s.toml"}));
}

// A space of 10^12 designs: one row each would need hundreds of TB, which no test machine has
// free, and its staging file would be a sparse file that large (ext4 stops at 16 TiB, halfway
// through HDF5's writes). Refused before any file is made.
TEST_F(StoreFailures, ASpaceTooLargeForTheDiskIsRefusedBeforeAnyFileIsMade) {
  const std::string axes =
      "[workload]\nmodel = \"llama3-8b\"\nprecision = \"bf16\"\n"
      "[cluster]\ngpu = \"H100-SXM5-80GB\"\n"
      "nodes = {start = 1, stop = 1000, step = 1}\n"
      "inter_node_gbps_per_gpu = {start = 1, stop = 1000, step = 1}\n"
      "hbm_gb = {start = 1, stop = 1000, step = 1}\n"
      "expansion_gb = {start = 1, stop = 1000, step = 1}\n"
      "expansion_gbytes_per_s = 64\n";
  const std::string best = dir_.file("best.toml", axes +
                                                      "[plan]\ntp = 1\npp = 1\n"
                                                      "[output]\nkeep = \"best-per-design\"\n");
  const std::string store = dir_ / "r.h5";
  for (int ranks : {1, 3}) {
    const std::string line = expect_one_error(
        command(ranks, {"run", best, "-o", store}), 2,
        "clustersweep run: error: --output '" + store + "': the run needs up to ", true);
    EXPECT_NE(line.find(" for each of 1,000,000,000,000 designs, and "), std::string::npos) << line;
    EXPECT_NE(line.find(" chunks, which write their rows in slots of their own), then the store "),
              std::string::npos)
        << line;
    EXPECT_TRUE(line.ends_with(" are free on '" + dir_.path() + "'")) << line;
  }
  // 10^15 designs of 80 plans, every plan kept at most: a staging file of more than 2^63 bytes,
  // which no file system holds.
  const std::string pareto =
      dir_.file("pareto.toml", axes + "nvlink_gbytes_per_s = {start = 1, stop = 1000, step = 1}\n" +
                                   "[plan]\ntp = [1, 2]\npp = [1, 2]\ncp = [1, 2]\n"
                                   "micro_batch = \"pow2:1..16\"\n"
                                   "[output]\nkeep = \"pareto-per-design\"\n");
  for (int ranks : {1, 2}) {
    const std::string line = expect_one_error(
        command(ranks, {"run", pareto, "-o", store}), 2,
        "clustersweep run: error: --output '" + store + "': the store would be a file of ", true);
    EXPECT_NE(line.find(" PB, more than the file system of '" + dir_.path() +
                        "' holds in one file; split the sweep with --shard I/K (or narrow the "
                        "spec)"),
              std::string::npos)
        << line;
  }
  EXPECT_EQ(listing(dir_.path()), (std::set<std::string>{"best.toml", "pareto.toml"}));
}

// A small file system of its own (tmpfs), for the disk-full cases; only root may mount one.
class SmallDisk {
 public:
  SmallDisk(const std::string& dir, const std::string& size) : dir_(dir) {
    fs::create_directories(dir_);
    mounted_ =
        std::system(
            ("mount -t tmpfs -o size=" + size + " tmpfs " + dir_ + " >/dev/null 2>&1").c_str()) ==
        0;
  }
  ~SmallDisk() {
    if (mounted_) std::system(("umount " + dir_ + " >/dev/null 2>&1").c_str());
  }
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
  bool mounted() const { return mounted_; }
  // Fills it up to `left` free bytes.
  void fill(std::uint64_t left) const {
    struct statvfs info {};
    statvfs(dir_.c_str(), &info);
    const std::uint64_t free_bytes = std::uint64_t{info.f_bavail} * info.f_frsize;
    std::ofstream(dir_ + "/fill", std::ios::binary)
        << std::string(free_bytes > left ? free_bytes - left : 0, '\0');
  }

 private:
  std::string dir_;
  bool mounted_ = false;
};

TEST_F(StoreFailures, AFullDiskEndsTheRunWithOneLineOnEveryRankCount) {
  const std::string s = dir_.file("s.toml", small_spec("feasible"));
  // The store cannot even be created: HDF5 fails to write its metadata, and to close the file.
  {
    SmallDisk disk(dir_ / "full", "1m");
    if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs (not root?)";
    disk.fill(8 << 10);
    const std::string store = dir_ / "full/r.h5";
    for (int ranks : {1, 2, 3})
      expect_one_error(command(ranks, {"run", s, "-o", store, "--no-summary"}), 1,
                       "clustersweep run: error: cannot create '" + store +
                           ".partial': No space left on device");
    EXPECT_EQ(listing(dir_ / "full"), (std::set<std::string>{"fill"}));
  }
  // The rows do not fit: the run stops, its finished chunks kept for --resume.
  {
    SmallDisk disk(dir_ / "small", "2m");
    ASSERT_TRUE(disk.mounted());
    const std::string store = dir_ / "small/r.h5";
    for (int ranks : {1, 2, 3}) {
      const std::string line =
          expect_one_error(command(ranks, {"run", s, "-o", store, "--no-summary", "--resume"}), 1,
                           "clustersweep run: error: cannot write chunk ", true);
      EXPECT_NE(line.find(": " + store +
                          ".partial: cannot write: No space left on device; the store stays "
                          "resumable: fix the cause (free disk space?), then rerun with --resume"),
                std::string::npos)
          << line;
      EXPECT_EQ(listing(dir_ / "small"), (std::set<std::string>{"r.h5.partial"}));
    }
  }
}

// The final store of a filtered run cannot be created (its temporary name is a link into a
// folder that does not exist): the run says so, keeps every finished chunk, removes what it
// made, and a resume finishes it identically.
TEST_F(StoreFailures, AFailedAssemblyKeepsTheWorkAndResumeFinishesIt) {
  const std::string s = dir_.file("s.toml", small_spec("pareto-per-design"));
  std::string out;
  ASSERT_EQ(run(command(1, {"run", s, "-o", dir_ / "ref.h5", "--no-summary"}), &out), 0) << out;
  for (int ranks : {1, 3}) {
    const std::string store = dir_ / "r.h5";
    fs::create_symlink(dir_ / "missing/r.h5", store + ".assembling.new");
    expect_one_error(command(ranks, {"run", s, "-o", store, "--no-summary"}), 1,
                     "clustersweep run: error: cannot create '" + store +
                         ".assembling': No such file or directory; every chunk is done and kept "
                         "in '" +
                         store +
                         ".partial': fix the cause (free disk space?), then rerun with --resume");
    EXPECT_EQ(listing(dir_.path()), (std::set<std::string>{"s.toml", "ref.h5", "r.h5.partial"}));
    ASSERT_EQ(run(command(ranks, {"run", s, "-o", store, "--resume", "--no-summary"}), &out), 0)
        << out;
    EXPECT_EQ(compare_stores(dir_ / "ref.h5", store), "");
    fs::remove(store);
  }
}

// --resume reads the store as the analysis commands do, and refuses a damaged one in their words,
// changing nothing.
TEST_F(StoreFailures, ResumeOfADamagedStoreSaysWhatSummarySays) {
  const std::string s = dir_.file("s.toml", small_spec("all"));
  std::string out;
  ASSERT_EQ(run(command(1, {"run", s, "-o", dir_ / "whole.h5", "--no-summary"}), &out), 0) << out;
  const std::string whole = read_file(dir_ / "whole.h5");
  for (const std::string name : {"cut.h5.partial", "cut.h5"}) {
    const std::string path = dir_ / name;
    write_file(path, whole.substr(0, 1000));
    const std::size_t before = digest(path);
    const std::string why =
        "' is not a complete clustersweep store (the file is truncated: 1000 "
        "of " +
        std::to_string(whole.size()) + " bytes); copy it again, or rerun its sweep with --force";
    for (int ranks : {1, 2})
      expect_one_error(command(ranks, {"run", s, "-o", dir_ / "cut.h5", "--resume"}), 2,
                       "clustersweep run: error: '" + path + why);
    expect_one_error(command(1, {"summary", path}), 2,
                     "clustersweep summary: error: '" + path + why);
    EXPECT_EQ(digest(path), before);
    fs::remove(path);
  }
}

TEST_F(StoreFailures, AMergeThatCannotBeWrittenLeavesNothing) {
  const std::string s = dir_.file("s.toml", small_spec("all"));
  std::string out;
  for (const auto& [name, shard] : {std::pair{"s0.h5", "0/2"}, std::pair{"s1.h5", "1/2"}})
    ASSERT_EQ(
        run(command(1, {"run", s, "-o", dir_ / name, "--shard", shard, "--no-summary"}), &out), 0)
        << out;
  const std::string a = dir_ / "s0.h5", b = dir_ / "s1.h5", merged = dir_ / "m.h5";
  const std::size_t a_digest = digest(a), b_digest = digest(b);
  // Beyond the process's file size limit (1 MiB; the merged store is about 5 MB), as beyond a
  // full disk: HDF5 cannot write, nor close, the file.
  expect_one_error({"bash", "-c", "trap '' XFSZ; ulimit -f 1024; exec \"$0\" \"$@\"",
                    CLUSTERSWEEP_BINARY, "merge", a, b, "-o", merged},
                   1, "clustersweep merge: error: cannot write '" + merged + "': File too large");
  if (fs::is_directory("/proc/self"))
    expect_one_error(command(1, {"merge", a, b, "-o", "/proc/m.h5"}), 2,
                     "clustersweep merge: error: --output '/proc/m.h5': cannot create a file in "
                     "'/proc': No such file or directory");
  EXPECT_EQ(listing(dir_.path()), (std::set<std::string>{"s.toml", "s0.h5", "s1.h5"}));
  EXPECT_EQ(digest(a), a_digest);
  EXPECT_EQ(digest(b), b_digest);
}

}  // namespace
}  // namespace clustersweep::test
