// The sweep spec parser (docs/spec-format.md): TOML text to the axes, the catalog entries and the
// options of a Space.
#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "base/error.h"
#include "base/format.h"
#include "spaces/architecture.h"
#include "spaces/frameworks.h"
#include "spaces/space_impl.h"
#include "spaces/spec_reader.h"
#include "spaces/stack_settings.h"

namespace clustersweep::spaces {

namespace {

// The file a spec's `calibration` value names: relative paths are relative to the spec's folder.
std::filesystem::path calibration_path(const std::string& value, std::string_view spec_path) {
  std::filesystem::path path(value);
  if (path.is_relative()) path = std::filesystem::path(spec_path).parent_path() / path;
  return path;
}

// A model of the spec, and the spec's value naming it (during parsing only).
struct SpecModel {
  ModelChoice choice;
  const toml::node* where = nullptr;
};

// The sorted union of the divisors of `values` (positive integers).
std::vector<double> divisors_of(const std::vector<double>& values) {
  std::vector<double> out;
  for (double v : values) {
    const auto n = static_cast<std::int64_t>(v);
    for (std::int64_t d = 1; d * d <= n; ++d) {
      if (n % d != 0) continue;
      out.push_back(static_cast<double>(d));
      out.push_back(static_cast<double>(n / d));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

class Parser {
 public:
  Parser(std::string_view text, std::string_view filename, Space::Impl& impl)
      : r_(std::string(filename)), text_(text), im_(impl) {}

  void run() {
    try {
      root_ = toml::parse(text_, r_.filename());
    } catch (const toml::parse_error& e) {
      throw InputError(fmt::format("{}: {}", r_.where(e.source()), e.description()));
    }
    check_keys(r_, root_, "",
               {"description", "calibration", "constraints", "workload", "models", "cluster",
                "plan", "pricing", "reliability", "output"});
    if (const toml::node* d = root_.get("description"); d && !d->is_string()) {
      r_.fail(*d, "description", fmt::format("must be a string, got {}", describe_node(*d)));
    }
    parse_calibration();
    parse_family();
    // A family's own keys and axes: its models, workload and plan; the cluster is shared.
    switch (im_.family) {
      case estimator::Family::transformer:
        im_.axes.resize(kNumAxes);
        im_.first_plan_axis = kTp;
        parse_models();
        parse_workload();
        parse_cluster();
        parse_plan();
        break;
      case estimator::Family::dlrm:
        im_.axes.resize(kNumDlrmAxes);
        im_.first_plan_axis = kDlrmSharding;
        parse_dlrm_workload();
        parse_cluster();
        parse_dlrm_plan();
        break;
    }
    parse_pricing();
    parse_reliability();
    parse_output();
    // Unless the spec says otherwise, a store of every point keeps the summary columns (its
    // bytes set the run's pace); the filtered modes keep a row per design or front: all of it.
    if (!im_.output_columns.given)
      im_.output_columns.kind =
          im_.keep == Keep::all ? OutputColumns::Kind::summary : OutputColumns::Kind::all;
    layout();
    parse_constraints();
  }

 private:
  const toml::table& required_table(std::string_view name, std::string_view what) {
    const toml::table* t = subtable(r_, root_, name, name);
    if (!t) {
      throw InputError(
          fmt::format("{}:1:1: {}: missing table [{}]; {}", r_.filename(), name, name, what));
    }
    return *t;
  }

  Axis& axis(int id, std::string name, std::string unit, bool is_label) {
    Axis& a = im_.axes[id];
    a.name = std::move(name);
    a.unit = std::move(unit);
    a.is_label = is_label;
    a.is_plan = id >= im_.first_plan_axis;
    return a;
  }

  void parse_models() {
    const toml::table* models = subtable(r_, root_, "models", "models");
    if (!models) return;
    for (auto&& [key, node] : *models) {
      const std::string name(key.str());
      const std::string prefix = "models." + name;
      if (!node.is_table())
        r_.fail(node, prefix,
                fmt::format("must be a table of the architecture, got {}", describe_node(node)));
      const toml::table& t = *node.as_table();
      std::vector<std::string> keys = {"layers", "hidden", "heads",   "kv_heads",    "ffn_hidden",
                                       "mlp",    "vocab",  "seq_len", "global_batch"};
      for (const ArchitectureField& f : architecture_fields()) keys.push_back(f.name);
      check_keys(r_, t, prefix, keys);
      if (Catalog::builtin().find_model(name)) {
        r_.fail(key.source(), prefix,
                fmt::format("shadows the catalog model '{}'; give the inline model another name",
                            name));
      }
      // Structured bindings are captured through an init-capture: clang before 16 cannot
      // capture them directly, and the fuzz build (docs/testing.md) uses clang.
      auto required = [&, &key = key](std::string_view field) {
        const toml::node* n = t.get(field);
        if (!n)
          r_.fail(key.source(), prefix, fmt::format("missing '{}' (a positive integer)", field));
        return static_cast<int>(
            checked_number(r_, *n, join_key(prefix, field), Kind::positive_int));
      };
      SpecModel spec_model;
      spec_model.where = &node;
      ModelChoice& m = spec_model.choice;
      m.key = name;
      m.model.layers = required("layers");
      m.model.hidden = required("hidden");
      m.model.heads = required("heads");
      m.model.vocab = required("vocab");
      m.model.kv_heads = static_cast<int>(
          number_key(r_, t, prefix, "kv_heads", Kind::positive_int, m.model.heads));
      if (const toml::node* mlp = t.get("mlp")) {
        const auto* s = mlp->as_string();
        if (!s || (s->get() != "gelu" && s->get() != "swiglu")) {
          r_.fail(*mlp, prefix + ".mlp",
                  fmt::format("must be \"gelu\" or \"swiglu\", got {}", describe_node(*mlp)));
        }
        m.model.mlp = s->get() == "gelu" ? estimator::Mlp::gelu : estimator::Mlp::swiglu;
      }
      for (const ArchitectureField& f : architecture_fields())
        m.model.*(f.member) =
            static_cast<int>(number_key(r_, t, prefix, f.name, Kind::nonnegative_int, 0));
      // An MoE model without dense layers needs no dense MLP width.
      const bool all_moe = m.model.num_experts > 0 && m.model.dense_layers == 0;
      if (m.model.mlp == estimator::Mlp::swiglu && !t.get("ffn_hidden") && !all_moe) {
        r_.fail(key.source(), prefix, "missing 'ffn_hidden' (required with mlp = \"swiglu\")");
      }
      m.model.ffn_hidden = static_cast<int>(number_key(
          r_, t, prefix, "ffn_hidden", Kind::positive_int, all_moe ? 0.0 : 4.0 * m.model.hidden));
      if (m.model.qk_head_dim == 0 && m.model.hidden % m.model.heads != 0) {
        r_.fail(
            *t.get("hidden"), prefix + ".hidden",
            fmt::format("must be divisible by heads ({}), got {}", m.model.heads, m.model.hidden));
      }
      apply_architecture_defaults(m.model);
      if (const auto problem = check_architecture(m.model); problem.field)
        r_.fail(t.get(problem.field) ? *t.get(problem.field) : node,
                join_key(prefix, problem.field), problem.message);
      if (m.model.heads % m.model.kv_heads != 0) {
        r_.fail(*t.get("kv_heads"), prefix + ".kv_heads",
                fmt::format("must divide heads ({}), got {}", m.model.heads, m.model.kv_heads));
      }
      m.seq_len = static_cast<int>(number_key(r_, t, prefix, "seq_len", Kind::positive_int, 0));
      m.global_batch = static_cast<std::int64_t>(
          number_key(r_, t, prefix, "global_batch", Kind::positive_int, 0));
      inline_models_.push_back(std::move(spec_model));
    }
  }

  // workload.family, default "transformer": which model of a training step the spec sweeps.
  void parse_family() {
    const toml::table* t = subtable(r_, root_, "workload", "workload");
    const toml::node* n = t ? t->get("family") : nullptr;
    if (!n) return;
    const auto* s = n->as_string();
    if (!s)
      r_.fail(*n, "workload.family",
              fmt::format("must be the name of a family ({}), got {}", estimator::family_names(),
                          describe_node(*n)));
    if (!estimator::parse_family(s->get(), im_.family))
      r_.fail(*n, "workload.family",
              fmt::format("unknown family '{}'; families are: {}", s->get(),
                          estimator::family_names()));
  }

  void parse_workload() {
    const toml::table& t =
        required_table("workload", "give at least: model = \"<catalog key or [models.NAME]>\"");
    check_keys(r_, t, "workload",
               {"family", "model", "seq_len", "global_batch", "precision", "training_tokens",
                "lora_rank"});
    const toml::node* model_node = t.get("model");
    if (!model_node) {
      r_.fail(t.source(), "workload",
              "missing 'model' (a catalog model such as \"gpt3-175b\", a [models.NAME] table, or a "
              "list)");
    }
    Axis& models = axis(kModel, "model", "", true);
    for (const auto& [name, at] : name_list(r_, *model_node, "workload.model")) {
      const auto inline_model =
          std::find_if(inline_models_.begin(), inline_models_.end(),
                       [&name = name](const SpecModel& m) { return m.choice.key == name; });
      ModelChoice m;
      if (inline_model != inline_models_.end()) {
        m = inline_model->choice;
      } else {
        const ModelEntry& e = Catalog::builtin().model(
            name, fmt::format("{}: workload.model", r_.where(at->source())));
        m.key = e.key;
        m.model = e.model;
        m.seq_len = e.seq_len;
        m.global_batch = e.global_batch;
      }
      model_where_.push_back(at);
      models.labels.push_back(m.key);
      im_.models.push_back(std::move(m));
    }
    // seq_len and global_batch: the spec's values, or each model's default (0 marks "the model's
    // default" when the models disagree).
    auto model_defaults = [&](AxisId id, const char* key, auto field) {
      Axis& a = axis(id, key, id == kSeqLen ? "tokens" : "sequences", false);
      if (const toml::node* n = t.get(key)) {
        a.numbers = axis_numbers(r_, *n, std::string("workload.") + key, Kind::positive_int, false);
        return;
      }
      std::vector<double> defaults;
      for (std::size_t i = 0; i < im_.models.size(); ++i) {
        const ModelChoice& m = im_.models[i];
        const double v = static_cast<double>(m.*field);
        if (v == 0) {
          r_.fail(
              *model_where_[i], "workload.model",
              fmt::format("inline model '{}' has no default {}; set workload.{} or models.{}.{}",
                          m.key, key, key, m.key, key));
        }
        if (std::find(defaults.begin(), defaults.end(), v) == defaults.end()) defaults.push_back(v);
      }
      a.numbers = {defaults.size() == 1 ? defaults.front() : 0.0};
      a.zero_means_default = defaults.size() > 1;
    };
    model_defaults(kSeqLen, "seq_len", &ModelChoice::seq_len);
    model_defaults(kGlobalBatch, "global_batch", &ModelChoice::global_batch);

    Axis& precision = axis(kPrecision, "precision", "", true);
    std::vector<int> precisions = {static_cast<int>(estimator::Precision::bf16)};
    if (const toml::node* n = t.get("precision"))
      precisions = axis_labels(r_, *n, "workload.precision", kPrecisionNames, false);
    for (int p : precisions) {
      precision.labels.push_back(kPrecisionNames[p]);
      im_.precisions.push_back(static_cast<estimator::Precision>(p));
    }
    im_.training_tokens = number_key(r_, t, "workload", "training_tokens", Kind::positive_real,
                                     kDefaultTrainingTokens);
    // LoRA fine-tuning of every model (0: full training; estimator::Workload::lora_rank).
    im_.lora_rank =
        static_cast<int>(number_key(r_, t, "workload", "lora_rank", Kind::nonnegative_int, 0));
  }

  // A cluster axis's position: the transformer's order, shifted in a recommendation-model space.
  int cl(AxisId id) const {
    switch (im_.family) {
      case estimator::Family::transformer:
        break;
      case estimator::Family::dlrm:
        return id - kDlrmClusterShift;
    }
    return id;
  }

  // [workload] of a recommendation model: catalog models, batch, precision, samples to train.
  void parse_dlrm_workload() {
    const toml::table& t = required_table(
        "workload", "give at least: family = \"dlrm\" and model = \"<catalog DLRM model>\"");
    check_keys(r_, t, "workload",
               {"family", "model", "global_batch", "precision", "training_samples", "framework"});
    const toml::node* model_node = t.get("model");
    if (!model_node)
      r_.fail(t.source(), "workload",
              "missing 'model' (a catalog recommendation model such as \"dlrmv2-dcnv2\", or a "
              "list)");
    Axis& models = axis(kDlrmModel, "model", "", true);
    for (const auto& [name, at] : name_list(r_, *model_node, "workload.model")) {
      const DlrmModelEntry& e = Catalog::builtin().dlrm_model(
          name, fmt::format("{}: workload.model", r_.where(at->source())));
      models.labels.push_back(e.key);
      im_.dlrm_models.push_back(&e);
    }
    // The batch: the spec's, or each model's (0 marks "the model's" when the models disagree).
    Axis& batch = axis(kDlrmGlobalBatch, "global_batch", "samples", false);
    if (const toml::node* n = t.get("global_batch")) {
      batch.numbers = axis_numbers(r_, *n, "workload.global_batch", Kind::positive_int, false);
    } else {
      std::vector<double> defaults;
      for (const auto* m : im_.dlrm_models)
        if (std::find(defaults.begin(), defaults.end(), double(m->global_batch)) == defaults.end())
          defaults.push_back(double(m->global_batch));
      batch.numbers = {defaults.size() == 1 ? defaults.front() : 0.0};
      batch.zero_means_default = defaults.size() > 1;
    }
    Axis& precision = axis(kDlrmPrecision, "precision", "", true);
    std::vector<int> precisions = {static_cast<int>(estimator::Precision::fp32)};
    if (const toml::node* n = t.get("precision")) {
      // The recommendation model trains in fp32, tf32, fp16 or bf16.
      static constexpr const char* kDlrmPrecisions[] = {"fp32", "tf32", "fp16", "bf16"};
      precisions = axis_labels(r_, *n, "workload.precision", kDlrmPrecisions, false);
    }
    for (int p : precisions) {
      precision.labels.push_back(kPrecisionNames[p]);
      im_.precisions.push_back(static_cast<estimator::Precision>(p));
    }
    im_.training_samples = number_key(r_, t, "workload", "training_samples", Kind::positive_real,
                                      kDefaultTrainingSamples);
    if (const toml::node* n = t.get("framework")) {
      const auto* name = n->as_string();
      estimator::DlrmFramework framework{};
      if (name && estimator::parse_dlrm_framework(name->get(), framework))
        im_.dlrm_framework = framework;
      else
        r_.fail(*n, "workload.framework",
                fmt::format("must be any, hugectr or torchrec, got {}",
                            name ? fmt::format("\"{}\"", name->get()) : describe_node(*n)));
    }
  }

  // [plan] of a recommendation model: the sharding axis.
  void parse_dlrm_plan() {
    const toml::table empty;
    const toml::table* found = subtable(r_, root_, "plan", "plan");
    const toml::table& t = found ? *found : empty;
    check_keys(r_, t, "plan", {"sharding"});
    static constexpr const char* kChoices[] = {"best",      "table", "row",    "column",
                                               "table_row", "data",  "hybrid", "fused_row"};
    Axis& a = axis(kDlrmSharding, "sharding", "", true);
    std::vector<int> choices = {0};
    if (const toml::node* n = t.get("sharding")) {
      if (const auto* all = n->as_string(); all && all->get() == "all") {
        choices.resize(std::size(kChoices));
        std::iota(choices.begin(), choices.end(), 0);
      } else {
        choices = axis_labels(r_, *n, "plan.sharding", kChoices, false);
      }
    }
    for (int c : choices) {
      a.labels.push_back(kChoices[c]);
      ShardingChoice choice;
      choice.best = c == 0;
      if (c > 0) estimator::parse_sharding(kChoices[c], choice.sharding);
      im_.shardings.push_back(choice);
    }
  }

  void parse_cluster() {
    const toml::table& t =
        required_table("cluster", "give at least: gpu = \"<accelerator>\" and nodes = <count>");
    check_keys(r_, t, "cluster",
               {"gpu",
                "nodes",
                "gpus",
                "gpus_per_node",
                "nvlink_domain",
                "nvlink_gbytes_per_s",
                "inter_node_gbps_per_gpu",
                "hbm_gb",
                "expansion_gb",
                "expansion_gbytes_per_s",
                "nvlink_latency_us",
                "inter_node_latency_us",
                "node_overhead_w",
                "power_cap_w",
                "fabric",
                "torus",
                "network",
                "oversubscription",
                "pod_gpus",
                "planes",
                "group_gpus",
                "global_taper"});
    const toml::node* gpu_node = t.get("gpu");
    if (!gpu_node) {
      r_.fail(t.source(), "cluster",
              "missing 'gpu' (an accelerator such as \"H100-SXM5-80GB\", or a list)");
    }
    Axis& gpus = axis(cl(kGpu), "gpu", "", true);
    for (const auto& [name, at] : name_list(r_, *gpu_node, "cluster.gpu")) {
      const AcceleratorEntry& e = Catalog::builtin().accelerator(
          name, fmt::format("{}: cluster.gpu", r_.where(at->source())));
      gpus.labels.push_back(e.key);
      im_.gpus.push_back(&e);
    }

    const toml::node* nodes = t.get("nodes");
    const toml::node* count = t.get("gpus");
    if (nodes && count) r_.fail(*count, "cluster.gpus", "give either 'nodes' or 'gpus', not both");
    if (!nodes && !count) {
      r_.fail(t.source(), "cluster",
              "missing 'nodes' (or 'gpus'): the cluster size to sweep, e.g. nodes = [16, 32, 64]");
    }
    im_.size_is_nodes = nodes != nullptr;
    axis(cl(kClusterSize), nodes ? "num_nodes" : "num_gpus", "", false).numbers =
        axis_numbers(r_, nodes ? *nodes : *count, nodes ? "cluster.nodes" : "cluster.gpus",
                     Kind::positive_int, false);

    // Axes whose default comes from the accelerator: one concrete value when there is one
    // accelerator, else 0 = "the accelerator's default" (docs/spec-format.md).
    auto gpu_default = [&](int id, const char* key, const char* unit, Kind kind, auto default_of) {
      Axis& a = axis(id, key, unit, false);
      if (const toml::node* n = t.get(key)) {
        a.numbers = axis_numbers(r_, *n, std::string("cluster.") + key, kind, false);
        return;
      }
      std::vector<double> defaults;
      for (const auto& g : im_.gpus) {
        const double v = default_of(g);
        if (std::find(defaults.begin(), defaults.end(), v) == defaults.end()) defaults.push_back(v);
      }
      a.numbers = {defaults.size() == 1 ? defaults.front() : 0.0};
      a.zero_means_default = defaults.size() > 1;
    };
    gpu_default(cl(kGpusPerNode), "gpus_per_node", "", Kind::positive_int,
                [](const AcceleratorEntry* g) { return double(g->default_gpus_per_node); });
    if (im_.size_is_nodes) {
      double max_gpn = 0;
      for (double v : im_.axes[cl(kGpusPerNode)].numbers) max_gpn = std::max(max_gpn, v);
      for (const auto* g : im_.gpus) max_gpn = std::max(max_gpn, double(g->default_gpus_per_node));
      for (double n : im_.axes[cl(kClusterSize)].numbers) {
        if (n * max_gpn > 2147483647.0) {
          r_.fail(*nodes, "cluster.nodes",
                  fmt::format("{} nodes of {} GPUs exceed 2^31 GPUs", format_number(n),
                              format_number(max_gpn)));
        }
      }
    }
    // The NVLink domain: default_nvlink_domain() of each accelerator and node size.
    Axis& domain = axis(cl(kNvlinkDomain), "nvlink_domain", "", false);
    if (const toml::node* n = t.get("nvlink_domain")) {
      domain.numbers = axis_numbers(r_, *n, "cluster.nvlink_domain", Kind::positive_int, false);
    } else {
      std::vector<double> resolved;
      for (const auto* g : im_.gpus) {
        for (double v : im_.axes[cl(kGpusPerNode)].numbers) {
          const int gpn = v != 0 ? static_cast<int>(v) : g->default_gpus_per_node;
          const double d = default_nvlink_domain(*g, gpn);
          if (std::find(resolved.begin(), resolved.end(), d) == resolved.end())
            resolved.push_back(d);
        }
      }
      domain.numbers = {resolved.size() == 1 ? resolved.front() : 0.0};
      domain.zero_means_default = resolved.size() > 1;
    }
    gpu_default(cl(kNvlinkGbytesPerS), "nvlink_gbytes_per_s", "GB/s", Kind::positive_real,
                [](const AcceleratorEntry* g) { return g->accelerator.nvlink_bytes_per_s / 1e9; });
    gpu_default(
        cl(kInterNodeGbpsPerGpu), "inter_node_gbps_per_gpu", "Gbit/s", Kind::positive_real,
        [&](const AcceleratorEntry* g) { return default_inter_node_gbps(*g, im_.calibration); });
    gpu_default(cl(kHbmGb), "hbm_gb", "GB", Kind::positive_real,
                [](const AcceleratorEntry* g) { return g->accelerator.hbm_bytes / 1e9; });
    Axis& expansion = axis(cl(kExpansionGb), "expansion_gb", "GB", false);
    expansion.numbers = {0};
    if (const toml::node* n = t.get("expansion_gb")) {
      expansion.numbers =
          axis_numbers(r_, *n, "cluster.expansion_gb", Kind::nonnegative_real, false);
    }
    Axis& expansion_bw = axis(cl(kExpansionGbytesPerS), "expansion_gbytes_per_s", "GB/s", false);
    const bool any_expansion = std::any_of(expansion.numbers.begin(), expansion.numbers.end(),
                                           [](double v) { return v > 0; });
    if (const toml::node* n = t.get("expansion_gbytes_per_s")) {
      expansion_bw.numbers =
          axis_numbers(r_, *n, "cluster.expansion_gbytes_per_s", Kind::positive_real, false);
    } else if (any_expansion && im_.calibration.default_expansion_gbytes_per_s > 0) {
      expansion_bw.numbers = {im_.calibration.default_expansion_gbytes_per_s};
    } else if (any_expansion) {
      r_.fail(*t.get("expansion_gb"), "cluster.expansion_gb",
              "an expansion tier needs its bandwidth: set cluster.expansion_gbytes_per_s");
    } else {
      expansion_bw.numbers = {0};
    }
    // A GPU power limit (0: none), above the idle power of every accelerator of the space.
    Axis& cap = axis(cl(kPowerCapW), "power_cap_w", "W", false);
    cap.numbers = {0};
    if (const toml::node* n = t.get("power_cap_w")) {
      cap.numbers = axis_numbers(r_, *n, "cluster.power_cap_w", Kind::nonnegative_real, false);
      for (double w : cap.numbers)
        for (const AcceleratorEntry* g : im_.gpus)
          if (w > 0 && w <= g->accelerator.idle_w)
            r_.fail(*n, "cluster.power_cap_w",
                    fmt::format("{:g} W is not above {}'s idle power ({:g} W); give caps between "
                                "it and the TDP ({:g} W), or 0 for none",
                                w, g->key, g->accelerator.idle_w, g->accelerator.tdp_w));
    }
    parse_fabric(t);
    parse_network(t);
    // Scalars: latencies default to the calibration's, node overhead to the accelerator's (-1).
    im_.nvlink_latency_us =
        number_key(r_, t, "cluster", "nvlink_latency_us", Kind::nonnegative_real, -1);
    im_.inter_node_latency_us =
        number_key(r_, t, "cluster", "inter_node_latency_us", Kind::nonnegative_real, -1);
    im_.node_overhead_w =
        number_key(r_, t, "cluster", "node_overhead_w", Kind::nonnegative_real, -1);
  }

  // The scale-up fabric: a label axis (switch, mesh, torus); without the key, the accelerators'
  // own fabric, "default" when they differ. A torus's dimensions are one shape for the space,
  // whose product must be every domain the space has.
  void parse_fabric(const toml::table& t) {
    Axis& fabric = axis(cl(kFabric), "fabric", "", true);
    // "default" (each accelerator's own) may sit beside the named fabrics: the part as built
    // against the same part on another fabric.
    static constexpr const char* kFabricLabels[] = {"switch", "mesh", "torus", "default"};
    static_assert(std::size(kFabricLabels) == estimator::kNumFabrics + 1);
    if (const toml::node* n = t.get("fabric")) {
      for (const int f : axis_labels(r_, *n, "cluster.fabric", kFabricLabels, false)) {
        fabric.labels.push_back(kFabricLabels[f]);
        im_.fabrics.push_back(f < estimator::kNumFabrics ? f : -1);
      }
    } else {
      std::vector<estimator::Fabric> own;
      for (const AcceleratorEntry* g : im_.gpus)
        if (std::find(own.begin(), own.end(), g->fabric) == own.end()) own.push_back(g->fabric);
      fabric.labels = {own.size() == 1 ? estimator::to_string(own.front()) : "default"};
      im_.fabrics = {own.size() == 1 ? static_cast<int>(own.front()) : -1};
    }
    const toml::node* n = t.get("torus");
    if (!n) return;
    const auto* text = n->as_string();
    if (!text)
      r_.fail(*n, "cluster.torus",
              fmt::format("must be a string of chip counts joined by 'x' (e.g. \"16x16\"), got {}",
                          describe_node(*n)));
    try {
      im_.torus = parse_torus(text->get(), "cluster.torus");
    } catch (const InputError& e) {
      r_.fail(*n, "cluster.torus", std::string(e.what()).substr(sizeof("cluster.torus: ") - 1));
    }
    bool any_torus = false;
    for (std::size_t i = 0; i < im_.fabrics.size(); ++i)
      for (const AcceleratorEntry* g : im_.gpus)
        any_torus =
            any_torus ||
            (im_.fabrics[i] < 0 ? g->fabric == estimator::Fabric::torus
                                : im_.fabrics[i] == static_cast<int>(estimator::Fabric::torus));
    if (!any_torus)
      r_.fail(*n, "cluster.torus",
              "a torus's dimensions need a torus fabric: set cluster.fabric = \"torus\" or use an "
              "accelerator with one");
    const std::int64_t chips = std::int64_t{im_.torus[0]} * im_.torus[1] * im_.torus[2];
    for (const AcceleratorEntry* g : im_.gpus)
      for (const double v : im_.axes[cl(kNvlinkDomain)].numbers)
        for (const double gpn : im_.axes[cl(kGpusPerNode)].numbers) {
          const double domain =
              v != 0 ? v
                     : default_nvlink_domain(
                           *g, gpn != 0 ? static_cast<int>(gpn) : g->default_gpus_per_node);
          if (domain != static_cast<double>(chips))
            r_.fail(*n, "cluster.torus",
                    fmt::format("{} is {} chips, but the scale-up domain (nvlink_domain) is {}; "
                                "give dimensions whose product is the domain",
                                text->get(), chips, format_number(domain)));
        }
  }

  // The scale-out network: its shape a label axis, its taper, pod, planes and dragonfly groups
  // number axes, by default a non-blocking fat tree. Every cluster of the space must take each of
  // its pods and groups (scale_out_problem, which the flags' path checks too).
  void parse_network(const toml::table& t) {
    Axis& network = axis(cl(kNetwork), "network", "", true);
    if (const toml::node* n = t.get("network")) {
      for (const int k : axis_labels(r_, *n, "cluster.network", estimator::kNetworkNames, false)) {
        network.labels.push_back(estimator::kNetworkNames[k]);
        im_.networks.push_back(static_cast<estimator::Network>(k));
      }
    } else {
      network.labels = {estimator::to_string(estimator::Network::fat_tree)};
      im_.networks = {estimator::Network::fat_tree};
    }
    auto numbers = [&](AxisId id, const char* key, Kind kind,
                       double fallback) -> const std::vector<double>& {
      Axis& a = axis(cl(id), key, "", false);
      a.numbers = {fallback};
      if (const toml::node* n = t.get(key))
        a.numbers = axis_numbers(r_, *n, std::string("cluster.") + key, kind, false);
      return a.numbers;
    };
    const estimator::ScaleOut defaults;
    // The scale-out speed may be an axis: a rail-only rail is refused only beyond what the
    // largest switch of the parts reaches (estimate checks the design's own).
    const double ports = im_.calibration.network.largest_switch_ports();
    auto check = [&](const estimator::ScaleOut& net, std::int64_t gpus, int gpus_per_node) {
      const ScaleOutProblem p = scale_out_problem(net, gpus, gpus_per_node, ports);
      if (!p.setting.empty()) r_.fail(*t.get(p.setting), "cluster." + p.setting, p.message);
    };
    for (const double v : numbers(kOversubscription, "oversubscription", Kind::positive_real, 1)) {
      estimator::ScaleOut net;
      net.oversubscription = v;
      check(net, 1, 1);
    }
    for (const double v : numbers(kGlobalTaper, "global_taper", Kind::positive_real, 1)) {
      estimator::ScaleOut net;
      net.global_taper = v;
      check(net, 1, 1);
    }
    const auto& planes = numbers(kPlanes, "planes", Kind::positive_int, defaults.planes);
    const auto& pods = numbers(kPodGpus, "pod_gpus", Kind::nonnegative_int, 0);
    const auto& groups = numbers(kGroupGpus, "group_gpus", Kind::nonnegative_int, 0);
    for (const AcceleratorEntry* g : im_.gpus)
      for (const double gpn_value : im_.axes[cl(kGpusPerNode)].numbers)
        for (const double size : im_.axes[cl(kClusterSize)].numbers) {
          const int gpn = gpn_value != 0 ? static_cast<int>(gpn_value) : g->default_gpus_per_node;
          const auto gpus = static_cast<std::int64_t>(im_.size_is_nodes ? size * gpn : size);
          for (const estimator::Network shape : im_.networks)
            for (const double pod : pods)
              for (const double group : groups) {
                estimator::ScaleOut net;
                net.network = shape;
                net.pod_gpus = static_cast<int>(pod);
                net.group_gpus = static_cast<int>(group);
                net.planes = static_cast<int>(*std::min_element(planes.begin(), planes.end()));
                check(net, gpus, gpn);
              }
        }
  }

  // The distinct values a design quantity takes across the space (catalog defaults resolved).
  std::vector<double> distinct(AxisId id, auto default_of) const {
    std::vector<double> out;
    auto add = [&](double v) {
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    };
    for (double v : im_.axes[id].numbers) {
      if (v != 0) {
        add(v);
      } else {
        default_of(add);
      }
    }
    return out;
  }

  void parse_plan() {
    const toml::table empty;
    const toml::table* found = subtable(r_, root_, "plan", "plan");
    const toml::table& t = found ? *found : empty;
    std::vector<std::string> keys = {"tp",
                                     "pp",
                                     "cp",
                                     "vp",
                                     "pipeline_split",
                                     "micro_batch",
                                     "zero",
                                     "recompute",
                                     "sequence_parallel",
                                     "offload",
                                     "ep",
                                     "etp",
                                     "allow_tp_across_nodes"};
    for (const StackSetting& st : stack_settings()) keys.push_back(st.name);
    check_keys(r_, t, "plan", keys);
    im_.rules.allow_tp_across_nodes = bool_key(r_, t, "plan", "allow_tp_across_nodes", false);

    // What "all" may choose from: the values the workloads and clusters can make valid.
    const auto seq_lens = distinct(kSeqLen, [&](auto add) {
      for (auto& m : im_.models) add(m.seq_len);
    });
    const auto batches = distinct(kGlobalBatch, [&](auto add) {
      for (auto& m : im_.models) add(double(m.global_batch));
    });
    const auto gpns = distinct(kGpusPerNode, [&](auto add) {
      for (auto* g : im_.gpus) add(g->default_gpus_per_node);
    });
    auto domains = distinct(kNvlinkDomain, [&](auto add) {
      for (auto* g : im_.gpus) add(g->default_nvlink_domain);
    });
    for (double g : gpns) {
      if (std::find(domains.begin(), domains.end(), g) == domains.end()) domains.push_back(g);
    }
    std::vector<double> gpu_counts;
    for (double size : im_.axes[kClusterSize].numbers) {
      if (!im_.size_is_nodes) {
        gpu_counts.push_back(size);
        continue;
      }
      for (double g : gpns) gpu_counts.push_back(size * g);
    }
    auto divides_some = [](double d, const std::vector<double>& values) {
      return std::any_of(values.begin(), values.end(),
                         [&](double v) { return std::fmod(v, d) == 0; });
    };
    std::vector<double> layers;
    std::vector<double> heads;
    for (const auto& m : im_.models) {
      layers.push_back(m.model.layers);
      heads.push_back(m.model.heads);
    }

    // "all": the candidates (sorted) that can_be_valid accepts.
    auto int_axis = [&](AxisId id, const char* key, Kind kind, auto can_be_valid,
                        const std::vector<double>& candidates, std::vector<int>& out,
                        const char* unit = "") {
      Axis& a = axis(id, key, unit, false);
      const toml::node* n = t.get(key);
      if (n)
        a.numbers = axis_numbers(r_, *n, std::string("plan.") + key, kind, true);
      else
        a.numbers = {kind == Kind::positive_int ? 1.0 : 0.0};
      if (a.numbers.empty()) {
        for (double d : candidates) {
          if (can_be_valid(d)) a.numbers.push_back(d);
        }
      }
      for (double v : a.numbers) out.push_back(static_cast<int>(v));
    };
    int_axis(
        kTp, "tp", Kind::positive_int,
        [&](double d) {
          const bool heads_ok =
              std::any_of(im_.models.begin(), im_.models.end(),
                          [&](const ModelChoice& m) { return tp_fits_heads(int(d), m.model); });
          return heads_ok && divides_some(d, gpu_counts) &&
                 (im_.rules.allow_tp_across_nodes || divides_some(d, domains));
        },
        divisors_of(heads), im_.tp);
    // The pipeline splits the spec allows (all by default); "all" for pp and vp then offers the
    // degrees one of them can place the layers on.
    std::vector<int> splits = {0, 1, 2};
    const toml::node* split_node = t.get("pipeline_split");
    if (split_node) splits = axis_labels(r_, *split_node, "plan.pipeline_split", kSplitNames, true);
    auto allows = [&](estimator::PipelineSplit split) {
      return std::find(splits.begin(), splits.end(), static_cast<int>(split)) != splits.end();
    };
    // Whether some model of the spec can place its layers on pp*vp chunks with an allowed split:
    // check_plan()'s split rules.
    auto placeable = [&](int p, int v, estimator::PipelineSplit split) {
      return allows(split) &&
             std::any_of(im_.models.begin(), im_.models.end(), [&](const ModelChoice& m) {
               return split_rule(m.model, p, v, split) == Rule::none;
             });
    };
    auto any_split = [&](int p, int v) {
      for (int sp = 0; sp < estimator::kNumPipelineSplits; ++sp)
        if (placeable(p, v, static_cast<estimator::PipelineSplit>(sp))) return true;
      return false;
    };
    std::vector<double> layer_slots = layers;
    for (double l : layers) layer_slots.push_back(l + 2);
    std::vector<double> pp_candidates = divisors_of(layer_slots);
    if (split_node && allows(estimator::PipelineSplit::uneven)) {
      // Uneven stages place any layer count: every pipeline degree that fits the GPUs. Only when
      // the spec asks for uneven splits: by default "all" keeps to the degrees that divide the
      // layers (or the layers + 2), as most recipes do, and a sweep does not grow by a pp axis of
      // mostly uneven pipelines.
      const double most = *std::max_element(layers.begin(), layers.end());
      for (double d : divisors_of(gpu_counts))
        if (d <= most) pp_candidates.push_back(d);
      std::sort(pp_candidates.begin(), pp_candidates.end());
      pp_candidates.erase(std::unique(pp_candidates.begin(), pp_candidates.end()),
                          pp_candidates.end());
    }
    int_axis(
        kPp, "pp", Kind::positive_int,
        [&](double d) { return any_split(int(d), 1) && divides_some(d, gpu_counts); },
        pp_candidates, im_.pp);
    int_axis(
        kCp, "cp", Kind::positive_int,
        [&](double d) {
          return d == 1 || (divides_some(2 * d, seq_lens) && divides_some(d, gpu_counts));
        },
        divisors_of(gpu_counts), im_.cp);
    int_axis(
        kVp, "vp", Kind::positive_int,
        [&](double d) {
          if (d == 1) return true;
          return std::any_of(im_.pp.begin(), im_.pp.end(),
                             [&](int p) { return p > 1 && any_split(p, int(d)); });
        },
        divisors_of(layer_slots), im_.vp);
    // Without the key (or with "all"): the splits that place the layers of some pipeline of the
    // space, so that a spec whose pipelines all divide the layers sweeps no split in vain. Without
    // the key, uneven only for pipelines neither other split places.
    Axis& split_axis = axis(kPipelineSplit, "pipeline_split", "", true);
    const auto* split_text = split_node ? split_node->as_string() : nullptr;
    if (!split_node || (split_text && split_text->get() == "all")) {
      using estimator::PipelineSplit;
      std::vector<int> used;
      for (int sp : splits) {
        const auto split = static_cast<PipelineSplit>(sp);
        bool any = false;
        for (int p : im_.pp)
          for (int v : im_.vp) {
            const bool placed_otherwise = split == PipelineSplit::uneven && !split_node &&
                                          (placeable(p, v, PipelineSplit::even) ||
                                           placeable(p, v, PipelineSplit::embedding_loss));
            any = any || (placeable(p, v, split) && !placed_otherwise);
          }
        if (any) used.push_back(sp);
      }
      splits = used.empty() ? std::vector<int>{0} : used;
    }
    for (int sp : splits) {
      split_axis.labels.push_back(kSplitNames[sp]);
      im_.pipeline_split.push_back(static_cast<estimator::PipelineSplit>(sp));
    }
    int_axis(
        kMicroBatch, "micro_batch", Kind::positive_int,
        [&](double d) { return divides_some(d, batches); }, divisors_of(batches), im_.micro_batch,
        "sequences");
    int_axis(
        kZero, "zero", Kind::nonnegative_int, [](double) { return true; },
        std::vector<double>{0, 1, 2, 3}, im_.zero);
    for (std::size_t i = 0; i < im_.zero.size(); ++i) {
      if (im_.zero[i] > 3) {
        const toml::node& n = *t.get("zero");
        const toml::node& at = n.is_array() ? *n.as_array()->get(i) : n;
        r_.fail(at, n.is_array() ? fmt::format("plan.zero[{}]", i) : "plan.zero",
                fmt::format("must be 0, 1, 2 or 3 (ZeRO stage), got {}", im_.zero[i]));
      }
    }

    // none, selective, full ("all": the three), or selective with its modules.
    Axis& recompute = axis(kRecompute, "recompute", "", true);
    auto add = [&](estimator::Recompute r, std::uint8_t modules) {
      recompute.labels.push_back(estimator::recompute_label(r, modules));
      im_.recompute.push_back(r);
      im_.recompute_modules.push_back(modules);
    };
    auto add_named = [&](const toml::node& n, const std::string& key) {
      const auto* text = n.as_string();
      estimator::Recompute r{};
      std::uint8_t modules = 0;
      if (!text || !estimator::parse_recompute_label(text->get(), r, modules))
        r_.fail(n, key,
                fmt::format("must be {}, a list of them or \"all\", got {}",
                            estimator::recompute_values(), describe_node(n)));
      const std::string label = estimator::recompute_label(r, modules);
      if (std::find(recompute.labels.begin(), recompute.labels.end(), label) !=
          recompute.labels.end())
        r_.fail(n, key, fmt::format("duplicate value \"{}\"", label));
      add(r, modules);
    };
    const toml::node* recompute_node = t.get("recompute");
    if (!recompute_node) {
      add(estimator::Recompute::none, 0);
    } else if (const auto* all = recompute_node->as_string(); all && all->get() == "all") {
      for (int v = 0; v < 3; ++v) add(static_cast<estimator::Recompute>(v), 0);
    } else if (const auto* list = recompute_node->as_array()) {
      if (list->empty())
        r_.fail(*recompute_node, "plan.recompute",
                fmt::format("empty list; give one or more of {}", estimator::recompute_values()));
      for (std::size_t i = 0; i < list->size(); ++i)
        add_named(*list->get(i), fmt::format("plan.recompute[{}]", i));
    } else {
      add_named(*recompute_node, "plan.recompute");
    }

    Axis& sp = axis(kSequenceParallel, "sequence_parallel", "", false);
    sp.numbers = {0};
    if (const toml::node* n = t.get("sequence_parallel")) {
      sp.numbers.clear();
      auto one = [&](const toml::node& e, const std::string& key) {
        const auto* b = e.as_boolean();
        if (!b)
          r_.fail(e, key,
                  fmt::format("must be true, false, a list of them or \"all\", got {}",
                              describe_node(e)));
        const double v = b->get() ? 1 : 0;
        if (std::find(sp.numbers.begin(), sp.numbers.end(), v) != sp.numbers.end()) {
          r_.fail(e, key, fmt::format("duplicate value {}", b->get() ? "true" : "false"));
        }
        sp.numbers.push_back(v);
      };
      if (const auto* s = n->as_string(); s && s->get() == "all") {
        sp.numbers = {0, 1};
      } else if (const auto* array = n->as_array()) {
        if (array->empty())
          r_.fail(*n, "plan.sequence_parallel", "empty list; give true, false or both");
        for (std::size_t i = 0; i < array->size(); ++i)
          one(*array->get(i), fmt::format("plan.sequence_parallel[{}]", i));
      } else {
        one(*n, "plan.sequence_parallel");
      }
    }
    for (double v : sp.numbers) im_.sequence_parallel.push_back(v != 0);

    Axis& offload = axis(kOffload, "offload", "", true);
    std::vector<int> offloads = {0};
    if (const toml::node* n = t.get("offload")) {
      offloads = axis_labels(r_, *n, "plan.offload", kOffloadNames, true);
      const auto& expansion = im_.axes[kExpansionGb].numbers;
      const bool any_expansion =
          std::any_of(expansion.begin(), expansion.end(), [](double v) { return v > 0; });
      if (const auto* s = n->as_string(); s && s->get() == "all" && !any_expansion) offloads = {0};
    }
    for (int v : offloads) {
      offload.labels.push_back(kOffloadNames[v]);
      im_.offload.push_back(static_cast<estimator::Offload>(v));
    }

    // Expert parallelism: "all" offers the degrees that divide some model's experts (ep) or some
    // NVLink domain (etp: expert tensor parallelism across nodes is never worth its traffic), and
    // that fit some cluster; a space without Mixture-of-Experts models has only ep = etp = 1.
    std::vector<double> experts;
    for (const auto& m : im_.models)
      if (m.model.num_experts > 0) experts.push_back(m.model.num_experts);
    int_axis(
        kEp, "ep", Kind::positive_int, [&](double d) { return divides_some(d, gpu_counts); },
        experts.empty() ? std::vector<double>{1} : divisors_of(experts), im_.ep);
    int_axis(
        kEtp, "etp", Kind::positive_int, [&](double d) { return divides_some(d, gpu_counts); },
        experts.empty() ? std::vector<double>{1} : divisors_of(domains), im_.etp);

    parse_stack(t);
  }

  // The software stack's axes: each setting one value, a list or "all" (every value); absent, the
  // default of estimator::Stack. Booleans are TOML booleans, the others their value names.
  void parse_stack(const toml::table& t) {
    const estimator::Stack defaults;
    const auto settings = stack_settings();
    for (int i = 0; i < kNumStackSettings; ++i) {
      const StackSetting& st = settings[static_cast<std::size_t>(i)];
      const std::string key = fmt::format("plan.{}", st.name);
      std::vector<int>& values = im_.stack[static_cast<std::size_t>(i)];
      auto one = [&](const toml::node& n, const std::string& at) {
        int v = -1;
        if (const auto* b = n.as_boolean(); b && st.boolean) v = b->get() ? 1 : 0;
        if (const auto* text = n.as_string()) v = parse_stack_value(st, text->get());
        if (v < 0)
          r_.fail(n, at,
                  fmt::format("must be {}, a list of them or \"all\", got {}", stack_values(st),
                              describe_node(n)));
        if (std::find(values.begin(), values.end(), v) != values.end())
          r_.fail(n, at,
                  fmt::format("duplicate value {}",
                              st.boolean ? (v ? "true" : "false") : st.value_name(v)));
        values.push_back(v);
      };
      const toml::node* n = t.get(st.name);
      if (!n) {
        // Unset: the tool's default, or the default of each framework the spec names, and the
        // values its token routings fix (a plan of one framework with another's default, or with
        // a default its routing replaces, is then removed by the rule framework_stack).
        const auto add = [&](int v) {
          if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
        };
        for (int f : i == 0 ? std::vector<int>{0} : im_.stack[0]) {
          const FrameworkProfile* p = framework_profile(static_cast<estimator::Framework>(f));
          add(st.get(p ? p->defaults : defaults));
          if (p)
            for (const auto& fixed : p->routing_stack)
              for (const auto& [setting, v] : fixed)
                if (static_cast<int>(setting) == i) add(v);
        }
        std::sort(values.begin(), values.end());
      } else if (const auto* all = n->as_string(); all && all->get() == "all") {
        for (int v = st.all_from; v < st.count; ++v) values.push_back(v);
      } else if (const auto* array = n->as_array()) {
        if (array->empty())
          r_.fail(*n, key, fmt::format("empty list; give one or more of {}", stack_values(st)));
        for (std::size_t j = 0; j < array->size(); ++j)
          one(*array->get(j), fmt::format("{}[{}]", key, j));
      } else {
        one(*n, key);
      }
      Axis& a = axis(kFirstStackAxis + i, st.name, "", true);
      for (int v : values) a.labels.push_back(st.value_name(v));
      if (values.size() == 1)
        st.set(im_.stack_base, values.front());
      else
        im_.swept_stack.push_back(i);
    }
  }

  // A per-GPU price: a number for every accelerator, or a table by accelerator (catalog key)
  // pricing each accelerator of cluster.gpu.
  GpuPrice gpu_price_key(const toml::table& t, const char* name) {
    GpuPrice price;
    const toml::node* n = t.get(name);
    if (!n) return price;
    const std::string key = fmt::format("pricing.{}", name);
    const toml::table* table = n->as_table();
    if (!table) {
      if (!scalar_number(*n))
        r_.fail(*n, key,
                fmt::format("must be a non-negative number, or a table of one per accelerator "
                            "(e.g. {{ \"H100-SXM5-80GB\" = 2.5, \"B200-180GB\" = 5.0 }}), got {}",
                            describe_node(*n)));
      price.all = checked_number(r_, *n, key, Kind::nonnegative_real);
      return price;
    }
    for (const auto& [gpu, value] : *table)
      price.by_gpu.emplace_back(
          std::string(gpu.str()),
          checked_number(r_, value, fmt::format("{}.{}", key, gpu.str()), Kind::nonnegative_real));
    std::vector<std::string> swept;
    for (const AcceleratorEntry* g : im_.gpus) swept.push_back(g->key);
    const std::string problem = gpu_price_problem(price, swept, "cluster.gpu");
    if (!problem.empty()) r_.fail(*n, key, problem);
    return price;
  }

  void parse_pricing() {
    const toml::table* t = subtable(r_, root_, "pricing", "pricing");
    if (!t) return;
    check_keys(r_, *t, "pricing",
               {"pue", "usd_per_kwh", "carbon_g_per_kwh", "gpu_hour_usd", "capex_usd_per_gpu",
                "amortize_years"});
    Pricing& p = im_.pricing;
    p.pue = number_key(r_, *t, "pricing", "pue", Kind::positive_real, p.pue);
    if (p.pue < 1)
      r_.fail(*t->get("pue"), "pricing.pue",
              fmt::format("must be >= 1 (facility power / IT power), got {}", p.pue));
    p.usd_per_kwh =
        number_key(r_, *t, "pricing", "usd_per_kwh", Kind::nonnegative_real, p.usd_per_kwh);
    p.carbon_g_per_kwh = number_key(r_, *t, "pricing", "carbon_g_per_kwh", Kind::nonnegative_real,
                                    p.carbon_g_per_kwh);
    p.gpu_hour_usd = gpu_price_key(*t, "gpu_hour_usd");
    p.capex_usd_per_gpu = gpu_price_key(*t, "capex_usd_per_gpu");
    p.amortize_years =
        number_key(r_, *t, "pricing", "amortize_years", Kind::positive_real, p.amortize_years);
    if (p.gpu_hour_usd.given() && p.capex_usd_per_gpu.given()) {
      r_.fail(*t->get("capex_usd_per_gpu"), "pricing.capex_usd_per_gpu",
              "give either gpu_hour_usd (rented) or capex_usd_per_gpu (owned), not both");
    }
  }

  void parse_reliability() {
    const toml::table* t = subtable(r_, root_, "reliability", "reliability");
    if (!t) return;
    std::vector<std::string> keys;
    estimator::Reliability::for_each(im_.reliability,
                                     [&](const char* name, double&) { keys.push_back(name); });
    check_keys(r_, *t, "reliability", keys);
    estimator::Reliability::for_each(im_.reliability, [&](const char* name, double& field) {
      const toml::node* n = t->get(name);
      if (!n) return;
      const std::string key = fmt::format("reliability.{}", name);
      const auto v = scalar_number(*n);
      if (estimator::Reliability::allows_infinity(name) && v && std::isinf(*v) && *v > 0) {
        field = *v;
        return;
      }
      field = checked_number(
          r_, *n, key,
          estimator::Reliability::allows_zero(name) ? Kind::nonnegative_real : Kind::positive_real);
    });
  }

  void parse_output() {
    const toml::table* t = subtable(r_, root_, "output", "output");
    if (!t) return;
    check_keys(r_, *t, "output", {"keep", "objective", "columns", "compression"});
    if (const toml::node* n = t->get("keep")) {
      const auto* s = n->as_string();
      const int k = s ? find_name(kKeepNames, s->get()) : -1;
      if (k < 0)
        r_.fail(
            *n, "output.keep",
            fmt::format("must be one of {}, got {}", quoted_list(kKeepNames), describe_node(*n)));
      im_.keep = static_cast<Keep>(k);
    }
    if (const toml::node* n = t->get("objective")) {
      const auto* s = n->as_string();
      const int k = s ? find_name(kObjectiveNames, s->get()) : -1;
      if (k < 0) {
        r_.fail(*n, "output.objective",
                fmt::format("must be one of {}, got {}", quoted_list(kObjectiveNames),
                            describe_node(*n)));
      }
      im_.objective = static_cast<Objective>(k);
    }
    if (const toml::node* n = t->get("columns")) parse_columns(*n);
    if (const toml::node* n = t->get("compression")) {
      const auto* s = n->as_string();
      if (!s || !parse_compression(s->get(), im_.compression))
        r_.fail(*n, "output.compression",
                fmt::format("must be one of {}, got {}", quoted_list(kCompressionNames),
                            describe_node(*n)));
    }
  }

  // `columns = "all" | "summary" | ["name", ...]`: the names are checked against the store's
  // columns by engine::make_schema(); here only their form.
  void parse_columns(const toml::node& n) {
    OutputColumns& c = im_.output_columns;
    c.given = true;
    const std::string message = fmt::format(
        "must be \"all\", \"summary\" or an array of column names, got {}", describe_node(n));
    if (const auto* s = n.as_string()) {
      if (s->get() == "all")
        c.kind = OutputColumns::Kind::all;
      else if (s->get() == "summary")
        c.kind = OutputColumns::Kind::summary;
      else
        r_.fail(n, "output.columns", message);
      return;
    }
    const auto* array = n.as_array();
    if (!array) r_.fail(n, "output.columns", message);
    if (array->empty())
      r_.fail(n, "output.columns",
              "an empty list keeps nothing but point_id, design_id and feasible: name the columns "
              "to keep, or use \"summary\"");
    c.kind = OutputColumns::Kind::list;
    for (const toml::node& item : *array) {
      const auto* s = item.as_string();
      if (!s)
        r_.fail(item, "output.columns",
                fmt::format("must name columns as strings, got {}", describe_node(item)));
      if (std::find(c.names.begin(), c.names.end(), s->get()) != c.names.end())
        r_.fail(item, "output.columns", fmt::format("names '{}' twice", s->get()));
      c.names.push_back(s->get());
      c.where.push_back(r_.where(item.source()));
    }
  }

  void parse_calibration() {
    const toml::node* n = root_.get("calibration");
    if (!n) {
      im_.calibration = builtin_calibration();
      im_.support = builtin_support();
      return;
    }
    const auto* s = n->as_string();
    if (!s)
      r_.fail(
          *n, "calibration",
          fmt::format("must be the path of a calibration TOML file, got {}", describe_node(*n)));
    const std::filesystem::path path = calibration_path(s->get(), r_.filename());
    std::ifstream probe(path);
    std::error_code ec;
    if (!probe || std::filesystem::is_directory(path, ec)) {
      r_.fail(*n, "calibration",
              fmt::format("cannot read '{}': {}", path.string(),
                          probe ? "it is a folder" : std::strerror(errno)));
    }
    CalibrationFile file = load_calibration_file(path.string());
    im_.calibration_file = path.string();
    im_.calibration = file.calibration;
    im_.support = std::move(file.support);
  }

  // Strides and sizes; the product must fit a 64-bit point id.
  void layout() {
    std::uint64_t stride = 1;
    for (int i = static_cast<int>(im_.axes.size()) - 1; i >= 0; --i) {
      im_.radix[i] = im_.axes[i].size();
      im_.stride[i] = stride;
      if (__builtin_mul_overflow(stride, im_.radix[i], &stride) ||
          stride > (std::uint64_t{1} << 62)) {
        throw InputError(
            fmt::format("{}:1:1: space: more than 2^62 points; sweep fewer values", r_.filename()));
      }
      if (i == im_.first_plan_axis) im_.plan_points = stride;
    }
    im_.size = stride;
    im_.designs = im_.size / im_.plan_points;
    im_.plan_fits_32 = im_.plan_points <= 0xffffffffu;
    if (im_.family == estimator::Family::transformer) {
      im_.plan_digits_used = 0;
      for (int a = kTp; a < kNumAxes; ++a)
        if (im_.radix[a] > 1) im_.plan_digits_used = a - kTp + 1;
    }
  }

  void parse_constraints() {
    const toml::node* n = root_.get("constraints");
    if (!n) return;
    const auto* array = n->as_array();
    if (!array)
      r_.fail(*n, "constraints",
              fmt::format("must be a list of expressions like \"tp * pp <= 64\", got {}",
                          describe_node(*n)));
    ExpressionNames names;
    for (const Axis& a : im_.axes)
      names.names.push_back({a.name, a.is_label ? a.labels : std::vector<std::string>{}});
    names.names.push_back({im_.size_is_nodes ? "num_gpus" : "num_nodes", {}});
    // dp is the transformer's derived plan degree.
    if (im_.family == estimator::Family::transformer) names.names.push_back({"dp", {}});
    // The design's peak facility power, MW (estimator::peak_it_power_w times the PUE).
    im_.facility_var = static_cast<int>(names.names.size());
    names.names.push_back({"facility_mw", {}});
    const int first_plan = im_.first_plan_axis;
    const int other_size = static_cast<int>(im_.axes.size());
    const auto design_var = [&](int v) {
      return v < first_plan || v == other_size || v == im_.facility_var;
    };
    for (std::size_t i = 0; i < array->size(); ++i) {
      const toml::node& e = *array->get(i);
      const std::string key = fmt::format("constraints[{}]", i);
      const auto* s = e.as_string();
      if (!s)
        r_.fail(e, key,
                fmt::format("must be an expression string like \"tp * pp <= 64\", got {}",
                            describe_node(e)));
      try {
        Expression x = Expression::compile(s->get(), names);
        im_.constraint_texts.push_back(s->get());
        const auto& read = x.names_read();
        const bool reads_plan =
            std::any_of(read.begin(), read.end(), [&](int v) { return !design_var(v); });
        if (reads_plan) {
          for (int v : read) {
            if (design_var(v) && std::find(im_.plan_constraint_design_vars.begin(),
                                           im_.plan_constraint_design_vars.end(),
                                           v) == im_.plan_constraint_design_vars.end()) {
              im_.plan_constraint_design_vars.push_back(v);
            }
          }
          im_.plan_constraints.push_back(std::move(x));
        } else {
          im_.design_constraints.push_back(std::move(x));
        }
      } catch (const ExpressionError& err) {
        r_.fail(at_column(e, s->get(), err.column()), key, err.what() + err.caret(s->get()));
      }
    }
  }

  // Where character `column` of the expression held by string node `n` is in the file: exact
  // when the string holds the expression verbatim (no escapes, one line), else the string's start.
  toml::source_region at_column(const toml::node& n, std::string_view expression,
                                std::size_t column) const {
    toml::source_region at = n.source();
    std::size_t line_start = 0;
    for (toml::source_index line = 1; line < at.begin.line; ++line) {
      line_start = text_.find('\n', line_start);
      if (line_start == std::string_view::npos) return at;
      ++line_start;
    }
    const std::size_t quote = line_start + at.begin.column - 1;
    if (quote + 1 + expression.size() <= text_.size() &&
        (text_[quote] == '"' || text_[quote] == '\'') &&
        text_.substr(quote + 1, expression.size()) == expression &&
        text_.substr(quote + 1 + expression.size(), 1) == text_.substr(quote, 1)) {
      at.begin.column += static_cast<toml::source_index>(column);
    }
    return at;
  }

  Reporter r_;
  std::string_view text_;
  Space::Impl& im_;
  toml::table root_;
  std::vector<SpecModel> inline_models_;
  std::vector<const toml::node*> model_where_;  // the spec's value naming each of im_.models
};

}  // namespace

void parse_spec(Space::Impl& impl) { Parser(impl.text, impl.filename, impl).run(); }

FrozenSpec freeze_spec(std::string_view text, const std::string& spec_path,
                       const std::string& frozen_calibration) {
  toml::table root;
  try {
    root = toml::parse(text, spec_path);
  } catch (const toml::parse_error& e) {
    throw InputError(fmt::format("{}: {}", spec_path, e.description()));
  }
  const toml::node* node = root.get("calibration");
  if (!node || !node->is_string()) return {std::string(text), ""};
  FrozenSpec out{"", calibration_path(node->as_string()->get(), spec_path).string()};
  // The value's one-line string literal ('...' or "...") on its line, replaced by the frozen
  // path in a literal string; checked by reading the result back.
  const auto line_no = node->source().begin.line;
  std::size_t line_start = 0;
  for (auto line = 1u; line < line_no; ++line) line_start = text.find('\n', line_start) + 1;
  const std::size_t line_end = std::min(text.find('\n', line_start), text.size());
  const std::string_view line = text.substr(line_start, line_end - line_start);
  const auto open = line.find_first_of("'\"", line.find('='));
  std::size_t close = std::string_view::npos;
  if (open != std::string_view::npos && line.substr(open, 3) != std::string(3, line[open]))
    for (std::size_t i = open + 1; i < line.size() && close == std::string_view::npos; ++i) {
      if (line[open] == '"' && line[i] == '\\')
        ++i;
      else if (line[i] == line[open])
        close = i;
    }
  if (close != std::string_view::npos &&
      frozen_calibration.find_first_of("'\n") == std::string::npos) {
    out.text = fmt::format("{}{}'{}'{}{}", text.substr(0, line_start), line.substr(0, open),
                           frozen_calibration, line.substr(close + 1), text.substr(line_end));
    try {
      const toml::table again = toml::parse(out.text, spec_path);
      if (again["calibration"].value<std::string>() == frozen_calibration) return out;
    } catch (const toml::parse_error&) {
    }
  }
  throw InputError(fmt::format(
      "{}:{}: calibration: write it as a one-line string so that submit can freeze a copy of it",
      spec_path, line_no));
}

}  // namespace clustersweep::spaces
