// One way from a point to an estimate: on random points of random specs (several models and
// accelerators incl. GB200 NVL72, every plan axis), the store row a sweep writes and what
// `estimate` computes from the same settings (spaces::resolve + spaces::check + the estimator)
// agree exactly: feasibility, reason, and every time and memory column.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "base/error.h"
#include "engine/evaluate.h"
#include "engine/schema.h"
#include "engine/store_reader.h"
#include "spaces/catalog.h"
#include "spaces/resolve.h"
#include "spaces/space.h"
#include "test_support.h"

namespace clustersweep::engine {
namespace {

namespace est = estimator;
using test::command;
using test::run;
using test::TempDir;
using test::write_file;

// A value as a float32 column stores it.
double as_f32(double value) { return static_cast<double>(static_cast<float>(value)); }
double as_f32(const nlohmann::json& value) { return as_f32(value.get<double>()); }

// The job columns of a store, which `estimate --json` names alike in its "job" object (JSON has
// no infinity: a job that never fails has a null checkpoint interval).
class JobColumns {
 public:
  explicit JobColumns(const StoreReader& store) {
    for (std::size_t c = 0; c < std::size(kNames); ++c) {
      store.read(kNames[c], 0, store.rows(), values_[c]);
      f32_[c] = store.find_column(kNames[c])->type == ColumnType::f32;
    }
  }
  void expect_equal(const nlohmann::json& job, std::uint64_t row) const {
    for (std::size_t c = 0; c < std::size(kNames); ++c) {
      const double value = job[kNames[c]].is_null() ? std::numeric_limits<double>::infinity()
                                                    : job[kNames[c]].get<double>();
      EXPECT_EQ(f32_[c] ? as_f32(value) : value, values_[c][row]) << kNames[c];
    }
  }

