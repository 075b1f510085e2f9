// The chunk evaluator against a brute-force serial reference built from the space and the
// estimator directly, for every keep mode and several chunkings.
#include "engine/evaluate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "test_support.h"

namespace clustersweep::engine {
namespace {

struct Point {
  std::uint64_t id;
  bool feasible;
  estimator::Infeasible reason;
  double step_time_s, energy_per_step_j, objective;
};

// Every point of the space, evaluated one by one without the engine.
std::vector<Point> reference(const spaces::Space& space) {
  std::vector<Point> out;
  const double tokens = space.training_tokens();
  for (std::uint64_t d = 0; d < space.designs(); ++d) {
    spaces::Design design;
    spaces::Violation violation;
    const bool design_ok = space.design(d, design, violation);
    for (std::uint64_t p = 0; p < space.plan_points(); ++p) {
      const std::uint64_t id = d * space.plan_points() + p;
      if (!design_ok) {
        out.push_back({id, false, spaces::to_infeasible(violation.rule), NAN, NAN, NAN});
        continue;
      }
      estimator::Plan plan;
      estimator::Infeasible why;
      if (!space.plan(design, p, plan, why)) {
        out.push_back({id, false, why, NAN, NAN, NAN});
        continue;
      }
      const auto e =
          estimator::estimate(design.workload, design.cluster, plan, space.calibration());
      const double steps =
          tokens / (static_cast<double>(design.workload.global_batch) * design.workload.seq_len);
      double objective = e.time.total_s;
      if (space.objective() == spaces::Objective::time_to_train) objective = e.time.total_s * steps;
      if (space.objective() == spaces::Objective::energy) objective = e.energy_per_step_j * steps;
      if (space.objective() == spaces::Objective::cost)
        objective = space.pricing().cost_usd(space.usd_per_gpu_s(design), design.cluster.num_gpus,
                                             e.time.total_s * steps, e.energy_per_step_j * steps);
      out.push_back({id, e.feasible, e.feasible ? estimator::Infeasible::none : e.reason,
                     e.time.total_s, e.energy_per_step_j, objective});
    }
  }
  return out;
}

// The point ids the keep mode keeps, by brute force.
std::vector<std::uint64_t> kept(const spaces::Space& space, const std::vector<Point>& points) {
  std::vector<std::uint64_t> ids;
  const std::uint64_t plans = space.plan_points();
  for (std::uint64_t d = 0; d < space.designs(); ++d) {
    const auto begin = points.begin() + static_cast<std::ptrdiff_t>(d * plans);
    const auto end = begin + static_cast<std::ptrdiff_t>(plans);
    switch (space.keep()) {
      case spaces::Keep::all:
        for (auto p = begin; p != end; ++p) ids.push_back(p->id);
        break;
      case spaces::Keep::feasible:
        for (auto p = begin; p != end; ++p)
          if (p->feasible) ids.push_back(p->id);
        break;
      case spaces::Keep::best_per_design: {
        const Point* best = nullptr;
        for (auto p = begin; p != end; ++p)
          if (p->feasible && (!best || p->objective < best->objective)) best = &*p;
        if (best) ids.push_back(best->id);
        break;
      }
      case spaces::Keep::pareto_per_design:
        for (auto p = begin; p != end; ++p) {
          if (!p->feasible) continue;
          bool dominated = false;
          for (auto q = begin; q != end && !dominated; ++q)
            dominated =
                q->feasible && q->step_time_s <= p->step_time_s &&
                q->energy_per_step_j <= p->energy_per_step_j &&
                (q->step_time_s < p->step_time_s || q->energy_per_step_j < p->energy_per_step_j);
          if (!dominated) ids.push_back(p->id);
        }
        break;
    }
  }
  return ids;
}

class KeepModes : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(KeepModes, ChunkedEvaluationMatchesTheBruteForceReference) {
  const auto [keep, objective] = GetParam();
  const spaces::Space space = spaces::Space::parse(test::small_spec(keep, objective), "test.toml");
  const Schema schema = make_schema(space);
  const std::vector<Point> points = reference(space);
  const std::vector<std::uint64_t> want = kept(space, points);
  ASSERT_FALSE(want.empty());
  for (std::uint64_t target : {1000000, 3456, 1000, 97}) {
    const ChunkLayout layout =
        ChunkLayout::make(0, space.designs(), space.plan_points(), space.keep(), target);
    ChunkEvaluator evaluator(space, schema);
    std::vector<std::uint64_t> got;
    const std::size_t id_col = schema.index("point_id");
    const std::size_t step_col = schema.index("step_time_s");
    const std::size_t feasible_col = schema.index("feasible");
    const std::size_t reason_col = schema.index("infeasible_reason");
    for (std::uint64_t k = 0; k < layout.chunks(); ++k) {
      evaluator.start(layout.chunk(k));
      int slices = 0;
      while (!evaluator.advance(777)) ++slices;  // slices must not change the result
      const RowBlock& rows = evaluator.rows();
      ASSERT_LE(rows.rows(), layout.slot_capacity(k));
      for (std::size_t r = 0; r < rows.rows(); ++r) {
        const auto id = static_cast<std::uint64_t>(rows.number(id_col, r));
        const Point& p = points[id];
        got.push_back(id);
        ASSERT_EQ(rows.column<std::uint8_t>(feasible_col)[r], p.feasible ? 1 : 0) << id;
        ASSERT_EQ(rows.column<std::uint8_t>(reason_col)[r], static_cast<std::uint8_t>(p.reason))
            << id;
        const double t = rows.column<double>(step_col)[r];
        if (p.feasible)
          ASSERT_EQ(t, p.step_time_s) << id;
        else
          ASSERT_TRUE(std::isnan(t)) << id;
      }
    }
    EXPECT_EQ(got, want) << keep << " target " << target;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Engine, KeepModes,
    ::testing::Values(std::pair{"all", "time_to_train"}, std::pair{"feasible", "step_time"},
                      std::pair{"best-per-design", "time_to_train"},
                      std::pair{"best-per-design", "energy"}, std::pair{"best-per-design", "cost"},
                      std::pair{"pareto-per-design", "step_time"}),
    [](const auto& info) {
      std::string name = std::string(info.param.first) + "_" + info.param.second;
      for (char& c : name)
        if (c == '-') c = '_';
      return name;
    });

TEST(ChunkEvaluator, AxisColumnsMatchDecode) {
  const spaces::Space space = spaces::Space::parse(test::small_spec("all"), "test.toml");
  const Schema schema = make_schema(space);
  ChunkEvaluator evaluator(space, schema);
  evaluator.start(
      ChunkLayout::make(0, space.designs(), space.plan_points(), space.keep(), 1 << 30).chunk(0));
  ASSERT_TRUE(evaluator.advance(1 << 30));
  const RowBlock& rows = evaluator.rows();
  ASSERT_EQ(rows.rows(), space.size());
  std::vector<std::uint32_t> digits(spaces::kNumAxes);
  spaces::Design design;
  spaces::Violation why;
  for (std::uint64_t id = 0; id < space.size(); id += 7) {
    space.decode(id, digits.data());
    space.design(id / space.plan_points(), design, why);
    for (int a = 0; a < spaces::kNumAxes; ++a) {
      const auto& axis = space.axes()[a];
      // Design axes hold the resolved value (a catalog default, not the axis's 0 for it).
      const double want = a < spaces::kTp ? design.value[a]
                          : axis.is_label ? digits[a]
                                          : axis.numbers[digits[a]];
      ASSERT_EQ(rows.number(schema.index(axis.name), id), want) << axis.name << " " << id;
    }
  }
}

// Axes the spec leaves to the catalog store each row's resolved value: the A100 and H100 rows of
// small_spec() have their own NVLink bandwidths, never the axis's 0 ("default").
TEST(ChunkEvaluator, DesignAxesStoreResolvedCatalogDefaults) {
  const spaces::Space space = spaces::Space::parse(test::small_spec("all"), "test.toml");
  ASSERT_TRUE(space.axes()[spaces::kNvlinkGbytesPerS].zero_means_default);
  const Schema schema = make_schema(space);
  ChunkEvaluator evaluator(space, schema);
  evaluator.start(
      ChunkLayout::make(0, space.designs(), space.plan_points(), space.keep(), 1 << 30).chunk(0));
  ASSERT_TRUE(evaluator.advance(1 << 30));
  const RowBlock& rows = evaluator.rows();
  const std::size_t gpu = schema.index("gpu"), hbm = schema.index("hbm_gb"),
                    nvlink = schema.index("nvlink_gbytes_per_s");
  std::set<std::pair<double, double>> hbm_by_gpu, nvlink_by_gpu;
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    hbm_by_gpu.insert({rows.number(gpu, r), rows.number(hbm, r)});
    nvlink_by_gpu.insert({rows.number(gpu, r), rows.number(nvlink, r)});
  }
  // gpu 0 = A100-SXM4-80GB, 1 = H100-SXM5-80GB (catalog: 80 GB HBM; 300 and 450 GB/s NVLink a
  // direction).
  EXPECT_EQ(hbm_by_gpu, (std::set<std::pair<double, double>>{{0, 80}, {1, 80}}));
  EXPECT_EQ(nvlink_by_gpu, (std::set<std::pair<double, double>>{{0, 300}, {1, 450}}));
  // The schema sizes the columns for the resolved values.
  EXPECT_EQ(schema.columns[nvlink].type, ColumnType::u16);
  EXPECT_EQ(schema.columns[hbm].type, ColumnType::u8);
}

TEST(ParetoFront, MatchesQuadraticDominanceIncludingTies) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 50; ++trial) {
    const std::size_t n = 1 + random() % 60;
    std::vector<double> t(n), e(n);
    for (std::size_t i = 0; i < n; ++i) {
      t[i] = static_cast<double>(random() % 8);  // few values: many ties
      e[i] = static_cast<double>(random() % 8);
    }
    std::vector<std::size_t> want;
    for (std::size_t i = 0; i < n; ++i) {
      bool dominated = false;
      for (std::size_t j = 0; j < n; ++j)
        dominated |= t[j] <= t[i] && e[j] <= e[i] && (t[j] < t[i] || e[j] < e[i]);
      if (!dominated) want.push_back(i);
    }
    EXPECT_EQ(pareto_front(t, e), want);
  }
}

}  // namespace
}  // namespace clustersweep::engine
