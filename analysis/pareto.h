#pragma once
// Pareto fronts (non-dominated sets) over 2 to 4 objectives, each minimized; a maximized objective
// is negated before it gets here. A point dominates another when it is no worse in every objective
// and better in one; exact duplicates do not dominate each other, so all copies of a
// non-dominated point are on the front.
//
// pareto_front() is O(n log n) for 2 objectives (sort + sweep) and 3 objectives (sort, then a
// sweep that keeps the 2-D staircase of the front so far in a balanced tree, after Kung et al.
// 1975), and O(n * front) for 4 or more (each point against the front of the points before it in
// lexicographic order).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace clustersweep::analysis {

class Dataset;

// Indices (ascending) of the non-dominated points among n points of k objectives, stored row-major
// (values[i * k + j]). Values must not be NaN.
std::vector<std::size_t> pareto_front(const double* values, std::size_t n, std::size_t k);
// The O(n^2) definition, for tests.
std::vector<std::size_t> pareto_front_brute_force(const double* values, std::size_t n,
                                                  std::size_t k);

// The front of a stream of points, with memory bounded by the front plus one batch: points are
// buffered and merged into the front whenever the buffer reaches max(batch, front size).
class ParetoAccumulator {
 public:
  explicit ParetoAccumulator(std::size_t objectives, std::size_t batch = 1 << 16);

  // Adds one point (row id and k minimized objective values); points with a NaN are ignored.
  void add(std::uint64_t row, const double* values);
  // The front so far: rows (ascending) and their values, row-major.
  const std::vector<std::uint64_t>& rows();
  const std::vector<double>& values();
  std::size_t objectives() const noexcept { return k_; }
  std::uint64_t points_seen() const noexcept { return seen_; }

 private:
  void merge();

  std::size_t k_;
  std::size_t batch_;
  std::size_t front_size_ = 0;  // the first front_size_ entries of rows_/values_ are the front
  std::vector<std::uint64_t> rows_;
  std::vector<double> values_;
  std::uint64_t seen_ = 0;
};

struct Objective {
  std::string column;
  bool maximize = false;
  std::string label() const { return maximize ? "max:" + column : column; }
};

// "time_to_train_s,max:tokens_per_s" -> objectives; InputError naming --objectives for an unknown
// column (with the closest name), a repeated one, or fewer than 2 / more than 4.
std::vector<Objective> parse_objectives(std::string_view text, const Dataset& data,
                                        std::string_view what = "--objectives");

}  // namespace clustersweep::analysis
