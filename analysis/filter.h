#pragma once
// --where filters: the expression language of base/expression.h over a store's columns
// (docs/analysis.md).
//
//   gpu == 'H100-SXM5-80GB' and num_gpus <= 1024 and feasible
//   not (tp > 8 or recompute == 'full') and time_to_train_s < 30 * 86400
//
// Errors name the 1-based character and show a caret under it:
//   --where:1:1: unknown column 'gpux'; did you mean 'gpu'?
//       gpux == 'H100-SXM5-80GB'
//       ^~~~
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/expression.h"

namespace clustersweep::analysis {

class Dataset;

class Filter {
 public:
  // Parses `text` against the columns of `data`; InputError "<what>:1:<column>: <message>" and
  // the caret lines.
  static Filter parse(std::string_view text, const Dataset& data,
                      std::string_view what = "--where");

  const std::string& text() const noexcept { return expression_.text(); }
  // The columns the filter reads, in the order apply() expects them.
  const std::vector<std::string>& columns() const noexcept { return columns_; }
  // Clears keep[i] for each of the n rows that do not pass. columns[j] holds the rows of
  // columns()[j].
  void apply(const std::vector<const double*>& columns, std::size_t n,
             std::vector<std::uint8_t>& keep) const;

 private:
  Filter(Expression expression, std::vector<std::string> columns, std::size_t names)
      : expression_(std::move(expression)), columns_(std::move(columns)), names_(names) {}

  Expression expression_;
  std::vector<std::string> columns_;
  std::size_t names_;  // the columns the expression was compiled against
};

}  // namespace clustersweep::analysis
