// clustersweep estimate: one workload on one cluster with one plan, from flags or a small TOML file
// (docs/estimator.md). Flags override the file. The settings resolve through spaces::resolve()
// and the rules of spaces/rules.h: the same path as every point of a sweep.
#include <fmt/format.h>
#include <toml++/toml.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/commands.h"
#include "base/error.h"
#include "base/format.h"
#include "base/names.h"
#include "estimator/dlrm.h"
#include "estimator/estimator.h"
#include "spaces/catalog.h"
#include "spaces/resolve.h"

namespace clustersweep::cli {
namespace {

namespace est = estimator;
using spaces::Point;

// A TOML file of settings: the flags' names with '_' or '-'.
void read_file(const std::string& path, spaces::Settings& settings) {
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
  std::vector<std::string> names;
  for (const auto& info : spaces::setting_infos()) names.emplace_back(info.name);
  for (const auto& [key, node] : root) {
    std::string name(key.str());
    for (char& ch : name)
      if (ch == '-') ch = '_';
    const std::string where = fmt::format("{}:{}:{}: {}", path, key.source().begin.line,
                                          key.source().begin.column, key.str());
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      const auto close = closest_names(name, names, 1);
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

// Non-finite numbers (a zero-bandwidth link) are null, as JSON has no infinity.
nlohmann::json number(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); }

// Prints `out` with where each value that was not given came from (catalog, calibration, rule or
// fallback), in the shortest round-trip form: a reader gets the very doubles the estimator
// computed.
void print_json_with_defaults(nlohmann::ordered_json& out,
                              const std::map<std::string, spaces::Origin>& origins) {
  nlohmann::ordered_json defaults = nlohmann::ordered_json::object();
  for (const auto& [name, o] : origins) defaults[name] = spaces::to_string(o);
  out["defaults"] = defaults;
  std::cout << out.dump(2) << '\n';
}

void print_json(const Point& pt, const est::Estimate& e) {
  const auto& t = e.time;
  const auto& m = e.memory;
  const auto& p = pt.plan;
  nlohmann::ordered_json out;
  out["model"] = pt.model_name;
  out["gpu"] = pt.gpu_name;
  out["num_gpus"] = pt.cluster.num_gpus;
  out["nodes"] = pt.nodes;
  out["plan"] = {{"tp", p.tp},
                 {"pp", p.pp},
                 {"dp", p.dp},
                 {"cp", p.cp},
                 {"vp", p.vp},
                 {"pipeline_split", est::to_string(p.pipeline_split)},
                 {"sequence_parallel", p.sequence_parallel},
                 {"zero", p.zero},
                 {"recompute", est::to_string(p.recompute)},
                 {"micro_batch", p.micro_batch},
                 {"offload", est::to_string(p.offload)},
                 {"ep", p.ep},
                 {"etp", p.etp},
                 {"capacity_factor", p.capacity_factor}};
  out["feasible"] = e.feasible;
  out["reason"] = est::to_string(e.reason);
  out["step_time_s"] = {{"total", number(t.total_s)},
                        {"compute", number(t.compute_s)},
                        {"memory_bound", number(t.memory_bound_s)},
                        {"tp_comm", number(t.tp_comm_s)},
                        {"cp_comm", number(t.cp_comm_s)},
                        {"pp_p2p", number(t.pp_p2p_s)},
                        {"pp_bubble", number(t.pp_bubble_s)},
                        {"ep_a2a", number(t.ep_a2a_s)},
                        {"dp_exposed", number(t.dp_exposed_s)},
                        {"edp_exposed", number(t.edp_exposed_s)},
                        {"optimizer", number(t.optimizer_s)},
                        {"offload", number(t.offload_s)},
                        {"overhead", number(t.overhead_s)}};
  out["memory_bytes"] = {{"weights", number(m.weights_bytes)},
                         {"gradients", number(m.gradients_bytes)},
                         {"optimizer", number(m.optimizer_bytes)},
                         {"activations", number(m.activations_bytes)},
                         {"workspace", number(m.workspace_bytes)},
                         {"expert_weights", number(m.expert_weights_bytes)},
                         {"expert_gradients", number(m.expert_gradients_bytes)},
                         {"expert_optimizer", number(m.expert_optimizer_bytes)},
                         {"expert_activations", number(m.expert_activations_bytes)},
                         {"hbm", number(m.hbm_bytes)},
                         {"expansion", number(m.expansion_bytes)},
                         {"hbm_capacity", number(pt.cluster.hbm_bytes)},
                         {"expansion_capacity", number(pt.cluster.expansion_bytes)}};
  out["model_flops_per_step"] = number(e.model_flops_per_step);
  out["tokens_per_s"] = number(e.tokens_per_s);
  out["mfu"] = number(e.mfu);
  out["energy_per_step_j"] = number(e.energy_per_step_j);
  print_json_with_defaults(out, pt.origin);
}

// The step time and its parts, each with its share.
void print_step_time(double total_s, const std::vector<std::pair<const char*, double>>& parts) {
  std::cout << fmt::format("{:<28}{:>12}{:>9}\n", "step time", fmt::format("{:.4g} s", total_s),
                           "share");
  for (const auto& [name, value] : parts)
    std::cout << fmt::format("  {:<26}{:>12}{:>8.1f}%\n", name, fmt::format("{:.4g} s", value),
                             total_s > 0 ? 100 * value / total_s : 0.0);
  std::cout << '\n';
}

// The memory of one GPU by kind, then where it lives against the capacities, then feasibility.
void print_memory(const char* title, double hbm_bytes, double expansion_bytes,
                  const std::vector<std::pair<const char*, double>>& kinds, const est::Cluster& c,
                  bool feasible, est::Infeasible reason) {
  std::cout << fmt::format("{:<28}{:>12}\n", title,
                           fmt::format("{:.2f} GB", (hbm_bytes + expansion_bytes) / 1e9));
  for (const auto& [name, value] : kinds)
    std::cout << fmt::format("  {:<26}{:>12}\n", name, fmt::format("{:.2f} GB", value / 1e9));
  std::cout << fmt::format("  {:<26}{:>12}  of {:.0f} GB\n", "in HBM",
                           fmt::format("{:.2f} GB", hbm_bytes / 1e9), c.hbm_bytes / 1e9);
  if (expansion_bytes > 0 || c.expansion_bytes > 0)
    std::cout << fmt::format("  {:<26}{:>12}  of {:.0f} GB\n", "in expansion tier",
                             fmt::format("{:.2f} GB", expansion_bytes / 1e9),
                             c.expansion_bytes / 1e9);
  std::cout << '\n';
  std::cout << fmt::format("{:<28}{}\n", "feasible",
                           feasible ? "yes" : fmt::format("no ({})", est::to_string(reason)));
}

void print_text(const Point& pt, const est::Estimate& e) {
  const auto& w = pt.workload;
  const auto& m = w.model;
  const auto& c = pt.cluster;
  const auto& p = pt.plan;
  std::cout << fmt::format(
      "model     {}: {} layers, hidden {}, {} heads ({} kv), ffn {} {}, vocab {}", pt.model_name,
      m.layers, m.hidden, m.heads, m.kv_heads, m.ffn_hidden, est::to_string(m.mlp), m.vocab);
  if (est::is_mla(m))
    std::cout << fmt::format(", MLA (q rank {}, kv rank {})", m.q_lora_rank, m.kv_lora_rank);
  if (est::is_moe(m))
    std::cout << fmt::format(
        ",\n          {} experts top-{} (ffn {}), shared ffn {}, {} dense layers, {} MTP layers",
        m.num_experts, m.top_k, m.moe_ffn_hidden, m.shared_ffn_hidden, m.dense_layers,
        m.mtp_layers);
  std::cout << '\n';
  std::cout << fmt::format("workload  seq {}, global batch {} sequences, {}, {:.1f}B parameters",
                           w.seq_len, w.global_batch, est::to_string(w.precision),
                           est::total_params(m) / 1e9);
  if (est::is_moe(m)) std::cout << fmt::format(" ({:.1f}B active)", est::active_params(m) / 1e9);
  std::cout << '\n';
  std::cout << fmt::format(
      "cluster   {} x {} ({} nodes x {}), NVLink domain {} at {:g} GB/s, scale-out {:g} Gbit/s "
      "per GPU, HBM {:g} GB",
      c.num_gpus, pt.gpu_name, pt.nodes, c.gpus_per_node, c.nvlink_domain,
      c.nvlink_bytes_per_s / 1e9, c.inter_node_bytes_per_s * 8 / 1e9, c.hbm_bytes / 1e9);
  if (c.expansion_bytes > 0)
    std::cout << fmt::format(", expansion {:g} GB at {:g} GB/s", c.expansion_bytes / 1e9,
                             c.expansion_bytes_per_s / 1e9);
  std::cout << '\n';
  std::cout << fmt::format(
      "plan      tp {} pp {} dp {} cp {} vp {} ({} pipeline split), sequence parallel {}, ZeRO {}, "
      "recompute {}, micro-batch {} ({} per step), offload {}\n\n",
      p.tp, p.pp, p.dp, p.cp, p.vp, est::to_string(p.pipeline_split),
      p.sequence_parallel ? "on" : "off", p.zero, est::to_string(p.recompute), p.micro_batch,
      w.global_batch / (static_cast<long long>(p.dp) * p.micro_batch), est::to_string(p.offload));
  if (est::is_moe(m))
    std::cout << fmt::format(
        "experts   ep {} etp {} edp {}, {}\n\n", p.ep, p.etp,
        static_cast<long long>(p.tp) * p.cp * p.dp / (static_cast<long long>(p.ep) * p.etp),
        p.capacity_factor > 0 ? fmt::format("capacity factor {:g}", p.capacity_factor)
                              : std::string("dropless"));

  const auto& t = e.time;
  // The expert rows only for a Mixture-of-Experts model: a dense model has none.
  const bool moe = est::is_moe(m);
  std::vector<std::pair<const char*, double>> times = {{"compute (GEMM, attention)", t.compute_s},
                                                       {"memory-bound ops", t.memory_bound_s},
                                                       {"tensor/sequence parallel", t.tp_comm_s},
                                                       {"context parallel", t.cp_comm_s},
                                                       {"pipeline p2p", t.pp_p2p_s},
                                                       {"pipeline bubble", t.pp_bubble_s}};
  if (moe) times.push_back({"expert all-to-all (exposed)", t.ep_a2a_s});
  times.push_back({"data parallel (exposed)", t.dp_exposed_s});
  if (moe) times.push_back({"expert data parallel (exp.)", t.edp_exposed_s});
  times.insert(times.end(), {{"optimizer", t.optimizer_s},
                             {"offload (exposed)", t.offload_s},
                             {"framework overhead", t.overhead_s}});
  print_step_time(t.total_s, times);
  const auto& mem = e.memory;
  std::vector<std::pair<const char*, double>> parts = {
      {"weights", mem.weights_bytes},
      {"gradients", mem.gradients_bytes},
      {"optimizer state", mem.optimizer_bytes},
      {"activations (in flight)", mem.activations_bytes},
      {"workspace", mem.workspace_bytes}};
  if (moe)
    parts.insert(parts.end(), {{"expert weights", mem.expert_weights_bytes},
                               {"expert gradients", mem.expert_gradients_bytes},
                               {"expert optimizer state", mem.expert_optimizer_bytes},
                               {"routed activations", mem.expert_activations_bytes}});
  print_memory("memory per GPU", mem.hbm_bytes, mem.expansion_bytes, parts, c, e.feasible,
               e.reason);
  std::cout << fmt::format("{:<28}{:.4g}\n", "tokens/s", e.tokens_per_s);
  std::cout << fmt::format("{:<28}{:.4g}\n", "tokens/s per GPU", e.tokens_per_s / c.num_gpus);
  std::cout << fmt::format("{:<28}{:.1f}%\n", "MFU", 100 * e.mfu);
  std::cout << fmt::format("{:<28}{:.4g} PFLOP\n", "model FLOPs per step",
                           e.model_flops_per_step / 1e15);
  std::cout << fmt::format("{:<28}{:.4g} MJ ({:.3g} kWh)\n", "energy per step",
                           e.energy_per_step_j / 1e6, e.energy_per_step_j / 3.6e6);
}

// ---- Recommendation models

void print_dlrm_json(const spaces::DlrmPoint& pt, const est::DlrmPlan& plan,
                     const est::DlrmEstimate& e) {
  const auto& m = pt.workload.model;
  const auto& t = e.time;
  const auto& mem = e.memory;
  nlohmann::ordered_json out;
  out["model"] = pt.model_name;
  out["gpu"] = pt.gpu_name;
  out["num_gpus"] = pt.cluster.num_gpus;
  out["nodes"] = pt.nodes;
  out["sharding"] = pt.best_sharding ? "best" : est::to_string(pt.sharding);
  nlohmann::ordered_json tables = nlohmann::ordered_json::array();
  for (int i = 0; i < m.num_tables; ++i) {
    nlohmann::ordered_json table = {{"rows", m.rows[i]},
                                    {"pooling", m.pooling[i]},
                                    {"sharding", est::to_string(plan.sharding[i])}};
    if (plan.sharding[i] == est::Sharding::table_wise) table["gpu"] = plan.device[i];
    if (plan.sharding[i] == est::Sharding::table_row_wise) table["node"] = plan.device[i];
    tables.push_back(table);
  }
  out["tables"] = tables;
  out["feasible"] = e.feasible;
  out["reason"] = est::to_string(e.reason);
  out["step_time_s"] = {{"total", number(t.total_s)},
                        {"embedding_fwd", number(t.embedding_fwd_s)},
                        {"embedding_bwd", number(t.embedding_bwd_s)},
                        {"all_to_all", number(t.all_to_all_s)},
                        {"mlp_compute", number(t.mlp_compute_s)},
                        {"memory_bound", number(t.memory_bound_s)},
                        {"dense_allreduce", number(t.dense_allreduce_s)},
                        {"optimizer", number(t.optimizer_s)},
                        {"overhead", number(t.overhead_s)}};
  out["memory_bytes"] = {{"tables", number(mem.tables_bytes)},
                         {"table_optimizer", number(mem.table_optimizer_bytes)},
                         {"dense", number(mem.dense_bytes)},
                         {"activations", number(mem.activations_bytes)},
                         {"workspace", number(mem.workspace_bytes)},
                         {"hbm", number(mem.hbm_bytes)},
                         {"expansion", number(mem.expansion_bytes)},
                         {"hbm_capacity", number(pt.cluster.hbm_bytes)},
                         {"expansion_capacity", number(pt.cluster.expansion_bytes)}};
  out["model_flops_per_step"] = number(e.model_flops_per_step);
  out["samples_per_s"] = number(e.samples_per_s);
  out["mfu"] = number(e.mfu);
  out["energy_per_step_j"] = number(e.energy_per_step_j);
  print_json_with_defaults(out, pt.origin);
}

void print_dlrm_text(const spaces::DlrmPoint& pt, const est::DlrmPlan& plan,
                     const est::DlrmEstimate& e) {
  const auto& w = pt.workload;
  const auto& m = w.model;
  const auto& c = pt.cluster;
  double rows = 0, lookups = 0;
  for (int i = 0; i < m.num_tables; ++i) {
    rows += m.rows[i];
    lookups += m.pooling[i];
  }
  auto widths = [](const std::array<int, est::kMaxMlpLayers>& mlp) {
    std::vector<int> out;
    for (int x : mlp)
      if (x > 0) out.push_back(x);
    return fmt::format("{}", fmt::join(out, "-"));
  };
  std::cout << fmt::format(
      "model     {}: {} tables ({} rows, {} lookups per sample), dimension {}, bottom MLP {}, "
      "{} interaction, top MLP {}\n",
      pt.model_name, m.num_tables, format_number(rows), format_number(lookups), m.embedding_dim,
      widths(m.bottom_mlp), est::to_string(m.interaction), widths(m.top_mlp));
  std::cout << fmt::format("workload  global batch {} samples, {}, {} sparse optimizer\n",
                           w.global_batch, est::to_string(w.precision),
                           est::to_string(m.optimizer));
  std::cout << fmt::format(
      "cluster   {} x {} ({} nodes x {}), NVLink {:g} GB/s, scale-out {:g} Gbit/s per GPU, HBM "
      "{:g} GB\n",
      c.num_gpus, pt.gpu_name, pt.nodes, c.gpus_per_node, c.nvlink_bytes_per_s / 1e9,
      c.inter_node_bytes_per_s * 8 / 1e9, c.hbm_bytes / 1e9);
  std::cout << fmt::format("sharding  {} ({})\n",
                           pt.best_sharding ? "best" : est::to_string(pt.sharding),
                           spaces::describe_placement(pt, plan));
  for (int i = 0; i < m.num_tables; ++i) {
    std::string where;
    if (plan.sharding[i] == est::Sharding::table_wise)
      where = fmt::format(" on GPU {}", plan.device[i]);
    if (plan.sharding[i] == est::Sharding::table_row_wise)
      where = fmt::format(" on node {}", plan.device[i]);
    std::cout << fmt::format("  table {:<3} {:>13} rows x {:<4} {}{}\n", i,
                             format_number(m.rows[i]), m.pooling[i],
                             est::to_string(plan.sharding[i]), where);
  }
  std::cout << '\n';
  const auto& t = e.time;
  print_step_time(t.total_s, {{"embedding lookups", t.embedding_fwd_s},
                              {"embedding backward", t.embedding_bwd_s},
                              {"all-to-all (exposed)", t.all_to_all_s},
                              {"MLP and interaction", t.mlp_compute_s},
                              {"memory-bound ops", t.memory_bound_s},
                              {"dense all-reduce", t.dense_allreduce_s},
                              {"optimizer", t.optimizer_s},
                              {"framework overhead", t.overhead_s}});
  const auto& mem = e.memory;
  print_memory("memory on the busiest GPU", mem.hbm_bytes, mem.expansion_bytes,
               {{"embedding tables", mem.tables_bytes},
                {"their optimizer state", mem.table_optimizer_bytes},
                {"MLPs (with gradients, state)", mem.dense_bytes},
                {"activations", mem.activations_bytes},
                {"workspace", mem.workspace_bytes}},
               c, e.feasible, e.reason);
  std::cout << fmt::format("{:<28}{:.4g}\n", "samples/s", e.samples_per_s);
  std::cout << fmt::format("{:<28}{:.1f}%\n", "MFU (dense part)", 100 * e.mfu);
  std::cout << fmt::format("{:<28}{:.4g} MJ ({:.3g} kWh)\n", "energy per step",
                           e.energy_per_step_j / 1e6, e.energy_per_step_j / 3.6e6);
}

}  // namespace

int estimate(const Args& args) {
  po::options_description options("Options");
  options.add_options()(
      "file", po::value<std::string>(),
      "TOML file with the same settings (keys with '_' or '-'); flags override it");
  for (const auto& info : spaces::setting_infos()) {
    const std::string flag = spaces::flag_name(info.name);
    if (flag == "sequence-parallel" || flag == "allow-tp-across-nodes")
      options.add_options()(flag.c_str(), po::value<std::string>()->implicit_value("true"),
                            info.help);
    else
      options.add_options()(flag.c_str(), po::value<std::string>(), info.help);
  }
  options.add_options()("json", "print JSON instead of tables");
  po::positional_options_description positional;
  positional.add("file", 1);
  const auto vm =
      parse(args, options, positional, "estimate [FILE.toml] [options]",
            "Estimates one training step (time with its breakdown, memory per GPU, tokens/s,\n"
            "MFU, energy) of one model on one cluster with one parallel plan. The point passes\n"
            "the same structural rules as a sweep's (docs/spec-format.md).");
  if (!vm) return kExitOk;

  spaces::Settings settings;
  if (vm->count("file")) read_file((*vm)["file"].as<std::string>(), settings);
  for (const auto& info : spaces::setting_infos()) {
    const std::string flag = spaces::flag_name(info.name);
    if (vm->count(flag)) settings.set(info.name, (*vm)[flag].as<std::string>(), "--" + flag);
  }

  // A recommendation model of the catalog, or one described by its tables, is the DLRM family's.
  if ((settings.has("model") && spaces::is_dlrm_model(settings.at("model").text)) ||
      settings.has("num_tables")) {
    const est::Calibration calibration =
        settings.has("calibration") ? spaces::load_calibration(settings.at("calibration").text)
                                    : spaces::builtin_calibration();
    const spaces::DlrmPoint pt = spaces::resolve_dlrm(settings, calibration);
    const est::DlrmEstimator estimator(pt.workload, pt.cluster, calibration);
    const est::DlrmPlan plan = spaces::place_tables(pt, estimator);
    const est::DlrmEstimate e = estimator.estimate(plan);
    if (vm->count("json"))
      print_dlrm_json(pt, plan, e);
    else
      print_dlrm_text(pt, plan, e);
    return kExitOk;
  }
  const Point pt = spaces::resolve(settings);
  if (const spaces::Violation v = spaces::check(pt)) throw InputError(spaces::explain(v, settings));
  const est::Estimate e = est::estimate(pt.workload, pt.cluster, pt.plan, pt.calibration);
  if (vm->count("json"))
    print_json(pt, e);
  else
    print_text(pt, e);
  return kExitOk;
}

}  // namespace clustersweep::cli
