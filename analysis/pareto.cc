#include "analysis/pareto.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "analysis/dataset.h"
#include "base/error.h"

namespace clustersweep::analysis {
namespace {

// Indices sorted lexicographically by their points; equal points end up next to each other.
std::vector<std::size_t> lexicographic_order(const double* v, std::size_t n, std::size_t k) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const double* pa = v + a * k;
    const double* pb = v + b * k;
    for (std::size_t j = 0; j < k; ++j)
      if (pa[j] != pb[j]) return pa[j] < pb[j];
    return a < b;
  });
  return order;
}

bool same_point(const double* a, const double* b, std::size_t k) {
  for (std::size_t j = 0; j < k; ++j)
    if (a[j] != b[j]) return false;
  return true;
}

bool dominates(const double* a, const double* b, std::size_t k) {
  bool better = false;
  for (std::size_t j = 0; j < k; ++j) {
    if (a[j] > b[j]) return false;
    better = better || a[j] < b[j];
  }
  return better;
}

// Walks the distinct points in lexicographic order. Every point that dominates p is
// lexicographically smaller, so `dominated(p)` only needs to consult the distinct points already
// accepted, which `accept(p)` records. All copies of an accepted point join the front.
template <class Dominated, class Accept>
std::vector<std::size_t> sweep(const double* v, std::size_t n, std::size_t k, Dominated dominated,
                               Accept accept) {
  const auto order = lexicographic_order(v, n, k);
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < n;) {
    const double* p = v + order[i] * k;
    std::size_t end = i + 1;
    while (end < n && same_point(v + order[end] * k, p, k)) ++end;
    if (!dominated(p)) {
      accept(p);
      front.insert(front.end(), order.begin() + static_cast<std::ptrdiff_t>(i),
                   order.begin() + static_cast<std::ptrdiff_t>(end));
    }
    i = end;
  }
  std::sort(front.begin(), front.end());
  return front;
}

}  // namespace

std::vector<std::size_t> pareto_front(const double* v, std::size_t n, std::size_t k) {
  if (k == 1) {
    // The minimum and its copies.
    std::vector<std::size_t> front;
    double best = INFINITY;
    for (std::size_t i = 0; i < n; ++i) best = std::min(best, v[i]);
    for (std::size_t i = 0; i < n; ++i)
      if (v[i] == best) front.push_back(i);
    return front;
  }
  if (k == 2) {
    // Earlier points have x <= p.x, so p is dominated iff one of them has y <= p.y.
    double min_y = INFINITY;
    return sweep(
        v, n, k, [&](const double* p) { return min_y <= p[1]; },
        [&](const double* p) { min_y = p[1]; });
  }
  if (k == 3) {
    // The accepted points' (y, z) staircase: y ascending, z strictly descending. p is dominated iff
    // the step at the largest y <= p.y has z <= p.z.
    std::map<double, double> staircase;
    const auto dominated = [&](const double* p) {
      auto it = staircase.upper_bound(p[1]);
      if (it == staircase.begin()) return false;
      return std::prev(it)->second <= p[2];
    };
    const auto accept = [&](const double* p) {
      auto [it, inserted] = staircase.insert_or_assign(p[1], p[2]);
      auto after = std::next(it);
      while (after != staircase.end() && after->second >= p[2]) after = staircase.erase(after);
    };
    return sweep(v, n, k, dominated, accept);
  }
  std::vector<const double*> accepted;
  const auto dominated = [&](const double* p) {
    return std::any_of(accepted.begin(), accepted.end(),
                       [&](const double* q) { return dominates(q, p, k); });
  };
  return sweep(v, n, k, dominated, [&](const double* p) { accepted.push_back(p); });
}

std::vector<std::size_t> pareto_front_brute_force(const double* v, std::size_t n, std::size_t k) {
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < n; ++i) {
    bool dominated = false;
    for (std::size_t j = 0; j < n && !dominated; ++j)
      dominated = dominates(v + j * k, v + i * k, k);
    if (!dominated) front.push_back(i);
  }
  return front;
}

ParetoAccumulator::ParetoAccumulator(std::size_t objectives, std::size_t batch)
    : k_(objectives), batch_(std::max<std::size_t>(batch, 1)) {}

void ParetoAccumulator::add(std::uint64_t row, const double* values) {
  for (std::size_t j = 0; j < k_; ++j)
    if (std::isnan(values[j])) return;
  ++seen_;
  rows_.push_back(row);
  values_.insert(values_.end(), values, values + k_);
  if (rows_.size() - front_size_ >= std::max(batch_, front_size_)) merge();
}

void ParetoAccumulator::merge() {
  if (rows_.size() == front_size_) return;
  const auto front = pareto_front(values_.data(), rows_.size(), k_);
  // Keep the front ordered by row, so results do not depend on the batch size.
  std::vector<std::size_t> order(front);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return rows_[a] < rows_[b]; });
  std::vector<std::uint64_t> rows;
  std::vector<double> values;
  rows.reserve(order.size());
  values.reserve(order.size() * k_);
  for (std::size_t i : order) {
    rows.push_back(rows_[i]);
    values.insert(values.end(), values_.begin() + static_cast<std::ptrdiff_t>(i * k_),
                  values_.begin() + static_cast<std::ptrdiff_t>((i + 1) * k_));
  }
  rows_ = std::move(rows);
  values_ = std::move(values);
  front_size_ = rows_.size();
}

const std::vector<std::uint64_t>& ParetoAccumulator::rows() {
  merge();
  return rows_;
}

const std::vector<double>& ParetoAccumulator::values() {
  merge();
  return values_;
}

std::vector<Objective> parse_objectives(std::string_view text, const Dataset& data,
                                        std::string_view what) {
  std::vector<Objective> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    std::string_view item = text.substr(start, comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    Objective o;
    if (item.rfind("max:", 0) == 0) {
      o.maximize = true;
      item.remove_prefix(4);
    } else if (item.rfind("min:", 0) == 0) {
      item.remove_prefix(4);
    }
    if (item.empty())
      throw InputError(
          fmt::format("{}: empty objective in '{}'; expected columns separated by commas, "
                      "e.g. time_to_train_s,cost_usd",
                      what, text));
    const Column& c = data.column(item, what);
    if (c.is_label)
      throw InputError(fmt::format("{}: column '{}' holds labels, not numbers", what, c.name));
    o.column = c.name;
    for (const auto& prior : out)
      if (prior.column == o.column)
        throw InputError(fmt::format("{}: column '{}' is given twice", what, o.column));
    out.push_back(o);
    start = comma + 1;
  }
  if (out.size() < 2 || out.size() > 4)
    throw InputError(fmt::format("{}: expected 2 to 4 objectives, got {}", what, out.size()));
  return out;
}

}  // namespace clustersweep::analysis
