#pragma once
// Options shared by the analysis subcommands (pareto, energy, top, summary, sensitivity, report):
// the store, --where, --chunk-rows and the pricing flags that the priced columns use.
#include <memory>
#include <optional>
#include <string>

#include "analysis/dataset.h"
#include "analysis/filter.h"
#include "analysis/json.h"
#include "analysis/rank.h"
#include "analysis/source.h"
#include "apps/cli.h"
#include "base/files.h"

namespace clustersweep::cli {

struct StoreArgs {
  std::string store;
  std::string where;
  std::size_t chunk_rows = analysis::kDefaultChunkRows;
  analysis::PricingOverrides pricing;
};

// Adds the positional store argument, --where, --chunk-rows and the pricing flags.
void add_store_options(po::options_description& options,
                       po::positional_options_description& positional, StoreArgs& args);
// The pricing flags (--pue, --price-per-kwh, --gpu-hour-usd...); `defaults` opens the help's
// default ("the spec's, else ").
void add_pricing_options(po::options_description& options, const std::string& defaults);
analysis::PricingOverrides read_pricing_overrides(const po::variables_map& vm);
// Copies the pricing flags that were given into args.pricing (Boost cannot bind std::optional).
void read_pricing_flags(const po::variables_map& vm, StoreArgs& args);

// Refuses an output (a flag's file) that is the store being read or another output, before
// anything is read or written.
void refuse_clobbering(const StoreArgs& args, const std::vector<CommandFile>& outputs);

// --json: one JSON object on standard output in place of the tables (docs/analysis.md).
void add_json_option(po::options_description& options, bool& json);
void print_json(const analysis::Json& value);

// An opened store with its columns, pricing and filter.
struct OpenStore {
  analysis::StoreSource source;
  std::vector<std::string> pricing_origin;  // per pricing field: "--flag", "store" or "default"
  analysis::Dataset data;
  std::optional<analysis::Filter> filter;
  std::size_t chunk_rows;

  explicit OpenStore(const StoreArgs& args);
  analysis::ScanOptions scan() const;
};

}  // namespace clustersweep::cli
