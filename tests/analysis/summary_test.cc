#include "analysis/summary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <sstream>
#include <tuple>

#include "analysis/rank.h"
#include "analysis/sensitivity.h"
#include "base/error.h"
#include "tests/analysis/sweep_fixture.h"

namespace clustersweep::analysis {
namespace {

using testing::SweepRow;

class SummaryTest : public ::testing::Test {
 protected:
  MemoryTable table = testing::sweep_table();
  Dataset data{table, stored_pricing(table)};
  std::vector<SweepRow> rows = testing::sweep_rows();
  ScanOptions chunks(std::size_t n) {
    ScanOptions o;
    o.chunk_rows = n;
    return o;
  }
};

TEST_F(SummaryTest, SpreadIsWorstDesignsBestOverBestDesignsBest) {
  std::map<std::vector<double>, double> best;  // design -> its best time
  for (const auto& r : rows) {
    if (!r.feasible) continue;
    auto [it, fresh] =
        best.emplace(std::vector<double>{r.gpu, r.nodes, r.hbm, r.expansion}, r.time_s);
    if (!fresh) it->second = std::min(it->second, r.time_s);
  }
  double lo = INFINITY, hi = 0;
  for (const auto& [design, time] : best) lo = std::min(lo, time), hi = std::max(hi, time);
  for (std::size_t chunk : {5u, 64u, 100000u}) {
    const Summary s = summarize(data, "time_to_train_s", chunks(chunk));
    ASSERT_EQ(s.spreads.size(), 1u);
    EXPECT_EQ(s.spreads[0].designs, best.size());
    EXPECT_DOUBLE_EQ(s.spreads[0].best.value, lo);
    EXPECT_DOUBLE_EQ(s.spreads[0].worst.value, hi);
    EXPECT_DOUBLE_EQ(s.spreads[0].ratio(), hi / lo);
    EXPECT_GT(s.spreads[0].ratio(), 5);
  }
}

TEST_F(SummaryTest, ExpansionGainComparesClustersEqualButForTheTier) {
  std::map<std::vector<double>, std::array<double, 2>> best;  // cluster -> best without, with
  for (const auto& r : rows) {
    auto& slot =
        best.try_emplace({r.gpu, r.nodes, r.hbm}, std::array<double, 2>{INFINITY, INFINITY})
            .first->second;
    if (r.feasible) slot[r.expansion > 0] = std::min(slot[r.expansion > 0], r.time_s);
  }
  double max_gain = 0;
  std::uint64_t improved = 0, enabled = 0, groups = 0;
  for (const auto& [cluster, b] : best) {
    if (b[1] == INFINITY) continue;
    ++groups;
    if (b[0] == INFINITY) {
      ++enabled;
      continue;
    }
    max_gain = std::max(max_gain, b[0] / b[1]);
    improved += b[0] / b[1] > 1 + 1e-9;
  }
  const Summary s = summarize(data, "time_to_train_s", chunks(7));
  EXPECT_TRUE(s.has_expansion_axis);
  EXPECT_EQ(s.expansion.groups, groups);
  EXPECT_EQ(s.expansion.improved, improved);
  EXPECT_EQ(s.expansion.enabled, enabled);
  EXPECT_DOUBLE_EQ(s.expansion.max_gain, max_gain);
  EXPECT_GT(max_gain, 1.0);
}

TEST_F(SummaryTest, CountsAndBestPerAccelerator) {
  const Summary s = summarize(data, "time_to_train_s", chunks(50));
  std::uint64_t feasible = 0;
  double best[2] = {INFINITY, INFINITY};
  for (const auto& r : rows)
    if (r.feasible)
      ++feasible, best[static_cast<int>(r.gpu)] = std::min(best[static_cast<int>(r.gpu)], r.time_s);
  EXPECT_EQ(s.rows, rows.size());
  EXPECT_EQ(s.feasible, feasible);
  EXPECT_DOUBLE_EQ(s.best_per_accelerator.at("A100-SXM4-80GB").value, best[0]);
  EXPECT_DOUBLE_EQ(s.best_per_accelerator.at("H100-SXM5-80GB").value, best[1]);
  ASSERT_EQ(s.infeasible_reasons.size(), 1u);
  EXPECT_EQ(s.infeasible_reasons[0].first, "out_of_memory");
  EXPECT_EQ(s.infeasible_reasons[0].second, rows.size() - feasible);

  std::ostringstream out;
  print_summary(out, data, s);
  EXPECT_NE(out.str().find("gpu=H100-SXM5-80GB num_nodes=32"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("cluster/workload  40, 80 GB\n"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("24 configurations: 13.38x"), std::string::npos) << out.str();
}

TEST_F(SummaryTest, TopMatchesASortAndKeepsStoreOrderOnTies) {
  const auto top = top_rows(data, {"time_to_train_s", false}, 10, chunks(9));
  std::vector<std::pair<double, std::uint64_t>> sorted;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].feasible) sorted.emplace_back(rows[i].time_s, i);
  std::sort(sorted.begin(), sorted.end());
  ASSERT_EQ(top.size(), 10u);
  for (std::size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(top[i].row, sorted[i].second);
    EXPECT_EQ(top[i].value, sorted[i].first);
  }
  const auto slowest = top_rows(data, {"time_to_train_s", true}, 1, chunks(9));
  EXPECT_EQ(slowest[0].value, sorted.back().first);
}

// Rows equal in the ranked column and every column shown are one row, whatever the chunking:
// the n best groups by (value, first row), each shown by its row on the fewest GPUs, then with
// the least memory, then the first, standing for all the others.
TEST(TopDistinct, EqualsGroupingEveryRowByItsShownValues) {
  std::mt19937_64 random(7);
  const std::size_t n_rows = 500;
  std::vector<double> id(n_rows), feasible(n_rows), time(n_rows), cost(n_rows), gpus(n_rows),
      memory(n_rows);
  for (std::size_t i = 0; i < n_rows; ++i) {
    id[i] = static_cast<double>(i);
    feasible[i] = random() % 5 != 0;
    time[i] = static_cast<double>(random() % 12);
    cost[i] = static_cast<double>(random() % 3);
    gpus[i] = static_cast<double>(8 << (random() % 3));
    memory[i] = static_cast<double>(random() % 4);
  }
  MemoryTable table;
  table.add({"point_id", "", false, {}, "id"}, id);
  table.add({"feasible", "", false, {}, "metric"}, feasible);
  table.add({"time_to_train_s", "s", false, {}, "metric"}, time);
  table.add({"cost_usd", "USD", false, {}, "metric"}, cost);
  table.add({"num_gpus", "", false, {}, "design_axis"}, gpus);
  table.add({"mem_per_gpu_bytes", "B", false, {}, "metric"}, memory);
  Dataset data(table, Pricing{});
  for (bool maximize : {false, true})
    for (std::size_t n : {1u, 5u, 40u}) {
      // Brute force: groups of (time, cost) in order of (time, first row).
      std::map<std::pair<double, double>, std::vector<std::size_t>> groups;
      for (std::size_t i = 0; i < n_rows; ++i)
        if (feasible[i]) groups[{time[i], cost[i]}].push_back(i);
      std::vector<std::vector<std::size_t>> ordered;
      for (auto& [key, members] : groups) ordered.push_back(members);
      std::sort(ordered.begin(), ordered.end(), [&](const auto& a, const auto& b) {
        const double x = time[a[0]], y = time[b[0]];
        if (x != y) return maximize ? x > y : x < y;
        return a[0] < b[0];
      });
      ordered.resize(std::min(n, ordered.size()));
      for (std::size_t chunk : {7u, 1000u}) {
        ScanOptions options;
        options.chunk_rows = chunk;
        const TiedRows top = top_distinct_rows(data, {"time_to_train_s", maximize}, n, options,
                                               {"time_to_train_s", "cost_usd"});
        ASSERT_EQ(top.rows.size(), ordered.size());
        for (std::size_t g = 0; g < ordered.size(); ++g) {
          const auto& members = ordered[g];
          const std::size_t best =
              *std::min_element(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
                return std::tuple(gpus[a], memory[a], a) < std::tuple(gpus[b], memory[b], b);
              });
          EXPECT_EQ(top.rows[g].row, best) << "group " << g << " n " << n;
          EXPECT_EQ(top.rows[g].value, time[best]);
          std::vector<std::uint64_t> others;
          for (std::size_t m : members)
            if (m != best) others.push_back(m);
          EXPECT_EQ(top.ties[g], others);
        }
      }
    }
}

TEST_F(SummaryTest, EnergyAnswersDeadlineAndBudget) {
  const double deadline_days = 20, budget = 30000;
  const EnergyReport r = energy_report(data, chunks(11), deadline_days, budget);
  double cheapest_in_time = INFINITY, fastest_in_budget = INFINITY, min_kwh = INFINITY;
  for (const auto& row : rows) {
    if (!row.feasible) continue;
    const double kwh = row.energy_j * 1.5 / 3.6e6;
    const double cost = kwh * 0.2 + row.num_gpus * row.time_s / 3600 * 2;
    min_kwh = std::min(min_kwh, kwh);
    if (row.time_s <= deadline_days * 86400) cheapest_in_time = std::min(cheapest_in_time, cost);
    if (cost <= budget) fastest_in_budget = std::min(fastest_in_budget, row.time_s);
  }
  ASSERT_TRUE(r.cheapest_within_deadline.found());
  EXPECT_NEAR(r.cheapest_within_deadline.value, cheapest_in_time, 1e-9 * cheapest_in_time);
  ASSERT_TRUE(r.fastest_within_budget.found());
  EXPECT_DOUBLE_EQ(r.fastest_within_budget.value, fastest_in_budget);
  EXPECT_NEAR(r.energy_kwh.min, min_kwh, 1e-9 * min_kwh);
  EXPECT_NEAR(r.co2e_kg.min, min_kwh * 0.3, 1e-9 * min_kwh);
  // An impossible deadline has no answer.
  EXPECT_FALSE(
      energy_report(data, chunks(11), 0.001, std::nullopt).cheapest_within_deadline.found());
}

TEST_F(SummaryTest, PricingFlagsOverrideTheStoreAndAreChecked) {
  std::vector<std::string> origin;
  PricingOverrides o;
  o.pue = 1.1;
  o.capex_usd_per_gpu = spaces::GpuPrice{30000, {}};
  const Pricing p = resolve_pricing(table, o, &origin);
  EXPECT_EQ(p.pue, 1.1);
  EXPECT_EQ(p.usd_per_kwh, 0.2);
  EXPECT_FALSE(p.gpu_hour_usd.given());  // the capex model replaces the stored hourly price
  EXPECT_EQ(p.capex_usd_per_gpu.all, 30000);
  EXPECT_EQ(p.amortize_years, 4);
  EXPECT_EQ(origin, (std::vector<std::string>{"--pue", "store", "store", "store",
                                              "--capex-usd-per-gpu", "default"}));
  const auto error = [&](PricingOverrides bad) {
    try {
      resolve_pricing(table, bad);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  PricingOverrides low_pue;
  low_pue.pue = 0.9;
  EXPECT_EQ(error(low_pue), "--pue: must be at least 1 (facility / IT energy), got 0.9");
  PricingOverrides negative;
  negative.usd_per_kwh = -1;
  EXPECT_EQ(error(negative), "--price-per-kwh: must be a non-negative number, got -1");
  PricingOverrides both;
  both.gpu_hour_usd = spaces::GpuPrice{2, {}};
  both.capex_usd_per_gpu = spaces::GpuPrice{1, {}};
  EXPECT_EQ(error(both),
            "--gpu-hour-usd and --capex-usd-per-gpu are alternatives: give one of them");
}

TEST_F(SummaryTest, UnknownColumnsSuggestTheClosest) {
  const auto error = [&](const std::string& name) {
    try {
      data.column(name, "--by");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("time_to_train"),
            "--by: unknown column 'time_to_train'; did you mean 'time_to_train_s'?");
  EXPECT_EQ(error("cost"), "--by: unknown column 'cost'; did you mean 'cost_usd'?");
  EXPECT_EQ(error("zzzzzzzzzzzz")
                .rfind("--by: unknown column 'zzzzzzzzzzzz'; columns are: point_id, gpu,", 0),
            0u);
}

TEST(Sensitivity, RecoversAnAdditiveModelExactly) {
  // log(time) = a[gpu] + b[nodes] + c[tp], with pp irrelevant; a balanced full factorial.
  MemoryTable t;
  std::vector<double> gpu, nodes, tp, pp, time, feasible;
  const double a[] = {0, 1.2}, b[] = {0, -0.7, -1.4, -2.1}, c[] = {0, 0.05, 0.1};
  for (int g = 0; g < 2; ++g)
    for (int n = 0; n < 4; ++n)
      for (int p = 0; p < 3; ++p)
        for (int q = 0; q < 2; ++q) {
          gpu.push_back(g), nodes.push_back(8 << n), tp.push_back(1 << p), pp.push_back(q + 1);
          time.push_back(std::exp(5 + a[g] + b[n] + c[p]));
          feasible.push_back(1);
        }
  t.add({"gpu", "", true, {"x", "y"}, "design_axis"}, gpu);
  t.add({"num_nodes", "", false, {}, "design_axis"}, nodes);
  t.add({"tp", "", false, {}, "plan_axis"}, tp);
  t.add({"pp", "", false, {}, "plan_axis"}, pp);
  t.add({"feasible", "", false, {}, "metric"}, feasible);
  t.add({"time_to_train_s", "s", false, {}, "metric"}, time);
  Dataset data(t, Pricing{});
  ScanOptions o;
  o.chunk_rows = 5;
  const Sensitivity s = sensitivity(data, "time_to_train_s", o);
  EXPECT_NEAR(s.full_r2, 1.0, 1e-9);
  ASSERT_EQ(s.effects.size(), 4u);
  EXPECT_EQ(s.effects[0].column->name, "num_nodes");
  EXPECT_EQ(s.effects[1].column->name, "gpu");
  EXPECT_EQ(s.effects[2].column->name, "tp");
  EXPECT_EQ(s.effects[3].column->name, "pp");
  EXPECT_NEAR(s.effects[3].unique_r2, 0.0, 1e-9);
  double total = 0;
  for (const auto& e : s.effects) {
    EXPECT_NEAR(e.unique_r2, e.alone_r2, 1e-9) << e.column->name;  // orthogonal: they agree
    total += e.unique_r2;
  }
  EXPECT_NEAR(total, 1.0, 1e-9);
  // Variance shares: gpu 0.36 of a two-level +/-0.6 effect, nodes var of {0,-0.7,-1.4,-2.1}...
  const double var_gpu = 0.36, var_nodes = 0.6125, var_tp = 0.05 * 0.05 * 2.0 / 3.0;
  EXPECT_NEAR(s.effects[1].unique_r2, var_gpu / (var_gpu + var_nodes + var_tp), 1e-9);
}

// With collinear axes, what they explain jointly is shared out (Shapley) rather than given to no
// one (unique) or to each (alone): the shares add up to the full R^2; axes that move together
// are one group; an axis that mostly follows another gets a share between its unique and alone.
TEST(Sensitivity, SharesSplitWhatCollinearAxesExplainTogether) {
  std::vector<double> gpu, nvlink, nodes, partner, feasible, time;
  std::mt19937_64 random(3);
  for (int g = 0; g < 2; ++g)
    for (int n = 0; n < 4; ++n)
      for (int r = 0; r < 25; ++r) {
        gpu.push_back(g);
        nvlink.push_back(g ? 450 : 300);  // follows the accelerator exactly
        nodes.push_back(1 << n);
        partner.push_back(random() % 10 == 0 ? 1 - g : g);  // follows it 90% of the time
        feasible.push_back(1);
        time.push_back(std::exp(1.0 - 0.6 * g - 0.7 * n + 0.1 * partner.back() +
                                0.01 * static_cast<double>(r % 5)));
      }
  MemoryTable t;
  t.add({"gpu", "", true, {"A100", "H100"}, "design_axis"}, gpu);
  t.add({"nvlink_gbytes_per_s", "GB/s", false, {}, "design_axis"}, nvlink);
  t.add({"num_nodes", "", false, {}, "design_axis"}, nodes);
  t.add({"partner", "", false, {}, "design_axis"}, partner);
  t.add({"feasible", "", false, {}, "metric"}, feasible);
  t.add({"time_to_train_s", "s", false, {}, "metric"}, time);
  Dataset data(t, Pricing{});
  const Sensitivity s = sensitivity(data, "time_to_train_s", {});
  double total = 0;
  for (const auto& e : s.effects) total += e.share_r2;
  EXPECT_NEAR(total, s.full_r2, 1e-9);
  ASSERT_EQ(s.effects.size(), 3u);  // num_nodes, gpu = nvlink_gbytes_per_s, partner
  const auto find = [&](const std::string& name) {
    for (const auto& e : s.effects)
      if (e.name() == name) return e;
    ADD_FAILURE() << "no effect " << name;
    return AxisEffect{};
  };
  const AxisEffect accelerator = find("gpu = nvlink_gbytes_per_s");
  EXPECT_GT(accelerator.share_r2, 0.05);
  EXPECT_LE(accelerator.share_r2, accelerator.alone_r2 + 1e-12);
  EXPECT_GT(accelerator.unique_r2, 0.01);  // grouped, its aliased twin no longer hides it
  const AxisEffect p = find("partner");
  EXPECT_LT(p.unique_r2, p.share_r2);
  EXPECT_LT(p.share_r2, p.alone_r2);
  EXPECT_EQ(s.effects.front().name(), "num_nodes");
}

TEST_F(SummaryTest, SensitivityOnTheSweepRanksClusterSizeFirst) {
  const Sensitivity s = sensitivity(data, "time_to_train_s", chunks(13));
  ASSERT_FALSE(s.effects.empty());
  EXPECT_EQ(s.effects[0].column->name, "num_nodes");
  EXPECT_EQ(s.effects[1].column->name, "gpu");
  std::vector<std::string> constant;
  for (const Column* c : s.constant_axes) constant.push_back(c->name);
  EXPECT_EQ(constant, (std::vector<std::string>{"gpus_per_node", "expansion_gbytes_per_s"}));
  EXPECT_GT(s.full_r2, 0.95);
}

}  // namespace
}  // namespace clustersweep::analysis

namespace clustersweep::analysis {
namespace {

// An owned cluster's cost carries its network's bill amortized like the accelerators; a rented one
// (the hourly price holds the network) and a store without the column are priced as before.
TEST(NetworkCost, AnOwnedClusterPaysItsNetworksShare) {
  MemoryTable table;
  table.add({"point_id", "", false, {}, "id"}, {0, 1});
  table.add({"gpu", "", true, {"H100-SXM5-80GB"}, "design_axis"}, {0, 0});
  table.add({"num_gpus", "", false, {}, "design_axis"}, {64, 1024});
  table.add({"time_to_train_s", "s", false, {}, "metric"}, {86400, 3600});
  table.add({"energy_to_train_j", "J", false, {}, "metric"}, {3.6e9, 7.2e9});
  MemoryTable without = table;
  table.add({"network_capex_usd", "USD", false, {}, "metric"}, {245920, 6397440});
  const auto costs = [](const MemoryTable& t, const Pricing& p) {
    const Dataset data(t, p);
    Scan scan(data, {"cost_usd"}, {});
    std::vector<double> out;
    while (scan.next())
      for (std::size_t i = 0; i < scan.size(); ++i) out.push_back(scan[0][i]);
    return out;
  };
  Pricing owned;
  owned.capex_usd_per_gpu = spaces::GpuPrice{30000, {}};
  const double amortize_s = owned.amortize_years * 365.25 * 24 * 3600;
  const std::vector<double> got = costs(table, owned);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_DOUBLE_EQ(got[0], 1000 * 0.10 * 1.2 + (64 * 30000.0 + 245920) * 86400 / amortize_s);
  EXPECT_DOUBLE_EQ(got[1], 2000 * 0.10 * 1.2 + (1024 * 30000.0 + 6397440) * 3600 / amortize_s);
  EXPECT_DOUBLE_EQ(costs(without, owned)[0], 1000 * 0.10 * 1.2 + 64 * 30000.0 * 86400 / amortize_s);
  Pricing rented;
  rented.gpu_hour_usd = spaces::GpuPrice{2.5, {}};
  EXPECT_EQ(costs(table, rented), costs(without, rented));
  EXPECT_EQ(costs(table, Pricing{}), costs(without, Pricing{}));  // electricity alone
}

}  // namespace
}  // namespace clustersweep::analysis
