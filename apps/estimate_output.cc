#include "apps/estimate_output.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <iostream>

#include "base/format.h"
#include "spaces/space.h"
#include "spaces/stack_settings.h"

namespace clustersweep::cli {

namespace est = estimator;

Rows step_time_rows(const est::StepTime& t, bool moe) {
  Rows rows = {{"compute (GEMM, attention)", t.compute_s},
               {"memory-bound ops", t.memory_bound_s},
               {"tensor/sequence parallel", t.tp_comm_s},
               {"context parallel", t.cp_comm_s},
               {"pipeline p2p", t.pp_p2p_s},
               {"pipeline bubble", t.pp_bubble_s}};
  if (moe) rows.push_back({"dispatcher all-to-all (exposed)", t.ep_a2a_s});
  rows.push_back({"data parallel (exposed)", t.dp_exposed_s});
  if (moe) rows.push_back({"expert data parallel (exp.)", t.edp_exposed_s});
  rows.insert(rows.end(), {{"optimizer", t.optimizer_s},
                           {"offload (exposed)", t.offload_s},
                           {"host launches and syncs", t.host_s},
                           {"framework overhead", t.overhead_s}});
  return rows;
}

Rows memory_rows(const est::Memory& m, bool moe) {
  Rows rows = {{"weights", m.weights_bytes},
               {"gradients", m.gradients_bytes},
               {"optimizer state", m.optimizer_bytes},
               {"activations (in flight)", m.activations_bytes},
               {"workspace", m.workspace_bytes}};
  if (moe)
    rows.insert(rows.end(), {{"expert weights", m.expert_weights_bytes},
                             {"expert gradients", m.expert_gradients_bytes},
                             {"expert optimizer state", m.expert_optimizer_bytes},
                             {"routed activations", m.expert_activations_bytes}});
  return rows;
}

void print_step_time(double total_s, const spaces::PointInterval& pi, const Rows& parts) {
  const est::StepInterval& interval = pi.interval;
  std::cout << fmt::format("{:<28}{:>12}{:>9}\n", "step time", fmt::format("{:.4g} s", total_s),
                           "share");
  std::cout << fmt::format(
      "  {:<26}{:>12}\n", "90% prediction interval",
      fmt::format("{:.3g}-{:.3g} s", total_s * interval.lo, total_s * interval.hi));
  std::cout << fmt::format("  {:<26}{:>12}\n", "calibration support",
                           fmt::format("{} runs", pi.support.runs));
  if (!pi.support.weakest.empty())
    std::cout << fmt::format(
        "  note: few calibration runs are like this point ({});\n"
        "  its interval is widened (docs/calibration.md, \"Calibration support\")\n",
        pi.support.weakest);
  for (const auto& [name, value] : parts)
    std::cout << fmt::format("  {:<26}{:>12}{:>8.1f}%\n", name, fmt::format("{:.4g} s", value),
                             total_s > 0 ? 100 * value / total_s : 0.0);
  std::cout << '\n';
}

void print_memory(const char* title, double hbm_bytes, double expansion_bytes, const Rows& kinds,
                  const est::Cluster& c, bool feasible, est::Infeasible reason) {
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

void add_interval_json(nlohmann::ordered_json& out, double total_s,
                       const spaces::PointInterval& pi) {
  out["step_time_lo_s"] = json_number(total_s * pi.interval.lo);
  out["step_time_hi_s"] = json_number(total_s * pi.interval.hi);
  out["calibration_support"] = pi.support.runs;
}

namespace {

TrainingJob training_job(double amount, const char* unit, double steps,
                         const est::Reliability& reliability, const est::Cluster& cluster,
                         double state_bytes, double step_s, double energy_per_step_j,
                         const est::StepInterval& interval) {
  TrainingJob job{amount, unit, steps, state_bytes, {}, {}, {}};
  job.design = est::job_design(reliability, cluster, state_bytes);
  job.figures = est::job_figures(job.design, step_s, energy_per_step_j, steps, interval);
  return job;
}

}  // namespace

TrainingJob training_job(const spaces::Point& pt, const est::Plan& plan,
                         const est::Estimator& estimator, const est::Estimate& e) {
  TrainingJob job = training_job(
      pt.training_tokens, "tokens", est::steps_to_train(pt.workload, pt.training_tokens),
      pt.reliability, pt.cluster, estimator.checkpoint_bytes(), e.time.total_s, e.energy_per_step_j,
      spaces::point_interval(pt, plan).interval);
  job.power = e.power;
  return job;
}

TrainingJob training_job(const spaces::DlrmPoint& pt, const est::DlrmEstimator& estimator,
                         const est::DlrmEstimate& e) {
  TrainingJob job = training_job(
      pt.training_samples, "samples", est::steps_to_train(pt.workload, pt.training_samples),
      pt.reliability, pt.cluster, estimator.checkpoint_bytes(), e.time.total_s, e.energy_per_step_j,
      spaces::point_interval(pt).interval);
  job.power = e.power;
  return job;
}

void print_job(const TrainingJob& job, std::string_view title) {
  const est::JobDesign& d = job.design;
  const est::JobFigures& f = job.figures;
  const est::JobOutcome& o = f.outcome;
  std::cout << fmt::format("\n{:<28}{} {}, {} steps\n", title, format_quantity(job.amount, ""),
                           job.unit, with_commas(static_cast<std::uint64_t>(std::ceil(job.steps))));
  if (d.failures_per_s > 0)
    std::cout << fmt::format("  {:<26}{:.3g} per day (one every {})\n", "failures",
                             d.failures_per_s * 86400, format_duration(1 / d.failures_per_s));
  else
    std::cout << fmt::format("  {:<26}none (infinite MTBF)\n", "failures");
  std::cout << fmt::format("  {:<26}{}, ", "checkpoint", format_bytes(job.state_bytes));
  if (std::isfinite(o.checkpoint_interval_s))
    std::cout << fmt::format(
        "every {} of training{}", format_duration(o.checkpoint_interval_s),
        o.checkpoint_interval_s >= f.failure_free_s ? " (beyond the job)" : "");
  else
    std::cout << "never (no failures to recover from)";
  std::cout << fmt::format(", stalls {}", format_duration(d.checkpoint_stall_s));
  if (d.checkpoint_write_s != d.checkpoint_stall_s)
    std::cout << fmt::format(" (written in {})", format_duration(d.checkpoint_write_s));
  std::cout << '\n';
  std::cout << fmt::format("  {:<26}{} with reading the checkpoint back\n", "restart",
                           format_duration(d.restart_s));
  std::cout << fmt::format("  {:<26}{}\n", "goodput", format_quantity(o.goodput, "fraction"));
  std::cout << fmt::format("  {:<26}{} ({} without failures)\n", "time to train",
                           format_duration(o.wall_s), format_duration(f.failure_free_s));
  std::cout << fmt::format("  {:<26}{} - {}\n", "90% prediction interval",
                           format_duration(f.wall_lo_s), format_duration(f.wall_hi_s));
  const est::StepPower& p = job.power;
  // The job's energy at each scope: the step's, times the steps with the lost work.
  const double steps = p.it_j > 0 ? f.energy_j / p.it_j : 0;
  std::cout << fmt::format("  {:<26}{} (servers and network); GPUs {}, servers {}, facility {}\n",
                           "energy to train", format_quantity(f.energy_j / 3.6e6, "kWh"),
                           format_quantity(steps * p.gpu_j / 3.6e6, "kWh"),
                           format_quantity(steps * p.node_j / 3.6e6, "kWh"),
                           format_quantity(f.energy_j * default_pue() / 3.6e6, "kWh"));
}

double default_pue() { return spaces::Pricing{}.pue; }

void print_power(const est::StepPower& p, const est::Cluster& cluster) {
  std::cout << fmt::format("{:<28}{:.0f} W of {:.0f} W TDP", "power per GPU", p.gpu_w,
                           cluster.gpu.tdp_w);
  if (cluster.power_cap_w > 0)
    std::cout << fmt::format(" (capped at {:.0f} W: GEMMs at {:.0f}% clock)", cluster.power_cap_w,
                             100 * p.gpu_clock);
  std::cout << '\n';
  std::cout << fmt::format("{:<28}{:.2f} kW (GPUs and the rest of the server)\n", "power per node",
                           p.node_w / 1e3);
  std::cout << fmt::format("{:<28}{:.1f} kW (scale-out switches and transceivers)\n",
                           "network power", p.network_w / 1e3);
  std::cout << fmt::format(
      "{:<28}GPUs {:.4g} MJ, servers {:.4g} MJ, with the network {:.4g} MJ, facility {:.4g} MJ "
      "(PUE {:g})\n",
      "energy per step", p.gpu_j / 1e6, p.node_j / 1e6, p.it_j / 1e6, p.it_j * default_pue() / 1e6,
      default_pue());
}

nlohmann::ordered_json power_json(const est::StepPower& p) {
  return {{"gpu_w", json_number(p.gpu_w)},
          {"node_w", json_number(p.node_w)},
          {"network_w", json_number(p.network_w)},
          {"gemm_clock", json_number(p.gpu_clock)},
          {"energy_per_step_j",
           {{"gpu", json_number(p.gpu_j)},
            {"node", json_number(p.node_j)},
            {"node_plus_network", json_number(p.it_j)},
            {"facility", json_number(p.it_j * default_pue())}}},
          {"pue", default_pue()}};
}

void print_network(const est::NetworkBill& bill) {
  if (bill.rows == 0) return;
  std::cout << fmt::format(
      "scale-out network           {} tier{}, {:g} Gbit/s links, {:g} NIC{} per GPU\n", bill.tiers,
      bill.tiers == 1 ? "" : "s", bill.link_gbps, bill.nics_per_gpu,
      bill.nics_per_gpu == 1 ? "" : "s");
  // Where the taper went: a pod that no tier below the top holds leaves the network as built.
  if (bill.taper > 1)
    std::cout << (bill.tapered_gpus > 0
                      ? fmt::format(
                            "  tapered {:g}:1 above each {}-GPU sub-tree (the step pays it "
                            "past one)\n",
                            bill.taper,
                            with_commas(static_cast<std::uint64_t>(std::round(bill.tapered_gpus))))
                      : fmt::format("  not tapered: no tier below the top holds the pod, so the "
                                    "{:g}:1 taper thins no link and the step pays none\n",
                                    bill.taper));
  std::cout << fmt::format("  {:<8}{:>9}{:>7}{:>9}{:>9}{:>9}{:>8}{:>13}{:>10}\n", "tier",
                           "switches", "radix", "links", "optics", "cables", "NICs", "USD", "W");
  const auto line = [](std::string_view name, const auto& r, double radix) {
    const auto n = [](double x) { return with_commas(static_cast<std::uint64_t>(std::round(x))); };
    std::cout << fmt::format("  {:<8}{:>9}{:>7}{:>9}{:>9}{:>9}{:>8}{:>13}{:>10}\n", name,
                             n(r.switches), radix > 0 ? n(radix) : "-", n(r.links),
                             n(r.transceivers), n(r.cables), n(r.nics), n(r.usd), n(r.w));
  };
  est::NetworkRow total;
  for (int i = 0; i < bill.rows; ++i) {
    const est::NetworkRow& r = bill.row[static_cast<std::size_t>(i)];
    line(r.name, r, r.switches > 0 ? r.radix : 0);
    total.links += r.links;
  }
  total.switches = bill.switches;
  total.transceivers = bill.transceivers;
  total.cables = bill.cables;
  total.nics = bill.nics;
  total.usd = bill.capex_usd;
  total.w = bill.power_w;
  line("total", total, 0);
}

nlohmann::ordered_json network_json(const est::NetworkBill& bill) {
  nlohmann::ordered_json tiers = nlohmann::ordered_json::array();
  for (int i = 0; i < bill.rows; ++i) {
    const est::NetworkRow& r = bill.row[static_cast<std::size_t>(i)];
    tiers.push_back({{"tier", r.name},
                     {"switches", json_number(r.switches)},
                     {"radix", json_number(r.radix)},
                     {"links", json_number(r.links)},
                     {"medium", r.copper ? "copper" : "optical"},
                     {"transceivers", json_number(r.transceivers)},
                     {"cables", json_number(r.cables)},
                     {"nics", json_number(r.nics)},
                     {"usd", json_number(r.usd)},
                     {"w", json_number(r.w)}});
  }
  return {{"tiers", bill.tiers},
          {"link_gbps", json_number(bill.link_gbps)},
          {"nics_per_gpu", json_number(bill.nics_per_gpu)},
          {"tapered_gpus", json_number(bill.tapered_gpus)},
          {"rows", tiers},
          {"switches", json_number(bill.switches)},
          {"transceivers", json_number(bill.transceivers)},
          {"cables", json_number(bill.cables)},
          {"nics", json_number(bill.nics)},
          {"network_capex_usd", json_number(bill.capex_usd)},
          {"network_power_w", json_number(bill.power_w)}};
}

nlohmann::ordered_json job_json(const TrainingJob& job) {
  const est::JobFigures& f = job.figures;
  return {{std::string("training_") + job.unit, job.amount},
          {"steps", json_number(job.steps)},
          {"checkpoint_bytes", json_number(job.state_bytes)},
          {"failures_per_day", json_number(job.design.failures_per_s * 86400)},
          {"checkpoint_stall_s", json_number(job.design.checkpoint_stall_s)},
          {"checkpoint_write_s", json_number(job.design.checkpoint_write_s)},
          {"restart_s", json_number(job.design.restart_s)},
          {"checkpoint_interval_s", json_number(f.outcome.checkpoint_interval_s)},
          {"goodput", json_number(f.outcome.goodput)},
          {"time_to_train_failure_free_s", json_number(f.failure_free_s)},
          {"time_to_train_s", json_number(f.outcome.wall_s)},
          {"time_to_train_lo_s", json_number(f.wall_lo_s)},
          {"time_to_train_hi_s", json_number(f.wall_hi_s)},
          {"energy_to_train_j", json_number(f.energy_j)},
          {"energy_gpu_to_train_j",
           json_number(job.power.it_j > 0 ? f.energy_j * job.power.gpu_j / job.power.it_j : 0)},
          {"energy_facility_to_train_j", json_number(f.energy_j * default_pue())}};
}

nlohmann::json json_number(double x) {
  return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json();
}

nlohmann::ordered_json plan_json(const est::Plan& p) {
  nlohmann::ordered_json out = {
      {"tp", p.tp},
      {"pp", p.pp},
      {"dp", p.dp},
      {"cp", p.cp},
      {"vp", p.vp},
      {"pipeline_split", est::to_string(p.pipeline_split)},
      {"sequence_parallel", p.sequence_parallel},
      {"zero", p.zero},
      {"recompute", est::recompute_label(p.recompute, p.recompute_modules)},
      {"micro_batch", p.micro_batch},
      {"offload", est::to_string(p.offload)},
      {"ep", p.ep},
      {"etp", p.etp},
      {"capacity_factor", p.capacity_factor}};
  for (const spaces::StackSetting& st : spaces::stack_settings()) {
    const int v = st.get(p.stack);
    if (st.boolean)
      out[st.name] = v != 0;
    else
      out[st.name] = st.value_name(v);
  }
  return out;
}

std::string stack_text(const est::Stack& stack, bool rank_order) {
  std::string out;
  for (const spaces::StackSetting& st : spaces::stack_settings())
    if (rank_order || std::string_view(st.name) != "rank_order")
      out += fmt::format("{}{} {}", out.empty() ? "" : ", ", st.name, st.value_name(st.get(stack)));
  return out;
}

std::string assumed_stack_text(const std::map<std::string, spaces::Origin>& origin,
                               bool rank_order) {
  std::vector<std::string> names;
  for (const spaces::StackSetting& st : spaces::stack_settings())
    if (origin.count(st.name) && (rank_order || std::string_view(st.name) != "rank_order"))
      names.emplace_back(st.name);
  if (names.empty()) return {};
  return fmt::format("assumed (not given): {}; --framework and the stack flags choose",
                     fmt::join(names, ", "));
}

std::string dlrm_framework_text(const spaces::DlrmPoint& point) {
  const char* name = est::to_string(point.workload.framework);
  if (!point.origin.count("framework")) return name;
  return fmt::format("{} (assumed: the fastest {} runs; --framework to choose)", name,
                     point.gpu_name);
}

nlohmann::ordered_json step_time_json(const est::StepTime& t) {
  return {{"total", json_number(t.total_s)},
          {"compute", json_number(t.compute_s)},
          {"memory_bound", json_number(t.memory_bound_s)},
          {"tp_comm", json_number(t.tp_comm_s)},
          {"cp_comm", json_number(t.cp_comm_s)},
          {"pp_p2p", json_number(t.pp_p2p_s)},
          {"pp_bubble", json_number(t.pp_bubble_s)},
          {"ep_a2a", json_number(t.ep_a2a_s)},
          {"dp_exposed", json_number(t.dp_exposed_s)},
          {"edp_exposed", json_number(t.edp_exposed_s)},
          {"optimizer", json_number(t.optimizer_s)},
          {"offload", json_number(t.offload_s)},
          {"host", json_number(t.host_s)},
          {"overhead", json_number(t.overhead_s)}};
}

nlohmann::ordered_json memory_json(const est::Memory& m, const est::Cluster& c) {
  return {{"weights", json_number(m.weights_bytes)},
          {"gradients", json_number(m.gradients_bytes)},
          {"optimizer", json_number(m.optimizer_bytes)},
          {"activations", json_number(m.activations_bytes)},
          {"workspace", json_number(m.workspace_bytes)},
          {"expert_weights", json_number(m.expert_weights_bytes)},
          {"expert_gradients", json_number(m.expert_gradients_bytes)},
          {"expert_optimizer", json_number(m.expert_optimizer_bytes)},
          {"expert_activations", json_number(m.expert_activations_bytes)},
          {"hbm", json_number(m.hbm_bytes)},
          {"expansion", json_number(m.expansion_bytes)},
          {"hbm_capacity", json_number(c.hbm_bytes)},
          {"expansion_capacity", json_number(c.expansion_bytes)}};
}

}  // namespace clustersweep::cli
