// A table of points evaluates to the rows a sweep of the same points writes (engine/point_table.h,
// spaces/point_table.h): the differential test of Python's estimate_many against `run`.
#include "engine/point_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "base/error.h"
#include "engine/chunks.h"
#include "engine/evaluate.h"
#include "test_support.h"

namespace clustersweep::engine {
namespace {

RowBlock sweep_rows(const spaces::Space& space, const Schema& schema) {
  ChunkEvaluator evaluator(space, schema);
  evaluator.start(
      ChunkLayout::make(0, space.designs(), space.plan_points(), space.keep(), 1 << 30).chunk(0));
  EXPECT_TRUE(evaluator.advance(1 << 30));
  RowBlock rows;
  evaluator.swap_rows(rows);
  return rows;
}

// The axis columns of `rows` (of every row in `pick`'s order) as a table, labels as text.
spaces::PointTable table_of(const Schema& schema, const RowBlock& rows,
                            const std::vector<std::size_t>& pick) {
  spaces::PointTable table;
  table.rows = pick.size();
  for (std::size_t c = 0; c < schema.columns.size(); ++c) {
    const Column& col = schema.columns[c];
    if ((col.role != "design_axis" && col.role != "plan_axis") || is_output_column(col.name))
      continue;
    std::vector<double> values;
    for (std::size_t r : pick) values.push_back(rows.number(c, r));
    if (is_label(col.type)) {
      std::vector<std::int64_t> codes(values.begin(), values.end());
      table.columns.push_back(
          spaces::TableColumn::from_codes(col.name, col.labels, codes.data(), table.rows));
    } else {
      table.columns.push_back(
          spaces::TableColumn::from_numbers(col.name, values.data(), table.rows));
    }
  }
  return table;
}

// Every column of the sweep's rows `pick` equals the table's, by name, NaN equal to NaN; labels
// by their text.
void expect_same_rows(const Schema& schema, const RowBlock& rows,
                      const std::vector<std::size_t>& pick, const TableRows& got) {
  ASSERT_EQ(got.rows.rows(), pick.size());
  for (std::size_t c = 0; c < schema.columns.size(); ++c) {
    const Column& col = schema.columns[c];
    if (col.name == "point_id" || col.name == "design_id") continue;
    const std::size_t g = got.schema.index(col.name);
    ASSERT_NE(g, Schema::npos) << col.name;
    for (std::size_t k = 0; k < pick.size(); ++k) {
      const double want = rows.number(c, pick[k]);
      const double have = got.rows.number(g, k);
      if (is_label(col.type)) {
        ASSERT_EQ(col.labels[static_cast<std::size_t>(want)],
                  got.schema.columns[g].labels[static_cast<std::size_t>(have)])
            << col.name << " row " << k;
      } else if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(have)) << col.name << " row " << k;
      } else {
        ASSERT_EQ(want, have) << col.name << " row " << k;
      }
    }
  }
}

void check_family(const std::string& spec) {
  const spaces::Space space = spaces::Space::parse(spec, "test.toml");
  const Schema schema = make_schema(space);
  const RowBlock rows = sweep_rows(space, schema);
  std::vector<std::size_t> all(rows.rows());
  std::iota(all.begin(), all.end(), std::size_t{0});
  // In the sweep's order (each design's rows together), then a random sample in random order.
  expect_same_rows(schema, rows, all,
                   evaluate_table(spaces::table_space(table_of(schema, rows, all), spec,
                                                      "test.toml", "\"all\"")));
  std::mt19937 rng(7);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(std::min<std::size_t>(all.size(), 3000));
  expect_same_rows(schema, rows, all,
                   evaluate_table(spaces::table_space(table_of(schema, rows, all), spec,
                                                      "test.toml", "\"all\"")));
}

TEST(PointTable, EvaluatesAsTheSweepOfTheSamePointsTransformer) {
  check_family(test::small_spec("all"));
}

TEST(PointTable, EvaluatesAsTheSweepOfTheSamePointsDlrm) {
  check_family(test::small_dlrm_spec("all"));
}

