// End-to-end tests of `clustersweep run`: the real binary, on 1, 2 and 3 (oversubscribed) ranks.
#include "engine/run.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>
#include <thread>

#include "engine/store_reader.h"
#include "engine/store_writer.h"
#include "test_support.h"

namespace clustersweep::test {
namespace {

using std::chrono::steady_clock;

class RunTest : public ::testing::Test {
 protected:
  TempDir dir_;
};

// Every `[output]` setting: the same rows on 1, 2 and 3 ranks with any chunks, and compression
// changes the bytes on disk, never a value.
TEST_F(RunTest, SameRowsOnOneTwoAndThreeRanksAndAnyChunkSize) {
  struct Setting {
    std::string name, output, same_values_as;
  };
  const Setting settings[] = {{"all", kAllColumns, ""},
                              {"all-small", kAllColumns + "compression = \"small\"\n", "all"},
                              {"summary", "", ""},
                              {"summary-fast", "compression = \"fast\"\n", "summary"}};
  for (const std::string keep : {"all", "pareto-per-design"})
    for (const Setting& setting : settings) {
      SCOPED_TRACE(keep + " " + setting.name);
      const std::string s =
          dir_.file("s.toml", small_spec(keep, "time_to_train", "[2, 4]", "", setting.output));
      const std::string one = dir_ / (keep + "-" + setting.name + "-1.h5");
      const std::string two = dir_ / (keep + "-" + setting.name + "-2.h5");
      const std::string three = dir_ / (keep + "-" + setting.name + "-3.h5");
      std::string out;
      ASSERT_EQ(run(command(1, {"run", s, "-o", one, "--no-summary"}), &out), 0) << out;
      ASSERT_EQ(
          run(command(2, {"run", s, "-o", two, "--chunk-points", "1000", "--no-summary"}), &out), 0)
          << out;
      ASSERT_EQ(
          run(command(3, {"run", s, "-o", three, "--chunk-points", "5", "--no-summary"}), &out), 0)
          << out;
      EXPECT_EQ(compare_stores(one, two), "");
      EXPECT_EQ(compare_stores(one, three), "");
      if (!setting.same_values_as.empty()) {
        EXPECT_EQ(compare_stores(dir_ / (keep + "-" + setting.same_values_as + "-1.h5"), one), "");
      }
    }
}

TEST_F(RunTest, PlanSearchAndExhaustiveEnumerationWriteTheSameRows) {
  for (const std::string keep : {"best-per-design", "pareto-per-design"}) {
    const std::string s = dir_.file("s.toml", small_spec(keep));
    std::string out;
    ASSERT_EQ(run(command(2, {"run", s, "-o", dir_ / "search.h5", "--no-summary"}), &out), 0)
        << out;
    const std::string search_out = out;
    ASSERT_EQ(
        run(command(1, {"run", s, "-o", dir_ / "all.h5", "--no-summary", "--exhaustive"}), &out), 0)
        << out;
    const std::string exhaustive_out = out;
    EXPECT_EQ(compare_stores(dir_ / "search.h5", dir_ / "all.h5"), "") << keep;
    // The report counts the estimator's evaluations over every rank: the search's are fewer.
    auto estimated = [](const std::string& text, const std::string& how) {
      const std::string head = "plans estimated (" + how + "): ";
      const auto at = text.find(head);
      if (at == std::string::npos) return std::uint64_t{0};
      std::string digits;
      for (auto i = at + head.size(); i < text.size() && text[i] != ' '; ++i)
        if (text[i] != ',') digits += text[i];
      return static_cast<std::uint64_t>(std::stoull(digits));
    };
    const std::uint64_t searched = estimated(search_out, "exact search");
    const std::uint64_t all = estimated(exhaustive_out, "exhaustive");
    EXPECT_GT(searched, 0u) << search_out;
    // A design's time-energy front is wider than its best plan, the more so where the network's
    // power (the same for every plan of a design) is a small part of its energy: these 2 to 4
    // nodes share one leaf switch.
    EXPECT_LT(static_cast<double>(searched) * (keep == "best-per-design" ? 3 : 1.3),
              static_cast<double>(all))
        << search_out << exhaustive_out;
    EXPECT_EQ(engine::StoreReader(dir_ / "search.h5").header().plan_search, "exact-search");
    EXPECT_EQ(engine::StoreReader(dir_ / "all.h5").header().plan_search, "exhaustive");
    for (const char* f : {"search.h5", "all.h5"}) std::filesystem::remove(dir_ / f);
  }
}

// The closing table shows the swept axes a column list keeps, and says when it keeps too little
// for the table.
TEST_F(RunTest, TheBestDesignsTableShowsTheKeptAxes) {
  const std::string kept =
      "columns = [\"gpu\", \"tp\", \"num_gpus\", \"step_time_s\", \"time_to_train_s\", "
      "\"mfu\", \"energy_to_train_j\", \"mem_per_gpu_bytes\"]\n";
  std::string out;
  ASSERT_EQ(
      run(command(1, {"run",
                      dir_.file("s.toml", small_spec("all", "time_to_train", "[2, 4]", "", kept)),
                      "-o", dir_ / "r.h5"}),
          &out),
      0)
      << out;
  const auto table = out.substr(out.find("best designs by"));
  EXPECT_NE(table.find(" | tp="), std::string::npos) << out;
  EXPECT_NE(table.find("gpu="), std::string::npos) << out;
  EXPECT_EQ(table.find("num_nodes="), std::string::npos) << out;  // swept, not kept
  EXPECT_EQ(table.find("pp="), std::string::npos) << out;
  ASSERT_EQ(run(command(1, {"run",
                            dir_.file("t.toml", small_spec("all", "time_to_train", "[2, 4]", "",
                                                           "columns = [\"tp\", \"mfu\"]\n")),
                            "-o", dir_ / "t.h5"}),
                &out),
            0)
      << out;
  EXPECT_NE(out.find("best designs: not shown: the store does not keep num_gpus, gpu, "
                     "time_to_train_s, step_time_s, energy_to_train_j, mem_per_gpu_bytes "
                     "([output] columns)\n"),
            std::string::npos)
      << out;
}

TEST_F(RunTest, ReportsTheRunAndTheBestDesigns) {
  const std::string s = dir_.file("s.toml", small_spec("best-per-design"));
  std::string out;
  ASSERT_EQ(run(command(1, {"run", s, "-o", dir_ / "r.h5"}), &out), 0) << out;
  EXPECT_NE(out.find("wrote '" + (dir_ / "r.h5") +
                     "': 8 rows (keep = best-per-design) from 55296 points"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("best designs by time_to_train (the best plan of each):"), std::string::npos)
      << out;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "r.h5.partial"));
}

// Designs whose best plans are equal in every figure of the table make one row that says how many
// and which settings tell them apart; the kept one is the first of the fewest GPUs.
TEST_F(RunTest, TheBestDesignsTableShowsTiedDesignsOnce) {
  // On 2 and 4 nodes the data-parallel all-reduce hides behind the compute at 200 Gbit/s as at
  // 400: each of the 8 designs has a twin on the other bandwidth, and 4 rows show all 8.
  const std::string s = dir_.file("s.toml", small_spec("best-per-design"));
  std::string out;
  ASSERT_EQ(run(command(1, {"run", s, "-o", dir_ / "r.h5"}), &out), 0) << out;
  const auto table = out.find("best designs by time_to_train (the best plan of each):\n");
  ASSERT_NE(table, std::string::npos) << out;
  std::size_t rows = 0, ties = 0;
  for (std::size_t at = out.find('\n', table) + 1; at < out.size(); at = out.find('\n', at) + 1) {
    const std::string line = out.substr(at, out.find('\n', at) - at);
    if (line.find(" inter_node_gbps_per_gpu=200") != std::string::npos) ++rows;
    EXPECT_EQ(line.find("inter_node_gbps_per_gpu=400"), std::string::npos) << out;
    if (line.find("(+1 design with the same figures, differing in") != std::string::npos) ++ties;
  }
  EXPECT_EQ(rows, 4u) << out;
  EXPECT_EQ(ties, 4u) << out;
}

// A store of every point and one of each design's best plan give the same table: the first reads
// each design's rows (contiguous, as point ids run design by design) for its best plan.
TEST_F(RunTest, TheBestDesignsTableIsTheSameForEveryKeepMode) {
  std::string table[2];
  for (int i = 0; i < 2; ++i) {
    const std::string s = dir_.file("s.toml", small_spec(i == 0 ? "all" : "best-per-design"));
    std::string out;
    ASSERT_EQ(
        run(command(2, {"run", s, "-o", dir_ / "r.h5", "--force", "--chunk-points", "777"}), &out),
        0)
        << out;
    table[i] = out.substr(out.find("best designs by"));
  }
  EXPECT_EQ(table[0], table[1]);
}

TEST_F(RunTest, MixtureOfExpertsSweepNamesTheBestExpertParallelPlanOfEachCluster) {
  // The shipped DeepSeek-V3 study: H800, H100 and GB200 NVL72 at two sizes, every ep.
  const std::string s = CLUSTERSWEEP_SOURCE_DIR "/examples/deepseek-v3-ep.toml";
  std::string out;
  ASSERT_EQ(run(command(2, {"run", s, "-o", dir_ / "ds.h5"}), &out), 0) << out;
  const auto table = out.find("best designs by time_to_train (the best plan of each):");
  ASSERT_NE(table, std::string::npos) << out;
  int designs = 0;
  for (const char* gpu : {"H800-SXM5-80GB", "H100-SXM5-80GB", "GB200-186GB"}) {
    for (const char* gpus : {"1024", "2048"}) {
      const std::string design = fmt::format("gpu={} num_gpus={} | ", gpu, gpus);
      const auto at = out.find(design, table);
      if (at == std::string::npos) continue;  // no plan of this cluster fits in memory
      ++designs;
      // The row's settings run on over the lines that follow it, up to the next numbered row.
      std::size_t end = out.find('\n', at);
      while (end + 5 < out.size() && out.compare(end + 1, 4, "    ") == 0)
        end = out.find('\n', end + 1);
      const std::string settings = out.substr(at, end - at);
      EXPECT_NE(settings.find(" ep="), std::string::npos) << settings;
    }
  }
  EXPECT_GE(designs, 4) << out;
  // Expert parallelism wins on every cluster: no best plan keeps all 256 experts on each GPU.
  EXPECT_EQ(out.find(" ep=1 ", table), std::string::npos) << out;
}

// A store names its precisions by their labels: int8 reads back as int8.
TEST_F(RunTest, Int8IsStoredByItsLabel) {
  const std::string s =
      dir_.file("int8.toml",
                "[workload]\nmodel = \"llama3-8b\"\nprecision = [\"bf16\", \"int8\"]\n"
                "[cluster]\ngpu = \"TPUv6e\"\ngpus = 8\n"
                "[plan]\ntp = [1, 2]\n"
                "[output]\nkeep = \"all\"\ncolumns = \"all\"\n");
  const std::string store = dir_ / "int8.h5";
  std::string out;
  ASSERT_EQ(run(command(1, {"run", s, "-o", store, "--no-summary"}), &out), 0) << out;
  const engine::StoreReader r(store);
  const engine::ColumnInfo* precision = r.find_column("precision");
  ASSERT_NE(precision, nullptr);
  EXPECT_EQ(precision->labels, (std::vector<std::string>{"bf16", "int8"}));
  std::vector<double> codes;
  r.read("precision", 0, r.rows(), codes);
  EXPECT_EQ(std::count(codes.begin(), codes.end(), 1.0), 2);  // int8 at tp 1 and 2
}

TEST_F(RunTest, RefusesToOverwriteWithoutResumeOrForce) {
  const std::string s = dir_.file("s.toml", small_spec("best-per-design"));
  const std::string store = dir_ / "r.h5";
  ASSERT_EQ(run(command(1, {"run", s, "-o", store, "--no-summary"})), 0);
  const auto before = std::filesystem::last_write_time(store);
  std::string out;
  EXPECT_EQ(run(command(1, {"run", s, "-o", store}), &out), 2);
  EXPECT_EQ(out,
            "clustersweep run: error: '" + store +
                "' exists; use --resume to continue (or confirm) it, or --force to overwrite it\n");
  EXPECT_EQ(std::filesystem::last_write_time(store), before);

  EXPECT_EQ(run(command(1, {"run", s, "-o", store, "--resume"}), &out), 0);
  EXPECT_NE(out.find("'" + store + "' is already complete (8 rows); nothing to do"),
            std::string::npos)
      << out;
  EXPECT_EQ(run(command(1, {"run", s, "-o", store, "--force", "--no-summary"}), &out), 0) << out;

  EXPECT_EQ(run(command(1, {"run", s, "-o", store, "--resume", "--force"}), &out), 2);
  EXPECT_EQ(
      out,
      "clustersweep run: error: --resume and --force contradict each other: --resume continues "
      "the store, --force deletes it\n");
}

TEST_F(RunTest, RefusesToResumeAStoreOfAnotherSpec) {
  const std::string a = dir_.file("a.toml", small_spec("best-per-design"));
  const std::string b = dir_.file("b.toml", small_spec("best-per-design", "energy"));
  const std::string store = dir_ / "r.h5";
  ASSERT_EQ(run(command(1, {"run", a, "-o", store, "--no-summary"})), 0);
  std::string out;
  EXPECT_EQ(run(command(1, {"run", b, "-o", store, "--resume"}), &out), 2);
  EXPECT_NE(
      out.find("error: --resume: '" + store + "' was written for a different spec (spec hash "),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("use --force to start over, or another --output"), std::string::npos) << out;
}

TEST_F(RunTest, RefusesAStoreAnotherRunIsWriting) {
  const std::string s = dir_.file("s.toml", small_spec("best-per-design"));
  const std::string store = dir_ / "r.h5";
  const int fd = open((store + ".lock").c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);  // as a running clustersweep holds it
  std::string out;
  EXPECT_EQ(run(command(2, {"run", s, "-o", store, "--resume"}), &out), 2);
  EXPECT_NE(out.find("clustersweep run: error: '" + store +
                     "' is being written by another clustersweep run (it holds '" + store +
                     ".lock'); wait for it to finish or stop it"),
            std::string::npos)
      << out;
  close(fd);
  EXPECT_EQ(run(command(1, {"run", s, "-o", store, "--resume", "--no-summary"}), &out), 0) << out;
  EXPECT_FALSE(std::filesystem::exists(store + ".lock"));
}

TEST_F(RunTest, ResumeOfAMissingStoreStartsIt) {
  const std::string s = dir_.file("s.toml", small_spec("feasible"));
  std::string out;
  EXPECT_EQ(run(command(1, {"run", s, "-o", dir_ / "r.h5", "--resume", "--no-summary"}), &out), 0)
      << out;
  EXPECT_EQ(engine::StoreReader(dir_ / "r.h5").string_attribute("keep"), "feasible");
}

TEST_F(RunTest, ClearErrorsForBadOutputAndSpec) {
  const std::string s = dir_.file("s.toml", small_spec());
  std::string out;
  // Refused by the command's output-path check or, behind it, by the engine's: one line naming
  // the folder.
  EXPECT_EQ(run(command(1, {"run", s, "-o", dir_ / "no/such/dir/r.h5"}), &out), 2);
  EXPECT_EQ(out.rfind("clustersweep run: error: ", 0), 0u) << out;
  EXPECT_NE(out.find(fmt::format("'{}' does not exist\n", dir_ / "no/such/dir")), std::string::npos)
      << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_EQ(run(command(2, {"run", dir_ / "missing.toml", "-o", dir_ / "r.h5"}), &out), 2);
  EXPECT_NE(out.find("clustersweep run: error: cannot read spec '" + (dir_ / "missing.toml") +
                     "': No such file or directory"),
            std::string::npos)
      << out;
  EXPECT_EQ(run(command(1, {"run", s, "-o", dir_ / "r.h5", "--shard", "2/2"}), &out), 2);
  EXPECT_EQ(
      out,
      "clustersweep run: error: --shard: expected I/K with 0 <= I < K (shard I of K), got '2/2'\n");
}

TEST_F(RunTest, ShardsCoverTheSpaceInOrder) {
  const std::string s = dir_.file("s.toml", small_spec("all"));
  ASSERT_EQ(run(command(1, {"run", s, "-o", dir_ / "whole.h5", "--no-summary"})), 0);
  std::uint64_t next = 0;
  for (int i = 0; i < 3; ++i) {
    const std::string shard = dir_ / ("shard" + std::to_string(i) + ".h5");
    std::string out;
    ASSERT_EQ(run(command(i == 1 ? 2 : 1, {"run", s, "-o", shard, "--shard",
                                           std::to_string(i) + "/3", "--no-summary"}),
                  &out),
              0)
        << out;
    const engine::StoreReader whole(dir_ / "whole.h5"), part(shard);
    engine::RowBlock a, b;
    part.read_rows(0, part.rows(), a);
    whole.read_rows(next, part.rows(), b);
    for (std::size_t c = 0; c < a.columns(); ++c)
      for (std::size_t r = 0; r < a.rows(); ++r)
        if (!(a.number(c, r) == b.number(c, r) ||
              (a.number(c, r) != a.number(c, r) && b.number(c, r) != b.number(c, r))))
          FAIL() << "shard " << i << " column " << whole.columns()[c].name << " row " << r;
    EXPECT_EQ(part.number_attribute("shard_index"), i);
    next += part.rows();
  }
  EXPECT_EQ(next, engine::StoreReader(dir_ / "whole.h5").rows());
}

// A run long enough to be interrupted: ~330k points, in chunks of kLongChunkPoints.
std::string long_spec(const std::string& keep, const std::string& output = kAllColumns) {
  return small_spec(keep, "time_to_train", "[2, 4, 8, 16, 32, 64]", "hbm_gb = [80, 141]\n", output);
}

// The chunk size of the runs a test interrupts. The estimator does the long space's 330k points in
// about 60 ms on two ranks; in chunks of 512 points every chunk was written before a poll of the
// store saw the first finish, so no signal could land while chunks were being written. Chunks of
// 16 points make it most of a second (chunk marks and writes are per chunk), on any machine.
const std::string kLongChunkPoints = "16";

// A recommendation-model space of ~20k points (the planner places the tables of each; the large
// clusters' points are slow), most of a second in chunks of 64.
std::string long_dlrm_spec(const std::string& keep) {
  return "[workload]\nfamily = \"dlrm\"\n"
         "model = [\"dlrm-criteo-small\", \"dlrm-criteo-large\", \"dlrmv2-dcnv2\"]\n"
         "precision = [\"fp32\", \"tf32\", \"fp16\", \"bf16\"]\n"
         "[cluster]\ngpu = [\"A100-SXM4-80GB\", \"H100-SXM5-80GB\"]\ngpus = \"pow2:1..4096\"\n"
         "inter_node_gbps_per_gpu = [25, 50, 100, 200, 400, 800, 1600, 3200]\n"
         "[plan]\nsharding = \"all\"\n[output]\nkeep = \"" +
         keep + "\"\n";
}

// The evaluation seconds of a run's report ("... evaluated in S s ..."), or `fallback`.
double evaluation_seconds(const std::string& report, double fallback) {
  const auto at = report.find(" evaluated in ");
  if (at == std::string::npos) return fallback;
  return std::strtod(report.c_str() + at + 14, nullptr);
}

std::uint64_t chunks_done(const std::string& store) {
  try {
    return engine::store_state(store).chunks_done;
  } catch (const std::exception&) {
    return 0;
  }
}

// Waits until the run `pid` has finished a chunk more than `before` (so it is evaluating), or has
// ended; false when it ended (its exit code in `code`).
bool wait_until_working(pid_t pid, const std::string& store, std::uint64_t before, int& code) {
  while (true) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return false;
    }
    if (chunks_done(store) > before) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

TEST_F(RunTest, SigtermStopsWithCode75AndResumeFinishesIdentically) {
  const std::string s = dir_.file("s.toml", long_spec("all"));
  std::string out;
  ASSERT_EQ(run(command(2, {"run", s, "-o", dir_ / "ref.h5", "--chunk-points", kLongChunkPoints,
                            "--no-summary"}),
                &out),
            0)
      << out;
  int stopped = 0;
  for (int signal : {SIGTERM, SIGUSR1, SIGINT}) {
    const std::string store = dir_ / fmt::format("r{}.h5", signal);
    const pid_t pid = spawn(
        command(2, {"run", s, "-o", store, "--chunk-points", kLongChunkPoints, "--no-summary"}),
        dir_ / "log");
    int code = 0;
    if (wait_until_working(pid, store, 0, code)) {
      const auto signalled = steady_clock::now();
      for (pid_t rank : children(pid)) kill(rank, signal);
      code = wait_for(pid);
      EXPECT_LT(std::chrono::duration<double>(steady_clock::now() - signalled).count(), 5.0);
    }
    if (code == 0) continue;  // it finished first: nothing to resume
    ++stopped;
    EXPECT_EQ(code, 75) << read_file(dir_ / "log");
    EXPECT_NE(read_file(dir_ / "log").find("rerun with --resume to finish"), std::string::npos)
        << read_file(dir_ / "log");
    EXPECT_FALSE(std::filesystem::exists(store));
    ASSERT_EQ(run(command(1, {"run", s, "-o", store, "--resume", "--no-summary"}), &out), 0) << out;
    EXPECT_NE(out.find("(resumed)"), std::string::npos) << out;
    EXPECT_EQ(compare_stores(dir_ / "ref.h5", store), "");
  }
  EXPECT_GT(stopped, 0) << "every run finished before its signal";
}

// SIGKILL of one rank (mpirun then ends the others), or of a single process, at random moments
// while chunks are being written; every resume must end with exactly the rows of the
// uninterrupted run.
TEST_F(RunTest, SigkillAtRandomMomentsThenResumeGivesIdenticalRows) {
  std::mt19937 random(12345);
  struct Case {
    std::string keep, text, chunk_points;
  };
  for (const Case& c :
       {Case{"all", long_spec("all"), kLongChunkPoints},
        Case{"feasible", long_spec("feasible"), kLongChunkPoints},
        Case{"all-summary-fast", long_spec("all", "compression = \"fast\"\n"), kLongChunkPoints},
        Case{"feasible-small", long_spec("feasible", kAllColumns + "compression = \"small\"\n"),
             kLongChunkPoints},
        Case{"dlrm-all", long_dlrm_spec("all"), "64"}}) {
    const std::string& keep = c.keep;
    const std::string s = dir_.file("s.toml", c.text);
    std::string out;
    const std::string ref = dir_ / ("ref-" + keep + ".h5");
    ASSERT_EQ(
        run(command(2, {"run", s, "-o", ref, "--chunk-points", c.chunk_points, "--no-summary"}),
            &out),
        0)
        << out;
    const std::string ref_report = out;
    const std::string store = dir_ / ("r-" + keep + ".h5");
    int killed_while_working = 0;
    // The kill window is half the uninterrupted run's evaluation, halved each time a run gets to
    // its last chunk first (a resume has fewer chunks to do; a loaded machine may race ahead): five
    // kills, and more, up to twelve, until one lands while chunks are being written.
    double window = 0.5 * evaluation_seconds(ref_report, 0.15);
    for (int attempt = 0; attempt < 5 || (killed_while_working == 0 && attempt < 12); ++attempt) {
      const int ranks = attempt % 2 ? 1 : 2;
      const std::uint64_t before = chunks_done(store);
      const pid_t pid = spawn(command(ranks, {"run", s, "-o", store, "--resume", "--chunk-points",
                                              c.chunk_points, "--no-summary"}),
                              dir_ / "log");
      int code = 0;
      if (wait_until_working(pid, store, before, code)) {
        // Measured on this machine, whatever its speed.
        std::uniform_real_distribution<double> when(0.0, window);
        std::this_thread::sleep_for(std::chrono::duration<double>(when(random)));
        if (ranks == 1) {
          kill(pid, SIGKILL);
        } else {
          const auto ranks_pids = children(pid);
          if (!ranks_pids.empty()) kill(ranks_pids[random() % ranks_pids.size()], SIGKILL);
        }
        code = wait_for(pid);
      }
      if (code == 0) {
        std::filesystem::remove(store);  // it finished first: start over for the next kill
        window /= 2;
        continue;
      }
      const auto state = engine::store_state(store);
      if (state.kind == engine::StoreState::unfinished && state.chunks_done < state.chunks)
        ++killed_while_working;
      else
        window /= 2;
    }
    ASSERT_EQ(run(command(2, {"run", s, "-o", store, "--resume", "--no-summary"}), &out), 0) << out;
    EXPECT_EQ(compare_stores(ref, store), "") << keep;
    EXPECT_GT(killed_while_working, 0)
        << keep << ": no kill landed while chunks were being written";
  }
}

TEST_F(RunTest, PythonH5pyReadsTheStoreWithoutProjectCode) {
  const std::string s = dir_.file("s.toml", small_spec("all"));
  const std::string store = dir_ / "r.h5";
  ASSERT_EQ(run(command(2, {"run", s, "-o", store, "--no-summary"})), 0);
  const std::string script = dir_ / "read.py";
  write_file(script, R"(
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
cols = [c if isinstance(c, str) else c.decode() for c in f.attrs["columns"]]
need = ["point_id", "gpu", "num_nodes", "tp", "pp", "dp", "feasible", "infeasible_reason", "num_gpus",
        "step_time_s", "tokens_per_s", "mfu", "time_to_train_s", "mem_per_gpu_bytes",
        "energy_per_step_j", "energy_to_train_j"]
missing = [c for c in need if c not in cols]
assert not missing, missing
table = {c: f[c][:] for c in cols}
# Integral columns are stored at their natural width (uint8 tp, uint16 num_gpus...): widen them
# before arithmetic, as docs/store-format.md says.
assert table["tp"].dtype == np.uint8 and table["num_gpus"].dtype == np.uint8
wide = {c: v.astype(np.int64) if v.dtype.kind in "ui" else v for c, v in table.items()}
n = len(table["point_id"])
assert n == f.attrs["space_points"] == 55296, n
assert (table["point_id"] == np.arange(n)).all()
assert table["feasible"].dtype == np.bool_
assert h5py.check_enum_dtype(f["gpu"].dtype) == {"A100-SXM4-80GB": 0, "H100-SXM5-80GB": 1}
assert [x.decode() for x in f["axes/gpu"][:]] == ["A100-SXM4-80GB", "H100-SXM5-80GB"]
ok = table["feasible"]
assert 0 < ok.sum() < n
assert np.isfinite(table["step_time_s"][ok]).all() and np.isnan(table["step_time_s"][~ok]).all()
steps = f.attrs["training_tokens"] / (512 * 8192)
assert np.allclose(table["time_to_train_failure_free_s"][ok], table["step_time_s"][ok] * steps)
assert np.allclose(table["time_to_train_s"][ok],
                   table["time_to_train_failure_free_s"][ok] / table["goodput"][ok])
assert ((table["goodput"][ok] > 0.5) & (table["goodput"][ok] < 1)).all()
assert f.attrs["gpu_mtbf_hours"] == 16384 * 54 * 24 / 419
assert (wide["num_gpus"] == wide["num_nodes"] * 8).all()
assert (wide["tp"] * wide["pp"] * wide["cp"] * wide["dp"] == wide["num_gpus"])[ok].all()
# dp is the derived degree wherever tp * pp * cp divides the GPUs, feasible or not; else 0.
mp = wide["tp"] * wide["pp"] * wide["cp"]
divides = wide["num_gpus"] % mp == 0
assert (wide["dp"][divides] * mp[divides] == wide["num_gpus"][divides]).all()
assert (wide["dp"][~divides] == 0).all() and (~divides).any()
assert f["step_time_s"].attrs["units"] in ("s", b"s")
# A column with one value in the whole store (the spec's one precision) has no storage: it is its
# fill value, which every row reads as; a swept column has its rows.
assert f["precision"].id.get_storage_size() == 0 and f["precision"].fillvalue == 0
assert (table["precision"] == 0).all() and (table["seq_len"] == 8192).all()
assert f["tp"].id.get_storage_size() == n
assert f.attrs["format"] == "clustersweep-store" and f.attrs["format_version"] == 12
assert f.attrs["complete"] == 1 and f.attrs["mpi_size"] == 2
assert "keep = \"all\"" in f.attrs["spec"]
print("ok", n, int(ok.sum()))
)");
  std::string out;
  EXPECT_EQ(run({"/usr/bin/python3", script, store}, &out), 0) << out;
  EXPECT_EQ(out.rfind("ok 55296 ", 0), 0u) << out;
}

}  // namespace
}  // namespace clustersweep::test
