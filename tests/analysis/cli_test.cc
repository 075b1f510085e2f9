// End to end: the analysis commands on a real store written by `clustersweep run`
// (examples/quick.toml).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "analysis/dataset.h"
#include "analysis/front.h"
#include "analysis/pareto.h"
#include "analysis/source.h"
#include "tests/analysis/shell.h"

namespace clustersweep::analysis {
namespace {

namespace fs = std::filesystem;

using testing::kBinary;
using testing::Result;
using testing::run;
using testing::slurp;

class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("clustersweep-analysis-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    store_ = (dir_ / "quick.h5").string();
    const Result r =
        run(kBinary + " run " CLUSTERSWEEP_SOURCE_DIR "/examples/quick.toml -o " + store_);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  std::string cs(const std::string& arguments) const { return kBinary + " " + arguments; }

  static fs::path dir_;
  static std::string store_;
};

fs::path CliTest::dir_;
std::string CliTest::store_;

// point_ids in the first column of a CSV (after the header).
std::vector<std::string> first_column(const std::string& path, std::size_t column = 0) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> out;
  while (std::getline(in, line)) {
    std::stringstream s(line);
    std::string cell;
    for (std::size_t c = 0; c <= column; ++c) std::getline(s, cell, ',');
    out.push_back(cell);
  }
  return out;
}

// A CSV's rows as maps from its header's names to the cells.
std::vector<std::map<std::string, std::string>> csv_rows(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> names;
  std::stringstream header(line);
  for (std::string cell; std::getline(header, cell, ',');) names.push_back(cell);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::stringstream s(line);
    auto& row = rows.emplace_back();
    for (std::size_t c = 0; c < names.size() && std::getline(s, row[names[c]], ',');) ++c;
  }
  return rows;
}

// The best design of each accelerator comes with how far it can be trusted: its 90% interval and
// the calibration runs like it, marked when few.
TEST_F(CliTest, TheBestDesignsSayHowFarTheyCanBeTrusted) {
  const std::string spec = (dir_ / "trust.toml").string();
  std::ofstream(spec) << R"([workload]
model = "llama3-8b"
training_tokens = 1e12
[cluster]
gpu = ["H100-SXM5-80GB", "H800-SXM5-80GB"]
nodes = [2, 4]
[plan]
tp = "all"
pp = [1, 2]
[output]
keep = "best-per-design"
)";
  const std::string store = (dir_ / "trust.h5").string();
  const Result sweep = run(cs("run " + spec + " -o " + store + " --no-summary"));
  ASSERT_EQ(sweep.code, 0) << sweep.err;
  const Result summary = run(cs("summary " + store));
  ASSERT_EQ(summary.code, 0) << summary.err;
  EXPECT_TRUE(std::regex_search(
      summary.out,
      std::regex(R"(  H100-SXM5-80GB: [0-9.]+ days \(90% [0-9.]+ days - [0-9.]+ days; calibration )"
                 R"(support [0-9]+ runs\)\n)")))
      << summary.out;
  // No dense run on H800 in bf16: marked.
  EXPECT_TRUE(std::regex_search(
      summary.out, std::regex(R"(  H800-SXM5-80GB: .*calibration support 0 runs !\)\n)")))
      << summary.out;
}

