#include "spaces/catalog.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <sstream>

#include "base/error.h"
#include "base/files.h"
#include "base/names.h"
#include "estimator/dlrm.h"
#include "spaces/architecture.h"
#include "spaces/embedded.h"
#include "spaces/toml_text.h"

namespace clustersweep::spaces {

std::string where(std::string_view file, const toml::source_region& region) {
  return fmt::format("{}:{}:{}", file, region.begin.line, region.begin.column);
}

toml::table parse_toml(std::string_view text, std::string_view file) {
  try {
    return toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    throw InputError(fmt::format("{}: {}", where(file, e.source()), e.description()));
  }
}

std::string toml_quoted(std::string_view text) {
  // Without the formatter's default literal strings ('...'): one quoting for every string written.
  std::ostringstream out;
  const toml::value<std::string> value{std::string(text)};
  out << toml::toml_formatter{value, toml::format_flags::allow_unicode_strings};
  return out.str();
}

std::string_view embedded_text(std::string_view name) {
  for (const auto& file : embedded::catalog())
    if (file.name == name) return file.text;
  throw Error(fmt::format("built-in data file '{}' is missing from this build", name));
}

std::string fabric_label(const AcceleratorEntry& entry) {
  std::string label = estimator::to_string(entry.fabric);
  if (entry.fabric == estimator::Fabric::torus) label += fmt::format(" {}D", entry.torus_dims);
  label += fmt::format(" {}", entry.default_nvlink_domain);
  // A TPU slice is a part of its pod, so the pod is always named; a switch or mesh domain only
  // where the part is also built larger (NVL72 beside HGX).
  if (entry.fabric == estimator::Fabric::torus)
    label += fmt::format(" (pod {})", entry.max_domain);
  else if (entry.max_domain > entry.default_nvlink_domain)
    label += fmt::format(" (max {})", entry.max_domain);
  return label;
}

namespace {

using estimator::Calibration;
using estimator::Precision;

void check_format_version(const toml::table& root, std::string_view file) {
  const toml::node* node = root.get("format_version");
  if (!node) throw InputError(fmt::format("{}:1:1: format_version: missing; expected 1", file));
  const auto version = node->value<std::int64_t>();
  if (!version || *version != 1)
    throw InputError(
        fmt::format("{}: format_version: unsupported version; this clustersweep reads 1",
                    where(file, node->source())));
}

// Reads the keys of one table, each at most once, and rejects keys it was not asked for.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string_view file, std::string context)
      : table_(table), file_(file), context_(std::move(context)) {}

