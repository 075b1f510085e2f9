#include "apps/analysis_args.h"

#include <fmt/format.h>

#include "base/error.h"

namespace clustersweep::cli {

void add_store_options(po::options_description& options,
                       po::positional_options_description& positional, StoreArgs& args) {
  options.add_options()("store", po::value(&args.store),
                        "the results store (results.h5), a positional argument")(
      "where", po::value(&args.where),
      "keep only rows where this holds, e.g. \"gpu == 'H100-SXM5-80GB' and num_gpus <= 1024\"")(
      "chunk-rows", po::value(&args.chunk_rows)->default_value(analysis::kDefaultChunkRows),
      "rows read per chunk: memory is bounded by this, not by the store size")(
      "pue", po::value<double>(), "power usage effectiveness (default: the spec's, else 1.2)")(
      "price-per-kwh", po::value<double>(),
      "electricity price, USD/kWh (default: the spec's, else 0.10)")(
      "carbon-g-per-kwh", po::value<double>(),
      "grid carbon intensity, g CO2e/kWh (default: the spec's, else 400)")(
      "gpu-hour-usd", po::value<double>(), "rented accelerator price, USD per GPU-hour")(
      "capex-usd-per-gpu", po::value<double>(),
      "accelerator purchase price, USD per GPU (with --amortize-years)")(
      "amortize-years", po::value<double>(),
      "years over which capex is amortized (default: the spec's, else 4)");
  positional.add("store", 1);
}

void read_pricing_flags(const po::variables_map& vm, StoreArgs& args) {
  const auto take = [&](const char* flag, std::optional<double>& field) {
    if (vm.count(flag)) field = vm[flag].as<double>();
  };
  take("pue", args.pricing.pue);
  take("price-per-kwh", args.pricing.usd_per_kwh);
  take("carbon-g-per-kwh", args.pricing.carbon_g_per_kwh);
  take("gpu-hour-usd", args.pricing.gpu_hour_usd);
  take("capex-usd-per-gpu", args.pricing.capex_usd_per_gpu);
  take("amortize-years", args.pricing.amortize_years);
  if (args.store.empty())
    throw InputError("missing the results store: give its path, e.g. results.h5");
  if (args.chunk_rows == 0) throw InputError("--chunk-rows: must be positive, got 0");
}

OpenStore::OpenStore(const StoreArgs& args)
    : source(args.store),
      data(source, analysis::resolve_pricing(source, args.pricing, &pricing_origin)),
      chunk_rows(args.chunk_rows) {
  if (!args.where.empty()) filter = analysis::Filter::parse(args.where, data);
}

analysis::ScanOptions OpenStore::scan() const {
  analysis::ScanOptions options;
  options.where = filter ? &*filter : nullptr;
  options.chunk_rows = chunk_rows;
  return options;
}

}  // namespace clustersweep::cli