// A price per accelerator prices each accelerator's rows with its own price, in the run's
// objective and in every analysis command; without any GPU price the costs say they are
// electricity only.
TEST_F(CliTest, APricePerAcceleratorPricesEachAcceleratorsRows) {
  const std::string spec = (dir_ / "prices.toml").string();
  const std::string base = R"([workload]
model = "llama3-8b"
training_tokens = 1e12
[cluster]
gpu = ["A100-SXM4-80GB", "H100-SXM5-80GB"]
nodes = [2, 4]
[plan]
tp = "all"
pp = [1, 2]
[output]
keep = "best-per-design"
objective = "cost"
)";
  std::ofstream(spec) << base
                      << "[pricing]\nusd_per_kwh = 0.1\n"
                         "gpu_hour_usd = { \"A100-SXM4-80GB\" = 1.5, \"H100-SXM5-80GB\" = 2.5 }\n";
  const std::string store = (dir_ / "prices.h5").string();
  const Result sweep = run(cs("run " + spec + " -o " + store));
  ASSERT_EQ(sweep.code, 0) << sweep.err;
  EXPECT_NE(sweep.out.find("best designs by cost (the best plan of each):"), std::string::npos)
      << sweep.out;
  const std::string csv = (dir_ / "prices.csv").string();
  const Result top = run(cs("top " + store + " --by cost_usd -n 100 --csv " + csv));
  ASSERT_EQ(top.code, 0) << top.err;
  const auto rows = csv_rows(csv);
  ASSERT_EQ(rows.size(), 4u);
  const std::map<std::string, double> price = {{"A100-SXM4-80GB", 1.5}, {"H100-SXM5-80GB", 2.5}};
  std::set<std::string> gpus;
  for (const auto& row : rows) {
    const double expected = std::stod(row.at("energy_kwh")) * 0.1 +
                            std::stod(row.at("gpu_hours")) * price.at(row.at("gpu"));
    EXPECT_NEAR(std::stod(row.at("cost_usd")), expected, 1e-9 * expected) << row.at("gpu");
    gpus.insert(row.at("gpu"));
  }
  EXPECT_EQ(gpus.size(), 2u);
  // The flag re-prices one accelerator against the other.
  const Result repriced = run(cs("top " + store +
                                 " --by cost_usd -n 1 --gpu-hour-usd "
                                 "A100-SXM4-80GB=0.1,H100-SXM5-80GB=2.5 --csv " +
                                 csv));
  ASSERT_EQ(repriced.code, 0) << repriced.err;
  EXPECT_EQ(csv_rows(csv).at(0).at("gpu"), "A100-SXM4-80GB");

  std::ofstream(spec) << base;
  const Result unpriced = run(cs("run " + spec + " -o " + store + " --force"));
  ASSERT_EQ(unpriced.code, 0) << unpriced.err;
  EXPECT_NE(unpriced.out.find("best designs by cost (the best plan of each; cost is "
                              "electricity only: no GPU price given):"),
            std::string::npos)
      << unpriced.out;
}

// A Pareto CSV holds one row per objective vector, with the number of rows it stands for;
// --all-ties writes them all.
TEST_F(CliTest, AParetoCsvHoldsNoTwoRowsOfEqualObjectivesUnlessAllTies) {
  const std::string csv = (dir_ / "ties.csv").string();
  const std::string pareto = "pareto " + store_ + " --objectives time_to_train_s,energy_kwh --csv ";
  const Result collapsed = run(cs(pareto + csv));
  ASSERT_EQ(collapsed.code, 0) << collapsed.err;
  std::set<std::pair<std::string, std::string>> vectors;
  std::size_t stood_for = 0;
  const auto rows = csv_rows(csv);
  for (const auto& row : rows) {
    EXPECT_TRUE(vectors.insert({row.at("time_to_train_s"), row.at("energy_kwh")}).second)
        << row.at("point_id");
    stood_for += 1 + std::stoul(row.at("ties"));
  }
  EXPECT_LT(rows.size(), stood_for);  // the quick example's front has ties
  EXPECT_NE(collapsed.out.find(fmt::format("{} more rows tie with a front row in every objective",
                                           stood_for - rows.size())),
            std::string::npos)
      << collapsed.out;
  const Result all = run(cs(pareto + csv + " --all-ties"));
  ASSERT_EQ(all.code, 0) << all.err;
  EXPECT_EQ(csv_rows(csv).size(), stood_for);
}

