// End to end: the summary's "Software stack settings" on a real sweep of a MoE model over the
// dispatcher and CUDA graphs, against a brute-force grouping of the store's own numbers.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "analysis/dataset.h"
#include "analysis/source.h"
#include "analysis/summary.h"
#include "tests/analysis/shell.h"

namespace clustersweep::analysis {
namespace {

namespace fs = std::filesystem;

using testing::kBinary;
using testing::Result;
using testing::run;

const char* const kSpec = R"([workload]
model = "qwen3-30b-a3b"
precision = "fp8"
training_tokens = 1e12

[cluster]
gpu = "GB200-186GB"
gpus = [8, 16]

[plan]
tp = 1
pp = [1, 2]
micro_batch = [1, 2]
zero = 1
ep = [1, 4, 8]
dispatcher = "all"
cuda_graph = "all"
token_routing = ["dropless", "balanced"]

[output]
keep = "KEEP"
)";

struct Row {
  std::vector<double> axes;
  bool feasible = false;
  double time = 0;
};

class StackSummaryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("clustersweep-stack-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  // The store of kSpec with `keep`, written by the real binary.
  static std::string sweep(const std::string& keep, const std::string& name = "") {
    std::string text = kSpec;
    text.replace(text.find("KEEP"), 4, keep);
    return sweep_text(name.empty() ? keep : name, text);
  }
  static std::string sweep_text(const std::string& name, const std::string& text) {
    const std::string spec = (dir_ / (name + ".toml")).string();
    const std::string store = (dir_ / (name + ".h5")).string();
    std::ofstream(spec) << text;
    const Result r = run(kBinary + " run " + spec + " -o " + store + " --no-summary");
    EXPECT_EQ(r.code, 0) << r.err;
    return store;
  }

  static std::vector<Row> read_rows(const Dataset& data) {
    std::vector<std::string> names = {"feasible", "time_to_train_s"};
    for (const Column* c : data.axes()) names.push_back(c->name);
    ScanOptions options;
    options.feasible_only = false;
    Scan scan(data, names, options);
    std::vector<Row> rows;
    while (scan.next())
      for (std::size_t i = 0; i < scan.size(); ++i) {
        Row& r = rows.emplace_back();
        r.feasible = scan[0][i] != 0;
        r.time = scan[1][i];
        for (std::size_t a = 2; a < names.size(); ++a) r.axes.push_back(scan[a][i]);
      }
    return rows;
  }

  static fs::path dir_;
};

fs::path StackSummaryTest::dir_;

std::size_t axis_index(const Dataset& data, const std::string& name) {
  const auto axes = data.axes();
  return static_cast<std::size_t>(
      std::find_if(axes.begin(), axes.end(), [&](const Column* c) { return c->name == name; }) -
      axes.begin());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The summary's line for `axis`, from the rows grouped by every other axis.
std::string brute_force_line(const Dataset& data, const std::vector<Row>& rows,
                             const std::string& axis) {
  const std::size_t at = axis_index(data, axis);
  const Column& column = *data.axes()[at];
  std::map<std::vector<double>, std::map<std::size_t, double>> groups;  // -> value -> time
  for (const Row& r : rows) {
    if (!r.feasible) continue;
    std::vector<double> key = r.axes;
    key.erase(key.begin() + static_cast<std::ptrdiff_t>(at));
    groups[key][static_cast<std::size_t>(r.axes[at])] = r.time;
  }
  std::uint64_t compared = 0;
  std::map<std::size_t, std::vector<double>> ratios;
  std::map<std::size_t, std::uint64_t> best;
  for (const auto& [key, times] : groups) {
    if (times.size() < 2) continue;
    ++compared;
    double lowest = INFINITY;
    for (const auto& [value, time] : times) lowest = std::min(lowest, time);
    for (const auto& [value, time] : times) {
      ratios[value].push_back(time / lowest);
      best[value] += time / lowest <= 1 + 1e-9;
    }
  }
  struct Value {
    std::string name;
    std::uint64_t groups, best;
    double median, max;
  };
  std::vector<Value> values;
  for (const auto& [value, r] : ratios)
    values.push_back({column.format(static_cast<double>(value)), r.size(), best[value], median(r),
                      *std::max_element(r.begin(), r.end())});
  std::stable_sort(values.begin(), values.end(), [](const Value& a, const Value& b) {
    return a.best != b.best ? a.best > b.best : a.median < b.median;
  });
  std::string line = fmt::format("  {} ({} groups): {} best in {}", axis, compared, values[0].name,
                                 values[0].best);
  if (values[0].max > 1.005) line += fmt::format(" (max {:.2f}x)", values[0].max);
  for (std::size_t i = 1; i < values.size(); ++i)
    line += fmt::format(
        "{}{} {:.2f}x (max {:.2f}x{})", i == 1 ? "; " : ", ", values[i].name, values[i].median,
        values[i].max,
        values[i].groups == compared ? "" : fmt::format(", {} groups", values[i].groups));
  return line;
}

// The lines of the printed section, without its heading.
std::vector<std::string> stack_section(const std::string& text) {
  std::istringstream in(text.substr(text.find("\nSoftware stack settings")));
  std::vector<std::string> lines;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line) && line.back() != ':') continue;  // the heading
  while (std::getline(in, line) && line.rfind("  ", 0) == 0) {
    if (line.rfind("    ", 0) == 0)
      lines.back() += line.substr(3);  // a wrapped line continues after its indent
    else
      lines.push_back(line);
  }
  return lines;
}