std::string error_of(spaces::PointTable table, const std::string& spec = "") {
  try {
    evaluate_table(spaces::table_space(std::move(table), spec, "spec.toml"));
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

spaces::TableColumn labels(const std::string& name, const std::vector<std::string>& values) {
  std::vector<std::string> categories;
  std::vector<std::int64_t> codes;
  for (const auto& v : values) {
    auto at = std::find(categories.begin(), categories.end(), v);
    if (at == categories.end()) at = categories.insert(categories.end(), v);
    codes.push_back(at - categories.begin());
  }
  return spaces::TableColumn::from_codes(name, categories, codes.data(), values.size());
}

spaces::TableColumn numbers(const std::string& name, std::vector<double> values) {
  return spaces::TableColumn::from_numbers(name, values.data(), values.size());
}

spaces::PointTable two_points() {
  spaces::PointTable t;
  t.rows = 2;
  t.columns = {labels("model", {"llama3-8b", "llama3-8b"}),
               labels("gpu", {"H100-SXM5-80GB", "A100-SXM4-80GB"}), numbers("num_gpus", {8, 16}),
               numbers("tp", {1, 2})};
  return t;
}

TEST(PointTable, ErrorsNameTheColumnAndTheRow) {
  auto t = two_points();
  EXPECT_EQ(error_of(t), "no error");
  t.columns.push_back(numbers("tpp", {1, 1}));
  EXPECT_EQ(
      error_of(t),
      "column 'tpp' is not an axis of a transformer point; did you mean 'tp', 'pp' or 'gpu'?");
  t = two_points();
  t.columns[3] = numbers("tp", {1, 0});
  EXPECT_EQ(error_of(t), "row 1, column 'tp': must be a positive integer, got 0");
  t = two_points();
  t.columns[1] = labels("gpu", {"H100-SXM5-80GB", "H100"});
  EXPECT_EQ(error_of(t),
            "row 1, column 'gpu': unknown accelerator 'H100'; did you mean 'H100-SXM5-80GB'?");
  t = two_points();
  t.columns[0] = labels("model", {"llama3-8b", "dlrmv2-dcnv2"});
  EXPECT_EQ(error_of(t),
            "column 'model': the rows mix recommendation models (dlrmv2-dcnv2) and transformers "
            "(llama3-8b); evaluate each family's rows in a call of its own");
  t = two_points();
  EXPECT_EQ(error_of(t, "[plan]\npp = [1, 2]\n"),
            "spec.toml: sweeps 'pp' (2 values) and the table has no 'pp' column; give each row "
            "its value");
  try {
    numbers("num_gpus", {8, std::nan("")});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "row 1, column 'num_gpus': no value (NaN)");
  }
}

TEST(PointTable, TooManyDistinctValuesIsItsOwnError) {
  spaces::PointTable t;
  t.rows = 600;
  for (const char* name : {"num_gpus", "hbm_gb", "inter_node_gbps_per_gpu", "nvlink_gbytes_per_s",
                           "power_cap_w", "micro_batch", "seq_len"}) {
    std::vector<double> v(t.rows);
    std::iota(v.begin(), v.end(), 600.0);
    t.columns.push_back(numbers(name, v));
  }
  EXPECT_THROW(spaces::table_space(t, "", "spec.toml"), spaces::TableTooLarge);
}

// A row of one framework takes that framework's defaults for the stack settings it leaves out,
// as `estimate --framework` does.
TEST(PointTable, UnsetStackSettingsTakeEachRowsFrameworkDefault) {
  auto t = two_points();
  t.columns.push_back(labels("framework", {"megatron-core", "fsdp2"}));
  const auto ts = spaces::table_space(t, "", "spec.toml");
  const TableRows rows = evaluate_table(ts);
  const std::size_t c = rows.schema.index("attention_kernel");
  ASSERT_NE(c, Schema::npos);
  const auto& names = rows.schema.columns[c].labels;
  EXPECT_EQ(names[static_cast<std::size_t>(rows.rows.number(c, 0))], "cudnn");
  EXPECT_EQ(names[static_cast<std::size_t>(rows.rows.number(c, 1))], "flash2");
}

// A recommendation model's framework is no axis: accelerators of two vendors give the store's
// framework column each one's default, and a table of those rows evaluates as they were swept.
TEST(PointTable, EvaluatesAsTheSweepOfTheSamePointsDlrmOfTwoVendors) {
  std::string spec = test::small_dlrm_spec("all");
  spec.replace(spec.find("A100-SXM4-40GB"), 14, "MI300X-192GB");
  const Schema schema = make_schema(spaces::Space::parse(spec, "test.toml"));
  const std::size_t c = schema.index("framework");
  ASSERT_NE(c, Schema::npos);
  EXPECT_EQ(schema.columns[c].labels, (std::vector<std::string>{"any", "hugectr"}));
  EXPECT_FALSE(schema.columns[c].constant);
  check_family(spec);
}

// A table's one framework is the spec's `[workload] framework` for every row; several must each be
// the row's accelerator's default, as a store's rows are.
TEST(PointTable, ARecommendationModelsFrameworkIsOneOrEachAcceleratorsDefault) {
  spaces::PointTable t;
  t.rows = 2;
  t.columns = {labels("model", {"dlrmv2-dcnv2", "dlrmv2-dcnv2"}),
               labels("gpu", {"H100-SXM5-80GB", "H100-SXM5-80GB"}), numbers("num_gpus", {8, 16}),
               labels("framework", {"torchrec", "torchrec"})};
  const TableRows rows = evaluate_table(spaces::table_space(t, "", "spec.toml"));
  const std::size_t c = rows.schema.index("framework");
  ASSERT_NE(c, Schema::npos);
  EXPECT_EQ(rows.schema.columns[c].labels, std::vector<std::string>{"torchrec"});
  t.columns[3] = labels("framework", {"hugectr", "any"});
  EXPECT_EQ(error_of(t),
            "row 1, column 'framework': any is not the default of the row's accelerator "
            "(hugectr); a table gives a recommendation model one framework, or each "
            "accelerator's default");
  EXPECT_EQ(error_of(t, "[workload]\nframework = \"torchrec\"\n"),
            "row 0, column 'framework': hugectr is not the spec's framework (torchrec); a table "
            "gives a recommendation model one framework, or each accelerator's default");
  t.columns[3] = labels("framework", {"hugectr", "tensorflow"});
  EXPECT_EQ(error_of(t),
            "row 1, column 'framework': must be any, hugectr or torchrec, got \"tensorflow\"");
}

TEST(PointTable, OutputColumnsAreTheStoresComputedOnes) {
  EXPECT_TRUE(is_output_column("step_time_s"));
  EXPECT_TRUE(is_output_column("samples_per_s"));
  EXPECT_TRUE(is_output_column("point_id"));
  EXPECT_FALSE(is_output_column("tp"));
  EXPECT_FALSE(is_output_column("num_gpus"));
}

}  // namespace
}  // namespace clustersweep::engine
