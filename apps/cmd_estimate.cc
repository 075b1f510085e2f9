// clustersweep estimate: one workload on one cluster with one plan, from flags or a small TOML file
// (docs/estimator.md). Flags override the file. The settings resolve through spaces::resolve()
// and the rules of spaces/rules.h: the same path as every point of a sweep.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "apps/commands.h"
#include "apps/estimate_output.h"
#include "apps/setting_flags.h"
#include "base/error.h"
#include "base/format.h"
#include "base/names.h"
#include "estimator/dlrm.h"
#include "estimator/estimator.h"
#include "estimator/routing.h"
#include "spaces/catalog.h"
#include "spaces/resolve.h"

namespace clustersweep::cli {
namespace {

namespace est = estimator;
using spaces::Point;

// Adds where each value that was not given came from (catalog, calibration, rule or fallback).
void add_defaults(nlohmann::ordered_json& out,
                  const std::map<std::string, spaces::Origin>& origins) {
  nlohmann::ordered_json defaults = nlohmann::ordered_json::object();
  for (const auto& [name, o] : origins) defaults[name] = spaces::to_string(o);
  out["defaults"] = defaults;
}

// A point that does not run has no job: null, as its row's job columns are NaN.
nlohmann::ordered_json job_json_if(bool feasible, const TrainingJob& job) {
  return feasible ? job_json(job) : nlohmann::ordered_json();
}

nlohmann::ordered_json make_json(const Point& pt, const est::Estimate& e, const TrainingJob& job) {
  nlohmann::ordered_json out;
  out["model"] = pt.model_name;
  out["gpu"] = pt.gpu_name;
  out["num_gpus"] = pt.cluster.num_gpus;
  out["nodes"] = pt.nodes;
  out["plan"] = plan_json(pt.plan);
  out["feasible"] = e.feasible;
  out["reason"] = est::to_string(e.reason);
  out["step_time_s"] = step_time_json(e.time);
  add_interval_json(out, e.time.total_s, spaces::point_interval(pt, pt.plan));
  out["memory_bytes"] = memory_json(e.memory, pt.cluster);
  out["model_flops_per_step"] = json_number(e.model_flops_per_step);
  out["tokens_per_s"] = json_number(e.tokens_per_s);
  out["mfu"] = json_number(e.mfu);
  out["energy_per_step_j"] = json_number(e.energy_per_step_j);
  out["power"] = power_json(e.power);
  out["network"] = network_json(est::network_bill(pt.cluster, pt.calibration.network));
  out["job"] = job_json_if(e.feasible, job);
  add_defaults(out, pt.origin);
  return out;
}

void print_text(const Point& pt, const est::Estimate& e, const TrainingJob& job) {
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
      "cluster   {} x {} ({} nodes x {}), {}, scale-out {:g} Gbit/s per GPU, HBM {:g} GB",
      c.num_gpus, pt.gpu_name, pt.nodes, c.gpus_per_node, spaces::scale_up_text(c),
      c.inter_node_bytes_per_s * 8 / 1e9, c.hbm_bytes / 1e9);
  if (const std::string net = spaces::scale_out_text(c.scale_out); !net.empty())
    std::cout << ", " << net;
  if (c.expansion_bytes > 0)
    std::cout << fmt::format(", expansion {:g} GB at {:g} GB/s", c.expansion_bytes / 1e9,
                             c.expansion_bytes_per_s / 1e9);
  std::cout << '\n';
  std::cout << fmt::format(
      "plan      tp {} pp {} dp {} cp {} vp {} ({} pipeline split), sequence parallel {}, ZeRO {}, "
      "recompute {}, micro-batch {} ({} per step), offload {}\n",
      p.tp, p.pp, p.dp, p.cp, p.vp, est::to_string(p.pipeline_split),
      p.sequence_parallel ? "on" : "off", p.zero,
      est::recompute_label(p.recompute, p.recompute_modules), p.micro_batch,
      w.global_batch / (static_cast<long long>(p.dp) * p.micro_batch), est::to_string(p.offload));
  std::cout << fmt::format("stack     {}\n", stack_text(p.stack));
  if (const std::string assumed = assumed_stack_text(pt.origin); !assumed.empty())
    std::cout << fmt::format("          {}\n", assumed);
  std::cout << '\n';
  if (est::is_moe(m))
    std::cout << fmt::format(
        "experts   ep {} etp {} edp {}, {}\n\n", p.ep, p.etp,
        static_cast<long long>(p.tp) * p.cp * p.dp / (static_cast<long long>(p.ep) * p.etp),
        p.capacity_factor > 0
            ? fmt::format(
                  "capacity factor {:g} (drops {:.2g}% of the routed tokens)", p.capacity_factor,
                  100 * est::dropped_token_fraction(p.capacity_factor, pt.calibration.moe_load_cv))
            : std::string("dropless"));