  std::string string(const char* key) {
    const toml::node& node = require(key);
    const auto value = node.value<std::string>();
    if (!value) fail(node, key, "must be a string");
    return *value;
  }
  std::string optional_string(const char* key) {
    seen_.emplace_back(key);
    const toml::node* node = table_.get(key);
    if (!node) return {};
    const auto value = node->value<std::string>();
    if (!value) fail(*node, key, "must be a string");
    return *value;
  }
  double number(const char* key, bool allow_zero = false) {
    return checked_number(require(key), key, allow_zero);
  }
  double optional_number(const char* key, double fallback, bool allow_zero = true) {
    seen_.emplace_back(key);
    const toml::node* node = table_.get(key);
    return node ? checked_number(*node, key, allow_zero) : fallback;
  }
  bool optional_bool(const char* key, bool fallback) {
    seen_.emplace_back(key);
    const toml::node* node = table_.get(key);
    if (!node) return fallback;
    const auto value = node->value_exact<bool>();
    if (!value) fail(*node, key, fmt::format("must be true or false, got {}", text_of(*node)));
    return *value;
  }
  int integer(const char* key) {
    const toml::node& node = require(key);
    const auto value = node.value_exact<std::int64_t>();
    if (!value || *value < 1 || *value > (1LL << 30))
      fail(node, key, fmt::format("must be a positive integer, got {}", text_of(node)));
    return static_cast<int>(*value);
  }
  // A list of positive numbers, or one number standing for `count` copies of it.
  std::vector<double> numbers(const char* key, std::size_t count, bool allow_scalar) {
    const toml::node& node = require(key);
    std::vector<double> out;
    if (const auto* array = node.as_array()) {
      for (const toml::node& item : *array) out.push_back(checked_number(item, key, false));
      if (count > 0 && out.size() != count)
        fail(node, key,
             fmt::format("must have {} values (one per table), got {}", count, out.size()));
    } else if (allow_scalar) {
      out.assign(count, checked_number(node, key, false));
    } else {
      fail(node, key, fmt::format("must be a list of positive numbers, got {}", text_of(node)));
    }
    if (out.empty()) fail(node, key, "must not be empty");
    return out;
  }
  bool has(const char* key) const { return table_.get(key) != nullptr; }
  std::vector<std::string> optional_strings(const char* key) {
    seen_.emplace_back(key);
    std::vector<std::string> out;
    const toml::node* node = table_.get(key);
    if (!node) return out;
    const auto* array = node->as_array();
    if (!array) fail(*node, key, "must be a list of strings");
    for (const toml::node& item : *array) {
      const auto value = item.value<std::string>();
      if (!value) fail(item, key, "must be a list of strings");
      out.push_back(*value);
    }
    return out;
  }
  int optional_integer(const char* key, int fallback) {
    if (!table_.get(key)) {
      seen_.emplace_back(key);
      return fallback;
    }
    return integer(key);
  }
  const toml::table& subtable(const char* key) {
    const toml::node& node = require(key);
    if (!node.is_table()) fail(node, key, "must be a table");
    return *node.as_table();
  }
  // Throws on the first key that was never asked for (a typo would otherwise be silently ignored).
  void finish() const {
    for (const auto& [key, node] : table_) {
      if (std::find(seen_.begin(), seen_.end(), key.str()) != seen_.end()) continue;
      throw InputError(fmt::format("{}: {}.{}: unknown key; valid keys: {}",
                                   where(file_, key.source()), context_, key.str(),
                                   fmt::join(seen_, ", ")));
    }
  }
  [[noreturn]] void fail(const toml::node& node, std::string_view key,
                         const std::string& what) const {
    throw InputError(
        fmt::format("{}: {}.{}: {}", where(file_, node.source()), context_, key, what));
  }
  const std::string& context() const { return context_; }

 private:
  const toml::node& require(const char* key) {
    seen_.emplace_back(key);
    const toml::node* node = table_.get(key);
    if (!node)
      throw InputError(
          fmt::format("{}: {}: missing key '{}'", where(file_, table_.source()), context_, key));
    return *node;
  }
  double checked_number(const toml::node& node, const char* key, bool allow_zero) const {
    const auto value = node.value<double>();
    if (!value || !std::isfinite(*value) || *value < 0 || (!allow_zero && *value == 0))
      fail(node, key,
           fmt::format("must be a {} number, got {}", allow_zero ? "non-negative" : "positive",
                       text_of(node)));
    return *value;
  }
  static std::string text_of(const toml::node& node) {
    std::ostringstream out;
    node.visit([&out](const auto& n) { out << n; });
    return out.str();
  }