TEST_F(StackSummaryTest, EachSettingAgainstItsBestValueAtOtherwiseEqualPoints) {
  const std::string store = sweep("all");
  StoreSource source(store);
  Dataset data(source, stored_pricing(source));
  const Summary s = summarize(data, "time_to_train_s", {});
  std::ostringstream out;
  print_summary(out, data, s);
  const auto rows = read_rows(data);
  const auto lines = stack_section(out.str());
  ASSERT_EQ(lines.size(), 4u) << out.str();
  EXPECT_EQ(lines[0], brute_force_line(data, rows, "cuda_graph")) << out.str();
  EXPECT_EQ(lines[1], brute_force_line(data, rows, "dispatcher")) << out.str();
  EXPECT_EQ(lines[2], brute_force_line(data, rows, "token_routing")) << out.str();
  EXPECT_EQ(lines[1].rfind("  dispatcher (", 0), 0u);
  // The settings the spec left at one value: what every answer assumed.
  EXPECT_EQ(lines[3].rfind("  the same at every point: framework any, a2a_overlap off, ", 0), 0u)
      << lines[3];

  // Full graphs never read slower than none where the store's own points say they are not.
  const std::size_t graph = axis_index(data, "cuda_graph");
  std::map<std::vector<double>, std::map<double, double>> by_graph;
  for (const Row& r : rows) {
    if (!r.feasible) continue;
    std::vector<double> key = r.axes;
    key.erase(key.begin() + static_cast<std::ptrdiff_t>(graph));
    by_graph[key][r.axes[graph]] = r.time;
  }
  bool full_never_slower = true;
  for (const auto& [key, times] : by_graph)
    if (times.count(0) && times.count(2)) full_never_slower &= times.at(2) <= times.at(0);
  const auto& graphs = s.stack[0].values;
  const auto none = std::find_if(graphs.begin(), graphs.end(),
                                 [](const SettingValue& v) { return v.value == "none"; });
  const auto full = std::find_if(graphs.begin(), graphs.end(),
                                 [](const SettingValue& v) { return v.value == "full"; });
  ASSERT_NE(none, graphs.end());
  ASSERT_NE(full, graphs.end());
  // Full graphs run only where none runs too (balanced routing), so never slower there means
  // their worst ratio to a group's best is no worse than that of no graphs.
  EXPECT_TRUE(full_never_slower) << "the estimator makes full graphs slower somewhere";
  if (full_never_slower) {
    EXPECT_LE(full->max_ratio, none->max_ratio) << lines[0];
  }
}

