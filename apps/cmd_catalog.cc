// clustersweep catalog: the built-in models, recommendation models and accelerators, as a table
// or JSON (spaces/data/*.toml; docs/spec-format.md, "Defaults that come from the catalog").
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "apps/commands.h"
#include "base/error.h"
#include "estimator/dlrm.h"
#include "estimator/estimator.h"
#include "spaces/catalog.h"

namespace clustersweep::cli {
namespace {

namespace est = estimator;
using Json = nlohmann::ordered_json;

constexpr const char* kKinds = "models, dlrm-models or accelerators";
constexpr const char* kAcceleratorColumns[] = {
    "gpu",    "vendor",   "bf16_tflops",    "fp8_tflops",
    "hbm_gb", "scale_up", "scale_out_gbps", "price_usd_per_chip_hour"};

// The row's name first, in a column of its own; then key=value.
std::string table_cell(const std::string& key, const Json& value, bool first) {
  if (first) return fmt::format("{:<24}", value.get<std::string>());
  if (value.is_string()) return fmt::format(" {}={}", key, value.get<std::string>());
  return fmt::format(" {}={}", key,
                     value.is_number_integer() ? fmt::format("{}", value.get<long long>())
                                               : fmt::format("{:.4g}", value.get<double>()));
}

Json models() {
  Json out = Json::array();
  for (const auto& e : spaces::Catalog::builtin().models()) {
    const est::Model& m = e.model;
    out.push_back({{"model", e.key},
                   {"params_b", est::total_params(m) / 1e9},
                   {"active_params_b", est::active_params(m) / 1e9},
                   {"layers", m.layers},
                   {"hidden", m.hidden},
                   {"heads", m.heads},
                   {"kv_heads", m.kv_heads},
                   {"ffn_hidden", m.ffn_hidden},
                   {"mlp", est::to_string(m.mlp)},
                   {"vocab", m.vocab},
                   {"num_experts", m.num_experts},
                   {"top_k", m.top_k},
                   {"moe_ffn_hidden", m.moe_ffn_hidden},
                   {"seq_len", e.seq_len},
                   {"global_batch", e.global_batch},
                   {"source", e.source}});
  }
  return out;
}

Json dlrm_models() {
  Json out = Json::array();
  for (const auto& e : spaces::Catalog::builtin().dlrm_models()) {
    const est::DlrmModel& m = e.model;
    double rows = 0, lookups = 0;
    for (int i = 0; i < m.num_tables; ++i) {
      rows += m.rows[i];
      lookups += m.pooling[i];
    }
    out.push_back({{"model", e.key},
                   {"num_tables", m.num_tables},
                   {"embedding_rows", rows},
                   {"embedding_dim", m.embedding_dim},
                   {"lookups_per_sample", lookups},
                   {"interaction", est::to_string(m.interaction)},
                   {"global_batch", e.global_batch},
                   {"source", e.source}});
  }
  return out;
}

Json accelerators() {
  Json out = Json::array();
  for (const auto& e : spaces::Catalog::builtin().accelerators()) {
    const est::Accelerator& a = e.accelerator;
    Json row = {{"gpu", e.key}, {"vendor", e.vendor}};
    for (int p = 0; p < est::kNumPrecisions; ++p)
      row[fmt::format("{}_tflops", est::to_string(static_cast<est::Precision>(p)))] =
          a.peak_flops[p] / 1e12;
    row["hbm_gb"] = a.hbm_bytes / 1e9;
    row["hbm_tbytes_per_s"] = a.hbm_bytes_per_s / 1e12;
    row["nvlink_gbytes_per_s"] = a.nvlink_bytes_per_s / 1e9;
    row["scale_up"] = spaces::fabric_label(e);
    row["fabric"] = estimator::to_string(e.fabric);
    row["torus_dims"] = e.torus_dims;
    row["max_domain"] = e.max_domain;
    row["scale_out_gbps"] = e.default_scale_out_gbps;
    row["price_usd_per_chip_hour"] = e.price_usd_per_chip_hour;
    row["cores_per_chip"] = e.cores_per_chip;
    row["tdp_w"] = a.tdp_w;
    row["idle_w"] = a.idle_w;
    row["gpus_per_node"] = e.default_gpus_per_node;
    row["nvlink_domain"] = e.default_nvlink_domain;
    row["node_overhead_w"] = e.default_node_overhead_w;
    row["expansion_gb"] = e.default_expansion_gb;
    row["expansion_gbytes_per_s"] = e.default_expansion_gbytes_per_s;
    row["price_source"] = e.price_source;
    row["source"] = e.source;
    out.push_back(std::move(row));
  }
  return out;
}

std::optional<po::variables_map> parse_catalog(const Args& args) {
  po::options_description options("Options");
  options.add_options()("kind", po::value<std::string>()->default_value("models"), kKinds)(
      "json", "print JSON (one array of objects) instead of a table");
  po::positional_options_description positional;
  positional.add("kind", 1);
  return parse(args, options, positional, "catalog [models|dlrm-models|accelerators] [--json]",
               "The built-in catalog that --model and --gpu name (spaces/data/): transformer\n"
               "models with their shapes and published batch, recommendation models with their\n"
               "tables, accelerators with their vendor, datasheet figures, scale-up fabric\n"
               "(switch 8, mesh 8, torus 2D 256 (pod 256)), usual scale-out and published price\n"
               "where known; --json adds every figure and its source.");
}

// The entries of the kind the flags name.
Json catalog_rows(const po::variables_map& vm) {
  const std::string kind = vm["kind"].as<std::string>();
  if (kind == "models") return models();
  if (kind == "dlrm-models") return dlrm_models();
  if (kind == "accelerators") return accelerators();
  throw InputError(fmt::format("KIND: must be {}, got '{}'", kKinds, kind));
}

}  // namespace

nlohmann::ordered_json catalog_json(const Args& args) {
  const auto vm = parse_catalog(args);
  return vm ? catalog_rows(*vm) : Json();
}

int catalog(const Args& args) {
  const auto vm = parse_catalog(args);
  if (!vm) return kExitOk;
  const Json rows = catalog_rows(*vm);
  if (vm->count("json")) {
    std::cout << rows.dump(2) << '\n';
    return kExitOk;
  }
  const bool accelerators = (*vm)["kind"].as<std::string>() == "accelerators";
  // The first columns of each row, as a table: the rest is --json's. Accelerators show the
  // columns that tell the vendors' parts apart; a scale-out or price of 0 is not known.
  for (const auto& row : rows) {
    std::string line;
    int shown = 0;
    for (const auto& [key, value] : row.items()) {
      if (accelerators) {
        if (std::find(std::begin(kAcceleratorColumns), std::end(kAcceleratorColumns), key) ==
                std::end(kAcceleratorColumns) ||
            (value.is_number() && value.get<double>() == 0 &&
             (key == "scale_out_gbps" || key == "price_usd_per_chip_hour")))
          continue;
      } else if (key == "source" || ++shown > 8) {
        continue;
      }
      line += table_cell(key, value, line.empty());
    }
    std::cout << line << '\n';
  }
  return kExitOk;
}

}  // namespace clustersweep::cli