  const toml::table& table_;
  std::string_view file_;
  std::string context_;
  std::vector<std::string> seen_;
};

using estimator::kPrecisionNames;

const toml::array& array_of_tables(const toml::table& root, const char* key,
                                   std::string_view file) {
  const toml::node* node = root.get(key);
  if (!node || !node->is_array_of_tables())
    throw InputError(fmt::format("{}:1:1: expected one or more [[{}]] tables", file, key));
  return *node->as_array();
}

// fabric, torus_dims and max_domain: a torus names its dimensions, nothing else may.
void parse_fabric(TableReader& r, const toml::table& table, AcceleratorEntry& entry) {
  using estimator::Fabric;
  if (std::string fabric = r.optional_string("fabric"); !fabric.empty()) {
    if (!estimator::parse_fabric(fabric, entry.fabric))
      r.fail(*table.get("fabric"), "fabric",
             fmt::format("must be one of {}, got '{}'", fmt::join(estimator::kFabricNames, ", "),
                         fabric));
  }
  const toml::node* dims = table.get("torus_dims");
  entry.torus_dims = r.optional_integer("torus_dims", 0);
  if (entry.fabric == Fabric::torus) {
    if (!dims)
      r.fail(
          *table.get("fabric"), "torus_dims",
          fmt::format("missing; a torus needs its dimensions, 2 or {}", estimator::kMaxTorusDims));
    if (entry.torus_dims < 2 || entry.torus_dims > estimator::kMaxTorusDims)
      r.fail(*dims, "torus_dims",
             fmt::format("must be 2 or {}, got {}", estimator::kMaxTorusDims, entry.torus_dims));
  } else if (dims) {
    r.fail(*dims, "torus_dims",
           fmt::format("only a torus has dimensions; this part's fabric is \"{}\"",
                       estimator::to_string(entry.fabric)));
  }
  entry.max_domain = r.optional_integer("max_domain", entry.default_nvlink_domain);
  if (entry.max_domain < entry.default_nvlink_domain)
    r.fail(*table.get("max_domain"), "max_domain",
           fmt::format("must be at least nvlink_domain ({}), got {}", entry.default_nvlink_domain,
                       entry.max_domain));
}

AcceleratorEntry parse_accelerator(const toml::table& table, std::string_view file) {
  TableReader r(table, file, "accelerator");
  AcceleratorEntry entry;
  entry.key = r.string("key");
  TableReader peak_reader(r.subtable("peak_tflops"), file,
                          fmt::format("accelerator '{}'.peak_tflops", entry.key));
  bool any = false;
  for (int i = 0; i < estimator::kNumPrecisions; ++i) {
    const double tflops = peak_reader.optional_number(kPrecisionNames[i], 0);
    entry.accelerator.peak_flops[i] = tflops * 1e12;
    any = any || tflops > 0;
  }
  peak_reader.finish();
  if (!any) r.fail(table, "peak_tflops", "needs at least one precision");
  entry.accelerator.hbm_bytes = r.number("hbm_gb") * 1e9;
  entry.accelerator.hbm_bytes_per_s = r.number("hbm_gbytes_per_s") * 1e9;
  entry.accelerator.nvlink_bytes_per_s = r.number("nvlink_gbytes_per_s") * 1e9;
  entry.accelerator.tdp_w = r.number("tdp_w");
  entry.accelerator.idle_w = r.number("idle_w", true);
  entry.accelerator.fp8_tn_only = r.optional_bool("fp8_tn_only", false);
  entry.accelerator.legacy_attention_share = r.optional_number("legacy_attention_share", 1, false);
  if (entry.accelerator.legacy_attention_share > 1)
    r.fail(*table.get("legacy_attention_share"), "legacy_attention_share",
           fmt::format("is a share of the part's own attention rate, at most 1, got {}",
                       entry.accelerator.legacy_attention_share));
  entry.default_node_overhead_w = r.optional_number("node_overhead_w", 0);
  entry.default_gpus_per_node = r.integer("gpus_per_node");
  entry.default_nvlink_domain = r.integer("nvlink_domain");
  entry.source = r.string("source");
  r.optional_string("idle_source");
  if (std::string vendor = r.optional_string("vendor"); !vendor.empty()) {
    static constexpr const char* kVendors[] = {"nvidia", "amd", "google", "intel", "aws"};
    if (std::find(std::begin(kVendors), std::end(kVendors), vendor) == std::end(kVendors))
      r.fail(*table.get("vendor"), "vendor",
             fmt::format("must be one of {}, got '{}'", fmt::join(kVendors, ", "), vendor));
    entry.vendor = std::move(vendor);
  }
  parse_fabric(r, table, entry);
  entry.default_scale_out_gbps = r.optional_number("scale_out_gbps", 0);
  entry.cores_per_chip = r.optional_integer("cores_per_chip", 1);
  entry.price_usd_per_chip_hour = r.optional_number("price_usd_per_chip_hour", 0, false);
  entry.price_source = r.optional_string("price_source");
  // A price without its source could not be checked, and a source without a price says nothing.
  if (entry.price_source.empty() != (entry.price_usd_per_chip_hour == 0)) {
    const bool has_price = entry.price_usd_per_chip_hour > 0;
    const char* given = has_price ? "price_usd_per_chip_hour" : "price_source";
    r.fail(*table.get(given), given,
           fmt::format("needs {} too (both or neither)",
                       has_price ? "price_source" : "price_usd_per_chip_hour"));
  }
  entry.default_expansion_gb = r.optional_number("expansion_gb", 0, false);
  entry.default_expansion_gbytes_per_s = r.optional_number("expansion_gbytes_per_s", 0, false);
  if (entry.default_expansion_gbytes_per_s > 0 && entry.default_expansion_gb == 0)
    r.fail(*table.get("expansion_gbytes_per_s"), "expansion_gbytes_per_s",
           "needs expansion_gb, the tier's capacity");
  r.finish();
  return entry;
}

ModelEntry parse_model(const toml::table& table, std::string_view file) {
  TableReader r(table, file, "model");
  ModelEntry entry;
  entry.key = r.string("key");
  for (char ch : entry.key)
    if (std::isupper(static_cast<unsigned char>(ch)))
      r.fail(*table.get("key"), "key", fmt::format("must be lower-case, got '{}'", entry.key));
  estimator::Model& m = entry.model;
  m.layers = r.integer("layers");
  m.hidden = r.integer("hidden");
  m.heads = r.integer("heads");
  m.kv_heads = r.optional_integer("kv_heads", m.heads);
  m.ffn_hidden = r.optional_integer("ffn_hidden", 0);
  for (const ArchitectureField& f : architecture_fields()) {
    const double value = r.optional_number(f.name, 0);
    if (value != std::floor(value) || value > (1 << 30))
      r.fail(*table.get(f.name), f.name, fmt::format("must be a non-negative integer"));
    m.*(f.member) = static_cast<int>(value);
  }
  const std::string mlp = r.string("mlp");
  if (mlp == "gelu")
    m.mlp = estimator::Mlp::gelu;
  else if (mlp == "swiglu")
    m.mlp = estimator::Mlp::swiglu;
  else
    r.fail(*table.get("mlp"), "mlp",
           fmt::format("must be \"gelu\" or \"swiglu\", got \"{}\"", mlp));
  m.vocab = r.integer("vocab");
  entry.seq_len = r.integer("seq_len");
  entry.global_batch = r.integer("global_batch");
  entry.source = r.string("source");
  r.finish();
  apply_architecture_defaults(m);
  if (m.heads % m.kv_heads != 0)
    r.fail(table, "kv_heads", fmt::format("{} does not divide heads ({})", m.kv_heads, m.heads));
  if (const auto problem = check_architecture(m); problem.field)
    r.fail(table.get(problem.field) ? *table.get(problem.field)
                                    : static_cast<const toml::node&>(table),
           problem.field, problem.message);
  return entry;
}

// Widths of an MLP; at most kMaxMlpLayers.
std::array<int, estimator::kMaxMlpLayers> mlp_widths(TableReader& r, const toml::table& t,
                                                     const char* key) {
  const auto widths = r.numbers(key, 0, false);
  if (widths.size() > estimator::kMaxMlpLayers)
    r.fail(*t.get(key), key, fmt::format("at most {} layers", estimator::kMaxMlpLayers));
  std::array<int, estimator::kMaxMlpLayers> out{};
  for (std::size_t i = 0; i < widths.size(); ++i) out[i] = static_cast<int>(widths[i]);
  return out;
}

}  // namespace