TEST_F(StackSummaryTest, ABestPerDesignStoreCountsTheChosenValues) {
  const std::string store = sweep("best-per-design");
  StoreSource source(store);
  Dataset data(source, stored_pricing(source));
  const Summary s = summarize(data, "time_to_train_s", {});
  ASSERT_TRUE(s.stack_by_design);
  std::ostringstream out;
  print_summary(out, data, s);
  const auto rows = read_rows(data);
  const std::size_t at = axis_index(data, "dispatcher");
  std::map<std::string, std::uint64_t> chosen;
  std::uint64_t kept = 0;
  for (const Row& r : rows)
    if (r.feasible) ++kept, ++chosen[data.axes()[at]->format(r.axes[at])];
  const auto lines = stack_section(out.str());
  ASSERT_EQ(lines.size(), 4u) << out.str();
  EXPECT_EQ(lines[1].rfind(fmt::format("  dispatcher ({} kept plans): ", kept), 0), 0u) << lines[1];
  for (const auto& [value, count] : chosen)
    EXPECT_NE(lines[1].find(fmt::format("{} in {}", value, count)), std::string::npos) << lines[1];
}

TEST_F(StackSummaryTest, AStoreSweepingNoSettingSaysSo) {
  std::string text = kSpec;
  text.replace(text.find("KEEP"), 4, "all");
  for (const char* line : {"dispatcher = \"all\"\n", "cuda_graph = \"all\"\n",
                           "token_routing = [\"dropless\", \"balanced\"]\n"})
    text.erase(text.find(line), std::string(line).size());
  const Result r = run(kBinary + " summary " + sweep_text("unswept", text));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\nSoftware stack settings"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(":\n  not swept\n  the same at every point: framework any, cuda_graph none, "
                       "dispatcher alltoall, token_routing dropless, "),
            std::string::npos)
      << r.out;
}

// A recommendation model's framework is no axis but the spec's `[workload] framework`, else the
// accelerator's default: its store keeps the one every estimate assumed in the column the
// transformer's framework has, as a constant column when it is one, and the summary names it.
TEST_F(StackSummaryTest, ARecommendationModelStoreNamesItsFramework) {
  const std::string example =
      testing::slurp(CLUSTERSWEEP_SOURCE_DIR "/examples/dlrmv2-sharding.toml");
  ASSERT_NE(example.find("family = \"dlrm\"\n"), std::string::npos);
  ASSERT_EQ(example.find("framework ="), std::string::npos);  // the accelerators' default
  std::string given = example;
  given.insert(given.find("family = \"dlrm\"\n") + 16, "framework = \"torchrec\"\n");
  const std::string check = (dir_ / "dlrm_framework.py").string();
  std::ofstream(check) << R"(
import json, sys
import h5py
store, framework, summary = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
with h5py.File(store, "r") as f:
    column = f["framework"]
    assert h5py.check_enum_dtype(column.dtype) == {framework: 0}, h5py.check_enum_dtype(column.dtype)
    assert column.attrs["role"] in ("design_axis", b"design_axis")
    assert column.id.get_storage_size() == 0 and column.fillvalue == 0
    assert len(column) == f.attrs["rows"] and (column[:] == 0).all()
    assert "framework" not in f["axes"]  # no axis of the spec
assert summary["stack"]["fixed"] == {"framework": framework}, summary["stack"]
assert summary["stack"]["settings"] == []
)";
  // Both accelerators of the example are NVIDIA's, whose default is HugeCTR's.
  for (const auto& [name, text, framework] :
       {std::tuple<std::string, std::string, std::string>{"dlrm-default", example, "hugectr"},
        {"dlrm-torchrec", given, "torchrec"}}) {
    SCOPED_TRACE(name);
    const std::string store = sweep_text(name, text);
    const Result r = run(kBinary + " summary " + store);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(
        r.out.find(":\n  not swept\n  the same at every point: framework " + framework + "\n"),
        std::string::npos)
        << r.out;
    const Result summary = run(kBinary + " summary " + store + " --json");
    ASSERT_EQ(summary.code, 0) << summary.err;
    const std::string json = (dir_ / (name + ".json")).string();
    std::ofstream(json) << summary.out;
    const Result py = run("/usr/bin/python3 " + check + " " + store + " " + framework + " " + json);
    EXPECT_EQ(py.code, 0) << py.err;
  }
}

}  // namespace
}  // namespace clustersweep::analysis
