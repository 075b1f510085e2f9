#include "analysis/filter.h"

#include <fmt/format.h>

#include "analysis/dataset.h"
#include "base/error.h"

namespace clustersweep::analysis {

Filter Filter::parse(std::string_view text, const Dataset& data, std::string_view what) {
  ExpressionNames names;
  names.noun = "column";
  names.example = "feasible and num_gpus <= 1024";
  for (const Column& c : data.columns())
    names.names.push_back({c.name, c.is_label ? c.labels : std::vector<std::string>{}});
  try {
    Expression x = Expression::compile(text, names);
    std::vector<std::string> columns;
    for (int i : x.names_read()) columns.push_back(names.names[i].name);
    return Filter(std::move(x), std::move(columns), names.names.size());
  } catch (const ExpressionError& e) {
    throw InputError(fmt::format("{}:1:{}: {}{}", what, e.column(), e.what(), e.caret(text)));
  }
}

void Filter::apply(const std::vector<const double*>& columns, std::size_t n,
                   std::vector<std::uint8_t>& keep) const {
  std::vector<const double*> by_name(names_, nullptr);
  for (std::size_t j = 0; j < columns_.size(); ++j)
    by_name[expression_.names_read()[j]] = columns[j];
  std::vector<double> result(n), stack(expression_.stack_size());
  expression_.evaluate(by_name.data(), n, result.data(), stack.data());
  for (std::size_t i = 0; i < n; ++i)
    if (!Expression::is_true(result[i])) keep[i] = 0;
}

}  // namespace clustersweep::analysis
