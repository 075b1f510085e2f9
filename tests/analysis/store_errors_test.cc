// End to end: every analysis command, given a store that is not what a run wrote (cut short,
// emptied, its metadata or its rows damaged, edited with h5py, a folder, an unfinished run's
// staging file), exits 2 with the same one line, writes nothing and leaves the store as it was;
// an export the disk cannot hold fails in the system's words, without a crash.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/analysis/shell.h"

namespace clustersweep::analysis {
namespace {

namespace fs = std::filesystem;

using testing::kBinary;
using testing::Result;
using testing::run;
using testing::slurp;

class StoreErrors : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("clustersweep-store-errors-" + std::to_string(getpid()));
    fs::create_directories(dir_ / "out");
    good_ = (dir_ / "good.h5").string();
    const Result r =
        run(kBinary + " run " CLUSTERSWEEP_SOURCE_DIR "/examples/quick.toml -o " + good_);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  // A copy of the good store at `name`, changed by `python` (h5py on the open file `f`).
  static std::string edited(const std::string& name, const std::string& python) {
    const std::string path = (dir_ / name).string();
    fs::copy_file(good_, path, fs::copy_options::overwrite_existing);
    const std::string script = (dir_ / "edit.py").string();
    std::ofstream(script) << "import sys, h5py, numpy as np\nf = h5py.File(sys.argv[1], 'r+')\n"
                          << python << "\nf.close()\n";
    const Result r = run("/usr/bin/python3 " + script + " " + path);
    EXPECT_EQ(r.code, 0) << r.err;
    return path;
  }

  // Every command that reads `store` says `message` (after "clustersweep CMD: error: ") and
  // nothing else, exits 2, writes no output and leaves the store unchanged. With `prefix`, the
  // message is the start of the line.
  static void expect_refused(const std::string& store, const std::string& message,
                             bool prefix = false, bool rows_only = false) {
    const std::string out = (dir_ / "out").string();
    const std::vector<std::pair<std::string, std::string>> commands = {
        {"summary", ""},
        {"top", ""},
        {"pareto", " --objectives time_to_train_s,cost_usd --csv " + out + "/p.csv"},
        {"energy", ""},
        {"sensitivity", ""},
        {"report", " -o " + out + "/r.html"},
        {"export", " -o " + out + "/x.csv"},
        {"status", " --interval 0"},
        {"merge", " -o " + out + "/m.h5"},
    };
    const std::string before = fs::is_regular_file(store) ? slurp(store) : "";
    for (const auto& [name, options] : commands) {
      // status reads the metadata only: damage in the rows is not its to see.
      if (rows_only && name == "status") continue;
      const Result r = run(kBinary + " " + name + " " + store + options);
      EXPECT_EQ(r.code, 2) << name << ": " << r.err;
      const std::string want = "clustersweep " + name + ": error: " + message;
      if (prefix) {
        EXPECT_EQ(r.err.rfind(want, 0), 0u) << name << ": " << r.err;
        EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << name << ": " << r.err;
      } else {
        EXPECT_EQ(r.err, want + "\n") << name;
      }
      EXPECT_EQ(r.out, "") << name;
      EXPECT_TRUE(fs::is_empty(out)) << name << " wrote " << fs::directory_iterator(out)->path();
      if (fs::is_regular_file(store)) {
        EXPECT_TRUE(slurp(store) == before) << name << " changed it";
      }
    }
  }

  static std::string damaged(const std::string& path, const std::string& why) {
    return "'" + path + "' is not a complete clustersweep store (" + why +
           "); copy it again, or rerun its sweep with --force";
  }