 private:
  static constexpr const char* kNames[] = {"time_to_train_s",   "time_to_train_failure_free_s",
                                           "goodput",           "checkpoint_interval_s",
                                           "energy_to_train_j", "energy_gpu_to_train_j"};
  std::vector<double> values_[std::size(kNames)];
  bool f32_[std::size(kNames)] = {};
};

// A random spec and the spec-level settings (not axes) it gives.
struct RandomSpec {
  std::string text;
  std::vector<std::pair<std::string, std::string>> scalars;
};

template <class T>
std::string pick_list(std::mt19937_64& rng, const std::vector<T>& values, std::size_t most) {
  std::vector<T> chosen = values;
  std::shuffle(chosen.begin(), chosen.end(), rng);
  chosen.resize(1 + rng() % std::min(most, values.size()));
  std::string out = "[";
  for (std::size_t i = 0; i < chosen.size(); ++i)
    out += fmt::format("{}{}", i ? ", " : "", chosen[i]);
  return out + "]";
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

RandomSpec random_spec(std::mt19937_64& rng, bool with_gb200) {
  const auto& catalog = spaces::Catalog::builtin();
  std::vector<std::string> models, gpus;
  for (const auto& m : catalog.models())
    if (m.model.layers <= 128) models.push_back(quoted(m.key));
  for (const auto& g : catalog.accelerators()) gpus.push_back(quoted(g.key));
  auto coin = [&](int percent) { return static_cast<int>(rng() % 100) < percent; };
  RandomSpec s;
  std::string& t = s.text;
  t += "[workload]\n";
  t += "model = " + pick_list(rng, models, 2) + "\n";
  if (coin(50)) t += "seq_len = " + pick_list(rng, std::vector<int>{2048, 4096, 8192}, 2) + "\n";
  if (coin(50))
    t += "global_batch = " + pick_list(rng, std::vector<int>{256, 512, 1024, 1536}, 2) + "\n";
  t += "precision = " +
       pick_list(rng, std::vector<std::string>{"\"bf16\"", "\"fp8\"", "\"fp16\""}, 2) + "\n";
  if (coin(50)) {
    t += "training_tokens = 2e12\n";
    s.scalars.emplace_back("training_tokens", "2e12");
  }
  t += "[cluster]\n";
  t += "gpu = " +
       (with_gb200 ? std::string("[\"GB200-186GB\", \"H100-SXM5-80GB\"]")
                   : pick_list(rng, gpus, 2)) +
       "\n";
  if (coin(25))
    t += "gpus = " + pick_list(rng, std::vector<int>{8, 16, 64, 72, 144}, 2) + "\n";
  else
    t += "nodes = " + pick_list(rng, std::vector<int>{1, 2, 4, 8, 16, 18, 32, 64}, 2) + "\n";
  if (coin(30)) t += "gpus_per_node = " + pick_list(rng, std::vector<int>{4, 8}, 2) + "\n";
  if (coin(20)) t += "nvlink_domain = " + pick_list(rng, std::vector<int>{4, 8, 72}, 2) + "\n";
  if (coin(20))
    t += "nvlink_gbytes_per_s = " + pick_list(rng, std::vector<int>{300, 900}, 2) + "\n";
  if (coin(50))
    t += "inter_node_gbps_per_gpu = " + pick_list(rng, std::vector<int>{100, 400, 800}, 2) + "\n";
  if (coin(20)) t += "hbm_gb = " + pick_list(rng, std::vector<int>{40, 192}, 2) + "\n";
  const bool expansion = coin(30);
  if (expansion) t += "expansion_gb = [0, 256]\nexpansion_gbytes_per_s = 64\n";
  // The fabric from the text so far, not the generator, so that the other draws stay as they were.
  if (const std::size_t h = std::hash<std::string>{}(t); h % 10 < 4) {
    const char* kFabrics[] = {"\"switch\"", "\"mesh\"", "\"torus\"", "[\"mesh\", \"torus\"]"};
    t += fmt::format("fabric = {}\n", kFabrics[h / 10 % 4]);
  }
  // The scale-out network, from the text so far as the fabric is; its pods are left out, which
  // would have to divide every cluster of the spec.
  if (const std::size_t h = std::hash<std::string>{}(t + "network"); h % 10 < 5) {
    const char* kNetworks[] = {"\"rail_optimized\"", "\"rail_only\"", "\"dragonfly\"",
                               "[\"fat_tree\", \"rail_only\"]",
                               "[\"rail_optimized\", \"dragonfly\"]"};
    t += fmt::format("network = {}\noversubscription = {}\n", kNetworks[h / 10 % 5],
                     h / 100 % 2 ? "[1, 4]" : "2");
    if (h / 200 % 2) t += "planes = 2\nglobal_taper = 3\n";
  }
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"nvlink_latency_us", "2.5"},
                                                        {"inter_node_latency_us", "8"},
                                                        {"node_overhead_w", "500"}}) {
    if (!coin(20)) continue;
    t += key + " = " + value + "\n";
    s.scalars.emplace_back(key, value);
  }
  t += "[plan]\n";
  t += coin(70) ? "tp = \"all\"\n"
                : "tp = " + pick_list(rng, std::vector<int>{1, 2, 3, 4, 8, 16}, 3) + "\n";
  t += coin(70) ? "pp = \"all\"\n"
                : "pp = " + pick_list(rng, std::vector<int>{1, 2, 3, 4, 6, 8}, 3) + "\n";
  t += "cp = " + pick_list(rng, std::vector<int>{1, 2, 4}, 2) + "\n";
  t += coin(50) ? "vp = \"all\"\n" : "vp = " + pick_list(rng, std::vector<int>{1, 2, 3}, 2) + "\n";
  t += "micro_batch = \"pow2:1..4\"\n";
  t += coin(50) ? "zero = \"all\"\n" : "zero = [0, 1]\n";
  t += "recompute = \"all\"\nsequence_parallel = \"all\"\n";
  if (expansion) t += "offload = \"all\"\n";
  if (coin(30)) t += "pipeline_split = \"all\"\n";
  if (coin(50)) t += coin(50) ? "ep = \"all\"\n" : "ep = [1, 8, 16]\n";
  if (coin(30)) t += "etp = " + pick_list(rng, std::vector<int>{1, 2, 4}, 2) + "\n";
  // The stack's settings: each swept whole in some specs, so that every one of them is.
  for (const spaces::StackSetting& st : spaces::stack_settings())
    if (coin(15)) t += fmt::format("{} = \"all\"\n", st.name);
  if (coin(20)) {
    t += "allow_tp_across_nodes = true\n";
    s.scalars.emplace_back("allow_tp_across_nodes", "true");
  }
  if (coin(50)) {
    t += "[reliability]\n";
    for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
             {"gpu_mtbf_hours", coin(20) ? "inf" : "20000"},
             {"node_mtbf_hours", "100000"},
             {"storage_gbytes_per_s_per_node", "5"},
             {"async_snapshot_gbytes_per_s", "20"},
             {"restart_s", "0"}}) {
      if (!coin(50)) continue;
      t += key + " = " + value + "\n";
      s.scalars.emplace_back(key, value);
    }
  }
  t += "[output]\ncolumns = \"all\"\n";
  return s;
}

