#include "spaces/catalog.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "base/names.h"
#include "spaces/embedded.h"

namespace clustersweep::spaces {
namespace {

using estimator::Calibration;
using estimator::Precision;

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
  int integer(const char* key) {
    const toml::node& node = require(key);
    const auto value = node.value_exact<std::int64_t>();
    if (!value || *value < 1 || *value > (1LL << 30))
      fail(node, key, fmt::format("must be a positive integer, got {}", text_of(node)));
    return static_cast<int>(*value);
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

constexpr const char* kPrecisionNames[estimator::kNumPrecisions] = {"fp32", "tf32", "fp16",
                                                                    "bf16", "fp8",  "fp4"};

const toml::array& array_of_tables(const toml::table& root, const char* key,
                                   std::string_view file) {
  const toml::node* node = root.get(key);
  if (!node || !node->is_array_of_tables())
    throw InputError(fmt::format("{}:1:1: expected one or more [[{}]] tables", file, key));
  return *node->as_array();
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
  entry.default_node_overhead_w = r.optional_number("node_overhead_w", 0);
  entry.default_gpus_per_node = r.integer("gpus_per_node");
  entry.default_nvlink_domain = r.integer("nvlink_domain");
  entry.source = r.string("source");
  r.optional_string("idle_source");
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
  m.ffn_hidden = r.integer("ffn_hidden");
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
  if (m.hidden % m.heads != 0)
    r.fail(table, "hidden", fmt::format("{} is not a multiple of heads ({})", m.hidden, m.heads));
  if (m.heads % m.kv_heads != 0)
    r.fail(table, "kv_heads", fmt::format("{} does not divide heads ({})", m.kv_heads, m.heads));
  return entry;
}

std::string_view embedded_text(std::string_view name) {
  for (const auto& file : embedded::catalog())
    if (file.name == name) return file.text;
  throw Error(fmt::format("built-in data file '{}' is missing from this build", name));
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
  static const Catalog catalog =
      parse(embedded_text("accelerators.toml"), embedded_text("models.toml"));
  return catalog;
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

estimator::Calibration parse_calibration(std::string_view text, std::string_view filename,
                                         const estimator::Calibration& base) {
  const toml::table root = parse_toml(text, filename);
  check_format_version(root, filename);
  Calibration calibration = base;
  for (const auto& [key, node] : root) {
    if (key.str() == "format_version") continue;
    if (key.str() != "calibration")
      throw InputError(fmt::format("{}: {}: unknown key; expected format_version and [calibration]",
                                   where(filename, key.source()), key.str()));
  }
  const toml::node* section = root.get("calibration");
  if (!section || !section->is_table())
    throw InputError(fmt::format("{}:1:1: missing the [calibration] table", filename));
  for (const auto& [key, node] : *section->as_table()) {
    const estimator::CalibrationField* field = nullptr;
    for (auto* f = estimator::calibration_fields_begin(); f != estimator::calibration_fields_end();
         ++f)
      if (key.str() == f->name) field = f;
    if (!field) {
      std::vector<std::string> names;
      for (auto* f = estimator::calibration_fields_begin();
           f != estimator::calibration_fields_end(); ++f)
        names.emplace_back(f->name);
      throw InputError(fmt::format("{}: calibration.{}: unknown parameter{}",
                                   where(filename, key.source()), key.str(),
                                   did_you_mean(key.str(), names)));
    }
    const auto value = node.value<double>();
    if (!value || !std::isfinite(*value) || *value < 0)
      throw InputError(fmt::format("{}: calibration.{}: must be a non-negative number",
                                   where(filename, node.source()), key.str()));
    calibration.*(field->member) = *value;
  }
  return calibration;
}

estimator::Calibration parse_calibration(std::string_view text, std::string_view filename) {
  return parse_calibration(text, filename, builtin_calibration());
}

const estimator::Calibration& builtin_calibration() {
  static const Calibration calibration =
      parse_calibration(embedded_text("calibration.toml"), "calibration.toml", Calibration{});
  return calibration;
}

estimator::Calibration load_calibration(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot open calibration file '{}'", path));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_calibration(text.str(), path);
}

std::string format_calibration(const estimator::Calibration& calibration, std::string_view header) {
  std::string out;
  std::istringstream lines{std::string(header)};
  for (std::string line; std::getline(lines, line);)
    out += line.empty() ? "#\n" : "# " + line + "\n";
  out += "format_version = 1\n\n[calibration]\n";
  for (auto* f = estimator::calibration_fields_begin(); f != estimator::calibration_fields_end();
       ++f) {
    out += fmt::format(
        "# {}{}\n", f->doc,
        f->lo < f->hi ? fmt::format(" (fitted within [{:g}, {:g}])", f->lo, f->hi) : " (fixed)");
    out += fmt::format("{} = {:.6g}\n", f->name, calibration.*(f->member));
  }
  return out;
}

}  // namespace clustersweep::spaces
