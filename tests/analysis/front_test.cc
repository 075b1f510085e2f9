#include "analysis/front.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "analysis/filter.h"
#include "analysis/output.h"
#include "base/error.h"
#include "tests/analysis/sweep_fixture.h"

namespace clustersweep::analysis {
namespace {

// The brute-force front of the rows `keep` selects, over columns (negated where maximized).
std::map<double, std::vector<std::uint64_t>> reference(const Dataset& data,
                                                       const std::vector<Objective>& objectives,
                                                       const std::string& group_by,
                                                       const Filter* where) {
  std::vector<std::string> columns;
  for (const auto& o : objectives) columns.push_back(o.column);
  if (!group_by.empty()) columns.push_back(group_by);
  ScanOptions options;
  options.where = where;
  options.feasible_only = true;
  options.chunk_rows = 1 << 30;
  Scan scan(data, columns, options);
  scan.next();
  std::map<double, std::pair<std::vector<double>, std::vector<std::uint64_t>>> groups;
  const std::size_t k = objectives.size();
  for (std::size_t i = 0; i < scan.size(); ++i) {
    if (!scan.keep(i)) continue;
    auto& [values, rows] = groups[group_by.empty() ? 0 : scan[k][i]];
    for (std::size_t j = 0; j < k; ++j)
      values.push_back(objectives[j].maximize ? -scan[j][i] : scan[j][i]);
    rows.push_back(i);
  }
  std::map<double, std::vector<std::uint64_t>> out;
  for (auto& [g, pair] : groups)
    for (std::size_t i : pareto_front_brute_force(pair.first.data(), pair.second.size(), k))
      out[group_by.empty() ? NAN : g].push_back(pair.second[i]);
  return out;
}

class FrontTest : public ::testing::Test {
 protected:
  MemoryTable table = testing::sweep_table();
  Dataset data{table, stored_pricing(table)};