// Every analysis command reads a recommendation-model store: its own axes (sharding, no dp),
// samples/s, and the columns pricing needs.
TEST_F(CliTest, EveryCommandReadsARecommendationModelStore) {
  const std::string store = (dir_ / "dlrm.h5").string();
  const Result sweep =
      run(cs("run " CLUSTERSWEEP_SOURCE_DIR "/examples/dlrmv2-sharding.toml -o " + store));
  ASSERT_EQ(sweep.code, 0) << sweep.err;
  EXPECT_NE(sweep.out.find(" sharding=best\n"), std::string::npos) << sweep.out;
  const Result summary = run(cs("summary " + store));
  ASSERT_EQ(summary.code, 0) << summary.err;
  EXPECT_NE(summary.out.find("sharding                 plan              best, table, row, "
                             "column, table_row, data"),
            std::string::npos)
      << summary.out;
  const Result top =
      run(cs("top " + store + " --by max:samples_per_s -n 3 --where \"sharding != " + "'best'\""));
  ASSERT_EQ(top.code, 0) << top.err;
  // The column legend wraps where its width says.
  EXPECT_TRUE(std::regex_search(top.out, std::regex(R"(samples/s =\s+samples_per_s)"))) << top.out;
  EXPECT_NE(top.out.find("sharding=column"), std::string::npos) << top.out;
  for (const std::string& command :
       {"pareto " + store + " --objectives time_to_train_s,cost_usd --svg " +
            (dir_ / "dlrm.svg").string(),
        "energy " + store + " --deadline-days 1", "sensitivity " + store,
        "report " + store + " -o " + (dir_ / "dlrm-report").string()}) {
    const Result r = run(cs(command));
    EXPECT_EQ(r.code, 0) << command << "\n" << r.err;
    EXPECT_EQ(r.err, "") << command;
  }
  EXPECT_TRUE(fs::exists(dir_ / "dlrm-report" / "index.html"));
  // The framework every estimate assumed: the example's NVIDIA parts' default.
  EXPECT_NE(summary.out.find("  the same at every point: framework hugectr\n"), std::string::npos)
      << summary.out;
  EXPECT_NE(slurp(dir_ / "dlrm-report" / "index.html")
                .find("<p>the same at every point: framework hugectr</p>"),
            std::string::npos);
}

TEST_F(CliTest, ParetoOnARealStoreEqualsBruteForce) {
  StoreSource source(store_);
  Dataset data(source, stored_pricing(source));
  ASSERT_GT(data.rows(), 10000u);
  const std::vector<std::vector<Objective>> cases = {
      {{"time_to_train_s", false}, {"energy_kwh", false}},
      {{"step_time_s", false}, {"mem_per_gpu_bytes", false}, {"mfu", true}},
      {{"time_to_train_s", false},
       {"mem_per_gpu_bytes", false},
       {"num_gpus", false},
       {"tokens_per_s", true}},
  };
  for (const auto& objectives : cases) {
    // Brute force over every feasible row, read in one go.
    std::vector<std::string> columns;
    for (const auto& o : objectives) columns.push_back(o.column);
    ScanOptions all;
    all.feasible_only = true;
    all.chunk_rows = data.rows();
    Scan scan(data, columns, all);
    ASSERT_TRUE(scan.next());
    std::vector<double> values;
    std::vector<std::uint64_t> rows;
    for (std::size_t i = 0; i < scan.size(); ++i) {
      if (!scan.keep(i)) continue;
      for (std::size_t j = 0; j < objectives.size(); ++j)
        values.push_back(objectives[j].maximize ? -scan[j][i] : scan[j][i]);
      rows.push_back(i);
    }
    ASSERT_LT(rows.size(), 40000u);  // keeps the O(n^2) reference within seconds
    std::vector<std::uint64_t> expected;
    for (std::size_t i : pareto_front_brute_force(values.data(), rows.size(), objectives.size()))
      expected.push_back(rows[i]);
    FrontRequest request;
    request.objectives = objectives;
    request.scan.feasible_only = true;
    request.scan.chunk_rows = 4096;
    const FrontResult result = compute_fronts(data, request);
    ASSERT_EQ(result.fronts.size(), 1u);
    // The front's rows and the ties they stand for are the brute-force front.
    std::vector<std::uint64_t> actual = result.fronts[0].rows;
    for (const auto& t : result.fronts[0].ties) actual.insert(actual.end(), t.begin(), t.end());
    std::sort(actual.begin(), actual.end());
    EXPECT_EQ(actual, expected) << objectives.size() << " objectives";
    request.all_ties = true;
    EXPECT_EQ(compute_fronts(data, request).fronts[0].rows, expected);
  }
}