Catalog Catalog::parse(std::string_view accelerators_toml, std::string_view models_toml,
                       std::string_view accelerators_name, std::string_view models_name) {
  Catalog catalog;
  const toml::table accelerators = parse_toml(accelerators_toml, accelerators_name);
  check_format_version(accelerators, accelerators_name);
  for (const auto& node : array_of_tables(accelerators, "accelerator", accelerators_name)) {
    AcceleratorEntry entry = parse_accelerator(*node.as_table(), accelerators_name);
    if (catalog.find_accelerator(entry.key))
      throw InputError(fmt::format("{}: accelerator.key: '{}' is defined twice",
                                   where(accelerators_name, node.source()), entry.key));
    catalog.accelerators_.push_back(std::move(entry));
  }
  const toml::table models = parse_toml(models_toml, models_name);
  check_format_version(models, models_name);
  for (const auto& node : array_of_tables(models, "model", models_name)) {
    ModelEntry entry = parse_model(*node.as_table(), models_name);
    if (catalog.find_model(entry.key))
      throw InputError(fmt::format("{}: model.key: '{}' is defined twice",
                                   where(models_name, node.source()), entry.key));
    catalog.models_.push_back(std::move(entry));
  }
  return catalog;
}

const Catalog& Catalog::builtin() {
  static const Catalog catalog = [] {
    Catalog c = parse(embedded_text("accelerators.toml"), embedded_text("models.toml"));
    c.parse_dlrm_models(embedded_text("dlrm_models.toml"), "dlrm_models.toml");
    return c;
  }();
  return catalog;
}