// The settings a user gives `estimate` for point `id`: each axis value as the spec names it
// (a catalog default is not given), and the spec's scalar settings.
spaces::Settings settings_of(const spaces::Space& space, const RandomSpec& spec, std::uint64_t id) {
  std::uint32_t index[spaces::kNumAxes];
  space.decode(id, index);
  spaces::Settings settings;
  for (int a = 0; a < spaces::kNumAxes; ++a) {
    const spaces::Axis& axis = space.axes()[a];
    const std::string text = axis.value_text(index[a]);
    if (text == "default") continue;
    std::string name = axis.name;
    if (name == "num_nodes") name = "nodes";
    if (name == "num_gpus") name = "gpus";
    settings.set(name, text, "--" + spaces::flag_name(name));
  }
  for (const auto& [name, value] : spec.scalars) settings.set(name, value, "--" + name);
  return settings;
}

TEST(Agreement, EstimateEqualsTheSweepsRowOnRandomPointsOfRandomSpecs) {
  std::mt19937_64 rng(20261126);
  std::size_t compared = 0, evaluated = 0, removed = 0, expert_parallel = 0, stack_swept = 0,
              mesh_or_torus = 0, networked = 0;
  for (int spec_index = 0; spec_index < 48; ++spec_index) {
    const RandomSpec spec = random_spec(rng, spec_index % 4 == 0);
    SCOPED_TRACE(spec.text);
    const spaces::Space space = spaces::Space::parse(spec.text, "random.toml");
    const Schema schema = make_schema(space);
    ChunkEvaluator evaluator(space, schema);
    auto column = [&](const char* name) {
      const std::size_t c = schema.index(name);
      EXPECT_NE(c, Schema::npos) << name;
      return c;
    };
    for (int sample = 0; sample < 12; ++sample) {
      // A run of consecutive plans of one random design.
      const std::uint64_t design = rng() % space.designs();
      const std::uint64_t count = std::min<std::uint64_t>(space.plan_points(), 64);
      const std::uint64_t first =
          design * space.plan_points() + rng() % (space.plan_points() - count + 1);
      Chunk chunk;
      chunk.design_begin = design;
      chunk.design_end = design + 1;
      chunk.point_begin = first;
      chunk.point_end = first + count;
      evaluator.start(chunk);
      ASSERT_TRUE(evaluator.advance(count));
      const RowBlock& rows = evaluator.rows();
      ASSERT_EQ(rows.rows(), count);
      for (std::size_t r = 0; r < rows.rows(); ++r) {
        const auto id = static_cast<std::uint64_t>(rows.number(column("point_id"), r));
        const spaces::Settings settings = settings_of(space, spec, id);
        SCOPED_TRACE(space.describe_point(id));
        ++compared;
        spaces::Point pt;
        try {
          pt = spaces::resolve(settings);
        } catch (const InputError& e) {
          // `estimate` refuses a framework on another vendor's part; the sweep removes the row
          // (by that rule, or by a design rule it checks first).
          EXPECT_NE(std::string(e.what()).find("--framework: "), std::string::npos) << e.what();
          EXPECT_EQ(rows.number(column("feasible"), r), 0);
          EXPECT_NE(rows.number(column("infeasible_reason"), r),
                    static_cast<double>(est::Infeasible::none));
          ++removed;
          continue;
        }
        const spaces::Violation v = spaces::check(pt);
        // The row's stack columns name the point's stack, resolved from the same values.
        for (int i = 0; i < spaces::kNumStackSettings; ++i) {
          const spaces::StackSetting& st = spaces::stack_settings()[static_cast<std::size_t>(i)];
          const std::size_t c = column(st.name);
          const int value = st.get(pt.plan.stack);
          EXPECT_EQ(schema.columns[c].labels.at(static_cast<std::size_t>(rows.number(c, r))),
                    st.value_name(value))
              << st.name;
          stack_swept +=
              space.axes()[spaces::kFirstStackAxis + i].size() > 1 && value != st.get(est::Stack{});
        }
        if (v) {
          ++removed;
          EXPECT_EQ(rows.number(column("feasible"), r), 0);
          EXPECT_EQ(rows.number(column("infeasible_reason"), r),
                    static_cast<double>(spaces::to_infeasible(v.rule)))
              << to_string(v.rule);
          continue;
        }
        const est::Estimate e = est::estimate(pt.workload, pt.cluster, pt.plan, pt.calibration);
        ++evaluated;
        if (pt.plan.ep > 1) ++expert_parallel;
        if (pt.cluster.fabric != est::Fabric::switched) ++mesh_or_torus;
        if (pt.cluster.scale_out.network != est::Network::fat_tree ||
            pt.cluster.scale_out.oversubscription > 1)
          ++networked;
        ASSERT_EQ(rows.number(column("feasible"), r), e.feasible ? 1 : 0);
        ASSERT_EQ(rows.number(column("infeasible_reason"), r),
                  static_cast<double>(e.feasible ? est::Infeasible::none : e.reason));
        EXPECT_EQ(rows.number(column("dp"), r), pt.plan.dp);
        EXPECT_EQ(rows.number(column("mem_per_gpu_bytes"), r),
                  static_cast<float>(e.memory.hbm_bytes + e.memory.expansion_bytes));
        EXPECT_EQ(rows.number(column("mem_hbm_bytes"), r), static_cast<float>(e.memory.hbm_bytes));
        EXPECT_EQ(rows.number(column("mem_expansion_bytes"), r),
                  static_cast<float>(e.memory.expansion_bytes));
        EXPECT_EQ(rows.number(column("calibration_support"), r),
                  spaces::point_interval(pt, pt.plan).support.runs);
        if (!e.feasible) continue;
        EXPECT_EQ(rows.number(column("step_time_s"), r), e.time.total_s);
        EXPECT_EQ(rows.number(column("tokens_per_s"), r), static_cast<float>(e.tokens_per_s));
        EXPECT_EQ(rows.number(column("mfu"), r), static_cast<float>(e.mfu));
        EXPECT_EQ(rows.number(column("energy_per_step_j"), r),
                  static_cast<float>(e.energy_per_step_j));
        // The job: the point's tokens and reliability, the design's checkpoint.
        const double steps = est::steps_to_train(pt.workload, pt.training_tokens);
        const est::JobOutcome job = est::job_outcome(
            est::job_design(
                pt.reliability, pt.cluster.num_gpus, est::num_nodes(pt.cluster),
                est::Estimator(pt.workload, pt.cluster, pt.calibration).checkpoint_bytes()),
            e.time.total_s, steps);
        EXPECT_EQ(rows.number(column("time_to_train_s"), r), job.wall_s);
        EXPECT_EQ(rows.number(column("goodput"), r), static_cast<float>(job.goodput));
        EXPECT_EQ(rows.number(column("checkpoint_interval_s"), r),
                  static_cast<float>(job.checkpoint_interval_s));
        const std::pair<const char*, double> parts[] = {
            {"time_compute_s", e.time.compute_s},
            {"time_memory_bound_s", e.time.memory_bound_s},
            {"time_tp_comm_s", e.time.tp_comm_s},
            {"time_cp_comm_s", e.time.cp_comm_s},
            {"time_pp_p2p_s", e.time.pp_p2p_s},
            {"time_pp_bubble_s", e.time.pp_bubble_s},
            {"time_dp_exposed_s", e.time.dp_exposed_s},
            {"time_ep_a2a_s", e.time.ep_a2a_s},
            {"time_edp_exposed_s", e.time.edp_exposed_s},
            {"time_optimizer_s", e.time.optimizer_s},
            {"time_offload_s", e.time.offload_s},
            {"time_host_s", e.time.host_s},
            {"time_overhead_s", e.time.overhead_s}};
        for (const auto& [name, value] : parts)
          EXPECT_EQ(rows.number(column(name), r), static_cast<float>(value)) << name;
      }
    }
  }
  // The samples reach both removed and evaluated points in numbers.
  EXPECT_GT(compared, 10000u);
  // (The stack's rules remove a share of the points of the specs that sweep it.)
  EXPECT_GT(evaluated, 700u);
  EXPECT_GT(removed, 1000u);
  EXPECT_GT(expert_parallel, 50u);
  EXPECT_GT(mesh_or_torus, 100u);
  EXPECT_GT(networked, 100u);
  EXPECT_GT(stack_swept, 1000u);  // stack values other than the first of the setting
}

