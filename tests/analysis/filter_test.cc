#include "analysis/filter.h"

#include <gtest/gtest.h>

#include "analysis/dataset.h"
#include "base/error.h"
#include "tests/analysis/sweep_fixture.h"

namespace clustersweep::analysis {
namespace {

class FilterTest : public ::testing::Test {
 protected:
  MemoryTable table = testing::sweep_table();
  Dataset data{table, stored_pricing(table)};

  // Point ids of the rows the filter keeps.
  std::vector<std::uint64_t> kept(const std::string& text, std::size_t chunk = 37) {
    const Filter f = Filter::parse(text, data);
    ScanOptions options;
    options.where = &f;
    options.chunk_rows = chunk;
    Scan scan(data, {"point_id"}, options);
    std::vector<std::uint64_t> out;
    while (scan.next())
      for (std::size_t i = 0; i < scan.size(); ++i)
        if (scan.keep(i)) out.push_back(static_cast<std::uint64_t>(scan[0][i]));
    return out;
  }

  // The same by a predicate on the fixture rows.
  template <class Predicate>
  std::vector<std::uint64_t> expected(Predicate p) {
    std::vector<std::uint64_t> out;
    const auto rows = testing::sweep_rows();
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (p(rows[i])) out.push_back(i);
    return out;
  }

  std::string error(const std::string& text) {
    try {
      Filter::parse(text, data);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  }
};

TEST_F(FilterTest, ComparesLabelsNumbersAndFeasibility) {
  using R = testing::SweepRow;
  EXPECT_EQ(kept("gpu == 'H100-SXM5-80GB' and num_gpus <= 128 and feasible"),
            expected([](const R& r) { return r.gpu == 1 && r.num_gpus <= 128 && r.feasible; }));
  EXPECT_EQ(kept("gpu != \"A100-SXM4-80GB\""), expected([](const R& r) { return r.gpu == 1; }));
  EXPECT_EQ(kept("'full' == recompute"), expected([](const R& r) { return r.recompute == 1; }));
}

TEST_F(FilterTest, HonoursPrecedenceParenthesesAndNot) {
  using R = testing::SweepRow;
  EXPECT_EQ(kept("tp == 1 or tp == 8 and pp == 4"),
            expected([](const R& r) { return r.tp == 1 || (r.tp == 8 && r.pp == 4); }));
  EXPECT_EQ(kept("(tp == 1 or tp == 8) and pp == 4"),
            expected([](const R& r) { return (r.tp == 1 || r.tp == 8) && r.pp == 4; }));
  EXPECT_EQ(kept("not (tp > 2 || pp >= 2) && !feasible"),
            expected([](const R& r) { return !(r.tp > 2 || r.pp >= 2) && !r.feasible; }));
  EXPECT_EQ(kept("tp * pp == 8 and num_nodes - 8 > 0"),
            expected([](const R& r) { return r.tp * r.pp == 8 && r.nodes > 8; }));
}

TEST_F(FilterTest, UsesPricedColumns) {
  // cost_usd with the fixture's pricing: electricity at PUE 1.5, $0.2/kWh, plus $2 per GPU-hour.
  using R = testing::SweepRow;
  EXPECT_EQ(kept("feasible and cost_usd < 20000"), expected([](const R& r) {
              const double cost = r.energy_j * 1.5 / 3.6e6 * 0.2 + r.num_gpus * r.time_s / 3600 * 2;
              return r.feasible && cost < 20000;
            }));
  const auto cheap = kept("feasible and cost_usd < 20000");
  EXPECT_GT(cheap.size(), 10u);
  EXPECT_LT(cheap.size(), kept("feasible").size());
  // NaN (infeasible rows) compares false.
  EXPECT_EQ(kept("time_to_train_s > 0"), expected([](const R& r) { return r.feasible; }));
}

TEST_F(FilterTest, ResultDoesNotDependOnTheChunkSize) {
  EXPECT_EQ(kept("gpu == 'H100-SXM5-80GB' and tp >= 4", 1),
            kept("gpu == 'H100-SXM5-80GB' and tp >= 4", 100000));
}

TEST_F(FilterTest, MalformedFiltersNameThePositionWithACaret) {
  EXPECT_EQ(error("gpux == 'H100-SXM5-80GB'"),
            "--where:1:1: unknown column 'gpux'; did you mean 'gpu'?\n"
            "    gpux == 'H100-SXM5-80GB'\n"
            "    ^~~~");
  EXPECT_EQ(error("feasible and gpu == 'H100'"),
            "--where:1:21: 'H100' is not a value of 'gpu'; did you mean 'H100-SXM5-80GB'?\n"
            "    feasible and gpu == 'H100'\n"
            "                        ^~~~~~");
}

TEST_F(FilterTest, MalformedFiltersGetTheMessagesOfTheExpressionLanguage) {
  // The first line only: the language's own tests pin the rest.
  const auto first = [&](const std::string& text) {
    const std::string e = error(text);
    return e.substr(0, e.find('\n'));
  };
  EXPECT_EQ(first("tp = 2"), "--where:1:4: '=' is not a comparison; use '=='");
  EXPECT_EQ(first("tp == "),
            "--where:1:7: expected a number, a column or '(', got the end of the expression");
  EXPECT_EQ(first("gpu == 1"),
            "--where:1:1: 'gpu' holds labels; compare it with a quoted label, e.g. gpu == "
            "'A100-SXM4-80GB'");
  EXPECT_EQ(first("tp == 'x'"),
            "--where:1:7: the string 'x' can only be compared with == or != to a label column such "
            "as gpu");
  EXPECT_EQ(first(""),
            "--where:1:1: empty expression; expected a condition such as feasible and num_gpus <= "
            "1024");
  EXPECT_EQ(first(std::string(1000, '(') + "tp"),
            "--where:1:65: nested more than 64 deep; simplify the expression");
}

}  // namespace
}  // namespace clustersweep::analysis
