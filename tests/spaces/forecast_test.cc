#include "spaces/forecast.h"

#include <gtest/gtest.h>

namespace clustersweep::spaces {
namespace {

std::string spec(const std::string& keep) {
  return R"(
[workload]
model = "gpt3-1.3b"
[cluster]
gpu = ["A100-SXM4-80GB", "H100-SXM5-80GB"]
nodes = [1, 2, 4]
[plan]
tp = "all"
pp = "all"
micro_batch = [1, 2, 4]
recompute = "all"
[output]
keep = ")" +
         keep + "\"\n";
}

TEST(Forecast, SamplesAndExtrapolates) {
  const Space s = Space::parse(spec("all"), "f.toml");
  const std::uint64_t valid = s.valid_points();
  ASSERT_GT(valid, 0u);
  const Forecast f = forecast(s, valid, 0);
  EXPECT_EQ(f.sampled_designs, s.designs());  // small space: every design sampled
  EXPECT_EQ(f.sampled_plans, s.size());
  EXPECT_GE(f.sampled_estimates, valid);  // one pass over every valid point at least
  EXPECT_GT(f.estimate_s, 0);
  EXPECT_GT(f.check_s, 0);
  EXPECT_GT(f.core_seconds, 0);
  EXPECT_GE(f.feasible_fraction, 0);
  EXPECT_LE(f.feasible_fraction, 1);
  EXPECT_LE(f.sampled_feasible, valid);
  EXPECT_GE(f.pareto_per_design, f.sampled_feasible > 0 ? 1 : 0);
  EXPECT_DOUBLE_EQ(forecast_rows(s, valid, f), static_cast<double>(s.size()));
}

TEST(Forecast, RowsByKeepMode) {
  const Space feasible = Space::parse(spec("feasible"), "f.toml");
  const std::uint64_t valid = feasible.valid_points();
  const Forecast f = forecast(feasible, valid, 0);
  // Every valid point was sampled, so the feasible rows are exact.
  EXPECT_DOUBLE_EQ(forecast_rows(feasible, valid, f), static_cast<double>(f.sampled_feasible));
  const Space best = Space::parse(spec("best-per-design"), "f.toml");
  EXPECT_DOUBLE_EQ(forecast_rows(best, valid, forecast(best, valid, 0)),
                   static_cast<double>(best.designs()));
  const Space pareto = Space::parse(spec("pareto-per-design"), "f.toml");
  const Forecast fp = forecast(pareto, valid, 0);
  const double rows = forecast_rows(pareto, valid, fp);
  EXPECT_GE(rows, static_cast<double>(pareto.designs()) * 0.5);
  EXPECT_LE(rows, static_cast<double>(fp.sampled_feasible));
}

}  // namespace
}  // namespace clustersweep::spaces
