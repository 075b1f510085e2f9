#include "engine/point_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <type_traits>

#include "base/error.h"
#include "engine/evaluate.h"

namespace clustersweep::engine {

bool is_output_column(std::string_view name) {
  for (const char* fixed : {"point_id", "design_id", "dp", "feasible", "infeasible_reason"})
    if (name == fixed) return true;
  for (const auto& m : kTransformerMetrics)
    if (name == m.name) return true;
  for (const auto& m : kDlrmMetrics)
    if (name == m.name) return true;
  return false;
}

TableRows evaluate_table(const spaces::TableSpace& table) {
  const spaces::TableDigits digits = spaces::table_digits(table);
  const std::size_t n = table.table.rows;
  // The table's order when each design's rows are together (a table built as a product, a store's
  // rows), else the rows sorted by design, so that each design builds its estimator once.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  bool grouped = true;
  {
    std::vector<std::uint64_t> run_designs;
    for (std::size_t r = 0; r < n; ++r)
      if (r == 0 || digits.design[r] != digits.design[r - 1])
        run_designs.push_back(digits.design[r]);
    std::sort(run_designs.begin(), run_designs.end());
    grouped = std::adjacent_find(run_designs.begin(), run_designs.end()) == run_designs.end();
  }
  if (!grouped)
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return digits.design[a] < digits.design[b];
    });

  TableRows out;
  try {
    out.schema = make_schema(table.space);
  } catch (const InputError& e) {
    // "SPEC:LINE:COLUMN: output.columns: 'x' is no column...": the caller's columns.
    const std::string_view what = e.what();
    const auto at = what.find("output.columns: ");
    if (at == std::string_view::npos) throw;
    throw InputError(fmt::format("columns: {}", what.substr(at + 16)));
  }
  ChunkEvaluator evaluator(table.space, out.schema);
  evaluator.evaluate_table(digits, order.data(), n);
  RowBlock evaluated;
  evaluator.swap_rows(evaluated);
  if (grouped) {
    out.rows = std::move(evaluated);
    return out;
  }
  // Back to the table's order: evaluated row k is the table's row order[k].
  out.rows = RowBlock(out.schema);
  out.rows.resize(n);
  for (std::size_t c = 0; c < out.schema.columns.size(); ++c)
    visit(out.schema.columns[c].type, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      const T* from = evaluated.column<T>(c);
      T* to = out.rows.column<T>(c);
      for (std::size_t k = 0; k < n; ++k) to[order[k]] = from[k];
    });
  return out;
}

}  // namespace clustersweep::engine