// The same through the real binary: `run` writes the store, `estimate --json` answers with the
// flags of a point's axis values.
TEST(Agreement, EstimateJsonEqualsTheStoreOfARealRun) {
  std::mt19937_64 rng(8);
  RandomSpec spec;
  // A spec small enough to run whole, with enough valid points to compare.
  auto usable = [](const RandomSpec& s) {
    const spaces::Space space = spaces::Space::parse(s.text, "random.toml");
    return space.size() <= 200'000 && space.valid_points() >= 100;
  };
  do {
    spec = random_spec(rng, true);
  } while (!usable(spec));
  SCOPED_TRACE(spec.text);
  TempDir dir;
  const std::string spec_path = dir.path() + "/random.toml";
  const std::string store_path = dir.path() + "/random.h5";
  write_file(spec_path, spec.text);
  std::string out;
  ASSERT_EQ(run(command(1, {"run", spec_path, "-o", store_path, "--no-summary"}), &out), 0) << out;
  const spaces::Space space = spaces::Space::parse(spec.text, "random.toml");
  const StoreReader store(store_path);
  ASSERT_EQ(store.rows(), space.size());
  std::vector<double> feasible, reason, step, mem, energy;
  store.read("feasible", 0, store.rows(), feasible);
  store.read("infeasible_reason", 0, store.rows(), reason);
  store.read("step_time_s", 0, store.rows(), step);
  store.read("mem_per_gpu_bytes", 0, store.rows(), mem);
  store.read("energy_per_step_j", 0, store.rows(), energy);
  const JobColumns job(store);
  // The 90% prediction interval, stored as float32.
  std::vector<double> step_lo, step_hi, train_lo, train_hi;
  store.read("step_time_lo_s", 0, store.rows(), step_lo);
  store.read("step_time_hi_s", 0, store.rows(), step_hi);
  store.read("time_to_train_lo_s", 0, store.rows(), train_lo);
  store.read("time_to_train_hi_s", 0, store.rows(), train_hi);
  std::vector<double> support;
  store.read("calibration_support", 0, store.rows(), support);
  int evaluated = 0, removed = 0;
  for (int tries = 0; tries < 5000 && (evaluated < 15 || removed < 10); ++tries) {
    const std::uint64_t id = rng() % store.rows();  // keep = "all": row = point id
    const bool was_evaluated = !std::isnan(mem[id]);
    if (was_evaluated ? evaluated >= 15 : removed >= 10) continue;
    std::vector<std::string> args = {"estimate", "--json"};
    const spaces::Settings settings = settings_of(space, spec, id);
    for (const auto& info : spaces::setting_infos())
      if (settings.has(info.name))
        args.push_back("--" + spaces::flag_name(info.name) + "=" + settings.at(info.name).text);
    SCOPED_TRACE(fmt::format("{}", fmt::join(args, " ")));
    std::string json_text;
    const int code = run(command(1, args), &json_text);
    if (!was_evaluated) {
      ++removed;
      EXPECT_EQ(code, 2) << json_text;  // a rule removes it: one line naming the flag
      EXPECT_NE(json_text.find("clustersweep estimate: error: --"), std::string::npos);
      continue;
    }
    ++evaluated;
    ASSERT_EQ(code, 0) << json_text;
    const auto json = nlohmann::json::parse(json_text);
    EXPECT_EQ(json["feasible"].get<bool>(), feasible[id] == 1);
    EXPECT_EQ(json["reason"].get<std::string>(),
              est::to_string(static_cast<est::Infeasible>(reason[id])));
    EXPECT_EQ(as_f32(json["memory_bytes"]["hbm"].get<double>() +
                     json["memory_bytes"]["expansion"].get<double>()),
              mem[id]);
    EXPECT_EQ(json["calibration_support"].get<int>(), support[id]);
    if (feasible[id] == 1) {
      EXPECT_EQ(json["step_time_s"]["total"].get<double>(), step[id]);
      EXPECT_EQ(as_f32(json["energy_per_step_j"]), energy[id]);
      job.expect_equal(json["job"], id);
      EXPECT_EQ(as_f32(json["step_time_lo_s"]), step_lo[id]);
      EXPECT_EQ(as_f32(json["step_time_hi_s"]), step_hi[id]);
      EXPECT_EQ(as_f32(json["job"]["time_to_train_lo_s"]), train_lo[id]);
      EXPECT_EQ(as_f32(json["job"]["time_to_train_hi_s"]), train_hi[id]);
      EXPECT_LT(step_lo[id], step[id]);
      EXPECT_GT(step_hi[id], step[id]);
    } else {
      EXPECT_TRUE(json["job"].is_null());
    }
  }
  EXPECT_EQ(evaluated, 15);
  EXPECT_EQ(removed, 10);
}

