// clustersweep export: a store's rows as CSV, JSON Lines or netCDF-4, with labels as text and the
// priced columns.
#include <fmt/format.h>

#include <iostream>
#include <optional>
#include <type_traits>
#include <utility>

#include "analysis/export.h"
#include "apps/analysis_args.h"
#include "apps/commands.h"
#include "base/error.h"
#include "base/files.h"

namespace clustersweep::cli {

namespace {

// The rows written and the file, or nullopt after --help.
std::optional<std::pair<std::uint64_t, std::string>> export_store_rows(const Args& args) {
  StoreArgs store;
  std::string output, columns;
  po::options_description options("Options");
  po::positional_options_description positional;
  add_store_options(options, positional, store);
  options.add_options()("output,o", po::value(&output)->required(),
                        "the file to write: FILE.csv, FILE.jsonl (JSON Lines, one object per row) "
                        "or FILE.nc (netCDF-4 for xarray)")(
      "columns", po::value(&columns),
      "comma-separated columns (stored or priced); default: every stored column, then energy_kwh, "
      "co2e_kg, gpu_hours and cost_usd. point_id always comes first");
  const auto vm = parse(
      args, options, positional, "export results.h5 -o FILE.csv|FILE.jsonl|FILE.nc [options]",
      "Every row of a store (or those --where keeps: --where feasible for the plans that run),\n"
      "with labels as text and the priced columns under the store's pricing or the pricing\n"
      "flags, streamed in chunks.");
  if (!vm) return std::nullopt;
  read_pricing_flags(*vm, store);
  refuse_clobbering(store, {{output, "-o"}});
  analysis::export_format(output, "-o");
  OpenStore open(store);
  const std::vector<std::string> names =
      columns.empty() ? open.data.column_names() : open.data.column_list(columns, "--columns");
  std::vector<std::pair<std::string, std::string>> attributes = {
      {"Conventions", "CF-1.8"},
      {"title", "clustersweep export of " + store.store},
      {"source", store.store},
  };
  // The pricing the priced columns used, under the store's attribute names.
  spaces::Pricing::for_each(open.data.pricing(), [&](const char* name, const auto& value) {
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, double>)
      attributes.emplace_back(name, fmt::format("{}", value));
    else
      attributes.emplace_back(name, spaces::to_string(value));
  });
  if (!store.where.empty()) attributes.emplace_back("where", store.where);
  if (auto spec = open.source.string_attribute("spec")) attributes.emplace_back("spec", *spec);
  return std::pair{analysis::export_rows(open.data, names, open.scan(), output, attributes),
                   output};
}

}  // namespace

std::uint64_t export_rows(const Args& args) {
  const auto written = export_store_rows(args);
  return written ? written->first : 0;
}

int export_store(const Args& args) {
  if (const auto written = export_store_rows(args))
    std::cout << fmt::format("Wrote {} rows to {}\n", written->first, written->second);
  return 0;
}

}  // namespace clustersweep::cli