void Catalog::parse_dlrm_models(std::string_view text, std::string_view filename) {
  const toml::table root = parse_toml(text, filename);
  check_format_version(root, filename);
  for (const auto& node : array_of_tables(root, "dlrm_model", filename)) {
    const toml::table& t = *node.as_table();
    DlrmModelEntry entry;
    TableReader r(t, filename, "dlrm_model");
    entry.key = r.string("key");
    if (find_dlrm_model(entry.key))
      r.fail(t, "key", fmt::format("'{}' is defined twice", entry.key));
    entry.aliases = r.optional_strings("aliases");
    estimator::DlrmModel& m = entry.model;
    m.embedding_dim = r.integer("embedding_dim");
    m.dense_features = r.integer("dense_features");
    if (r.has("table_rows")) {
      const auto rows = r.numbers("table_rows", 0, false);
      if (rows.size() > estimator::kMaxTables)
        r.fail(*t.get("table_rows"), "table_rows",
               fmt::format("at most {} tables", estimator::kMaxTables));
      m.num_tables = static_cast<int>(rows.size());
      std::copy(rows.begin(), rows.end(), m.rows.begin());
    } else {
      const double total = r.number("total_rows");
      const std::string like = r.string("rows_like");
      const DlrmModelEntry* shape = find_dlrm_model(like);
      if (!shape)
        r.fail(*t.get("rows_like"), "rows_like",
               fmt::format("'{}' is not a model defined above", like));
      m.num_tables = shape->model.num_tables;
      m.rows = shape->model.rows;
      estimator::scale_table_rows(m, total);
    }
    const auto pooling = r.numbers("pooling", static_cast<std::size_t>(m.num_tables), true);
    std::copy(pooling.begin(), pooling.end(), m.pooling.begin());
    m.bottom_mlp = mlp_widths(r, t, "bottom_mlp");
    m.top_mlp = mlp_widths(r, t, "top_mlp");
    const std::string interaction = r.string("interaction");
    if (!estimator::parse_interaction(interaction, m.interaction))
      r.fail(*t.get("interaction"), "interaction",
             fmt::format("must be \"dot\" or \"dcnv2\", got \"{}\"", interaction));
    m.cross_layers = r.optional_integer("cross_layers", m.cross_layers);
    m.cross_rank = r.optional_integer("cross_rank", m.cross_rank);
    const std::string optimizer = r.string("optimizer");
    if (!estimator::parse_sparse_optimizer(optimizer, m.optimizer))
      r.fail(*t.get("optimizer"), "optimizer",
             fmt::format("must be sgd, rowwise_adagrad, adagrad or adam, got \"{}\"", optimizer));
    m.index_skew = r.optional_number("index_skew", m.index_skew);
    entry.global_batch = r.integer("global_batch");
    entry.source = r.string("source");
    r.finish();
    dlrm_models_.push_back(std::move(entry));
  }
}

