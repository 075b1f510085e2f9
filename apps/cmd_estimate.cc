// clustersweep estimate: one workload on one cluster with one plan, from flags or a small TOML file
// (docs/estimator.md). Flags override the file.
#include <fmt/format.h>
#include <toml++/toml.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "apps/commands.h"
#include "estimator/error.h"
#include "estimator/estimator.h"
#include "spaces/catalog.h"

namespace clustersweep::cli {
namespace {

namespace est = estimator;

// Every setting; a TOML file uses the same names with '_' or '-'.
constexpr const char* kSettings[] = {"model",
                                     "layers",
                                     "hidden",
                                     "heads",
                                     "kv-heads",
                                     "ffn-hidden",
                                     "mlp",
                                     "vocab",
                                     "seq-len",
                                     "global-batch",
                                     "precision",
                                     "gpu",
                                     "nodes",
                                     "gpus-per-node",
                                     "nvlink-domain",
                                     "nvlink-gbytes-per-s",
                                     "inter-node-gbps-per-gpu",
                                     "hbm-gb",
                                     "expansion-gb",
                                     "expansion-gbps",
                                     "tp",
                                     "pp",
                                     "dp",
                                     "cp",
                                     "vp",
                                     "sequence-parallel",
                                     "zero",
                                     "recompute",
                                     "micro-batch",
                                     "offload",
                                     "calibration"};

// A setting's text and where it came from ("--tp" or "plan.toml:4:1: tp"), for error messages.
struct Setting {
  std::string text;
  std::string origin;
};

class Settings {
 public:
  void set(const std::string& name, std::string text, std::string origin) {
    values_[name] = {std::move(text), std::move(origin)};
  }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::string origin(const std::string& name) const {
    return has(name) ? values_.at(name).origin : "--" + name;
  }
  std::string text(const std::string& name) const { return values_.at(name).text; }
  std::string string(const std::string& name, const std::string& fallback) const {
    return has(name) ? text(name) : fallback;
  }
  long long integer(const std::string& name, long long fallback, long long min_value = 1) const {
    if (!has(name)) return fallback;
    const Setting& s = values_.at(name);
    std::size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(s.text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != s.text.size() || value < min_value)
      throw InputError(fmt::format("{}: must be {}, got '{}'", s.origin,
                                   min_value == 1 ? std::string("a positive integer")
                                                  : fmt::format("an integer >= {}", min_value),
                                   s.text));
    return value;
  }
  double number(const std::string& name, double fallback, bool allow_zero = false) const {
    if (!has(name)) return fallback;
    const Setting& s = values_.at(name);
    std::size_t used = 0;
    double value = 0;
    try {
      value = std::stod(s.text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != s.text.size() || !std::isfinite(value) || value < 0 ||
        (!allow_zero && value == 0))
      throw InputError(fmt::format("{}: must be a {} number, got '{}'", s.origin,
                                   allow_zero ? "non-negative" : "positive", s.text));
    return value;
  }
  bool boolean(const std::string& name) const {
    if (!has(name)) return false;
    const Setting& s = values_.at(name);
    if (s.text == "1" || s.text == "true" || s.text == "yes" || s.text == "on") return true;
    if (s.text == "0" || s.text == "false" || s.text == "no" || s.text == "off") return false;
    throw InputError(fmt::format("{}: must be true or false, got '{}'", s.origin, s.text));
  }

 private:
  std::map<std::string, Setting> values_;
};

void read_file(const std::string& path, Settings& settings) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot open '{}'", path));
  std::ostringstream text;
  text << in.rdbuf();
  toml::table root;
  try {
    root = toml::parse(text.str(), path);
  } catch (const toml::parse_error& e) {
    throw InputError(fmt::format("{}:{}:{}: {}", path, e.source().begin.line,
                                 e.source().begin.column, e.description()));
  }
  for (const auto& [key, node] : root) {
    std::string name(key.str());
    for (char& ch : name)
      if (ch == '_') ch = '-';
    const std::string where = fmt::format("{}:{}:{}: {}", path, key.source().begin.line,
                                          key.source().begin.column, key.str());
    bool known = false;
    for (const char* s : kSettings) known = known || name == s;
    if (!known) {
      std::vector<std::string> names;
      for (const char* s : kSettings) {
        std::string n = s;
        for (char& ch : n)
          if (ch == '-') ch = '_';
        names.push_back(n);
      }
      const auto close = spaces::closest_names(key.str(), names, 1);
      throw InputError(
          fmt::format("{}: unknown key{}", where,
                      close.empty() ? "" : fmt::format("; did you mean '{}'?", close[0])));
    }
    std::string value;
    if (auto s = node.value_exact<std::string>())
      value = *s;
    else if (auto b = node.value_exact<bool>())
      value = *b ? "true" : "false";
    else if (auto i = node.value_exact<std::int64_t>())
      value = std::to_string(*i);
    else if (auto d = node.value_exact<double>())
      value = fmt::format("{}", *d);
    else
      throw InputError(fmt::format("{}: must be a string, number or boolean", where));
    settings.set(name, value, where);
  }
}

std::string supported_precisions(const est::Accelerator& gpu) {
  std::string out;
  for (int i = 0; i < est::kNumPrecisions; ++i)
    if (gpu.peak_flops[i] > 0)
      out +=
          (out.empty() ? "" : ", ") + std::string(est::to_string(static_cast<est::Precision>(i)));
  return out;
}

struct Point {
  std::string model_name;
  std::string gpu_name;
  est::Workload workload;
  est::Cluster cluster;
  est::Plan plan;
  est::Calibration calibration;
  int nodes = 0;
};

Point build_point(const Settings& s) {
  Point pt;
  const auto& catalog = spaces::Catalog::builtin();
  pt.calibration = s.has("calibration") ? spaces::load_calibration(s.text("calibration"))
                                        : spaces::builtin_calibration();

  // ---- workload
  est::Model& m = pt.workload.model;
  if (s.has("model")) {
    const auto& entry = catalog.model(s.text("model"), s.origin("model"));
    m = entry.model;
    pt.workload.seq_len = entry.seq_len;
    pt.workload.global_batch = entry.global_batch;
    pt.model_name = entry.key;
  } else {
    for (const char* name :
         {"layers", "hidden", "heads", "ffn-hidden", "vocab", "seq-len", "global-batch"})
      if (!s.has(name))
        throw InputError(fmt::format(
            "--{}: required without --model (or give --model with a catalog name)", name));
    pt.model_name = "custom";
  }
  m.layers = static_cast<int>(s.integer("layers", m.layers));
  m.hidden = static_cast<int>(s.integer("hidden", m.hidden));
  m.heads = static_cast<int>(s.integer("heads", m.heads));
  m.kv_heads = static_cast<int>(
      s.integer("kv-heads", s.has("heads") && !s.has("kv-heads") ? m.heads : m.kv_heads));
  m.ffn_hidden = static_cast<int>(s.integer("ffn-hidden", m.ffn_hidden));
  m.vocab = static_cast<int>(s.integer("vocab", m.vocab));
  if (s.has("mlp") && !est::parse_mlp(s.text("mlp"), m.mlp))
    throw InputError(
        fmt::format("{}: must be gelu or swiglu, got '{}'", s.origin("mlp"), s.text("mlp")));
  if (m.hidden % m.heads != 0)
    throw InputError(fmt::format("{}: {} is not a multiple of the {} heads", s.origin("hidden"),
                                 m.hidden, m.heads));
  if (m.heads % m.kv_heads != 0)
    throw InputError(fmt::format("{}: {} does not divide the {} heads", s.origin("kv-heads"),
                                 m.kv_heads, m.heads));
  pt.workload.seq_len = static_cast<int>(s.integer("seq-len", pt.workload.seq_len));
  pt.workload.global_batch = s.integer("global-batch", pt.workload.global_batch);
  if (s.has("precision") && !est::parse_precision(s.text("precision"), pt.workload.precision))
    throw InputError(fmt::format("{}: must be one of fp32, tf32, fp16, bf16, fp8, fp4, got '{}'",
                                 s.origin("precision"), s.text("precision")));

  // ---- cluster
  if (!s.has("gpu"))
    throw InputError("--gpu: required (an accelerator of the catalog, e.g. H100-SXM5-80GB)");
  const auto& gpu = catalog.accelerator(s.text("gpu"), s.origin("gpu"));
  pt.gpu_name = gpu.key;
  est::Cluster& c = pt.cluster;
  c.gpu = gpu.accelerator;
  c.gpus_per_node = static_cast<int>(s.integer("gpus-per-node", gpu.default_gpus_per_node));
  c.nvlink_domain = static_cast<int>(s.integer("nvlink-domain", gpu.default_nvlink_domain));
  c.nvlink_bytes_per_s =
      s.number("nvlink-gbytes-per-s", gpu.accelerator.nvlink_bytes_per_s / 1e9) * 1e9;
  c.inter_node_bytes_per_s =
      s.number("inter-node-gbps-per-gpu", pt.calibration.default_inter_node_gbps_per_gpu) * 1e9 / 8;
  c.hbm_bytes = s.number("hbm-gb", gpu.accelerator.hbm_bytes / 1e9) * 1e9;
  c.expansion_bytes = s.number("expansion-gb", 0, true) * 1e9;
  c.expansion_bytes_per_s = s.number("expansion-gbps", 0, true) * 1e9 / 8;
  c.node_overhead_w = gpu.default_node_overhead_w;

  // ---- plan
  est::Plan& p = pt.plan;
  p.tp = static_cast<int>(s.integer("tp", 1));
  p.pp = static_cast<int>(s.integer("pp", 1));
  p.cp = static_cast<int>(s.integer("cp", 1));
  p.vp = static_cast<int>(s.integer("vp", 1));
  p.micro_batch = static_cast<int>(s.integer("micro-batch", 1));
  p.zero = static_cast<int>(s.integer("zero", 0, 0));
  if (p.zero > 3)
    throw InputError(fmt::format("{}: must be 0, 1, 2 or 3, got '{}'", s.origin("zero"), p.zero));
  p.sequence_parallel = s.boolean("sequence-parallel");
  if (s.has("recompute") && !est::parse_recompute(s.text("recompute"), p.recompute))
    throw InputError(fmt::format("{}: must be none, selective or full, got '{}'",
                                 s.origin("recompute"), s.text("recompute")));
  if (s.has("offload") && !est::parse_offload(s.text("offload"), p.offload))
    throw InputError(
        fmt::format("{}: must be none, optimizer, optimizer_activations or all, got '{}'",
                    s.origin("offload"), s.text("offload")));

  // Structural checks with the flag to blame (the estimator reports the same as reasons).
  if (m.heads % p.tp != 0)
    throw InputError(fmt::format("{}: {} does not divide the {} attention heads", s.origin("tp"),
                                 p.tp, m.heads));
  if (m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0)
    throw InputError(fmt::format("{}: {} and the {} key/value heads do not divide one another",
                                 s.origin("tp"), p.tp, m.kv_heads));
  if (p.vp > 1 && p.pp == 1)
    throw InputError(fmt::format("{}: interleaving (vp {}) needs pp > 1", s.origin("vp"), p.vp));
  const int chunks = p.pp * p.vp;
  if (m.layers % chunks != 0 && (p.pp == 1 || (m.layers + 2) % chunks != 0))
    throw InputError(
        fmt::format("{}: pp*vp = {}*{} = {} divides neither the {} layers nor {} (embedding and "
                    "loss counted as layers)",
                    s.origin("pp"), p.pp, p.vp, chunks, m.layers, m.layers + 2));
  // GPU count: --nodes x --gpus-per-node, or tp*pp*dp*cp when only --dp is given.
  const long long model_parallel = static_cast<long long>(p.tp) * p.pp * p.cp;
  if (s.has("nodes")) {
    pt.nodes = static_cast<int>(s.integer("nodes", 1));
    c.num_gpus = pt.nodes * c.gpus_per_node;
    if (s.has("dp")) {
      p.dp = static_cast<int>(s.integer("dp", 1));
      if (model_parallel * p.dp != c.num_gpus)
        throw InputError(fmt::format(
            "{}: tp*pp*dp*cp = {}*{}*{}*{} = {} does not equal the {} GPUs ({} nodes x {})",
            s.origin("dp"), p.tp, p.pp, p.dp, p.cp, model_parallel * p.dp, c.num_gpus, pt.nodes,
            c.gpus_per_node));
    } else {
      if (c.num_gpus % model_parallel != 0)
        throw InputError(
            fmt::format("{}: tp*pp*cp = {}*{}*{} = {} does not divide the {} GPUs ({} nodes x {})",
                        s.origin("tp"), p.tp, p.pp, p.cp, model_parallel, c.num_gpus, pt.nodes,
                        c.gpus_per_node));
      p.dp = static_cast<int>(c.num_gpus / model_parallel);
    }
  } else {
    if (!s.has("dp"))
      throw InputError("--nodes: required unless --dp is given (GPUs = tp*pp*dp*cp)");
    p.dp = static_cast<int>(s.integer("dp", 1));
    c.num_gpus = static_cast<int>(model_parallel * p.dp);
    if (c.num_gpus % c.gpus_per_node != 0 && c.num_gpus > c.gpus_per_node)
      throw InputError(fmt::format("{}: tp*pp*dp*cp = {} GPUs do not fill whole nodes of {}",
                                   s.origin("dp"), c.num_gpus, c.gpus_per_node));
    pt.nodes = (c.num_gpus + c.gpus_per_node - 1) / c.gpus_per_node;
  }

  if (p.cp > 1 && pt.workload.seq_len % (2 * p.cp) != 0)
    throw InputError(fmt::format("{}: 2*cp = {} does not divide the sequence length {}",
                                 s.origin("cp"), 2 * p.cp, pt.workload.seq_len));
  if (pt.workload.global_batch % (static_cast<long long>(p.dp) * p.micro_batch) != 0)
    throw InputError(fmt::format("{}: {} is not a multiple of dp*micro_batch = {}*{}",
                                 s.origin("global-batch"), pt.workload.global_batch, p.dp,
                                 p.micro_batch));
  if (c.gpu.peak_flops[static_cast<int>(pt.workload.precision)] <= 0)
    throw InputError(fmt::format("{}: {} has no {} peak; it supports {}", s.origin("precision"),
                                 gpu.key, est::to_string(pt.workload.precision),
                                 supported_precisions(c.gpu)));
  if (p.offload != est::Offload::none && (c.expansion_bytes <= 0 || c.expansion_bytes_per_s <= 0) &&
      !(c.expansion_bytes > 0 && pt.calibration.default_expansion_gbytes_per_s > 0))
    throw InputError(fmt::format(
        "{}: needs an expansion tier (--expansion-gb and --expansion-gbps)", s.origin("offload")));
  return pt;
}

std::string json_number(double x) { return std::isfinite(x) ? fmt::format("{:.9g}", x) : "null"; }

void print_json(const Point& pt, const est::Estimate& e) {
  const auto& t = e.time;
  const auto& m = e.memory;
  std::cout << "{\n";
  std::cout << fmt::format(
      "  \"model\": \"{}\",\n  \"gpu\": \"{}\",\n  \"num_gpus\": {},\n  \"nodes\": {},\n",
      pt.model_name, pt.gpu_name, pt.cluster.num_gpus, pt.nodes);
  std::cout << fmt::format(
      "  \"plan\": {{\"tp\": {}, \"pp\": {}, \"dp\": {}, \"cp\": {}, \"vp\": {}, "
      "\"sequence_parallel\": {}, "
      "\"zero\": {}, \"recompute\": \"{}\", \"micro_batch\": {}, \"offload\": \"{}\"}},\n",
      pt.plan.tp, pt.plan.pp, pt.plan.dp, pt.plan.cp, pt.plan.vp,
      pt.plan.sequence_parallel ? "true" : "false", pt.plan.zero, est::to_string(pt.plan.recompute),
      pt.plan.micro_batch, est::to_string(pt.plan.offload));
  std::cout << fmt::format("  \"feasible\": {},\n  \"reason\": \"{}\",\n",
                           e.feasible ? "true" : "false", est::to_string(e.reason));
  std::cout << fmt::format(
      "  \"step_time_s\": {{\"total\": {}, \"compute\": {}, \"memory_bound\": {}, \"tp_comm\": {}, "
      "\"cp_comm\": {}, \"pp_p2p\": {}, \"pp_bubble\": {}, \"dp_exposed\": {}, \"optimizer\": {}, "
      "\"offload\": {}, \"overhead\": {}}},\n",
      json_number(t.total_s), json_number(t.compute_s), json_number(t.memory_bound_s),
      json_number(t.tp_comm_s), json_number(t.cp_comm_s), json_number(t.pp_p2p_s),
      json_number(t.pp_bubble_s), json_number(t.dp_exposed_s), json_number(t.optimizer_s),
      json_number(t.offload_s), json_number(t.overhead_s));
  std::cout << fmt::format(
      "  \"memory_bytes\": {{\"weights\": {}, \"gradients\": {}, \"optimizer\": {}, "
      "\"activations\": {}, "
      "\"workspace\": {}, \"hbm\": {}, \"expansion\": {}, \"hbm_capacity\": {}, "
      "\"expansion_capacity\": {}}},\n",
      json_number(m.weights_bytes), json_number(m.gradients_bytes), json_number(m.optimizer_bytes),
      json_number(m.activations_bytes), json_number(m.workspace_bytes), json_number(m.hbm_bytes),
      json_number(m.expansion_bytes), json_number(pt.cluster.hbm_bytes),
      json_number(pt.cluster.expansion_bytes));
  std::cout << fmt::format(
      "  \"model_flops_per_step\": {},\n  \"tokens_per_s\": {},\n  \"mfu\": {},\n  "
      "\"energy_per_step_j\": {}\n}}\n",
      json_number(e.model_flops_per_step), json_number(e.tokens_per_s), json_number(e.mfu),
      json_number(e.energy_per_step_j));
}

void print_text(const Point& pt, const est::Estimate& e) {
  const auto& w = pt.workload;
  const auto& m = w.model;
  const auto& c = pt.cluster;
  const auto& p = pt.plan;
  std::cout << fmt::format(
      "model     {}: {} layers, hidden {}, {} heads ({} kv), ffn {} {}, vocab {}\n", pt.model_name,
      m.layers, m.hidden, m.heads, m.kv_heads, m.ffn_hidden, est::to_string(m.mlp), m.vocab);
  std::cout << fmt::format("workload  seq {}, global batch {} sequences, {}, {:.1f}B parameters\n",
                           w.seq_len, w.global_batch, est::to_string(w.precision),
                           est::total_params(m) / 1e9);
  std::cout << fmt::format(
      "cluster   {} x {} ({} nodes x {}), NVLink domain {} at {:g} GB/s, scale-out {:g} Gbit/s "
      "per GPU, HBM {:g} GB",
      c.num_gpus, pt.gpu_name, pt.nodes, c.gpus_per_node, c.nvlink_domain,
      c.nvlink_bytes_per_s / 1e9, c.inter_node_bytes_per_s * 8 / 1e9, c.hbm_bytes / 1e9);
  if (c.expansion_bytes > 0)
    std::cout << fmt::format(", expansion {:g} GB at {:g} Gbit/s", c.expansion_bytes / 1e9,
                             c.expansion_bytes_per_s * 8 / 1e9);
  std::cout << '\n';
  std::cout << fmt::format(
      "plan      tp {} pp {} dp {} cp {} vp {}, sequence parallel {}, ZeRO {}, recompute {}, "
      "micro-batch {} ({} per step), offload {}\n\n",
      p.tp, p.pp, p.dp, p.cp, p.vp, p.sequence_parallel ? "on" : "off", p.zero,
      est::to_string(p.recompute), p.micro_batch,
      w.global_batch / (static_cast<long long>(p.dp) * p.micro_batch), est::to_string(p.offload));

  const auto& t = e.time;
  std::cout << fmt::format("{:<28}{:>12}{:>9}\n", "step time", fmt::format("{:.4g} s", t.total_s),
                           "share");
  const std::pair<const char*, double> parts[] = {{"compute (GEMM, attention)", t.compute_s},
                                                  {"memory-bound ops", t.memory_bound_s},
                                                  {"tensor/sequence parallel", t.tp_comm_s},
                                                  {"context parallel", t.cp_comm_s},
                                                  {"pipeline p2p", t.pp_p2p_s},
                                                  {"pipeline bubble", t.pp_bubble_s},
                                                  {"data parallel (exposed)", t.dp_exposed_s},
                                                  {"optimizer", t.optimizer_s},
                                                  {"offload (exposed)", t.offload_s},
                                                  {"framework overhead", t.overhead_s}};
  for (const auto& [name, value] : parts)
    std::cout << fmt::format("  {:<26}{:>12}{:>8.1f}%\n", name, fmt::format("{:.4g} s", value),
                             t.total_s > 0 ? 100 * value / t.total_s : 0.0);
  std::cout << '\n';
  const auto& mem = e.memory;
  std::cout << fmt::format("{:<28}{:>12}\n", "memory per GPU",
                           fmt::format("{:.2f} GB", (mem.hbm_bytes + mem.expansion_bytes) / 1e9));
  const std::pair<const char*, double> kinds[] = {
      {"weights", mem.weights_bytes},
      {"gradients", mem.gradients_bytes},
      {"optimizer state", mem.optimizer_bytes},
      {"activations (in flight)", mem.activations_bytes},
      {"workspace", mem.workspace_bytes}};
  for (const auto& [name, value] : kinds)
    std::cout << fmt::format("  {:<26}{:>12}\n", name, fmt::format("{:.2f} GB", value / 1e9));
  std::cout << fmt::format("  {:<26}{:>12}  of {:.0f} GB\n", "in HBM",
                           fmt::format("{:.2f} GB", mem.hbm_bytes / 1e9), c.hbm_bytes / 1e9);
  if (mem.expansion_bytes > 0 || c.expansion_bytes > 0)
    std::cout << fmt::format("  {:<26}{:>12}  of {:.0f} GB\n", "in expansion tier",
                             fmt::format("{:.2f} GB", mem.expansion_bytes / 1e9),
                             c.expansion_bytes / 1e9);
  std::cout << '\n';
  std::cout << fmt::format("{:<28}{}\n", "feasible",
                           e.feasible ? "yes" : fmt::format("no ({})", est::to_string(e.reason)));
  std::cout << fmt::format("{:<28}{:.4g}\n", "tokens/s", e.tokens_per_s);
  std::cout << fmt::format("{:<28}{:.4g}\n", "tokens/s per GPU", e.tokens_per_s / c.num_gpus);
  std::cout << fmt::format("{:<28}{:.1f}%\n", "MFU", 100 * e.mfu);
  std::cout << fmt::format("{:<28}{:.4g} PFLOP\n", "model FLOPs per step",
                           e.model_flops_per_step / 1e15);
  std::cout << fmt::format("{:<28}{:.4g} MJ ({:.3g} kWh)\n", "energy per step",
                           e.energy_per_step_j / 1e6, e.energy_per_step_j / 3.6e6);
}

}  // namespace

int estimate(const Args& args) {
  po::options_description options("Options");
  auto add = [&options](const char* name, const char* help) {
    options.add_options()(name, po::value<std::string>(), help);
  };
  add("file", "TOML file with the same settings (keys with '_' or '-'); flags override it");
  add("model", "catalog model, e.g. gpt3-175b, llama3-70b (or give the architecture below)");
  add("layers", "transformer layers");
  add("hidden", "model width");
  add("heads", "attention (query) heads");
  add("kv-heads", "key/value heads (GQA/MQA; default: heads)");
  add("ffn-hidden", "MLP width (per gate/up matrix for SwiGLU)");
  add("mlp", "gelu (2-matrix) or swiglu (3-matrix)");
  add("vocab", "vocabulary size");
  add("seq-len", "training sequence length (default: the model's)");
  add("global-batch", "sequences per optimizer step (default: the model's)");
  add("precision", "fp32, tf32, fp16, bf16 (default), fp8, fp4");
  add("gpu", "catalog accelerator, e.g. H100-SXM5-80GB");
  add("nodes", "number of nodes (GPUs = nodes x gpus-per-node)");
  add("gpus-per-node", "GPUs per node (default: the accelerator's)");
  add("nvlink-domain", "GPUs per NVLink/NVSwitch domain (default: the accelerator's)");
  add("nvlink-gbytes-per-s", "NVLink GB/s per GPU, one direction (default: the accelerator's)");
  add("inter-node-gbps-per-gpu", "scale-out Gbit/s per GPU (default: the calibration's)");
  add("hbm-gb", "HBM capacity per GPU in GB (default: the accelerator's)");
  add("expansion-gb", "memory-expansion tier per GPU in GB (default 0)");
  add("expansion-gbps", "expansion-tier Gbit/s per GPU, one direction (default 0)");
  add("tp", "tensor-parallel degree (default 1)");
  add("pp", "pipeline-parallel degree (default 1)");
  add("dp", "data-parallel degree (default: GPUs / (tp*pp*cp))");
  add("cp", "context-parallel degree (default 1)");
  add("vp", "interleaved virtual stages per pipeline rank (default 1)");
  options.add_options()("sequence-parallel", po::value<std::string>()->implicit_value("true"),
                        "Megatron sequence parallelism (flag, or =true/false)");
  add("zero", "ZeRO stage 0-3 (3 = FSDP FULL_SHARD; default 0)");
  add("recompute", "none (default), selective or full");
  add("micro-batch", "sequences per micro-batch (default 1)");
  add("offload", "none (default), optimizer, optimizer_activations, all (to the expansion tier)");
  add("calibration", "calibration TOML overriding the built-in one");
  options.add_options()("json", "print JSON instead of tables");
  po::positional_options_description positional;
  positional.add("file", 1);
  const auto vm =
      parse(args, options, positional, "estimate [FILE.toml] [options]",
            "Estimates one training step (time with its breakdown, memory per GPU, tokens/s,\n"
            "MFU, energy) of one model on one cluster with one parallel plan.");
  if (!vm) return kExitOk;

  Settings settings;
  if (vm->count("file")) read_file((*vm)["file"].as<std::string>(), settings);
  for (const char* name : kSettings)
    if (vm->count(name))
      settings.set(name, (*vm)[name].as<std::string>(), std::string("--") + name);

  const Point pt = build_point(settings);
  const est::Estimate e = est::estimate(pt.workload, pt.cluster, pt.plan, pt.calibration);
  if (e.reason != est::Infeasible::none && e.reason != est::Infeasible::out_of_memory)
    throw InputError(fmt::format("the plan cannot run: {}", est::to_string(e.reason)));
  if (vm->count("json"))
    print_json(pt, e);
  else
    print_text(pt, e);
  return kExitOk;
}

}  // namespace clustersweep::cli
