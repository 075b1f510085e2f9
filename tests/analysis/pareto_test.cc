#include "analysis/pareto.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "analysis/dataset.h"
#include "base/error.h"

namespace clustersweep::analysis {
namespace {

// Random points on a coarse grid, so ties in single objectives and exact duplicates are common.
std::vector<double> random_points(std::size_t n, std::size_t k, int levels, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> level(0, levels - 1);
  std::vector<double> v(n * k);
  for (double& x : v) x = level(rng) * 0.5;
  return v;
}

// Points on or near a plane x+y+z = const: large fronts, where sweeps go wrong if they are wrong.
std::vector<double> anti_correlated(std::size_t n, std::size_t k, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> v(n * k);
  for (std::size_t i = 0; i < n; ++i) {
    double sum = 0;
    for (std::size_t j = 0; j + 1 < k; ++j) sum += v[i * k + j] = std::round(u(rng) * 40) / 40;
    v[i * k + k - 1] = std::max(0.0, k - 1 - sum + std::round(u(rng) * 4) / 40);
  }
  return v;
}

TEST(ParetoFront, MatchesBruteForceOnRandomDataWithTiesAndDuplicates) {
  for (std::size_t k : {2u, 3u, 4u}) {
    for (int levels : {2, 5, 50, 1000}) {
      for (std::uint64_t seed = 1; seed <= 15; ++seed) {
        const std::size_t n = 1 + seed * 37 % 400;
        const auto v =
            random_points(n, k, levels, seed * 1000 + k * 10 + static_cast<std::uint64_t>(levels));
        EXPECT_EQ(pareto_front(v.data(), n, k), pareto_front_brute_force(v.data(), n, k))
            << "k=" << k << " levels=" << levels << " seed=" << seed;
      }
    }
  }
}

TEST(ParetoFront, MatchesBruteForceOnLargeFronts) {
  for (std::size_t k : {2u, 3u, 4u}) {
    const auto v = anti_correlated(1500, k, k);
    const auto front = pareto_front(v.data(), 1500, k);
    EXPECT_EQ(front, pareto_front_brute_force(v.data(), 1500, k)) << "k=" << k;
    EXPECT_GT(front.size(), 20u);
  }
}

TEST(ParetoFront, KeepsEveryCopyOfANonDominatedPoint) {
  const std::vector<double> v = {1, 5, 1, 5, 2, 2, 3, 3, 5, 1, 2, 2};
  EXPECT_EQ(pareto_front(v.data(), 6, 2), (std::vector<std::size_t>{0, 1, 2, 4, 5}));
}

TEST(ParetoFront, HandlesEmptyAndSingleInput) {
  EXPECT_TRUE(pareto_front(nullptr, 0, 3).empty());
  const std::vector<double> one = {4, 2, 7};
  EXPECT_EQ(pareto_front(one.data(), 1, 3), (std::vector<std::size_t>{0}));
}

TEST(ParetoAccumulator, FrontOfUnionEqualsFrontOfFronts) {
  for (std::size_t k : {2u, 3u, 4u}) {
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      const std::size_t n = 600;
      const auto v = seed % 2 ? random_points(n, k, 12, seed) : anti_correlated(n, k, seed);
      const std::size_t split = seed * 53 % n;
      // Front of each part, then the front of the union of the two fronts.
      const auto front_a = pareto_front(v.data(), split, k);
      const auto front_b = pareto_front(v.data() + split * k, n - split, k);
      std::vector<double> merged;
      std::vector<std::size_t> ids;
      for (std::size_t i : front_a) {
        merged.insert(merged.end(), v.begin() + i * k, v.begin() + (i + 1) * k);
        ids.push_back(i);
      }
      for (std::size_t i : front_b) {
        merged.insert(merged.end(), v.begin() + (split + i) * k, v.begin() + (split + i + 1) * k);
        ids.push_back(split + i);
      }
      std::vector<std::size_t> of_fronts;
      for (std::size_t i : pareto_front(merged.data(), ids.size(), k)) of_fronts.push_back(ids[i]);
      std::sort(of_fronts.begin(), of_fronts.end());
      EXPECT_EQ(of_fronts, pareto_front(v.data(), n, k)) << "k=" << k << " seed=" << seed;
    }
  }
}

TEST(ParetoAccumulator, StreamingInSmallBatchesGivesTheSameFront) {
  for (std::size_t k : {2u, 3u, 4u}) {
    const std::size_t n = 3000;
    const auto v = random_points(n, k, 30, 77 + k);
    for (std::size_t batch : {1u, 7u, 64u, 100000u}) {
      ParetoAccumulator acc(k, batch);
      for (std::size_t i = 0; i < n; ++i) acc.add(1000 + i, v.data() + i * k);
      std::vector<std::uint64_t> expected;
      for (std::size_t i : pareto_front_brute_force(v.data(), n, k)) expected.push_back(1000 + i);
      EXPECT_EQ(acc.rows(), expected) << "k=" << k << " batch=" << batch;
      ASSERT_EQ(acc.values().size(), expected.size() * k);
      for (std::size_t i = 0; i < expected.size(); ++i)
        for (std::size_t j = 0; j < k; ++j)
          EXPECT_EQ(acc.values()[i * k + j], v[(expected[i] - 1000) * k + j]);
    }
  }
}

TEST(ParetoAccumulator, IgnoresPointsWithNaN) {
  ParetoAccumulator acc(2);
  const double a[] = {NAN, 0}, b[] = {1, 1};
  acc.add(0, a);
  acc.add(1, b);
  EXPECT_EQ(acc.rows(), (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(acc.points_seen(), 1u);
}

}  // namespace
}  // namespace clustersweep::analysis
