// clustersweep calibrate end to end: a site calibration from a few runs is a calibration file
// every command accepts, its report reads like advice, and bad input gets one line, exit 2 and no
// file.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <sstream>

#include "tests/apps/run.h"

namespace clustersweep::apps_test {
namespace {

const std::string kRuns = source_path("tests/apps/data/transformer_runs.csv");
const std::string kEnergyRuns = source_path("tests/apps/data/energy_runs.csv");

// The header and the rows of the runs file whose ids are given.
std::string runs_with_ids(const std::vector<std::string>& ids) {
  std::istringstream in(read_file(kRuns));
  std::string line, out;
  std::getline(in, line);
  out = line + "\n";
  while (std::getline(in, line))
    for (const auto& id : ids)
      if (line.rfind(id + ",", 0) == 0) out += line + "\n";
  return out;
}

TEST(Calibrate, WritesACalibrationEveryCommandAccepts) {
  TempDir dir;
  const std::string runs = dir.file("mine.csv", runs_with_ids({"61", "64", "65"}));
  const std::string site = (dir.path() / "site.toml").string();
  const auto start = std::chrono::steady_clock::now();
  Result r = run({"calibrate", runs, "-o", site});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(seconds, 5);
  EXPECT_EQ(r.out.rfind("compute x", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(" from 3 runs; "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dense intervals now ±"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrote " + site + "\n"), std::string::npos) << r.out;
  const std::string text = read_file(site);
  EXPECT_NE(text.find("\nruns = 3\nids = [\"61\", \"64\", \"65\"]\n"), std::string::npos) << text;
  r = run({"estimate", "--model", "gpt3-175b", "--gpu", "H100-SXM5-80GB", "--gpus", "1024", "--tp",
           "8", "--pp", "8", "--calibration", site});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run({"validate", runs, "--calibration", site});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // A spec's top-level calibration key takes it.
  const std::string spec = dir.file(
      "spec.toml", "calibration = \"site.toml\"\n" + read_file(source_path("examples/quick.toml")));
  r = run({"plan", spec});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // A site file is a base too.
  const std::string again = (dir.path() / "again.toml").string();
  r = run({"calibrate", runs, "-o", again, "--calibration", site, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("{\n  \"runs\": 3,", 0), 0u) << r.out;
}

TEST(Calibrate, BadInputIsOneLineAndWritesNothing) {
  TempDir dir;
  const std::string site = (dir.path() / "site.toml").string();
  std::string unknown = runs_with_ids({"61"});
  unknown.replace(unknown.rfind(",H100-SXM5-80GB,"), 16, ",H900-NEW,");
  const std::string bad = dir.file("bad.csv", unknown);
  expect_error({"calibrate", bad, "-o", site},
               bad +
                   ":2: column 'gpu': unknown accelerator 'H900-NEW'; a site run must be on an "
                   "accelerator of the catalog (clustersweep catalog)");
  expect_error({"calibrate", kEnergyRuns, "-o", site},
               kEnergyRuns +
                   ": a training-energy runs file; calibrate takes step-time runs (the format of "
                   "transformer_runs.csv, moe_runs.csv or dlrm_runs.csv)");
  std::string unmeasured = runs_with_ids({"61"});
  std::string no_step;
  {
    // Blank the step time: the row is no longer predictable.
    std::istringstream in(unmeasured);
    std::string header, row;
    std::getline(in, header);
    std::getline(in, row);
    std::vector<std::string> cells;
    std::size_t column = 0;
    for (std::size_t at = 0, next; (next = header.find(',', at)) != std::string::npos;
         at = next + 1, ++column)
      if (header.substr(at, next - at) == "step_time_s") break;
    std::size_t begin = 0;
    for (std::size_t c = 0; c < column; ++c) begin = row.find(',', begin) + 1;
    row.erase(begin, row.find(',', begin) - begin);
    no_step = dir.file("none.csv", header + "\n" + row + "\n");
  }
  expect_error({"calibrate", no_step, "-o", site},
               no_step +
                   ": no predictable row; a site calibration needs at least one run with a "
                   "measured step");
  expect_error({"calibrate", kRuns, "-o", kRuns},
               "-o: '" + kRuns +
                   "' is a runs file being read; name another file (an output never replaces an "
                   "input)");
  expect_error({"calibrate", kRuns}, "-o: missing; name the site calibration file to write");
  const std::string spec = source_path("examples/quick.toml");
  expect_error({"calibrate", spec, "-o", site},
               spec + ":1: missing column 'id' (see the README of the validation data)");
  EXPECT_FALSE(std::filesystem::exists(site));
}

TEST(Calibrate, ShotsNeedHeldOut) {
  expect_error({"validate", kRuns, "--shots", "3"},
               "--shots: site-calibrates the groups --held-out holds out; add --held-out");
}

}  // namespace
}  // namespace clustersweep::apps_test