const DlrmModelEntry* Catalog::find_dlrm_model(std::string_view name) const noexcept {
  const auto same = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) ==
                    std::tolower(static_cast<unsigned char>(y));
           });
  };
  for (const auto& entry : dlrm_models_) {
    if (entry.key == name) return &entry;
    for (const auto& alias : entry.aliases)
      if (same(alias, name)) return &entry;
  }
  return nullptr;
}

const DlrmModelEntry& Catalog::dlrm_model(std::string_view name, std::string_view what) const {
  if (const auto* entry = find_dlrm_model(name)) return *entry;
  std::vector<std::string> keys;
  for (const auto& entry : dlrm_models_) keys.push_back(entry.key);
  throw InputError(
      fmt::format("{}: unknown recommendation model '{}'{}", what, name, did_you_mean(name, keys)));
}

const AcceleratorEntry* Catalog::find_accelerator(std::string_view key) const noexcept {
  for (const auto& entry : accelerators_)
    if (entry.key == key) return &entry;
  return nullptr;
}

const ModelEntry* Catalog::find_model(std::string_view key) const noexcept {
  for (const auto& entry : models_)
    if (entry.key == key) return &entry;
  return nullptr;
}

const AcceleratorEntry& Catalog::accelerator(std::string_view key, std::string_view what) const {
  if (const auto* entry = find_accelerator(key)) return *entry;
  std::vector<std::string> keys;
  for (const auto& entry : accelerators_) keys.push_back(entry.key);
  throw InputError(
      fmt::format("{}: unknown accelerator '{}'{}", what, key, did_you_mean(key, keys)));
}

const ModelEntry& Catalog::model(std::string_view key, std::string_view what) const {
  if (const auto* entry = find_model(key)) return *entry;
  std::vector<std::string> keys;
  for (const auto& entry : models_) keys.push_back(entry.key);
  throw InputError(fmt::format("{}: unknown model '{}'{}", what, key, did_you_mean(key, keys)));
}

namespace {

// Reads the parameters of one section ([calibration] or [dlrm]) into `target` by its field table.
template <class Field, class Target>
void read_calibration_section(const toml::table& section, std::string_view name, const Field* begin,
                              const Field* end, Target& target, std::string_view filename) {
  for (const auto& [key, node] : section) {
    const Field* field = nullptr;
    for (auto* f = begin; f != end; ++f)
      if (key.str() == f->name) field = f;
    if (!field) {
      std::vector<std::string> names;
      for (auto* f = begin; f != end; ++f) names.emplace_back(f->name);
      throw InputError(fmt::format("{}: {}.{}: unknown parameter{}", where(filename, key.source()),
                                   name, key.str(), did_you_mean(key.str(), names)));
    }
    const auto value = node.template value<double>();
    if (!value || !std::isfinite(*value) || *value < 0)
      throw InputError(fmt::format("{}: {}.{}: must be a non-negative number",
                                   where(filename, node.source()), name, key.str()));
    target.*(field->member) = *value;
  }
}

template <class Field, class Target>
std::string format_calibration_section(std::string_view name, const Field* begin, const Field* end,
                                       const Target& target) {
  std::string out = fmt::format("[{}]\n", name);
  for (auto* f = begin; f != end; ++f) {
    out += fmt::format("# {}{}\n", f->doc,
                       f->lo < f->hi ? fmt::format(" (fitted within [{:g}, {:g}])", f->lo, f->hi)
                       : estimator::is_interval_field(f->name)
                           ? " (conformal, from the held-out residuals)"
                           : " (fixed)");
    out += fmt::format("{} = {:.6g}\n", f->name, target.*(f->member));
  }
  return out;
}

}  // namespace

