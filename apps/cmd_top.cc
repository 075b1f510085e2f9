// clustersweep top: the n best rows of a store by one column.
#include <fmt/format.h>

#include <iostream>

#include "analysis/output.h"
#include "analysis/rank.h"
#include "apps/analysis_args.h"
#include "apps/commands.h"
#include "base/error.h"
#include "base/format.h"

namespace clustersweep::cli {

int top(const Args& args) {
  StoreArgs store;
  std::string by = "time_to_train_s", columns, csv;
  std::size_t n = 20;
  bool json = false, all_ties = false;
  po::options_description options("Options");
  po::positional_options_description positional;
  add_store_options(options, positional, store);
  options.add_options()("by", po::value(&by)->default_value(by),
                        "rank by this column, smallest first; max:COL for largest first")(
      ",n", whole_value(&n, 1)->default_value(20), "how many rows")(
      "columns", po::value(&columns),
      "comma-separated columns to show after the axes (default: the --by column, time_to_train_s, "
      "num_gpus, mfu, energy_kwh, cost_usd)")(
      "csv", po::value(&csv),
      "also write the rows with point_id and every column to this CSV file");
  options.add_options()("all-ties", po::bool_switch(&all_ties),
                        "every row, not one for the rows equal in every column shown (the one on "
                        "the fewest GPUs, then with the least memory per GPU)");
  add_json_option(options, json);
  const auto vm = parse(args, options, positional, "top results.h5 [--by COL] [-n N] [options]",
                        "The n best feasible designs by one column (stored or priced).");
  if (!vm) return 0;
  read_pricing_flags(*vm, store);
  refuse_clobbering(store, {{csv, "--csv"}});
  OpenStore open(store);
  analysis::Objective objective;
  objective.maximize = by.rfind("max:", 0) == 0;
  objective.column = open.data.column(objective.maximize ? by.substr(4) : by, "--by").name;
  const std::vector<std::string> shown =
      columns.empty() ? analysis::metric_columns(
                            open.data, {objective.column},
                            {"time_to_train_s", "num_gpus", "mfu", "energy_kwh", "cost_usd"})
                      : open.data.column_list(columns, "--columns");
  analysis::TiedRows top;
  if (all_ties)
    top.rows = analysis::top_rows(open.data, objective, n, open.scan());
  else
    top = analysis::top_distinct_rows(open.data, objective, n, open.scan(), shown);
  const auto& rows = top.rows;
  if (json) {
    print_json(analysis::top_json(open.data, objective, top, store.where));
  } else {
    std::cout << fmt::format("Top {} of {} by {}{}:\n", rows.size(), store.store, objective.column,
                             objective.maximize ? " (largest first)" : "");
    if (top.tied() > 0)
      std::cout << wrap_words(fmt::format("{} more rows equal a shown row in every column shown; "
                                          "each row stands for its ties (the one on the fewest "
                                          "GPUs, then with the least memory; --all-ties lists "
                                          "them)",
                                          top.tied()),
                              analysis::TextTable::kWidth, "")
                << '\n';
    std::cout << '\n';
    if (rows.empty())
      std::cout << "No row matches.\n";
    else
      analysis::print_tied_table(std::cout, analysis::tied_table(open.data, top, shown));
  }
  if (!csv.empty()) {
    const auto all = open.data.column_names();
    std::vector<std::uint64_t> ids;
    for (const auto& r : rows) ids.push_back(r.row);
    analysis::write_csv(csv, open.data, all, analysis::fetch_rows(open.data, ids, all));
    if (!json) std::cout << fmt::format("\nWrote {}\n", csv);
  }
  return 0;
}

}  // namespace clustersweep::cli
