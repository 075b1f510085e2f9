#pragma once
// Evaluates a table of points (spaces/point_table.h) into rows of the store's schema, one row a
// point in the table's order: the engine of Python's `estimate_many` (docs/python.md). Pure
// computation, as a sweep's chunk evaluation.
#include <string_view>

#include "engine/schema.h"
#include "spaces/point_table.h"

namespace clustersweep::engine {

// The store columns a table may hold besides its axes, which evaluating it computes again: the
// ids, dp, feasibility and every metric of either family, so that a store's own rows evaluate as
// they are. (num_gpus is one too when the table gives num_nodes.)
bool is_output_column(std::string_view name);

struct TableRows {
  Schema schema;  // make_schema() of the table's space: the columns table_space() was asked for
  RowBlock rows;  // row i is the table's row i
};
TableRows evaluate_table(const spaces::TableSpace& table);

}  // namespace clustersweep::engine
