#include "jobs/job.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace clustersweep::jobs {
namespace {

std::string error_of(const auto& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Shard, ParsesIOfK) {
  const Shard s = Shard::parse("2/5");
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.count, 5u);
  EXPECT_EQ(s.text(), "2/5");
  EXPECT_FALSE(s.whole());
  EXPECT_TRUE(Shard{}.whole());
}

TEST(Shard, RejectsWithTheFlagAndWhatIsValid) {
  for (const char* bad : {"5/5", "1", "a/2", "1/0", "-1/2", "1/2/3", ""})
    EXPECT_EQ(
        error_of([&] { Shard::parse(bad); }),
        std::string("--shard: expected I/K with 0 <= I < K (shard I of K), got '") + bad + "'");
}

TEST(Progress, Modes) {
  EXPECT_EQ(parse_progress_mode("lines"), ProgressMode::lines);
  EXPECT_EQ(error_of([] { parse_progress_mode("fancy"); }),
            "--progress: expected auto, bar, lines or none, got 'fancy'");
}

TEST(Job, ValidatesContradictions) {
  Job job{"s.toml", "r.h5", {}};
  job.options.resume = job.options.force = true;
  EXPECT_EQ(error_of([&] { job.validate(); }),
            "--resume and --force contradict each other: --resume continues the store, --force "
            "deletes it");
}

TEST(Job, RunArgumentsRoundTripTheOptions) {
  Job job{"s.toml", "out/r.h5", {}};
  EXPECT_EQ(job.run_arguments(), (std::vector<std::string>{"run", "s.toml", "-o", "out/r.h5"}));
  job.options.resume = true;
  job.options.shard = Shard{1, 4};
  job.options.chunk_points = 4096;
  job.options.progress = ProgressMode::lines;
  job.options.progress_interval_s = 30;
  EXPECT_EQ(job.run_arguments(),
            (std::vector<std::string>{"run", "s.toml", "-o", "out/r.h5", "--resume",
                                      "--chunk-points", "4096", "--shard", "1/4", "--progress",
                                      "lines", "--progress-interval", "30"}));
}

TEST(SpecHash, StableAndSensitive) {
  EXPECT_EQ(spec_hash(""), "cbf29ce484222325");
  EXPECT_EQ(spec_hash("a"), "af63dc4c8601ec8c");
  EXPECT_NE(spec_hash("keep = \"all\"\n"), spec_hash("keep = \"all\" \n"));
}

TEST(Paths, PartialAndAssembly) {
  EXPECT_EQ(partial_path("r.h5"), "r.h5.partial");
  EXPECT_EQ(assembly_path("r.h5"), "r.h5.assembling");
}

TEST(Provenance, RecordsTheCommandAndTime) {
  const Provenance p = Provenance::current({"clustersweep", "run", "s.toml"});
  EXPECT_EQ(p.command, "clustersweep run s.toml");
  EXPECT_EQ(p.created_utc.size(), 20u);
  EXPECT_EQ(p.created_utc.back(), 'Z');
  EXPECT_FALSE(p.tool_version.empty());
}

TEST(ReadSpec, NamesTheFile) {
  EXPECT_EQ(error_of([] { read_spec("/nonexistent/x.toml"); }),
            "cannot read spec '/nonexistent/x.toml': No such file or directory");
}

}  // namespace
}  // namespace clustersweep::jobs