// A recommendation-model sweep and `estimate` agree too: every point of a DLRM store (keep =
// "all") equals the binary's `estimate --json` of the same settings, the planner's placement
// included.
TEST(Agreement, RecommendationSweepEqualsEstimateOnPointsOfEveryKind) {
  TempDir dir;
  // With the 80 GB A100, on which the calibration has runs of every precision but fp32.
  std::string text = test::small_dlrm_spec("all");
  const std::string gpus = R"(gpu = ["A100-SXM4-40GB", )";
  text.replace(text.find(gpus), gpus.size(), R"(gpu = ["A100-SXM4-80GB", "A100-SXM4-40GB", )");
  const std::string spec_path = dir.path() + "/dlrm.toml";
  const std::string store_path = dir.path() + "/dlrm.h5";
  write_file(spec_path, text);
  std::string out;
  ASSERT_EQ(run(command(1, {"run", spec_path, "-o", store_path, "--no-summary"}), &out), 0) << out;
  const spaces::Space space = spaces::Space::parse(text, "dlrm.toml");
  const StoreReader store(store_path);
  ASSERT_EQ(store.rows(), space.size());
  std::vector<double> feasible, reason, step, samples, mem, energy;
  store.read("feasible", 0, store.rows(), feasible);
  store.read("infeasible_reason", 0, store.rows(), reason);
  store.read("step_time_s", 0, store.rows(), step);
  store.read("samples_per_s", 0, store.rows(), samples);
  store.read("mem_per_gpu_bytes", 0, store.rows(), mem);
  store.read("energy_per_step_j", 0, store.rows(), energy);
  std::vector<double> support, step_lo, step_hi;
  store.read("calibration_support", 0, store.rows(), support);
  store.read("step_time_lo_s", 0, store.rows(), step_lo);
  store.read("step_time_hi_s", 0, store.rows(), step_hi);
  const JobColumns job(store);
  int infeasible = 0, few = 0, many = 0;
  std::uint32_t digits[spaces::kNumAxes];
  // Every 7th point: all shardings, models, precisions and sizes come round (432 points).
  for (std::uint64_t id = 0; id < store.rows(); id += 7) {
    space.decode(id, digits);
    std::vector<std::string> args = {"estimate", "--json", "--training-samples=4e9"};
    const auto& axes = space.axes();
    for (const auto& [flag, axis] : std::initializer_list<std::pair<const char*, int>>{
             {"model", spaces::kDlrmModel},
             {"precision", spaces::kDlrmPrecision},
             {"gpu", spaces::kDlrmGpu},
             {"gpus", spaces::kDlrmClusterSize},
             {"inter-node-gbps-per-gpu", spaces::kDlrmInterNodeGbpsPerGpu},
             {"sharding", spaces::kDlrmSharding}})
      args.push_back(fmt::format("--{}={}", flag, axes[axis].value_text(digits[axis])));
    SCOPED_TRACE(fmt::format("{}", fmt::join(args, " ")));
    std::string json_text;
    ASSERT_EQ(run(command(1, args), &json_text), 0) << json_text;
    const auto json = nlohmann::json::parse(json_text);
    EXPECT_EQ(json["feasible"].get<bool>(), feasible[id] == 1);
    EXPECT_EQ(json["reason"].get<std::string>(),
              est::to_string(static_cast<est::Infeasible>(reason[id])));
    EXPECT_EQ(as_f32(json["memory_bytes"]["hbm"].get<double>() +
                     json["memory_bytes"]["expansion"].get<double>()),
              mem[id]);
    EXPECT_EQ(json["calibration_support"].get<int>(), support[id]);
    (support[id] < spaces::kFewCalibrationRuns ? few : many) += 1;
    if (feasible[id] == 1) {
      EXPECT_EQ(json["step_time_s"]["total"].get<double>(), step[id]);
      EXPECT_EQ(as_f32(json["samples_per_s"]), samples[id]);
      EXPECT_EQ(as_f32(json["energy_per_step_j"]), energy[id]);
      EXPECT_EQ(static_cast<float>(json["step_time_lo_s"].get<double>()), step_lo[id]);
      EXPECT_EQ(static_cast<float>(json["step_time_hi_s"].get<double>()), step_hi[id]);
      job.expect_equal(json["job"], id);
    } else {
      EXPECT_TRUE(json["job"].is_null());
      ++infeasible;
    }
  }
  EXPECT_GT(infeasible, 0);  // DLRMv2 does not fit one 40 GB A100
  // Points with few calibration runs like them (widened intervals) and points with many.
  EXPECT_GT(few, 0);
  EXPECT_GT(many, 0);
}

}  // namespace
}  // namespace clustersweep::engine
