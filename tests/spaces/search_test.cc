// The exact plan search equals exhaustive enumeration (best plans for every objective, top-k, and
// Pareto fronts) on random designs of random specs, and its bounds are lower bounds.
#include "spaces/search.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <random>

#include "spaces/catalog.h"
#include "spaces/rules.h"

namespace clustersweep::spaces {
namespace {

std::string pick(std::mt19937_64& rng, const std::vector<std::string>& values, std::size_t most) {
  std::vector<std::string> chosen = values;
  std::shuffle(chosen.begin(), chosen.end(), rng);
  chosen.resize(1 + rng() % std::min(most, values.size()));
  std::string out = "[";
  for (std::size_t i = 0; i < chosen.size(); ++i) out += (i ? ", " : "") + chosen[i];
  return out + "]";
}

// Up to three of the stack's settings with up to two values each, as [plan] lines: a box of the
// search fixes each, as it fixes the degrees.
std::string random_stack(std::mt19937_64& rng) {
  std::string t;
  std::vector<const StackSetting*> settings;
  for (const StackSetting& st : stack_settings()) settings.push_back(&st);
  std::shuffle(settings.begin(), settings.end(), rng);
  for (std::size_t i = 0; i < 3; ++i) {
    std::vector<std::string> values;
    for (int v = 0; v < settings[i]->count; ++v)
      values.push_back(settings[i]->boolean ? std::string(v ? "true" : "false")
                                            : fmt::format("\"{}\"", settings[i]->value_name(v)));
    t += fmt::format("{} = {}\n", settings[i]->name, pick(rng, values, 2));
  }
  return t;
}

// A random space over every plan axis: dense and MoE models, several accelerators, cluster sizes
// and bandwidths, with and without an expansion tier; with `stack`, some stack settings swept.
std::string random_spec(std::mt19937_64& rng, bool stack = false) {
  const auto& catalog = Catalog::builtin();
  std::vector<std::string> models, gpus;
  for (const auto& m : catalog.models())
    if (m.model.layers <= 96) models.push_back("\"" + m.key + "\"");
  for (const auto& g : catalog.accelerators()) gpus.push_back("\"" + g.key + "\"");
  auto coin = [&](int percent) { return static_cast<int>(rng() % 100) < percent; };
  std::string t = "[workload]\nmodel = " + pick(rng, models, 1) + "\n";
  t += "seq_len = " + pick(rng, {"2048", "4096"}, 1) + "\n";
  t += "global_batch = " + pick(rng, {"256", "512", "1536"}, 1) + "\n";
  t += "precision = " + pick(rng, {"\"bf16\"", "\"fp8\""}, 1) + "\n";
  t += "training_tokens = 1e11\n[cluster]\ngpu = " + pick(rng, gpus, 2) + "\n";
  t += "nodes = " + pick(rng, {"1", "2", "4", "8", "16", "32"}, 2) + "\n";
  if (coin(30)) t += "nvlink_domain = " + pick(rng, {"8", "72"}, 1) + "\n";
  t += "inter_node_gbps_per_gpu = " + pick(rng, {"100", "400", "800"}, 2) + "\n";
  const bool expansion = coin(30);
  if (expansion) t += "expansion_gb = [0, 256]\nexpansion_gbytes_per_s = 64\n";
  // A fabric from the text so far, not the generator, and one per spec (the search is per design),
  // so that the other draws and the designs stay as they were.
  if (const std::size_t h = std::hash<std::string>{}(t); h % 10 < 4) {
    const char* kFabrics[] = {"\"switch\"", "\"mesh\"", "\"torus\""};
    t += std::string("fabric = ") + kFabrics[h / 10 % 3] + "\n";
  }
  // A scale-out network, the same way and one per spec: tapered and rail-only networks change
  // which plan wins.
  if (const std::size_t h = std::hash<std::string>{}(t + "network"); h % 10 < 5) {
    const char* kNetworks[] = {"\"rail_optimized\"", "\"rail_only\"", "\"dragonfly\""};
    t += fmt::format("network = {}\noversubscription = {}\n", kNetworks[h / 10 % 3],
                     h / 100 % 2 ? "7" : "3");
    if (h / 200 % 2) t += "planes = 2\nglobal_taper = 4\n";
  }
  t += "[plan]\ntp = \"all\"\npp = \"all\"\ncp = " + pick(rng, {"1", "2", "4"}, 2) + "\n";
  t += coin(50) ? "vp = \"all\"\n" : "vp = [1, 2]\n";
  t += "micro_batch = \"pow2:1..8\"\nzero = \"all\"\nrecompute = \"all\"\n";
  t += "sequence_parallel = \"all\"\n";
  if (expansion) t += "offload = \"all\"\n";
  if (coin(50)) t += "pipeline_split = \"all\"\n";
  t += "ep = \"all\"\n";
  if (coin(30)) t += "etp = [1, 2]\n";
  if (stack) {
    t += random_stack(rng);
  } else if (std::hash<std::string>{}(t + "rank_order") % 10 < 4) {
    // Both rank orders, one set per spec the same way as the network, so the search picks.
    t += "rank_order = [\"tp-cp-ep-dp-pp\", \"tp-pp-dp\"]\n";
  }
  t += "[pricing]\ncapex_usd_per_gpu = 30000\n";
  return t;
}

// The space's calibration with its overlaps and overheads moved anywhere in their range: which
// term of the step dominates moves with them, and the bounds must hold for all.
estimator::Calibration random_calibration(std::mt19937_64& rng, const Space& space) {
  estimator::Calibration calibration = space.calibration();
  calibration.dp_overlap = static_cast<double>(rng() % 101) / 100;
  calibration.tp_overlap = static_cast<double>(rng() % 101) / 100;
  calibration.per_layer_overhead_s = rng() % 2 ? 1e-4 : 0.0;
  return calibration;
}

// The plan indices of the (step time, energy per step) Pareto front of `plans`.
std::vector<std::uint64_t> front_of(const std::vector<PlanResult>& plans) {
  std::vector<double> time, energy;
  for (const auto& p : plans) {
    time.push_back(p.estimate.time.total_s);
    energy.push_back(p.estimate.energy_per_step_j);
  }
  std::vector<std::uint64_t> ids;
  for (std::size_t j : pareto_front(time, energy)) ids.push_back(plans[j].plan_index);
  return ids;
}

double steps_of(const Space& space, const Design& d) {
  return space.training_tokens() /
         (static_cast<double>(d.workload.global_batch) * d.workload.seq_len);
}

TEST(Search, EqualsExhaustiveEnumerationOnRandomDesigns) {
  std::mt19937_64 rng(20261125);
  int designs = 0, with_plans = 0;
  std::uint64_t evaluated = 0, exhaustive_evaluated = 0;
  for (int spec = 0; spec < 20; ++spec) {
    const std::string text = random_spec(rng);
    const Space space = Space::parse(text, "random.toml");
    for (std::uint64_t i = 0; i < space.designs(); ++i) {
      Design d;
      if (!space.design(i, d)) continue;
      ++designs;
      const estimator::Estimator estimator(d.workload, d.cluster, random_calibration(rng, space));
      for (Objective objective :
           {Objective::step_time, Objective::time_to_train, Objective::energy, Objective::cost}) {
        for (std::size_t k : {std::size_t{1}, std::size_t{5}}) {
          SCOPED_TRACE(
              fmt::format("{}design {} objective {} k {}", text, i, to_string(objective), k));
          SearchOptions options{objective, steps_of(space, d), false};
          SearchStats stats, all_stats;
          const auto found = best_plans(space, d, estimator, options, k, &stats);
          options.exhaustive = true;
          const auto expected = best_plans(space, d, estimator, options, k, &all_stats);
          ASSERT_EQ(found.size(), expected.size());
          for (std::size_t j = 0; j < found.size(); ++j) {
            EXPECT_EQ(found[j].plan_index, expected[j].plan_index);
            EXPECT_EQ(found[j].objective, expected[j].objective);
          }
          EXPECT_EQ(stats.evaluated + stats.invalid + stats.pruned, space.plan_points());
          EXPECT_EQ(all_stats.evaluated + all_stats.invalid, space.plan_points());
          if (k == 1 && objective == Objective::step_time) {
            evaluated += stats.evaluated;
            exhaustive_evaluated += all_stats.evaluated;
            with_plans += !expected.empty();
          }
        }
      }
      // Pareto: the front of the candidates equals the front of every plan.
      SearchOptions options{Objective::step_time, 1, false};
      const auto candidates = pareto_candidates(space, d, estimator, options);
      options.exhaustive = true;
      EXPECT_EQ(front_of(candidates), front_of(pareto_candidates(space, d, estimator, options)))
          << text << "design " << i;
    }
  }
  std::printf("search: %d designs, %d with a feasible plan; plans evaluated %llu of %llu\n",
              designs, with_plans, static_cast<unsigned long long>(evaluated),
              static_cast<unsigned long long>(exhaustive_evaluated));
  EXPECT_GT(designs, 50);
  EXPECT_GT(with_plans, 40);
  // The search is there to evaluate fewer plans.
  EXPECT_LT(evaluated * 10, exhaustive_evaluated);
}

// The same property on thousands of designs, one random objective and k each: a wider sample of
// models, accelerators, cluster sizes and bandwidths than the test above checks in depth.
TEST(Search, EqualsExhaustiveEnumerationOnThousandsOfRandomDesigns) {
  std::mt19937_64 rng(7);
  int designs = 0;
  while (designs < 2000) {
    const std::string text = random_spec(rng);
    const Space space = Space::parse(text, "random.toml");
    for (std::uint64_t i = 0; i < space.designs() && designs < 2000; ++i) {
      Design d;
      if (!space.design(i, d)) continue;
      ++designs;
      const estimator::Estimator estimator(d.workload, d.cluster, random_calibration(rng, space));
      const auto objective = static_cast<Objective>(rng() % 4);
      const std::size_t k = 1 + rng() % 3;
      SearchOptions options{objective, steps_of(space, d), false};
      const auto found = best_plans(space, d, estimator, options, k);
      options.exhaustive = true;
      const auto expected = best_plans(space, d, estimator, options, k);
      ASSERT_EQ(found.size(), expected.size()) << text << "design " << i;
      for (std::size_t j = 0; j < found.size(); ++j) {
        ASSERT_EQ(found[j].plan_index, expected[j].plan_index)
            << text << "design " << i << " objective " << to_string(objective) << " k " << k;
        ASSERT_EQ(found[j].objective, expected[j].objective);
      }
    }
  }
}

// With the stack's settings swept: each box holds one stack, and the search still finds what
// evaluating every plan finds (best plans and Pareto fronts).
TEST(Search, EqualsExhaustiveEnumerationWithTheStackSwept) {
  std::mt19937_64 rng(2611);
  int designs = 0, swept = 0;
  for (int spec = 0; spec < 12; ++spec) {
    const std::string text = random_spec(rng, true);
    const Space space = Space::parse(text, "stack.toml");
    for (int a = kFirstStackAxis; a < kNumAxes; ++a) swept += space.axes()[a].size() > 1;
    for (std::uint64_t i = 0; i < space.designs(); ++i) {
      Design d;
      if (!space.design(i, d)) continue;
      ++designs;
      const estimator::Estimator estimator(d.workload, d.cluster, random_calibration(rng, space));
      const auto objective = static_cast<Objective>(rng() % 4);
      const std::size_t k = 1 + rng() % 3;
      SCOPED_TRACE(fmt::format("{}design {} objective {} k {}", text, i, to_string(objective), k));
      SearchOptions options{objective, steps_of(space, d), false};
      SearchStats stats;
      const auto found = best_plans(space, d, estimator, options, k, &stats);
      EXPECT_EQ(stats.evaluated + stats.invalid + stats.pruned, space.plan_points());
      options.exhaustive = true;
      const auto expected = best_plans(space, d, estimator, options, k);
      ASSERT_EQ(found.size(), expected.size());
      for (std::size_t j = 0; j < found.size(); ++j) {
        EXPECT_EQ(found[j].plan_index, expected[j].plan_index);
        EXPECT_EQ(found[j].objective, expected[j].objective);
        // The plan's stack is the one of its digits.
        estimator::Plan p;
        estimator::Infeasible why;
        std::uint32_t digits[kNumAxes];
        space.decode(i * space.plan_points() + found[j].plan_index, digits);
        space.plan_values(d, digits + kTp, p);
        for (const StackSetting& st : stack_settings())
          EXPECT_EQ(st.get(found[j].plan.stack), st.get(p.stack)) << st.name;
        EXPECT_TRUE(space.plan_from_digits(d, digits + kTp, p, why));
      }
      options.exhaustive = false;
      const auto candidates = pareto_candidates(space, d, estimator, options);
      options.exhaustive = true;
      EXPECT_EQ(front_of(candidates), front_of(pareto_candidates(space, d, estimator, options)));
    }
  }
  EXPECT_GT(designs, 20);
  EXPECT_GT(swept, 6);
}

// Within a framework (its rules remove the plans it does not run) and ranked by the interval's
// upper end (--robust, a factor per plan from its calibration support): the search still finds
// what evaluating every plan finds.
TEST(Search, EqualsExhaustiveEnumerationWithinAFrameworkAndRobust) {
  std::mt19937_64 rng(3312);
  int designs = 0, robust_differs = 0;
  for (int spec = 0; spec < 16; ++spec) {
    std::string with_framework = random_spec(rng);
    const std::string framework = pick(rng, {"\"megatron-core\"", "\"fsdp2\"", "\"deepspeed\""}, 2);
    with_framework.insert(with_framework.find("[pricing]"), "framework = " + framework + "\n");
    const Space space = Space::parse(with_framework, "framework.toml");
    for (std::uint64_t i = 0; i < space.designs(); ++i) {
      Design d;
      if (!space.design(i, d)) continue;
      ++designs;
      const estimator::Estimator estimator(d.workload, d.cluster, random_calibration(rng, space));
      RobustRanking robust;
      robust.interval = {0.8, 1.25};
      robust.widening = 1 + static_cast<double>(rng() % 100) / 50;
      // Support that differs by regime and cp, so the factor reorders plans.
      robust.support.accelerator = 10;
      robust.support.runs = 10;
      robust.support.max_cp = 2;
      for (int& r : robust.support.regime) r = static_cast<int>(rng() % 6);
      const auto objective = static_cast<Objective>(rng() % 4);
      const std::size_t k = 1 + rng() % 3;
      std::uint64_t top = 0;
      for (const RobustRanking* ranking : {static_cast<const RobustRanking*>(nullptr),
                                           static_cast<const RobustRanking*>(&robust)}) {
        SCOPED_TRACE(fmt::format("{}design {} objective {} k {} robust {}", with_framework, i,
                                 to_string(objective), k, ranking != nullptr));
        SearchOptions options{objective, steps_of(space, d), false};
        options.robust = ranking;
        const auto found = best_plans(space, d, estimator, options, k);
        options.exhaustive = true;
        const auto expected = best_plans(space, d, estimator, options, k);
        ASSERT_EQ(found.size(), expected.size());
        for (std::size_t j = 0; j < found.size(); ++j) {
          EXPECT_EQ(found[j].plan_index, expected[j].plan_index);
          EXPECT_EQ(found[j].objective, expected[j].objective);
          EXPECT_FALSE(check_framework(found[j].plan));
          EXPECT_NE(found[j].plan.stack.framework, estimator::Framework::any);
        }
        if (!found.empty() && !ranking) top = found.front().plan_index;
        if (!found.empty() && ranking) robust_differs += found.front().plan_index != top;
      }
    }
  }
  EXPECT_GT(designs, 20);
  EXPECT_GT(robust_differs, 0);  // the ranking reorders some designs' plans
}

TEST(Search, BoundsAreBelowEveryPlanOfTheirBox) {
  std::mt19937_64 rng(11);
  auto coin = [&](int percent) { return static_cast<int>(rng() % 100) < percent; };
  int checked = 0;
  for (int spec = 0; spec < 12; ++spec) {
    const std::string text = random_spec(rng);
    const Space space = Space::parse(text, "random.toml");
    const auto& axes = space.axes();
    for (std::uint64_t i = 0; i < space.designs(); ++i) {
      Design d;
      if (!space.design(i, d)) continue;
      const estimator::Estimator estimator(d.workload, d.cluster, random_calibration(rng, space));
      std::uint32_t digits[kNumAxes];
      for (std::uint64_t plan = 0; plan < space.plan_points(); ++plan) {
        space.decode(i * space.plan_points() + plan, digits);
        estimator::Plan p;
        estimator::Infeasible why;
        if (!space.plan_from_digits(d, digits + kTp, p, why)) continue;
        const estimator::Estimate e = estimator.estimate(p);
        if (e.reason == estimator::Infeasible::invalid_plan) continue;
        // A random box of the search tree's kind around the plan: its degrees, a range of vp and
        // micro-batches, and a set of each other setting's values, each holding the plan's.
        estimator::PlanBox box;
        box.plan = p;
        auto range = [&](int axis, int value, int& lo, int& hi) {
          lo = hi = value;
          for (double v : axes[axis].numbers) {
            if (coin(50)) lo = std::min(lo, static_cast<int>(v));
            if (coin(50)) hi = std::max(hi, static_cast<int>(v));
          }
        };
        range(kVp, p.vp, box.vp_min, box.vp_max);
        range(kMicroBatch, p.micro_batch, box.micro_batch_min, box.micro_batch_max);
        auto set = [&](bool* values, int n, int value) {
          for (int v = 0; v < n; ++v) values[v] = v == value || coin(50);
        };
        set(box.zero, 4, p.zero);
        set(box.recompute, 3, static_cast<int>(p.recompute));
        set(box.sequence_parallel, 2, p.sequence_parallel ? 1 : 0);
        set(box.offload, 4, static_cast<int>(p.offload));
        set(box.pipeline_split, estimator::kNumPipelineSplits, static_cast<int>(p.pipeline_split));
        const estimator::StepBound b = estimator.bound(box);
        ++checked;
        const auto& t = e.time;
        const std::string where = text + space.describe_point(i * space.plan_points() + plan);
        ASSERT_LE(b.time_s, t.total_s) << where;
        ASSERT_LE(b.busy_s, t.compute_s + t.memory_bound_s + t.optimizer_s) << where;
        ASSERT_LE(b.hbm_bytes, e.memory.hbm_bytes) << where;
      }
    }
  }
  EXPECT_GT(checked, 10000);
}

}  // namespace
}  // namespace clustersweep::spaces