TEST_F(CliTest, ParetoCommandWritesTheFrontAndMpiRanksAgree) {
  const std::string one = (dir_ / "one.csv").string(), two = (dir_ / "two.csv").string();
  const std::string svg = (dir_ / "front.svg").string();
  const std::string args =
      " pareto " + store_ +
      " --objectives time_to_train_s,cost_usd,max:mfu --group-by gpu --chunk-rows 5000 --csv ";
  const Result r = run(cs(args + one + " --svg " + svg));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("gpu=H100-SXM5-80GB: "), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(svg));
  const Result mpi = run("mpirun --oversubscribe -n 3 " + cs(args + two));
  ASSERT_EQ(mpi.code, 0) << mpi.err;
  const auto a = first_column(one, 1), b = first_column(two, 1);
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
}

TEST_F(CliTest, ParetoOnMpiRanksSaysABadInputOnce) {
  const Result r = run("mpirun --oversubscribe -n 3 " +
                       cs(" pareto " + store_ + " --objectives nosuch,cost_usd"));
  EXPECT_EQ(r.code, 2);
  const std::string line = "clustersweep pareto: error: ";
  std::size_t said = 0;
  for (auto at = r.err.find(line); at != std::string::npos; at = r.err.find(line, at + 1)) ++said;
  EXPECT_EQ(said, 1u) << r.err;
}

TEST_F(CliTest, TopSummaryEnergySensitivityAndReportRun) {
  const Result top =
      run(cs("top " + store_ + " --by time_to_train_s -n 3 --where \"gpu == 'A100-SXM4-80GB'\""));
  ASSERT_EQ(top.code, 0) << top.err;
  EXPECT_NE(top.out.find("Top 3 of"), std::string::npos);
  EXPECT_NE(top.out.find("gpu=A100-SXM4-80GB"), std::string::npos) << top.out;

  const Result summary = run(cs("summary " + store_));
  ASSERT_EQ(summary.code, 0) << summary.err;
  for (const char* text : {"Swept axes:", "Best design per accelerator",
                           "across cluster configurations", "Memory-expansion tier"})
    EXPECT_NE(summary.out.find(text), std::string::npos) << text;

  const Result energy = run(cs("energy " + store_ +
                               " --pue 1.5 --capex-usd-per-gpu 30000 --amortize-years 5 "
                               "--deadline-days 200 --budget-usd 2e6"));
  ASSERT_EQ(energy.code, 0) << energy.err;
  EXPECT_NE(energy.out.find("PUE 1.5 (--pue)"), std::string::npos) << energy.out;
  EXPECT_NE(energy.out.find("Accelerators: $30000/GPU bought (--capex-usd-per-gpu), amortized "
                            "over 5 years (--amortize-years)\n"),
            std::string::npos)
      << energy.out;
  EXPECT_NE(energy.out.find("cheapest within 200 days"), std::string::npos) << energy.out;

  const std::string bars = (dir_ / "bars.svg").string();
  const Result sensitivity = run(cs("sensitivity " + store_ + " --svg " + bars));
  ASSERT_EQ(sensitivity.code, 0) << sensitivity.err;
  EXPECT_NE(sensitivity.out.find("num_nodes"), std::string::npos);
  EXPECT_TRUE(fs::exists(bars));

  const Result report = run(cs("report " + store_ + " -o " + (dir_ / "report").string()));
  ASSERT_EQ(report.code, 0) << report.err;
  EXPECT_TRUE(fs::exists(dir_ / "report" / "index.html"));
}