estimator::Calibration parse_calibration(std::string_view text, std::string_view filename,
                                         const estimator::Calibration& base) {
  const toml::table root = parse_toml(text, filename);
  check_format_version(root, filename);
  Calibration calibration = base;
  for (const auto& [key, node] : root) {
    if (key.str() == "format_version") continue;
    // The [support.*] tables are parse_support()'s; [site] says how a site calibration was made.
    if (key.str() == "support" || key.str() == "site") continue;
    if (key.str() != "calibration" && key.str() != "moe" && key.str() != "dlrm" &&
        key.str() != "power")
      throw InputError(fmt::format(
          "{}: {}: unknown key; expected format_version, [calibration], [moe], [dlrm], [power], "
          "[support] and [site]",
          where(filename, key.source()), key.str()));
    if (!node.is_table())
      throw InputError(fmt::format("{}: {}: must be a table of parameters",
                                   where(filename, node.source()), key.str()));
  }
  const toml::node* section = root.get("calibration");
  if (!section) throw InputError(fmt::format("{}:1:1: missing the [calibration] table", filename));
  read_calibration_section(*section->as_table(), "calibration",
                           estimator::calibration_fields_begin(),
                           estimator::calibration_fields_end(), calibration, filename);
  if (const toml::node* moe = root.get("moe"))
    read_calibration_section(*moe->as_table(), "moe", estimator::moe_calibration_fields_begin(),
                             estimator::moe_calibration_fields_end(), calibration, filename);
  if (const toml::node* dlrm = root.get("dlrm"))
    read_calibration_section(*dlrm->as_table(), "dlrm", estimator::dlrm_calibration_fields_begin(),
                             estimator::dlrm_calibration_fields_end(), calibration.dlrm, filename);
  if (const toml::node* power = root.get("power"))
    read_calibration_section(*power->as_table(), "power",
                             estimator::power_calibration_fields_begin(),
                             estimator::power_calibration_fields_end(), calibration, filename);
  return calibration;
}

estimator::Calibration parse_calibration(std::string_view text, std::string_view filename) {
  return parse_calibration(text, filename, builtin_calibration());
}