  static fs::path dir_;
  static std::string good_;
};

fs::path StoreErrors::dir_;
std::string StoreErrors::good_;

TEST_F(StoreErrors, ACutShortOrEmptyStore) {
  const std::string whole = slurp(good_);
  const std::string cut = (dir_ / "cut.h5").string();
  std::ofstream(cut, std::ios::binary) << whole.substr(0, 1000);
  expect_refused(cut, damaged(cut, "the file is truncated: 1000 of " +
                                       std::to_string(whole.size()) + " bytes"));
  const std::string empty = (dir_ / "empty.h5").string();
  std::ofstream(empty, std::ios::binary) << "";
  expect_refused(empty, damaged(empty, "the file is empty"));
}

TEST_F(StoreErrors, DamagedMetadataOrRows) {
  std::string data = slurp(good_);
  // The size of the first object of the first global heap collection (the variable-length
  // strings: column names, the spec...), which HDF5 1.10 trusts: reading runs past the heap.
  const auto heap = data.find("GCOL");
  ASSERT_NE(heap, std::string::npos);
  const std::string metadata = (dir_ / "metadata.h5").string();
  std::string broken = data;
  broken.replace(heap + 24, 8, std::string("\xff\xff\xff\x7f\0\0\0\0", 8));
  std::ofstream(metadata, std::ios::binary) << broken;
  expect_refused(metadata,
                 "'" + metadata +
                     "' is not a complete clustersweep store (the file is "
                     "damaged: HDF5 ",
                 /*prefix=*/true);

  // A byte of the rows: a boolean that is neither false nor true.
  const std::string rows =
      edited("rows.h5",
             "o = f['feasible'].id.get_offset()\nf.close()\n"
             "b = bytearray(open(sys.argv[1], 'rb').read())\nb[o + 5] = 7\n"
             "open(sys.argv[1], 'wb').write(b)\nf = h5py.File(sys.argv[1], 'r')");
  expect_refused(rows,
                 damaged(rows,
                         "the file is damaged: column 'feasible' holds the code 7 at row "
                         "5, beyond its 2 values"),
                 false, /*rows_only=*/true);
}

TEST_F(StoreErrors, AColumnMissingOfAnotherLengthOrType) {
  std::string path = edited("missing.h5", "del f['tp']");
  expect_refused(path, damaged(path, "column 'tp' is missing"));
  path = edited("short.h5", "del f['tp']\nf['tp'] = np.zeros(10, np.uint8)");
  expect_refused(path, damaged(path, "column 'tp' has 10 rows, the store 147456"));
  path = edited("float32.h5",
                "v = f['step_time_s'][:]\ndel f['step_time_s']\n"
                "f['step_time_s'] = v.astype(np.float32)");
  expect_refused(path, damaged(path, "column 'step_time_s' holds float32, not float64"));
  path = edited("text.h5", "del f['mfu']\nf['mfu'] = np.array([b'x'] * 147456)");
  expect_refused(path, damaged(path, "column 'mfu' is of no store type: it holds text"));
}

TEST_F(StoreErrors, NotAStoreAtAll) {
  const std::string other = (dir_ / "other.h5").string();
  ASSERT_EQ(run("/usr/bin/python3 -c \"import h5py; f = h5py.File('" + other +
                "', 'w'); f['x'] = [1, 2]; f.close()\"")
                .code,
            0);
  expect_refused(other, "'" + other +
                            "' is an HDF5 file but not a clustersweep results store (no 'format' "
                            "attribute \"clustersweep-store\")");
  const std::string folder = (dir_ / "folder.h5").string();
  fs::create_directories(folder);
  expect_refused(folder, "cannot open store '" + folder + "': it is a directory");
}

// An unfinished filtered run's staging file (here: its final store could not be created, so it
// keeps every chunk) is not a result yet; the message says how to finish it.
TEST_F(StoreErrors, AnUnfinishedRunsStagingFile) {
  const std::string spec = (dir_ / "feasible.toml").string();
  std::string text = slurp(CLUSTERSWEEP_SOURCE_DIR "/examples/quick.toml");
  text.replace(text.find("keep = \"all\""), 12, "keep = \"feasible\"");
  std::ofstream(spec) << text;
  const std::string store = (dir_ / "unfinished.h5").string();
  fs::create_symlink(dir_ / "no-such-folder/x.h5", store + ".assembling.new");
  const Result r = run(kBinary + " run " + spec + " -o " + store + " --no-summary");
  ASSERT_EQ(r.code, 1) << r.err;
  const std::string staging = store + ".partial";
  ASSERT_TRUE(fs::exists(staging));
  const std::string message = "'" + staging +
                              "' is the staging file of an unfinished run; finish it with "
                              "'clustersweep run " +
                              spec + " -o " + store + " --resume'";
  for (const char* command : {"summary", "top", "export"}) {
    const Result e = run(kBinary + " " + command + " " + staging +
                         (std::string(command) == "export" ? " -o " + store + ".csv" : ""));
    EXPECT_EQ(e.code, 2) << command;
    EXPECT_EQ(e.err, "clustersweep " + std::string(command) + ": error: " + message + "\n");
  }
  EXPECT_FALSE(fs::exists(store + ".csv"));
}

// An export larger than the process may write (a full disk, as far as HDF5 can tell): the
// compressed netCDF-4 file cannot be written nor closed; one line in the system's words, nothing
// left, and the process ends without crashing in HDF5's shutdown.
TEST_F(StoreErrors, AnExportTheDiskCannotHold) {
  const std::string out = (dir_ / "out").string();
  const Result r = run("bash -c \"trap '' XFSZ; ulimit -f 256; exec " + kBinary + " export " +
                       good_ + " -o " + out + "/x.nc\"");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("clustersweep export: error: ", 0), 0u) << r.err;
  EXPECT_TRUE(r.err.ends_with(": File too large\n")) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_TRUE(fs::is_empty(out));
}

}  // namespace
}  // namespace clustersweep::analysis