  // Each front's rows with the ties they stand for, ascending; and no two rows of a front with
  // equal objectives.
  std::map<double, std::vector<std::uint64_t>> fronts(const FrontRequest& request) {
    const FrontResult r = compute_fronts(data, request);
    std::map<double, std::vector<std::uint64_t>> out;
    const std::size_t k = request.objectives.size();
    for (const auto& f : r.fronts) {
      std::set<std::vector<double>> vectors;
      for (std::size_t i = 0; i < f.rows.size(); ++i)
        EXPECT_TRUE(
            vectors.insert({f.values.begin() + i * k, f.values.begin() + (i + 1) * k}).second)
            << "two front rows tie";
      auto& rows = out[request.group_by.empty() ? NAN : f.group] = f.rows;
      for (const auto& t : f.ties) rows.insert(rows.end(), t.begin(), t.end());
      std::sort(rows.begin(), rows.end());
    }
    return out;
  }
};

TEST_F(FrontTest, EqualsBruteForceWithFiltersGroupsAndMaximizedObjectives) {
  const Filter where = Filter::parse("num_nodes >= 16 or recompute == 'full'", data);
  const std::vector<std::vector<Objective>> cases = {
      {{"time_to_train_s", false}, {"energy_kwh", false}},
      {{"time_to_train_s", false}, {"cost_usd", false}, {"co2e_kg", false}},
      {{"time_to_train_s", false}, {"cost_usd", false}, {"num_gpus", true}, {"step_time_s", false}},
      {{"cost_usd", false}, {"tp", true}, {"pp", false}},
  };
  for (const auto& objectives : cases)
    for (const std::string group : {"", "gpu", "num_nodes"})
      for (const Filter* filter : {static_cast<const Filter*>(nullptr), &where})
        for (std::size_t chunk : {3u, 1000u}) {
          FrontRequest request;
          request.objectives = objectives;
          request.group_by = group;
          request.scan.where = filter;
          request.scan.feasible_only = true;
          request.scan.chunk_rows = chunk;
          const auto expected = reference(data, objectives, group, filter);
          auto actual = fronts(request);
          if (group.empty()) {  // NaN keys do not compare equal: compare the single front
            ASSERT_EQ(actual.size(), 1u);
            ASSERT_EQ(expected.size(), 1u);
            EXPECT_EQ(actual.begin()->second, expected.begin()->second);
          } else {
            EXPECT_EQ(actual, expected) << objectives.size() << " objectives, group " << group;
          }
        }
}

// Rows of equal objectives are one front row: the one on the fewest GPUs, then with the least
// memory per GPU, then the first; --all-ties keeps them all.
TEST(FrontTies, OneRowStandsForItsTiesByAStatedRule) {
  MemoryTable t;
  // Rows 0-3 tie at (1, 1); row 4 is alone at (0.5, 2); row 5 is dominated.
  t.add({"time_s", "s", false, {}, ""}, {1, 1, 1, 1, 0.5, 2});
  t.add({"energy_j", "J", false, {}, ""}, {1, 1, 1, 1, 2, 2});
  t.add({"num_gpus", "", false, {}, ""}, {16, 8, 8, 32, 8, 8});
  t.add({"mem_per_gpu_bytes", "B", false, {}, ""}, {1, 3, 2, 1, 1, 1});
  t.add({"hbm_gb", "GB", false, {}, "design_axis"}, {40, 80, 120, 160, 80, 80});
  Dataset data(t, Pricing{});
  FrontRequest request;
  request.objectives = {{"time_s", false}, {"energy_j", false}};
  const FrontResult r = compute_fronts(data, request);
  ASSERT_EQ(r.fronts.size(), 1u);
  EXPECT_EQ(r.fronts[0].rows, (std::vector<std::uint64_t>{2, 4}));
  EXPECT_EQ(r.fronts[0].ties, (std::vector<std::vector<std::uint64_t>>{{0, 1, 3}, {}}));
  EXPECT_EQ(r.fronts[0].values, (std::vector<double>{1, 1, 0.5, 2}));
  std::ostringstream out;
  print_fronts(out, data, request, r, 20);
  EXPECT_NE(out.str().find("3 more rows tie with a front row in every objective"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("  2: also num_gpus=16|32 hbm_gb=40|80|160 (3 rows)\n"),
            std::string::npos)
      << out.str();
  request.all_ties = true;
  const FrontResult all = compute_fronts(data, request);
  EXPECT_EQ(all.fronts[0].rows, (std::vector<std::uint64_t>{0, 1, 2, 3, 4}));
}

TEST_F(FrontTest, ValuesComeBackInTheirOwnSign) {
  FrontRequest request;
  request.objectives = {{"time_to_train_s", false}, {"num_gpus", true}};
  request.scan.feasible_only = true;
  const FrontResult r = compute_fronts(data, request);
  ASSERT_EQ(r.fronts.size(), 1u);
  const auto stored = fetch_rows(data, r.fronts[0].rows, {"time_to_train_s", "num_gpus"});
  for (std::size_t i = 0; i < r.fronts[0].rows.size(); ++i) {
    EXPECT_EQ(r.fronts[0].values[2 * i], stored[0][i]);
    EXPECT_EQ(r.fronts[0].values[2 * i + 1], stored[1][i]);
  }
  EXPECT_EQ(r.rows_selected, 336u);
  EXPECT_EQ(r.sample.size(), 2 * 336u);  // fewer points than the sample size: all of them
}

TEST_F(FrontTest, ParsesObjectivesAndRejectsBadOnes) {
  const auto objectives = parse_objectives("time_to_train_s, max:num_gpus,min:cost_usd", data);
  ASSERT_EQ(objectives.size(), 3u);
  EXPECT_EQ(objectives[1].column, "num_gpus");
  EXPECT_TRUE(objectives[1].maximize);
  EXPECT_FALSE(objectives[2].maximize);
  const auto error = [&](const std::string& text) {
    try {
      parse_objectives(text, data);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("time_to_train_s,energy_kwhh"),
            "--objectives: unknown column 'energy_kwhh'; did you mean 'energy_kwh'?");
  EXPECT_EQ(error("time_to_train_s"), "--objectives: expected 2 to 4 objectives, got 1");
  EXPECT_EQ(error("a,b,c,d,e").rfind("--objectives: unknown column 'a'", 0), 0u);
  EXPECT_EQ(error("time_to_train_s,,cost_usd"),
            "--objectives: empty objective in 'time_to_train_s,,cost_usd'; expected columns "
            "separated by commas, "
            "e.g. time_to_train_s,cost_usd");
  EXPECT_EQ(error("cost_usd,max:cost_usd"), "--objectives: column 'cost_usd' is given twice");
  EXPECT_EQ(error("cost_usd,gpu"), "--objectives: column 'gpu' holds labels, not numbers");
  EXPECT_EQ(error("cost_usd,tp,pp,num_gpus,time_to_train_s"),
            "--objectives: expected 2 to 4 objectives, got 5");
}

TEST_F(FrontTest, WritesCsvWithPointIdAndEveryColumn) {
  FrontRequest request;
  request.objectives = {{"time_to_train_s", false}, {"cost_usd", false}};
  request.group_by = "gpu";
  request.scan.feasible_only = true;
  const FrontResult r = compute_fronts(data, request);
  const std::string path = ::testing::TempDir() + "front.csv";
  write_fronts_csv(path, data, request, r);
  std::ifstream in(path);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(
      header,
      "group,ties,point_id,gpu,num_nodes,gpus_per_node,hbm_gb,expansion_gb,expansion_gbytes_per_s,"
      "tp,pp,recompute,"
      "num_gpus,feasible,infeasible_reason,step_time_s,time_to_train_s,energy_to_train_j,"
      "energy_kwh,co2e_kg,"
      "gpu_hours,cost_usd");
  std::size_t lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    EXPECT_EQ(line.rfind("gpu=", 0), 0u) << line;
  }
  EXPECT_EQ(lines, r.fronts[0].rows.size() + r.fronts[1].rows.size());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace clustersweep::analysis
