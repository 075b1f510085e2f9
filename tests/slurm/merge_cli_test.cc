// `clustersweep merge` (engine/merge): shards of any keep mode join into the single run's data,
// and anything that would not is refused with the files named.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "slurm/process.h"
#include "tests/slurm/test_util.h"

namespace clustersweep::slurm {
namespace {

using testing::ScratchDir;
namespace fs = std::filesystem;

const std::string kSource = CLUSTERSWEEP_SOURCE_DIR;

ProcessResult clustersweep(std::vector<std::string> args) {
  args.insert(args.begin(), CLUSTERSWEEP_BINARY);
  return run_process(args);
}

// The tiny spec, in `keep` mode, compressed as `compression` says.
std::string spec_in(const ScratchDir& dir, const std::string& keep,
                    const std::string& compression = "none") {
  const std::string path = dir / fmt::format("tiny-{}-{}.toml", keep, compression);
  testing::write_text(path, testing::read_text(kSource + "/tests/slurm/tiny.toml") +
                                fmt::format("\n[output]\nkeep = \"{}\"\ncompression = \"{}\"\n",
                                            keep, compression));
  return path;
}

void run(const std::string& spec, const std::string& store, const std::string& shard = "") {
  std::vector<std::string> args = {"run", spec, "-o", store, "--progress", "none", "--no-summary"};
  if (!shard.empty()) args.insert(args.end(), {"--shard", shard});
  const auto r = clustersweep(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

std::string difference(const std::string& a, const std::string& b) {
  const auto r =
      run_process({"/usr/bin/python3", kSource + "/tests/slurm/cluster/compare_stores.py", a, b});
  return r.exit_code == 0 ? "" : r.err + r.out;
}

// A keep mode and a compression.
class MergeKeep : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(MergeKeep, ShardsInAnyOrderMergeIntoTheSingleRunsData) {
  ScratchDir dir;
  const auto spec = spec_in(dir, GetParam().first, GetParam().second);
  run(spec, dir / "single.h5");
  for (int i = 0; i < 3; ++i) run(spec, dir / fmt::format("s{}.h5", i), fmt::format("{}/3", i));
  const auto r =
      clustersweep({"merge", dir / "s2.h5", dir / "s0.h5", dir / "s1.h5", "-o", dir / "merged.h5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with(fmt::format("wrote '{}': ", dir / "merged.h5"))) << r.out;
  EXPECT_EQ(difference(dir / "single.h5", dir / "merged.h5"), "");
  EXPECT_FALSE(fs::exists(dir / "merged.h5.merging"));
  // The merged store is complete: a resume has nothing to do.
  const auto resumed =
      clustersweep({"run", spec, "-o", dir / "merged.h5", "--resume", "--no-summary"});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("already complete"), std::string::npos) << resumed.out;
}

INSTANTIATE_TEST_SUITE_P(Keep, MergeKeep,
                         ::testing::Values(std::pair{"all", "none"}, std::pair{"feasible", "none"},
                                           std::pair{"best-per-design", "none"},
                                           std::pair{"all", "small"},
                                           std::pair{"feasible", "fast"}));

// Two shards of the tiny spec for the refusal tests.
class MergeRefuses : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir;
    spec_ = spec_in(*dir_, "all");
    for (int i = 0; i < 2; ++i)
      run(spec_, *dir_ / fmt::format("s{}.h5", i), fmt::format("{}/2", i));
  }
  static void TearDownTestSuite() { delete dir_; }
  std::string refusal(std::vector<std::string> args) {
    args.insert(args.begin(), "merge");
    const auto r = clustersweep(args);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_FALSE(fs::exists(*dir_ / "out.h5"));
    const std::string prefix = "clustersweep merge: error: ";
    return r.err.starts_with(prefix) ? r.err.substr(prefix.size()) : r.err;
  }
  static ScratchDir* dir_;
  static std::string spec_;
};
ScratchDir* MergeRefuses::dir_ = nullptr;
std::string MergeRefuses::spec_;

TEST_F(MergeRefuses, MissingShards) {
  EXPECT_EQ(refusal({*dir_ / "s1.h5", "-o", *dir_ / "out.h5"}),
            "shards missing: 0/2 (got 1 of the 2 shard stores)\n");
}

TEST_F(MergeRefuses, AShardGivenTwice) {
  fs::copy_file(*dir_ / "s1.h5", *dir_ / "copy.h5", fs::copy_options::overwrite_existing);
  EXPECT_EQ(
      refusal({*dir_ / "s0.h5", *dir_ / "s1.h5", *dir_ / "copy.h5", "-o", *dir_ / "out.h5"}),
      fmt::format("shard 1/2 is given twice: '{}' and '{}'\n", *dir_ / "s1.h5", *dir_ / "copy.h5"));
}

TEST_F(MergeRefuses, ShardsOfAnotherSpecOrCount) {
  const auto other = spec_in(*dir_, "feasible");
  run(other, *dir_ / "other1.h5", "1/2");
  const auto message = refusal({*dir_ / "s0.h5", *dir_ / "other1.h5", "-o", *dir_ / "out.h5"});
  EXPECT_TRUE(
      message.starts_with(fmt::format("'{}' was written for a different spec than '{}' (spec hash ",
                                      *dir_ / "other1.h5", *dir_ / "s0.h5")))
      << message;
  EXPECT_TRUE(message.ends_with("); the shards of one sweep share one spec\n")) << message;
  run(spec_, *dir_ / "third.h5", "1/3");
  EXPECT_EQ(
      refusal({*dir_ / "s0.h5", *dir_ / "third.h5", "-o", *dir_ / "out.h5"}),
      fmt::format(
          "'{}' is shard 1/3 but '{}' is shard 0/2; the shards of one sweep share their count\n",
          *dir_ / "third.h5", *dir_ / "s0.h5"));
}

TEST_F(MergeRefuses, AnUnfinishedShard) {
  fs::copy_file(*dir_ / "s1.h5", *dir_ / "u1.h5.partial", fs::copy_options::overwrite_existing);
  EXPECT_EQ(
      refusal({*dir_ / "s0.h5", *dir_ / "u1.h5", "-o", *dir_ / "out.h5"}),
      fmt::format("'{0}' does not exist yet: its run is unfinished ('{0}.partial'); finish it with "
                  "'clustersweep run SPEC -o {0} --shard I/K --resume' before merging\n",
                  *dir_ / "u1.h5"));
}

TEST_F(MergeRefuses, ToOverwriteWithoutForce) {
  testing::write_text(*dir_ / "kept.h5", "precious");
  const auto r = clustersweep({"merge", *dir_ / "s0.h5", *dir_ / "s1.h5", "-o", *dir_ / "kept.h5"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(
      r.err,
      fmt::format("clustersweep merge: error: '{}' already exists; pass --force to replace it\n",
                  *dir_ / "kept.h5"));
  EXPECT_EQ(testing::read_text(*dir_ / "kept.h5"), "precious");
  const auto forced =
      clustersweep({"merge", *dir_ / "s0.h5", *dir_ / "s1.h5", "-o", *dir_ / "kept.h5", "--force"});
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
}

TEST_F(MergeRefuses, NoShards) {
  EXPECT_EQ(refusal({"-o", *dir_ / "out.h5"}),
            "no shard stores given; usage: clustersweep merge SHARD.h5... -o STORE\n");
}

}  // namespace
}  // namespace clustersweep::slurm
