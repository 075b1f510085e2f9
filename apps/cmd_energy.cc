// clustersweep energy: re-price every design (kWh, $, t CO2e); deadline and budget questions.
#include <fmt/format.h>

#include <iostream>

#include "analysis/rank.h"
#include "apps/analysis_args.h"
#include "apps/commands.h"

namespace clustersweep::cli {

int energy(const Args& args) {
  StoreArgs store;
  bool json = false;
  po::options_description options("Options");
  po::positional_options_description positional;
  add_store_options(options, positional, store);
  options.add_options()("deadline-days", real_value(RealDomain::above(0)),
                        "also find the cheapest design that trains within this many days")(
      "budget-usd", real_value(RealDomain::above(0)),
      "also find the fastest design whose training costs at most this");
  add_json_option(options, json);
  const auto vm =
      parse(args, options, positional,
            "energy results.h5 [--pue X] [--price-per-kwh X] [--carbon-g-per-kwh X] "
            "[--gpu-hour-usd X | --capex-usd-per-gpu X --amortize-years Y] "
            "[--deadline-days D] [--budget-usd B]",
            "Re-prices every feasible design from its stored time and energy to train:\n"
            "energy_kwh = energy_to_train_j x PUE / 3.6e6; co2e_kg = energy_kwh x g/kWh / 1000;\n"
            "cost_usd = energy_kwh x price per kWh + num_gpus x time_to_train x (GPU-hour price,\n"
            "or capex / amortization years). Unset prices take the spec's values (stored with\n"
            "the results), else the documented defaults (docs/analysis.md).");
  if (!vm) return 0;
  read_pricing_flags(*vm, store);
  std::optional<double> deadline, budget;
  if (vm->count("deadline-days")) deadline = (*vm)["deadline-days"].as<double>();
  if (vm->count("budget-usd")) budget = (*vm)["budget-usd"].as<double>();
  OpenStore open(store);
  const auto report = analysis::energy_report(open.data, open.scan(), deadline, budget);
  if (json)
    print_json(analysis::energy_json(open.data, report, open.pricing_origin, store.where));
  else
    analysis::print_energy(std::cout, open.data, report, open.pricing_origin);
  return 0;
}

}  // namespace clustersweep::cli