// The store opens in h5py, pandas and xarray exactly as docs/store-format.md shows (the test runs
// its recipes), and `export` round-trips the rows into CSV, JSON Lines and netCDF-4 with labels
// as text and the priced columns `top` prints, priced per accelerator.
TEST_F(CliTest, TheDocsPythonRecipesRunAndExportRoundTrips) {
  // The default store of quick.toml (the summary columns, uncompressed), and one of every column
  // compressed.
  const std::string spec = (dir_ / "compressed.toml").string();
  {
    std::ifstream quick(CLUSTERSWEEP_SOURCE_DIR "/examples/quick.toml");
    std::ofstream(spec) << std::string(std::istreambuf_iterator<char>(quick), {})
                        << "columns = \"all\"\ncompression = \"small\"\n";
  }
  const std::string compressed = (dir_ / "compressed.h5").string();
  const Result sweep = run(cs("run " + spec + " -o " + compressed + " --no-summary"));
  ASSERT_EQ(sweep.code, 0) << sweep.err;
  const std::string prices = "A100-SXM4-80GB=1.5,H100-SXM5-80GB=2.5";
  for (const std::string& store : {store_, compressed}) {
    SCOPED_TRACE(store);
    const std::string csv = (dir_ / "export.csv").string(),
                      jsonl = (dir_ / "export.jsonl").string(), nc = (dir_ / "export.nc").string(),
                      top = (dir_ / "top.csv").string();
    for (const auto& [output, extra] :
         {std::pair{csv, std::string()}, {jsonl, " --where 'num_nodes == 2'"}, {nc, ""}}) {
      const Result r =
          run(cs("export " + store + " -o " + output + " --gpu-hour-usd " + prices + extra));
      ASSERT_EQ(r.code, 0) << r.err;
      EXPECT_EQ(r.out.rfind("Wrote ", 0), 0u) << r.out;
    }
    const Result t =
        run(cs("top " + store + " --by cost_usd -n 5 --gpu-hour-usd " + prices + " --csv " + top));
    ASSERT_EQ(t.code, 0) << t.err;
    const Result py =
        run("/usr/bin/python3 " CLUSTERSWEEP_SOURCE_DIR
            "/tests/analysis/store_recipes.py " CLUSTERSWEEP_SOURCE_DIR "/docs/store-format.md " +
            store + " " + csv + " " + jsonl + " " + nc + " " + top + " " + prices);
    EXPECT_EQ(py.code, 0) << py.out << py.err;
    EXPECT_EQ(py.out.rfind("ok ", 0), 0u) << py.out << py.err;
  }
}

