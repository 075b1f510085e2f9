#pragma once
// The tokens a capacity drops (docs/estimator.md, "The software stack"). Under learned routing an
// expert's load is its balanced share times a factor of mean 1 and relative spread load_cv
// ([moe] load_cv, the spread the dropless step waits for); with a capacity of c shares the tokens
// beyond it are dropped. For a normal factor the dropped share of all routed tokens is
//   E[max(0, L - c)] = load_cv phi(z) - (c - 1)(1 - Phi(z)),  z = (c - 1) / load_cv,
// which falls as the capacity grows and is 0 with no spread and c >= 1.
#include <algorithm>
#include <cmath>
#include <numbers>

namespace clustersweep::estimator {

inline double dropped_token_fraction(double capacity_factor, double load_cv) noexcept {
  if (capacity_factor <= 0) return 0;  // no capacity: nothing is dropped
  const double over = capacity_factor - 1.0;
  if (load_cv <= 0) return std::max(0.0, -over);
  const double z = over / load_cv;
  const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi);
  const double tail = 0.5 * std::erfc(z / std::numbers::sqrt2);
  return std::clamp(load_cv * pdf - over * tail, 0.0, 1.0);
}

}  // namespace clustersweep::estimator
