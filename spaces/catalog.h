#pragma once
// The built-in catalog of accelerators and models, and the estimator's calibration, read from
// the TOML data files in spaces/data/ (embedded at build time). Every number carries its source
// in those files.
#include <string>
#include <string_view>
#include <vector>

#include "estimator/dlrm.h"
#include "estimator/estimator.h"
#include "spaces/support.h"

namespace clustersweep::spaces {

struct AcceleratorEntry {
  std::string key;  // e.g. "H100-SXM5-80GB"
  estimator::Accelerator accelerator;
  int default_gpus_per_node = 8;
  int default_nvlink_domain = 8;
  double default_node_overhead_w = 0;  // per server/tray beyond the GPUs
  // Who makes the part ("nvidia", "amd", ...): which software stacks run on it, e.g. HugeCTR's
  // whole-step CUDA graphs only where CUDA runs (spaces/frameworks.h).
  std::string vendor = "nvidia";
  std::string source;  // where the numbers come from
  // The scale-up fabric of the part's domain; with a torus, its number of dimensions (2 or 3),
  // whose sizes follow from the domain's chip count (spaces/fabric.h).
  estimator::Fabric fabric = estimator::Fabric::switched;
  int torus_dims = 0;
  int max_domain = 0;                 // the largest scale-up domain built (NVL72, a TPU pod)
  double default_scale_out_gbps = 0;  // the usual scale-out per chip, Gbit/s one direction
  int cores_per_chip = 1;  // compute cores the software may count as devices (TPU v7, Trainium)
  double price_usd_per_chip_hour = 0;  // a published on-demand price, 0 = none
  std::string price_source;
  // A memory-expansion tier every such part has (GH200's Grace LPDDR5X behind NVLink-C2C), per
  // chip; 0 = none. The spec's expansion_gb and expansion_gbytes_per_s are given per point and
  // override it.
  double default_expansion_gb = 0;
  double default_expansion_gbytes_per_s = 0;  // one direction
};

// The part's scale-up fabric in a few words: "switch 8", "mesh 8", "torus 2D 256 (pod 256)": its
// usual domain, and its largest in parentheses (always for a torus, else where it is larger).
std::string fabric_label(const AcceleratorEntry& entry);

struct ModelEntry {
  std::string key;  // lower-case, e.g. "gpt3-175b", "llama3-70b"
  estimator::Model model;
  int seq_len = 2048;
  std::int64_t global_batch = 1536;  // the published training batch, in sequences
  std::string source;
};

// A recommendation model (spaces/data/dlrm_models.toml).
struct DlrmModelEntry {
  std::string key;                   // lower-case, e.g. "dlrmv2-dcnv2"
  std::vector<std::string> aliases;  // names published runs use, e.g. "DLRMv2-DCNv2-MLPerf"
  estimator::DlrmModel model;
  std::int64_t global_batch = 0;
  std::string source;
};

class Catalog {
 public:
  // The embedded catalog (spaces/data/accelerators.toml, models.toml).
  static const Catalog& builtin();
  // Parses catalog TOML text; errors name `filename:line:column`.
  static Catalog parse(std::string_view accelerators_toml, std::string_view models_toml,
                       std::string_view accelerators_name = "accelerators.toml",
                       std::string_view models_name = "models.toml");

  // nullptr when unknown.
  const AcceleratorEntry* find_accelerator(std::string_view key) const noexcept;
  const ModelEntry* find_model(std::string_view key) const noexcept;
  // Throw InputError "<what>: unknown accelerator 'X'; did you mean 'Y' or 'Z'?" where `what`
  // names the flag or file:line:column key that holds the name.
  const AcceleratorEntry& accelerator(std::string_view key, std::string_view what) const;
  const ModelEntry& model(std::string_view key, std::string_view what) const;

  // By key or alias (aliases without regard to case); nullptr when unknown.
  const DlrmModelEntry* find_dlrm_model(std::string_view name) const noexcept;
  const DlrmModelEntry& dlrm_model(std::string_view name, std::string_view what) const;

  const std::vector<AcceleratorEntry>& accelerators() const noexcept { return accelerators_; }
  const std::vector<ModelEntry>& models() const noexcept { return models_; }
  const std::vector<DlrmModelEntry>& dlrm_models() const noexcept { return dlrm_models_; }

  // Parses dlrm_models.toml text into this catalog.
  void parse_dlrm_models(std::string_view toml, std::string_view filename);

 private:
  std::vector<AcceleratorEntry> accelerators_;
  std::vector<ModelEntry> models_;
  std::vector<DlrmModelEntry> dlrm_models_;
};

// The scale-out network's parts (spaces/data/network.toml) by speed: of each kind, the first part
// of each switch speed. Errors name `filename:line:column`.
estimator::NetworkCatalog parse_network_parts(std::string_view toml, std::string_view filename);

// The fitted calibration (spaces/data/calibration.toml) with the network's parts, and a user's
// override file.
const estimator::Calibration& builtin_calibration();
estimator::Calibration load_calibration(const std::string& path);
// A calibration file read once: its parameters and its support tables (the built-in ones for
// the families it has none of).
struct CalibrationFile {
  estimator::Calibration calibration;
  CalibrationSupport support;
};
CalibrationFile load_calibration_file(const std::string& path);
estimator::Calibration parse_calibration(std::string_view toml, std::string_view filename);
// As parse_calibration, but keys the text omits keep their value in `base` (a user's file may give
// only the parameters it measured; the others keep the built-in values).
estimator::Calibration parse_calibration(std::string_view toml, std::string_view filename,
                                         const estimator::Calibration& base);
// The calibration as TOML text (format_version 1), every field with its doc comment, and its
// support tables; `header` is written as comment lines at the top.
std::string format_calibration(const estimator::Calibration& calibration, std::string_view header,
                               const CalibrationSupport& support);

}  // namespace clustersweep::spaces