estimator::NetworkCatalog parse_network_parts(std::string_view text, std::string_view filename) {
  const toml::table root = parse_toml(text, filename);
  check_format_version(root, filename);
  static constexpr const char* kKinds[] = {"switch", "transceiver", "cable", "nic"};
  for (const auto& [key, node] : root) {
    if (key.str() == "format_version") continue;
    if (std::find(std::begin(kKinds), std::end(kKinds), key.str()) == std::end(kKinds) ||
        !node.is_array_of_tables())
      throw InputError(fmt::format(
          "{}: {}: unknown key; expected format_version and [[switch]], [[transceiver]], "
          "[[cable]] and [[nic]] tables",
          where(filename, key.source()), key.str()));
  }
  // The first part of each kind at each speed, with where the speed's switch was given.
  struct Speed {
    estimator::NetworkParts parts;
    bool has[4] = {};
    const toml::table* switch_table = nullptr;
    std::string switch_key;
  };
  std::vector<Speed> speeds;
  std::vector<std::string> keys;
  for (int kind = 0; kind < 4; ++kind) {
    const char* name = kKinds[kind];
    const toml::node* list = root.get(name);
    if (!list) {
      if (kind == 0)
        throw InputError(fmt::format("{}:1:1: expected one or more [[switch]] tables", filename));
      continue;
    }
    for (const auto& node : *list->as_array()) {
      const toml::table& t = *node.as_table();
      TableReader r(t, filename, name);
      const std::string key = r.string("key");
      if (std::find(keys.begin(), keys.end(), key) != keys.end())
        r.fail(*t.get("key"), "key", fmt::format("'{}' is defined twice", key));
      keys.push_back(key);
      r.string("name");
      const double gbps = r.number("gbps");
      double ports = 1;
      if (kind < 2) {
        ports = r.integer("ports");
        if (kind == 0 && ports < 4)
          r.fail(*t.get("ports"), "ports",
                 fmt::format("a switch needs at least 4 ports to build a tree, got {}", ports));
      }
      const double usd = r.number("usd", true);
      const double w = r.number("w", true);
      r.string("source");
      r.finish();
      auto speed = std::find_if(speeds.begin(), speeds.end(),
                                [&](const Speed& sp) { return sp.parts.gbps == gbps; });
      if (speed == speeds.end()) {
        if (kind != 0)
          r.fail(*t.get("gbps"), "gbps",
                 fmt::format("{} '{}': no switch of {} Gbit/s above; a part serves a switch of "
                             "its speed",
                             name, key, gbps));
        if (speeds.size() >= estimator::kMaxNetworkSpeeds)
          r.fail(*t.get("gbps"), "gbps",
                 fmt::format("at most {} speeds", estimator::kMaxNetworkSpeeds));
        speeds.push_back({});
        speed = speeds.end() - 1;
        speed->parts.gbps = gbps;
        speed->switch_table = &t;
        speed->switch_key = key;
      }
      if (speed->has[kind]) continue;  // listed for comparison: the first of a speed is built
      speed->has[kind] = true;
      estimator::NetworkParts& p = speed->parts;
      switch (kind) {
        case 0:
          p.switch_ports = ports;
          p.switch_usd = usd;
          p.switch_w = w;
          break;
        case 1:
          p.transceiver_usd = usd / ports;
          p.transceiver_w = w / ports;
          break;
        case 2:
          p.copper_usd = usd;
          p.copper_w = w;
          break;
        default:
          p.nic_usd = usd;
          p.nic_w = w;
      }
    }
  }
  estimator::NetworkCatalog catalog;
  std::sort(speeds.begin(), speeds.end(),
            [](const Speed& a, const Speed& b) { return a.parts.gbps < b.parts.gbps; });
  for (const Speed& speed : speeds) {
    for (int kind = 1; kind < 4; ++kind)
      if (!speed.has[kind])
        throw InputError(fmt::format(
            "{}: switch '{}': no {} of {} Gbit/s; every switch speed needs a transceiver, a "
            "cable and a nic of its speed",
            where(filename, speed.switch_table->source()), speed.switch_key, kKinds[kind],
            speed.parts.gbps));
    catalog.speeds[static_cast<std::size_t>(catalog.count++)] = speed.parts;
  }
  return catalog;
}

const estimator::Calibration& builtin_calibration() {
  static const Calibration calibration = [] {
    Calibration c =
        parse_calibration(embedded_text("calibration.toml"), "calibration.toml", Calibration{});
    c.network = parse_network_parts(embedded_text("network.toml"), "network.toml");
    return c;
  }();
  return calibration;
}

CalibrationFile load_calibration_file(const std::string& path) {
  const auto text = read_file(path);
  if (!text)
    throw InputError(
        fmt::format("cannot open calibration file '{}': {}", path, std::strerror(errno)));
  return {parse_calibration(*text, path), parse_support(*text, path, builtin_support())};
}

estimator::Calibration load_calibration(const std::string& path) {
  return load_calibration_file(path).calibration;
}

std::string format_calibration(const estimator::Calibration& calibration, std::string_view header,
                               const CalibrationSupport& support) {
  std::string out;
  std::istringstream lines{std::string(header)};
  for (std::string line; std::getline(lines, line);)
    out += line.empty() ? "#\n" : "# " + line + "\n";
  out += "format_version = 1\n\n";
  out += format_calibration_section("calibration", estimator::calibration_fields_begin(),
                                    estimator::calibration_fields_end(), calibration);
  out += "\n";
  out += format_calibration_section("moe", estimator::moe_calibration_fields_begin(),
                                    estimator::moe_calibration_fields_end(), calibration);
  out += "\n";
  out += format_calibration_section("dlrm", estimator::dlrm_calibration_fields_begin(),
                                    estimator::dlrm_calibration_fields_end(), calibration.dlrm);
  out += "\n";
  out += format_calibration_section("power", estimator::power_calibration_fields_begin(),
                                    estimator::power_calibration_fields_end(), calibration);
  out += format_support(support);
  return out;
}

}  // namespace clustersweep::spaces