  const bool moe = est::is_moe(m);
  print_step_time(e.time.total_s, spaces::point_interval(pt, pt.plan), step_time_rows(e.time, moe));
  print_memory("memory per GPU", e.memory.hbm_bytes, e.memory.expansion_bytes,
               memory_rows(e.memory, moe), c, e.feasible, e.reason);
  std::cout << fmt::format("{:<28}{:.4g}\n", "tokens/s", e.tokens_per_s);
  std::cout << fmt::format("{:<28}{:.4g}\n", "tokens/s per GPU", e.tokens_per_s / c.num_gpus);
  std::cout << fmt::format("{:<28}{:.1f}%\n", "MFU", 100 * e.mfu);
  std::cout << fmt::format("{:<28}{:.4g} PFLOP\n", "model FLOPs per step",
                           e.model_flops_per_step / 1e15);
  print_power(e.power, c);
  print_network(est::network_bill(c, pt.calibration.network));
  if (e.feasible) print_job(job);
}

// ---- Recommendation models

nlohmann::ordered_json make_dlrm_json(const spaces::DlrmPoint& pt, const est::DlrmPlan& plan,
                                      const est::DlrmEstimate& e, const TrainingJob& job) {
  const auto& m = pt.workload.model;
  const auto& t = e.time;
  const auto& mem = e.memory;
  nlohmann::ordered_json out;
  out["model"] = pt.model_name;
  out["gpu"] = pt.gpu_name;
  out["num_gpus"] = pt.cluster.num_gpus;
  out["nodes"] = pt.nodes;
  out["sharding"] = pt.best_sharding ? "best" : est::to_string(pt.sharding);
  out["framework"] = est::to_string(pt.workload.framework);
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
  out["step_time_s"] = {{"total", json_number(t.total_s)},
                        {"embedding_fwd", json_number(t.embedding_fwd_s)},
                        {"embedding_bwd", json_number(t.embedding_bwd_s)},
                        {"all_to_all", json_number(t.all_to_all_s)},
                        {"mlp_compute", json_number(t.mlp_compute_s)},
                        {"memory_bound", json_number(t.memory_bound_s)},
                        {"dense_allreduce", json_number(t.dense_allreduce_s)},
                        {"optimizer", json_number(t.optimizer_s)},
                        {"overhead", json_number(t.overhead_s)}};
  add_interval_json(out, t.total_s, spaces::point_interval(pt));
  out["memory_bytes"] = {{"tables", json_number(mem.tables_bytes)},
                         {"table_optimizer", json_number(mem.table_optimizer_bytes)},
                         {"dense", json_number(mem.dense_bytes)},
                         {"activations", json_number(mem.activations_bytes)},
                         {"workspace", json_number(mem.workspace_bytes)},
                         {"hbm", json_number(mem.hbm_bytes)},
                         {"expansion", json_number(mem.expansion_bytes)},
                         {"hbm_capacity", json_number(pt.cluster.hbm_bytes)},
                         {"expansion_capacity", json_number(pt.cluster.expansion_bytes)}};
  out["model_flops_per_step"] = json_number(e.model_flops_per_step);
  out["samples_per_s"] = json_number(e.samples_per_s);
  out["mfu"] = json_number(e.mfu);
  out["energy_per_step_j"] = json_number(e.energy_per_step_j);
  out["power"] = power_json(e.power);
  out["network"] = network_json(est::network_bill(pt.cluster, pt.calibration.network));
  out["job"] = job_json_if(e.feasible, job);
  add_defaults(out, pt.origin);
  return out;
}

void print_dlrm_text(const spaces::DlrmPoint& pt, const est::DlrmPlan& plan,
                     const est::DlrmEstimate& e, const TrainingJob& job) {
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
  std::cout << fmt::format(
      "workload  global batch {} samples, {}, {} sparse optimizer, framework {}\n", w.global_batch,
      est::to_string(w.precision), est::to_string(m.optimizer), dlrm_framework_text(pt));
  std::cout << fmt::format(
      "cluster   {} x {} ({} nodes x {}), NVLink {:g} GB/s, scale-out {:g} Gbit/s per GPU, HBM "
      "{:g} GB",
      c.num_gpus, pt.gpu_name, pt.nodes, c.gpus_per_node, c.nvlink_bytes_per_s / 1e9,
      c.inter_node_bytes_per_s * 8 / 1e9, c.hbm_bytes / 1e9);
  if (const std::string net = spaces::scale_out_text(c.scale_out); !net.empty())
    std::cout << ", " << net;
  std::cout << '\n';
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
  print_step_time(t.total_s, spaces::point_interval(pt),
                  {{"embedding lookups", t.embedding_fwd_s},
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
  print_power(e.power, c);
  print_network(est::network_bill(c, pt.calibration.network));
  if (e.feasible) print_job(job);
}

std::optional<po::variables_map> parse_estimate(const Args& args) {
  po::options_description options("Options");
  po::positional_options_description positional;
  add_setting_options(options, positional);
  options.add_options()("json", "print JSON instead of tables");
  return parse(args, options, positional, "estimate [FILE.toml] [options]",
               "Estimates one training step (time with its breakdown, memory per GPU, tokens/s,\n"
               "MFU, energy) of one model on one cluster with one parallel plan, and the training\n"
               "job of --training-tokens with its failures, checkpoints and restarts (the\n"
               "reliability flags; docs/estimator.md). The point passes the same structural rules\n"
               "as a sweep's (docs/spec-format.md).");
}

// The point of the flags, estimated: its JSON, or (json = false) its tables on stdout.
nlohmann::ordered_json estimate_point(const po::variables_map& vm, bool json) {
  const spaces::Settings settings = read_settings(vm);
  // A recommendation model of the catalog, or one described by its tables, is the DLRM family's.
  if ((settings.has("model") && spaces::is_dlrm_model(settings.at("model").text)) ||
      settings.has("num_tables")) {
    const spaces::DlrmPoint pt = spaces::resolve_dlrm(settings);
    const est::DlrmEstimator estimator(pt.workload, pt.cluster, pt.calibration);
    const est::DlrmPlan plan = spaces::place_tables(pt, estimator);
    const est::DlrmEstimate e = estimator.estimate(plan);
    const TrainingJob job = training_job(pt, estimator, e);
    if (json) return make_dlrm_json(pt, plan, e, job);
    print_dlrm_text(pt, plan, e, job);
    return {};
  }
  const Point pt = spaces::resolve(settings);
  if (const spaces::Violation v = spaces::check(pt)) throw InputError(spaces::explain(v, settings));
  const est::Estimator estimator(pt.workload, pt.cluster, pt.calibration);
  const est::Estimate e = estimator.estimate(pt.plan);
  const TrainingJob job = training_job(pt, pt.plan, estimator, e);
  if (json) return make_json(pt, e, job);
  print_text(pt, e, job);
  return {};
}

}  // namespace

nlohmann::ordered_json estimate_json(const Args& args) {
  const auto vm = parse_estimate(args);
  return vm ? estimate_point(*vm, true) : nlohmann::ordered_json();
}

int estimate(const Args& args) {
  const auto vm = parse_estimate(args);
  if (!vm) return kExitOk;
  // The shortest round-trip form: a reader gets the very doubles the estimator computed.
  if (vm->count("json"))
    std::cout << estimate_point(*vm, true).dump(2) << '\n';
  else
    estimate_point(*vm, false);
  return kExitOk;
}

}  // namespace clustersweep::cli
