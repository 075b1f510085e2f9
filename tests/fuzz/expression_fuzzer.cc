// libFuzzer target: expression text through clustersweep::Expression::compile, then evaluation of
// what compiles (docs/testing.md). ExpressionError is the compiler's answer to bad input;
// anything else that escapes (another exception type, a crash, a sanitizer report, a hang) is a
// finding, and so is a block evaluation that disagrees with the one-point one.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "base/expression.h"

namespace {

using clustersweep::Expression;
using clustersweep::ExpressionError;
using clustersweep::ExpressionNames;

const ExpressionNames& names() {
  static const ExpressionNames n = [] {
    ExpressionNames n;
    n.names = {{"tp", {}},
               {"pp", {}},
               {"gpu", {"A100-SXM4-80GB", "H100-SXM5-80GB"}},
               {"best_gpu", {"A100-SXM4-80GB", "H100-SXM5-80GB"}},
               {"recompute", {"none", "selective", "full"}},
               {"time_to_train_s", {}},
               {"feasible", {}}};
    n.noun = "column";
    return n;
  }();
  return n;
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Values of the names above, in order; a label name holds the index of one of its labels.
const std::vector<std::vector<double>> kRows = {
    {8, 4, 1, 0, 2, 86400, 1},          {0, 0, 0, 0, 0, 0, 0},        {-1, 1e308, 1, 1, 1, kNaN, 0},
    {kInf, -kInf, 0, 1, 2, -0.0, kNaN}, {0.5, 3, 1, 0, 1, 1e-310, 1},
};

bool same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Expression x;
  try {
    x = Expression::compile(text, names());
  } catch (const ExpressionError& e) {
    (void)e.caret(text);
    return 0;
  }
  // Each row one at a time, then all rows as one block (column-major), which must agree.
  std::vector<double> one;
  for (const auto& row : kRows) one.push_back(x.evaluate(row.data()));
  std::vector<std::vector<double>> columns(names().names.size());
  for (const auto& row : kRows)
    for (std::size_t i = 0; i < row.size(); ++i) columns[i].push_back(row[i]);
  std::vector<const double*> pointers;
  for (const auto& c : columns) pointers.push_back(c.data());
  std::vector<double> out(kRows.size()), stack(x.stack_size());
  x.evaluate(pointers.data(), kRows.size(), out.data(), stack.data());
  for (std::size_t r = 0; r < kRows.size(); ++r)
    if (!same(one[r], out[r])) __builtin_trap();
  return 0;
}