// `top` shows one row for the rows equal in every column it shows (unless --all-ties), and says
// in which settings the others differ.
TEST_F(CliTest, TopHoldsNoTwoRowsEqualInEveryShownColumnUnlessAllTies) {
  const auto keys = [&](const std::string& extra) {
    const std::string csv = (dir_ / "top-ties.csv").string();
    const Result r = run(cs("top " + store_ + " -n 10 --csv " + csv + extra));
    EXPECT_EQ(r.code, 0) << r.err;
    std::vector<std::string> out;
    for (const auto& row : csv_rows(csv))
      out.push_back(row.at("time_to_train_s") + "," + row.at("num_gpus") + "," + row.at("mfu") +
                    "," + row.at("energy_kwh") + "," + row.at("cost_usd"));
    return std::pair{out, r.out};
  };
  const auto [distinct, text] = keys("");
  EXPECT_EQ(distinct.size(), 10u);
  EXPECT_EQ(std::set<std::string>(distinct.begin(), distinct.end()).size(), distinct.size());
  EXPECT_NE(text.find("more rows equal a shown row in every column shown"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  1: also "), std::string::npos) << text;
  const auto [all, all_text] = keys(" --all-ties");
  EXPECT_LT(std::set<std::string>(all.begin(), all.end()).size(), all.size());
}

// summary, top, pareto, energy and sensitivity --json print one JSON object each, with
// unformatted numbers that agree with the terminal and CSV output of the same command.
TEST_F(CliTest, AnalysisJsonParsesAndAgreesWithTheTables) {
  const std::string dir = dir_.string();
  const auto json = [&](const std::string& name, const std::string& arguments) {
    const Result r = run(cs(arguments));
    EXPECT_EQ(r.code, 0) << r.err;
    std::ofstream(dir + "/" + name + ".json") << r.out;
  };
  json("summary", "summary " + store_ + " --json --where \"num_nodes >= 4\"");
  json("top", "top " + store_ + " --by cost_usd -n 4 --json --csv " + dir + "/top4.csv");
  json("pareto", "pareto " + store_ + " --objectives time_to_train_s,cost_usd --json --csv " + dir +
                     "/front.csv");
  json("energy", "energy " + store_ + " --json --deadline-days 200 --pue 1.3");
  json("sensitivity", "sensitivity " + store_ + " --json");
  const std::string check = R"(
import json, sys
import pandas as pd
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
assert s["schema"] == "clustersweep-summary/1" and s["where"] == "num_nodes >= 4", s["schema"]
assert 0 < s["feasible"] <= s["selected"] < s["rows"] == 147456
assert sorted(s["best_per_accelerator"]) == ["A100-SXM4-80GB", "H100-SXM5-80GB"]
best = s["best_per_accelerator"]["H100-SXM5-80GB"]
assert best["gpu"] == "H100-SXM5-80GB" and best["feasible"] is True and best["num_nodes"] >= 4
assert isinstance(best["tp"], int) and isinstance(best["time_to_train_s"], float)
assert [a["name"] for a in s["axes"] if a["name"] == "gpu"] == ["gpu"]
t = json.load(open(d + "/top.json"))
csv = pd.read_csv(d + "/top4.csv", float_precision="round_trip")
assert t["schema"] == "clustersweep-top/1" and t["by"] == "cost_usd" and len(t["rows"]) == 4
assert [r["point_id"] for r in t["rows"]] == list(csv.point_id)
assert [r["cost_usd"] for r in t["rows"]] == list(csv.cost_usd)
p = json.load(open(d + "/pareto.json"))
front = pd.read_csv(d + "/front.csv", float_precision="round_trip")
rows = p["fronts"][0]["rows"]
assert p["schema"] == "clustersweep-pareto/1" and len(p["fronts"]) == 1
assert [r["point_id"] for r in rows] == list(front.point_id)
assert [len(r["tied_point_ids"]) for r in rows] == list(front.ties)
assert [r["time_to_train_s"] for r in rows] == list(front.time_to_train_s)
e = json.load(open(d + "/energy.json"))
assert e["schema"] == "clustersweep-energy/1" and e["feasible"] > 0
assert e["pricing"]["pue"] == {"value": 1.3, "from": "--pue"}
assert e["pricing"]["usd_per_kwh"]["from"] == "store"
assert e["ranges"]["cost_usd"]["min"] == e["cheapest"]["cost_usd"]
assert e["cheapest_within_deadline"]["time_to_train_s"] <= 200 * 86400
v = json.load(open(d + "/sensitivity.json"))
assert v["schema"] == "clustersweep-sensitivity/1" and v["target"] == "time_to_train_s"
assert abs(sum(x["share_r2"] for x in v["effects"]) - v["full_r2"]) < 1e-9
assert ["gpu", "nvlink_gbytes_per_s"] in [x["axes"] for x in v["effects"]]
print("ok")
)";
  std::ofstream(dir + "/check_json.py") << check;
  const Result py = run("/usr/bin/python3 " + dir + "/check_json.py " + dir);
  EXPECT_EQ(py.out, "ok\n") << py.err;
}

TEST_F(CliTest, BadInputGetsOneClearErrorAndExitCode2) {
  const auto expect_error = [&](const std::string& arguments, const std::string& message) {
    const Result r = run(cs(arguments));
    EXPECT_EQ(r.code, 2) << arguments;
    EXPECT_EQ(r.err, message + "\n") << arguments;
    EXPECT_EQ(r.out, "") << arguments;
  };
  const std::string missing = (dir_ / "missing.h5").string();
  expect_error("summary " + missing,
               "clustersweep summary: error: cannot open store '" + missing + "': no such file");
  const std::string text = (dir_ / "text.h5").string();
  std::ofstream(text) << "not hdf5\n";
  expect_error("pareto " + text + " --objectives time_to_train_s,cost_usd",
               "clustersweep pareto: error: '" + text +
                   "' is not an HDF5 file (expected a clustersweep results store)");
  expect_error("top " + store_ + " --by time_to_trian",
               "clustersweep top: error: --by: unknown column 'time_to_trian'; did you mean "
               "'time_to_train_s'?");
  expect_error(
      "pareto " + store_ + " --objectives time_to_train_s,co2e",
      "clustersweep pareto: error: --objectives: unknown column 'co2e'; did you mean 'co2e_kg'?");
  expect_error("top " + store_ + " --where \"num_gpus <= 64 and gpu = 'x'\"",
               "clustersweep top: error: --where:1:24: '=' is not a comparison; use '=='\n"
               "    num_gpus <= 64 and gpu = 'x'\n"
               "                           ^");
  // Numbers: the whole text, in range, quoted back as given.
  expect_error("energy " + store_ + " --pue 0.5",
               "clustersweep energy: error: --pue: expected a finite number >= 1, got '0.5'");
  expect_error("energy " + store_ + " --price-per-kwh -0.1",
               "clustersweep energy: error: --price-per-kwh: expected a finite number >= 0, got "
               "'-0.1'");
  expect_error("top " + store_ + " --carbon-g-per-kwh inf",
               "clustersweep top: error: --carbon-g-per-kwh: expected a finite number >= 0, got "
               "'inf'");
  expect_error("energy " + store_ + " --capex-usd-per-gpu 30000 --amortize-years 0",
               "clustersweep energy: error: --amortize-years: expected a finite number > 0, got "
               "'0'");
  expect_error("energy " + store_ + " --deadline-days inf",
               "clustersweep energy: error: --deadline-days: expected a finite number > 0, got "
               "'inf'");
  expect_error("energy " + store_ + " --budget-usd 1e400",
               "clustersweep energy: error: --budget-usd: expected a finite number > 0, got "
               "'1e400'");
  expect_error("top " + store_ + " -n -1",
               "clustersweep top: error: -n: expected a whole number from 1 to "
               "18446744073709551615, got '-1'");
  expect_error("top " + store_ + " -n 1e3",
               "clustersweep top: error: -n: expected a whole number from 1 to "
               "18446744073709551615, got '1e3'");
  expect_error("pareto " + store_ + " --objectives time_to_train_s,cost_usd --limit -1",
               "clustersweep pareto: error: --limit: expected a whole number from 0 to "
               "18446744073709551615, got '-1'");
  expect_error("pareto " + store_ + " --objectives time_to_train_s,cost_usd --sample 1000001",
               "clustersweep pareto: error: --sample: expected a whole number from 0 to 1000000, "
               "got '1000001'");
  expect_error("pareto --bench-rows -1",
               "clustersweep pareto: error: --bench-rows: expected a whole number from 1 to "
               "18446744073709551615, got '-1'");
  expect_error("summary " + store_ + " --chunk-rows 0",
               "clustersweep summary: error: --chunk-rows: expected a whole number from 1 to "
               "18446744073709551615, got '0'");
  expect_error("report " + store_ + " -o " + (dir_ / "r").string() + " --best +5",
               "clustersweep report: error: --best: expected a whole number from 1 to "
               "18446744073709551615, got '+5'");
  expect_error("pareto " + store_,
               "clustersweep pareto: error: the option '--objectives' is required but missing");
  // A price per accelerator prices exactly the store's accelerators.
  expect_error("top " + store_ + " --by cost_usd --gpu-hour-usd H100-SXM5-80GB=2.5",
               "clustersweep top: error: --gpu-hour-usd: no price for 'A100-SXM4-80GB'; give one "
               "for each accelerator of the store (A100-SXM4-80GB, H100-SXM5-80GB)");
  expect_error("energy " + store_ + " --capex-usd-per-gpu A100=1,H100-SXM5-80GB=2",
               "clustersweep energy: error: --capex-usd-per-gpu: 'A100' is not an accelerator of "
               "the store (A100-SXM4-80GB, H100-SXM5-80GB); did you mean 'A100-SXM4-80GB'?");
  expect_error("top " + store_ + " --by cost_usd --gpu-hour-usd H100-SXM5-80GB:2.5",
               "clustersweep top: error: --gpu-hour-usd: must be a non-negative number, or "
               "ACCELERATOR=PRICE,... (e.g. H100-SXM5-80GB=2.5,B200-180GB=5), got "
               "'H100-SXM5-80GB:2.5'");

  // An export never replaces its store, and names its format by the file's extension.
  expect_error("export " + store_ + " -o " + store_,
               "clustersweep export: error: -o: '" + store_ +
                   "' is the store being read; name another file (an output never replaces an "
                   "input)");
  expect_error("export " + store_ + " -o " + (dir_ / "out.parquet").string(),
               "clustersweep export: error: -o: cannot tell the format of '" +
                   (dir_ / "out.parquet").string() +
                   "'; name the file .csv, .jsonl (JSON Lines) or .nc (netCDF-4)");
  expect_error("export " + store_ + " -o " + (dir_ / "x.csv").string() + " --columns gpu,cost",
               "clustersweep export: error: --columns: unknown column 'cost'; did you mean "
               "'cost_usd'?");
  EXPECT_FALSE(fs::exists(dir_ / "x.csv"));

  // A column the sweep did not keep (quick.toml keeps the summary of every point), and a priced
  // column that needs one.
  expect_error("top " + store_ + " --by time_compute_s",
               "clustersweep top: error: --by: column 'time_compute_s' was not kept in '" + store_ +
                   "' (its sweep's [output] columns = \"summary\"); rerun the sweep with columns "
                   "= \"all\", or with 'time_compute_s' in its list");
  {
    const std::string spec = (dir_ / "listed.toml").string();
    std::ifstream quick(CLUSTERSWEEP_SOURCE_DIR "/examples/quick.toml");
    std::string text((std::istreambuf_iterator<char>(quick)), std::istreambuf_iterator<char>());
    text += "columns = [\"gpu\", \"num_gpus\", \"time_to_train_s\"]\n";
    std::ofstream(spec) << text;
    const std::string listed = (dir_ / "listed.h5").string();
    const Result sweep = run(cs("run " + spec + " -o " + listed));
    ASSERT_EQ(sweep.code, 0) << sweep.err;
    EXPECT_NE(sweep.out.find("best designs: not shown: the store does not keep step_time_s, mfu, "
                             "energy_to_train_j, mem_per_gpu_bytes ([output] columns)\n"),
              std::string::npos)
        << sweep.out;
    expect_error("pareto " + listed + " --objectives time_to_train_s,cost_usd",
                 "clustersweep pareto: error: --objectives: column 'cost_usd' needs "
                 "'energy_to_train_j', but 'energy_to_train_j' was not kept in '" +
                     listed +
                     "' (its sweep's [output] columns = [\"gpu\", \"num_gpus\", "
                     "\"time_to_train_s\"]); rerun the sweep with columns = \"all\", or with "
                     "'energy_to_train_j' in its list");
  }

  // A store of another format version.
  const std::string v99 = (dir_ / "v99.h5").string();
  fs::copy_file(store_, v99);
  ASSERT_EQ(std::system(("/usr/bin/python3 -c \"import h5py; f = h5py.File('" + v99 +
                         "', 'r+'); f.attrs['format_version'] = 99; f.close()\"")
                            .c_str()),
            0);
  expect_error(
      "summary " + v99,
      "clustersweep summary: error: '" + v99 +
          "' has store format version 99; this clustersweep reads versions 3 to 12 (use the "
          "clustersweep that wrote it, or rerun the sweep)");

  // A store holds one family, named in its root attributes.
  ASSERT_EQ(std::system(("/usr/bin/python3 -c \"import h5py, sys; f = h5py.File('" + store_ +
                         "', 'r'); sys.exit(f.attrs['family'] != 'transformer')\"")
                            .c_str()),
            0);
  const std::string other = (dir_ / "other-family.h5").string();
  fs::copy_file(store_, other);
  ASSERT_EQ(std::system(("/usr/bin/python3 -c \"import h5py; f = h5py.File('" + other +
                         "', 'r+'); f.attrs['family'] = 'gnn'; f.close()\"")
                            .c_str()),
            0);
  expect_error("top " + other,
               "clustersweep top: error: '" + other +
                   "' holds results of the workload family 'gnn'; this clustersweep reads the "
                   "families: transformer, dlrm");
}

}  // namespace
}  // namespace clustersweep::analysis
