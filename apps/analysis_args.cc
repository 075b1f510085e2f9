#include "apps/analysis_args.h"

#include <fmt/format.h>

#include <iostream>

#include "base/error.h"

namespace clustersweep::cli {

void add_store_options(po::options_description& options,
                       po::positional_options_description& positional, StoreArgs& args) {
  options.add_options()("store", po::value(&args.store),
                        "the results store (results.h5), a positional argument")(
      "where", po::value(&args.where),
      "keep only rows where this holds, e.g. \"gpu == 'H100-SXM5-80GB' and num_gpus <= 1024\"")(
      "chunk-rows", whole_value(&args.chunk_rows, 1)->default_value(analysis::kDefaultChunkRows),
      "rows read per chunk: memory is bounded by this, not by the store size");
  add_pricing_options(options, "the spec's, else ");
  positional.add("store", 1);
}

void add_pricing_options(po::options_description& options, const std::string& defaults) {
  options.add_options()(
      "pue", real_value(RealDomain::at_least(1)),
      fmt::format("power usage effectiveness (default: {}1.2)", defaults).c_str())(
      "price-per-kwh", real_value(RealDomain::at_least(0)),
      fmt::format("electricity price, USD/kWh (default: {}0.10)", defaults).c_str())(
      "carbon-g-per-kwh", real_value(RealDomain::at_least(0)),
      fmt::format("grid carbon intensity, g CO2e/kWh (default: {}400)", defaults).c_str())(
      "gpu-hour-usd", po::value<std::string>(),
      "rented accelerator price, USD per GPU-hour: one for every accelerator (2.5), or one per "
      "accelerator (H100-SXM5-80GB=2.5,B200-180GB=5)")(
      "capex-usd-per-gpu", po::value<std::string>(),
      "accelerator purchase price, USD per GPU (with --amortize-years): one number, or one per "
      "accelerator as for --gpu-hour-usd")(
      "amortize-years", real_value(RealDomain::above(0)),
      fmt::format("years over which capex is amortized (default: {}4)", defaults).c_str());
}

analysis::PricingOverrides read_pricing_overrides(const po::variables_map& vm) {
  analysis::PricingOverrides o;
  std::optional<double>* numbers[] = {&o.pue,  &o.usd_per_kwh, &o.carbon_g_per_kwh,
                                      nullptr, nullptr,        &o.amortize_years};
  std::optional<spaces::GpuPrice>* prices[] = {
      nullptr, nullptr, nullptr, &o.gpu_hour_usd, &o.capex_usd_per_gpu, nullptr};
  for (std::size_t i = 0; i < std::size(numbers); ++i) {
    const char* flag = analysis::kPricingFlags[i] + 2;  // without "--"
    if (!vm.count(flag)) continue;
    if (numbers[i])
      *numbers[i] = vm[flag].as<double>();
    else
      *prices[i] = spaces::parse_gpu_price(vm[flag].as<std::string>(), analysis::kPricingFlags[i]);
  }
  return o;
}

void read_pricing_flags(const po::variables_map& vm, StoreArgs& args) {
  args.pricing = read_pricing_overrides(vm);
  if (args.store.empty())
    throw InputError("missing the results store: give its path, e.g. results.h5");
}

void refuse_clobbering(const StoreArgs& args, const std::vector<CommandFile>& outputs) {
  clustersweep::refuse_clobbering({{args.store, "the store being read"}}, outputs);
}

void add_json_option(po::options_description& options, bool& json) {
  options.add_options()("json", po::bool_switch(&json),
                        "print one JSON object instead of the tables: numbers unformatted, units "
                        "in the keys (schema in docs/analysis.md)");
}

void print_json(const analysis::Json& value) { std::cout << value.dump(2) << '\n'; }

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
