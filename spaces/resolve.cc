#include "spaces/resolve.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/error.h"
#include "base/format.h"
#include "base/numbers.h"
#include "spaces/architecture.h"
#include "spaces/frameworks.h"
#include "spaces/stack_settings.h"

namespace clustersweep::spaces {

namespace est = estimator;

const char* to_string(Origin origin) noexcept {
  constexpr const char* kNames[] = {"catalog", "calibration", "rule", "fallback"};
  return kNames[static_cast<int>(origin)];
}

std::string flag_name(std::string_view setting) {
  std::string out(setting);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

void Settings::set(const std::string& name, std::string text, std::string where) {
  values_[name] = {std::move(text), std::move(where)};
}

std::string Settings::where(const std::string& name) const {
  return has(name) ? values_.at(name).where : "--" + flag_name(name);
}

long long Settings::integer(const std::string& name, long long fallback,
                            long long min_value) const {
  if (!has(name)) return fallback;
  const Setting& s = values_.at(name);
  std::int64_t value = 0;
  if (!read_int64(s.text, min_value, kMaxInt, value).empty())
    throw InputError(fmt::format("{}: must be {}, got '{}'", s.where,
                                 min_value == 1 ? std::string("a positive integer")
                                                : fmt::format("an integer >= {}", min_value),
                                 s.text));
  return value;
}

double Settings::number(const std::string& name, double fallback, bool allow_zero,
                        bool allow_infinity) const {
  if (!has(name)) return fallback;
  const Setting& s = values_.at(name);
  RealDomain domain = allow_zero ? RealDomain::at_least(0) : RealDomain::above(0);
  domain.infinity = allow_infinity;
  double value = 0;
  if (!read_real(s.text, domain, value).empty())
    throw InputError(fmt::format("{}: must be a {} number{}, got '{}'", s.where,
                                 allow_zero ? "non-negative" : "positive",
                                 allow_infinity ? " or inf" : "", s.text));
  return value;
}

bool Settings::boolean(const std::string& name, bool fallback) const {
  if (!has(name)) return fallback;
  const Setting& s = values_.at(name);
  if (bool value = false; read_boolean(s.text, value)) return value;
  throw InputError(fmt::format("{}: must be true or false, got '{}'", s.where, s.text));
}

const std::vector<SettingInfo>& setting_infos() {
  static const std::vector<SettingInfo> kInfos = [] {
    std::vector<SettingInfo> infos = {
        {"model", SettingFamily::every,
         "catalog model, e.g. gpt3-175b, llama3-70b, deepseek-v3 (or give the architecture below)"},
        {"layers", SettingFamily::transformer, "transformer layers"},
        {"hidden", SettingFamily::transformer, "model width"},
        {"heads", SettingFamily::transformer, "attention (query) heads"},
        {"kv_heads", SettingFamily::transformer, "key/value heads (GQA/MQA; default: heads)"},
        {"ffn_hidden", SettingFamily::transformer,
         "MLP width (per gate/up matrix for SwiGLU; default: 4 x hidden for gelu)"},
        {"mlp", SettingFamily::transformer, "gelu (2-matrix) or swiglu (3-matrix)"},
        {"vocab", SettingFamily::transformer, "vocabulary size"},
        // The architecture_fields() follow here.
        {"seq_len", SettingFamily::transformer, "training sequence length (default: the model's)"},
        {"global_batch", SettingFamily::every,
         "sequences per optimizer step (default: the model's)"},
        {"precision", SettingFamily::every,
         "fp32, tf32, fp16, bf16 (default; fp32 for recommendation models), fp8, fp4"},
        {"gpu", SettingFamily::every, "catalog accelerator, e.g. H100-SXM5-80GB"},
        {"nodes", SettingFamily::every, "number of nodes (GPUs = nodes x gpus-per-node)"},
        {"gpus", SettingFamily::every, "number of GPUs, instead of --nodes"},
        {"gpus_per_node", SettingFamily::every, "GPUs per node (default: the accelerator's)"},
        {"nvlink_domain", SettingFamily::every,
         "GPUs per NVLink/NVSwitch domain (default: the accelerator's; a node-local domain follows "
         "gpus-per-node)"},
        {"fabric", SettingFamily::every,
         "scale-up fabric of the domain: switch (NVSwitch), mesh (a direct link to each other "
         "chip: Infinity Fabric, Gaudi) or torus (TPU ICI, NeuronLink) (default: the "
         "accelerator's)"},
        {"torus", SettingFamily::every,
         "a torus domain's dimensions, e.g. 16x16 or 4x4x8, their product the domain (default: "
         "the most balanced shape of the accelerator's 2 or 3 dimensions)"},
        {"nvlink_gbytes_per_s", SettingFamily::every,
         "NVLink GB/s per GPU, one direction (default: the accelerator's)"},
        {"inter_node_gbps_per_gpu", SettingFamily::every,
         "scale-out Gbit/s per GPU (default: the accelerator's usual one, else the calibration's)"},
        {"hbm_gb", SettingFamily::every, "HBM capacity per GPU in GB (default: the accelerator's)"},
        {"expansion_gb", SettingFamily::every, "memory-expansion tier per GPU in GB (default 0)"},
        {"expansion_gbytes_per_s", SettingFamily::every,
         "expansion-tier GB/s per GPU, one direction (default: the calibration's)"},
        {"nvlink_latency_us", SettingFamily::every,
         "NVLink latency per hop in us (default: the calibration's)"},
        {"inter_node_latency_us", SettingFamily::every,
         "scale-out latency per hop in us (default: the calibration's)"},
        {"node_overhead_w", SettingFamily::every,
         "maximum power per node beyond the GPUs in W (default: the accelerator's)"},
        {"power_cap_w", SettingFamily::every,
         "GPU board power limit in W, above the accelerator's idle power (default 0: none, the "
         "TDP)"},
        {"network", SettingFamily::every,
         "scale-out network: fat_tree, rail_optimized (leaves by rail, DGX SuperPOD), rail_only "
         "(no spine between rails) or dragonfly (default fat_tree)"},
        {"oversubscription", SettingFamily::every,
         "the network's taper above the leaf, or above the pod with --pod-gpus: downlinks per "
         "uplink, at least 1 (default 1: non-blocking)"},
        {"pod_gpus", SettingFamily::every,
         "GPUs per pod below the taper, whole nodes dividing the cluster (default 0: the taper "
         "sits above the leaf)"},
        {"planes", SettingFamily::every,
         "parallel network planes each NIC port is split over (default 1)"},
        {"group_gpus", SettingFamily::every,
         "GPUs per dragonfly group, at most the cluster (default 0: one leaf's worth)"},
        {"global_taper", SettingFamily::every,
         "a dragonfly group's injection over its global links' bandwidth, at least 1 (default "
         "1)"},
        {"lora_rank", SettingFamily::transformer,
         "LoRA fine-tuning: base weights frozen, adapters of this rank on the attention "
         "projections (default 0: full training)"},
        {"tp", SettingFamily::transformer, "tensor-parallel degree (default 1)"},
        {"pp", SettingFamily::transformer, "pipeline-parallel degree (default 1)"},
        {"dp", SettingFamily::transformer, "data-parallel degree (default: GPUs / (tp*pp*cp))"},
        {"cp", SettingFamily::transformer, "context-parallel degree (default 1)"},
        {"vp", SettingFamily::transformer,
         "interleaved virtual stages per pipeline rank (default 1)"},
        {"pipeline_split", SettingFamily::transformer,
         "even, embedding_loss or uneven (default: the first of them the plan allows)"},
        {"sequence_parallel", SettingFamily::transformer,
         "Megatron sequence parallelism (flag, or =true/false)"},
        {"zero", SettingFamily::transformer, "ZeRO stage 0-3 (3 = FSDP FULL_SHARD; default 0)"},
        {"recompute", SettingFamily::transformer,
         "none (default), selective (the attention core), full, or selective with Megatron-Core's "
         "modules: selective:mla_up_proj+mlp (core_attn, layernorm, mla_up_proj, mlp, moe_act, "
         "moe, shared_experts)"},
        {"micro_batch", SettingFamily::transformer, "sequences per micro-batch (default 1)"},
        {"ep", SettingFamily::transformer,
         "expert-parallel degree (default 1; divides num_experts and tp*cp*dp/etp)"},
        {"etp", SettingFamily::transformer, "expert tensor-parallel degree (default 1)"},
        {"capacity_factor", SettingFamily::transformer,
         "expert capacity as a multiple of the balanced share; tokens beyond it are dropped "
         "(token_routing = capacity; default 1 with it)"},
        {"offload", SettingFamily::transformer,
         "none (default), optimizer, optimizer_activations, all (to the expansion tier)"},
        {"allow_tp_across_nodes", SettingFamily::transformer,
         "accept tp groups that leave the NVLink domain (default false)"},
        {"num_tables", SettingFamily::dlrm,
         "recommendation models: embedding tables (default: the model's)"},
        {"embedding_dim", SettingFamily::dlrm,
         "recommendation models: embedding width (default: the model's)"},
        {"total_embedding_rows", SettingFamily::dlrm,
         "recommendation models: rows of all tables; rescales the model's tables"},
        {"bottom_mlp", SettingFamily::dlrm,
         "recommendation models: bottom MLP widths, e.g. 512-256-128"},
        {"top_mlp", SettingFamily::dlrm,
         "recommendation models: top MLP widths, e.g. 1024-1024-512-256-1"},
        {"interaction", SettingFamily::dlrm, "recommendation models: dot (DLRM) or dcnv2"},
        {"sharding", SettingFamily::dlrm,
         "recommendation models: table, row, column, table_row, data, hybrid, fused_row, or best "
         "(default: the "
         "planner's best placement)"},
        {"training_tokens", SettingFamily::transformer,
         "tokens to train, for the job's time, energy and failures (default 300e9)"},
        {"training_samples", SettingFamily::dlrm,
         "recommendation models: samples to train (default 4.2e9, one epoch of Criteo 1TB)"},
        {"gpu_mtbf_hours", SettingFamily::every,
         "mean time between job-interrupting failures per GPU, hours, or inf (default: Llama 3's "
         "50,677)"},
        {"node_mtbf_hours", SettingFamily::every,
         "of a node beyond its GPUs' share, hours (default inf: in the GPUs' figure)"},
        {"storage_gbytes_per_s_per_node", SettingFamily::every,
         "checkpoint write and read GB/s of one node (default 2)"},
        {"storage_gbytes_per_s", SettingFamily::every,
         "checkpoint GB/s of the whole storage system (default 2000)"},
        {"async_snapshot_gbytes_per_s", SettingFamily::every,
         "asynchronous checkpoints: GB/s per GPU of the snapshot that stalls training (default 0: "
         "synchronous)"},
        {"restart_s", SettingFamily::every,
         "seconds a restart takes beyond reading the checkpoint back (default 600)"},
        {"calibration", SettingFamily::every, "calibration TOML overriding the built-in one"},
    };
    auto at = std::find_if(infos.begin(), infos.end(), [](const SettingInfo& i) {
      return std::string_view(i.name) == "vocab";
    });
    for (const ArchitectureField& f : architecture_fields())
      at = infos.insert(at + 1, {f.name, SettingFamily::transformer, f.help});
    at = std::find_if(infos.begin(), infos.end(), [](const SettingInfo& i) {
      return std::string_view(i.name) == "capacity_factor";
    });
    // `framework` names a recommendation model's framework too (resolve_dlrm).
    for (const StackSetting& st : stack_settings())
      at = infos.insert(at + 1,
                        {st.name,
                         std::string_view(st.name) == "framework" ? SettingFamily::every
                                                                  : SettingFamily::transformer,
                         st.help});
    return infos;
  }();
  return kInfos;
}

int default_nvlink_domain(const AcceleratorEntry& gpu, int gpus_per_node) noexcept {
  return gpu.default_nvlink_domain == gpu.default_gpus_per_node ? gpus_per_node
                                                                : gpu.default_nvlink_domain;
}

double default_inter_node_gbps(const AcceleratorEntry& gpu,
                               const est::Calibration& calibration) noexcept {
  return gpu.default_scale_out_gbps > 0 ? gpu.default_scale_out_gbps
                                        : calibration.default_inter_node_gbps_per_gpu;
}

est::Cluster resolve_cluster(const AcceleratorEntry& gpu, const ClusterSettings& s,
                             const est::Calibration& calibration) noexcept {
  est::Cluster c;
  c.gpu = gpu.accelerator;
  c.gpus_per_node = s.gpus_per_node > 0 ? s.gpus_per_node : gpu.default_gpus_per_node;
  c.nvlink_domain =
      s.nvlink_domain > 0 ? s.nvlink_domain : default_nvlink_domain(gpu, c.gpus_per_node);
  c.num_gpus = static_cast<int>(s.num_gpus > 0 ? s.num_gpus : s.nodes * c.gpus_per_node);
  c.nvlink_bytes_per_s =
      s.nvlink_gbytes_per_s > 0 ? s.nvlink_gbytes_per_s * 1e9 : gpu.accelerator.nvlink_bytes_per_s;
  c.inter_node_bytes_per_s =
      (s.inter_node_gbps_per_gpu > 0 ? s.inter_node_gbps_per_gpu
                                     : default_inter_node_gbps(gpu, calibration)) *
      1e9 / 8;
  c.hbm_bytes = s.hbm_gb > 0 ? s.hbm_gb * 1e9 : gpu.accelerator.hbm_bytes;
  c.expansion_bytes = s.expansion_gb * 1e9;
  if (c.expansion_bytes > 0)
    c.expansion_bytes_per_s =
        (s.expansion_gbytes_per_s > 0 ? s.expansion_gbytes_per_s
                                      : calibration.default_expansion_gbytes_per_s) *
        1e9;
  c.nvlink_latency_s =
      (s.nvlink_latency_us >= 0 ? s.nvlink_latency_us * 1e-6 : calibration.nvlink_latency_s);
  c.inter_node_latency_s = (s.inter_node_latency_us >= 0 ? s.inter_node_latency_us * 1e-6
                                                         : calibration.inter_node_latency_s);
  c.node_overhead_w = s.node_overhead_w >= 0 ? s.node_overhead_w : gpu.default_node_overhead_w;
  c.power_cap_w = s.power_cap_w;
  c.fabric = s.fabric >= 0 ? static_cast<est::Fabric>(s.fabric) : gpu.fabric;
  c.scale_out = s.scale_out;
  if (c.fabric == est::Fabric::torus)
    c.torus = s.torus[0] > 0
                  ? s.torus
                  : est::balanced_torus(c.nvlink_domain, gpu.torus_dims > 0 ? gpu.torus_dims : 2);
  return c;
}

std::array<int, est::kMaxTorusDims> parse_torus(std::string_view text, std::string_view what) {
  std::array<int, est::kMaxTorusDims> torus{1, 1, 1};
  std::size_t dims = 0;
  bool ok = !text.empty();
  for (std::string_view rest = text; ok && !rest.empty();) {
    const std::size_t x = rest.find('x');
    const std::string_view part = rest.substr(0, x);
    int value = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    ok = ec == std::errc{} && end == part.data() + part.size() && value > 0 &&
         dims < torus.size() && !(x != std::string_view::npos && x + 1 == rest.size());
    if (ok) torus[dims++] = value;
    rest = x == std::string_view::npos ? std::string_view{} : rest.substr(x + 1);
  }
  if (!ok)
    throw InputError(fmt::format(
        "{}: must be 1 to 3 positive chip counts joined by 'x' (e.g. 16x16, 4x4x8), got '{}'", what,
        text));
  return torus;
}

std::string scale_up_text(const est::Cluster& c) {
  const double total = c.nvlink_bytes_per_s / 1e9, link = total / est::scale_up_links(c);
  switch (c.fabric) {
    case est::Fabric::switched:
      break;
    case est::Fabric::mesh:
      return fmt::format("mesh of {} at {:g} GB/s ({:g} GB/s per link)", c.nvlink_domain, total,
                         link);
    case est::Fabric::torus:
      return fmt::format("torus {} at {:g} GB/s ({:g} GB/s per link)", torus_text(c.torus), total,
                         link);
  }
  return fmt::format("NVLink domain {} at {:g} GB/s", c.nvlink_domain, total);
}

ScaleOutProblem scale_out_problem(const est::ScaleOut& net, std::int64_t num_gpus,
                                  int gpus_per_node, double switch_ports) {
  if (!(net.oversubscription >= 1))
    return {"oversubscription",
            fmt::format("must be at least 1 (downlinks per uplink; 1 is non-blocking), got {}",
                        format_number(net.oversubscription))};
  if (!(net.global_taper >= 1))
    return {"global_taper",
            fmt::format("must be at least 1 (a dragonfly group's injection over its global "
                        "bandwidth; 1 is untapered), got {}",
                        format_number(net.global_taper))};
  if (net.planes < 1)
    return {"planes", fmt::format("must be a positive integer, got {}", net.planes)};
  if (net.pod_gpus > 0 && gpus_per_node > 0 && net.pod_gpus % gpus_per_node != 0)
    return {"pod_gpus", fmt::format("a pod of {} GPUs is not whole nodes of {} GPUs; give a "
                                    "multiple of {}",
                                    net.pod_gpus, gpus_per_node, gpus_per_node)};
  if (net.pod_gpus > 0 && num_gpus % net.pod_gpus != 0)
    return {"pod_gpus", fmt::format("a pod of {} GPUs does not divide the cluster's {} GPUs; give "
                                    "a divisor of {}",
                                    net.pod_gpus, num_gpus, num_gpus)};
  if (net.network == est::Network::dragonfly && net.group_gpus > num_gpus)
    return {"group_gpus", fmt::format("a dragonfly group of {} GPUs is larger than the cluster's "
                                      "{} GPUs; give at most {}",
                                      net.group_gpus, num_gpus, num_gpus)};
  if (net.network == est::Network::rail_only && gpus_per_node > 0) {
    const double radix = switch_ports * net.planes;
    const auto rail_nodes = static_cast<std::int64_t>(radix * radix / 2);
    const std::int64_t nodes = (num_gpus + gpus_per_node - 1) / gpus_per_node;
    if (nodes > rail_nodes)
      return {"network", fmt::format("a rail-only network's rail reaches at most {} nodes (a "
                                     "two-tier rail of {}-port switches), not the cluster's {}; "
                                     "give more planes or another network",
                                     rail_nodes, format_number(radix), nodes)};
  }
  return {};
}

std::string scale_out_text(const est::ScaleOut& net) {
  if (net.network == est::Network::fat_tree && net.oversubscription <= 1 && net.planes <= 1)
    return "";
  std::string text = net.oversubscription > 1 ? "" : "non-blocking ";
  text += est::to_string(net.network);
  if (net.oversubscription > 1)
    text += fmt::format(
        ", {}:1 above {}", format_number(net.oversubscription),
        net.pod_gpus > 0 ? fmt::format("pods of {} GPUs", net.pod_gpus) : std::string("the leaf"));
  if (net.network == est::Network::dragonfly)
    text += fmt::format(
        ", groups of {}, global links {}:1",
        net.group_gpus > 0 ? fmt::format("{} GPUs", net.group_gpus) : std::string("one leaf"),
        format_number(net.global_taper));
  if (net.planes > 1) text += fmt::format(", {} planes", net.planes);
  return text;
}

std::string torus_text(const std::array<int, est::kMaxTorusDims>& torus) {
  std::string text = std::to_string(torus[0]);
  for (std::size_t i = 1; i < torus.size() && torus[i] > 1; ++i)
    text += "x" + std::to_string(torus[i]);
  return text;
}

est::Workload resolve_workload(const ModelChoice& model, int seq_len, std::int64_t global_batch,
                               est::Precision precision) noexcept {
  est::Workload w;
  w.model = model.model;
  w.seq_len = seq_len > 0 ? seq_len : model.seq_len;
  w.global_batch = global_batch > 0 ? global_batch : model.global_batch;
  w.precision = precision;
  return w;
}

std::string_view column_of_setting(std::string_view name) noexcept {
  for (const auto& [column, setting] : kColumnSettings)
    if (name == setting) return column;
  return name;
}

std::string_view setting_of_column(std::string_view name) noexcept {
  for (const auto& [column, setting] : kColumnSettings)
    if (name == column) return setting;
  return name;
}

est::PipelineSplit default_pipeline_split(const est::Model& model, int pp, int vp) noexcept {
  for (int i = 0; i < est::kNumPipelineSplits; ++i) {
    const auto split = static_cast<est::PipelineSplit>(i);
    if (split_rule(model, pp, vp, split) == Rule::none) return split;
  }
  return est::PipelineSplit::even;
}

namespace {

// Reads an enum setting through its parse function, naming the valid names on error.
template <class Enum>
void read_enum(const Settings& s, const std::string& name, bool (*parse)(std::string_view, Enum&),
               const char* (*to_string)(Enum), int count, Enum& out) {
  if (!s.has(name)) return;
  if (parse(s.at(name).text, out)) return;
  std::vector<std::string> valid;
  for (int i = 0; i < count; ++i) valid.emplace_back(to_string(static_cast<Enum>(i)));
  throw InputError(
      fmt::format("{}: must be {}, got '{}'", s.at(name).where, join_or(valid), s.at(name).text));
}

const char* mlp_name(est::Mlp m) { return est::to_string(m); }
const char* precision_name(est::Precision p) { return est::to_string(p); }
const char* offload_name(est::Offload o) { return est::to_string(o); }
const char* split_name(est::PipelineSplit p) { return est::to_string(p); }
const char* fabric_name(est::Fabric f) { return est::to_string(f); }
const char* network_name(est::Network n) { return est::to_string(n); }

// The job's reliability settings ([reliability] of a spec, by the same names), each taking the
// values the spec's key takes.
est::Reliability resolve_reliability(const Settings& s, std::map<std::string, Origin>& origins) {
  est::Reliability r;
  est::Reliability::for_each(r, [&](const char* name, double& field) {
    if (!s.has(name)) origins[name] = Origin::fallback;
    field = s.number(name, field, est::Reliability::allows_zero(name),
                     est::Reliability::allows_infinity(name));
  });
  return r;
}

}  // namespace

std::array<bool, kNumStackSettings> given_stack(const Settings& settings) {
  std::array<bool, kNumStackSettings> given{};
  const auto all = stack_settings();
  for (std::size_t i = 0; i < all.size(); ++i) given[i] = settings.has(all[i].name);
  return given;
}

namespace {

// The software stack's settings; a capacity factor alone means capacity routing, and capacity
// routing alone has a capacity of one balanced share (Megatron's moe_expert_capacity_factor 1.0).
void resolve_stack(const Settings& s, est::Plan& p, std::map<std::string, Origin>& origins) {
  for (const StackSetting& st : stack_settings()) {
    if (!s.has(st.name)) {
      // A framework's profile gives the settings a plan leaves unset (spaces/frameworks.h).
      origins[st.name] = s.has("framework") ? Origin::catalog : Origin::fallback;
      continue;
    }
    const int value = parse_stack_value(st, s.at(st.name).text);
    if (value < 0)
      throw InputError(fmt::format("{}: must be {}, got '{}'", s.at(st.name).where,
                                   stack_values(st), s.at(st.name).text));
    st.set(p.stack, value);
  }
  // The rule gives the routing before the profile's defaults, which may go with it.
  auto given = given_stack(s);
  if (p.capacity_factor > 0 && !s.has("token_routing")) {
    p.stack.token_routing = est::TokenRouting::capacity;
    origins["token_routing"] = Origin::rule;
    given[static_cast<std::size_t>(find_stack_setting("token_routing") - stack_settings().data())] =
        true;
  }
  apply_framework_defaults(p.stack.framework, given, p.stack);
  if (p.stack.token_routing == est::TokenRouting::capacity && !s.has("capacity_factor")) {
    p.capacity_factor = 1.0;
    origins["capacity_factor"] = Origin::rule;
  }
}

}  // namespace

ResolvedCluster resolve_cluster(const Settings& s, const est::Calibration& calibration,
                                std::map<std::string, Origin>& origins,
                                std::int64_t gpus_if_unset) {
  auto origin = [&](const char* name, Origin o) {
    if (!s.has(name)) origins[name] = o;
  };
  const auto& catalog = Catalog::builtin();
  ResolvedCluster out;
  if (!s.has("gpu"))
    throw InputError("--gpu: required (an accelerator of the catalog, e.g. H100-SXM5-80GB)");
  const auto& gpu = catalog.accelerator(s.at("gpu").text, s.where("gpu"));
  out.gpu_name = gpu.key;
  if (s.has("nodes") && s.has("gpus"))
    throw InputError(fmt::format("{}: give either nodes or gpus, not both", s.where("gpus")));
  ClusterSettings cs;
  cs.nodes = s.integer("nodes", 0);
  cs.num_gpus = s.integer("gpus", 0);
  cs.gpus_per_node = static_cast<int>(s.integer("gpus_per_node", 0));
  cs.nvlink_domain = static_cast<int>(s.integer("nvlink_domain", 0));
  cs.nvlink_gbytes_per_s = s.number("nvlink_gbytes_per_s", 0);
  cs.inter_node_gbps_per_gpu = s.number("inter_node_gbps_per_gpu", 0);
  cs.hbm_gb = s.number("hbm_gb", 0);
  cs.expansion_gb = s.number("expansion_gb", 0, true);
  cs.expansion_gbytes_per_s = s.number("expansion_gbytes_per_s", 0, true);
  cs.nvlink_latency_us = s.number("nvlink_latency_us", -1, true);
  cs.inter_node_latency_us = s.number("inter_node_latency_us", -1, true);
  cs.node_overhead_w = s.number("node_overhead_w", -1, true);
  cs.power_cap_w = s.number("power_cap_w", 0, true);
  if (s.has("fabric")) {
    est::Fabric fabric{};
    read_enum(s, "fabric", est::parse_fabric, fabric_name, est::kNumFabrics, fabric);
    cs.fabric = static_cast<int>(fabric);
  }
  if (s.has("torus")) {
    if ((cs.fabric >= 0 ? static_cast<est::Fabric>(cs.fabric) : gpu.fabric) != est::Fabric::torus)
      throw InputError(fmt::format(
          "{}: a torus's dimensions need fabric torus ({} has a {})", s.where("torus"), gpu.key,
          est::to_string(cs.fabric >= 0 ? static_cast<est::Fabric>(cs.fabric) : gpu.fabric)));
    cs.torus = parse_torus(s.at("torus").text, s.where("torus"));
  }
  read_enum(s, "network", est::parse_network, network_name, est::kNumNetworks,
            cs.scale_out.network);
  cs.scale_out.oversubscription = s.number("oversubscription", 1);
  cs.scale_out.pod_gpus = static_cast<int>(s.integer("pod_gpus", 0, 0));
  cs.scale_out.planes = static_cast<int>(s.integer("planes", 1));
  cs.scale_out.group_gpus = static_cast<int>(s.integer("group_gpus", 0, 0));
  cs.scale_out.global_taper = s.number("global_taper", 1);
  if (cs.power_cap_w > 0 && cs.power_cap_w <= gpu.accelerator.idle_w)
    throw InputError(
        fmt::format("{}: {:g} W is not above {}'s idle power ({:g} W); give a cap "
                    "between it and the TDP ({:g} W)",
                    s.where("power_cap_w"), cs.power_cap_w, gpu.key, gpu.accelerator.idle_w,
                    gpu.accelerator.tdp_w));
  for (const char* name :
       {"gpus_per_node", "nvlink_gbytes_per_s", "hbm_gb", "node_overhead_w", "fabric"})
    origin(name, Origin::catalog);
  origin("nvlink_domain",
         gpu.default_nvlink_domain == gpu.default_gpus_per_node ? Origin::rule : Origin::catalog);
  origin("torus", Origin::rule);
  for (const char* name : {"inter_node_gbps_per_gpu", "expansion_gbytes_per_s", "nvlink_latency_us",
                           "inter_node_latency_us"})
    origin(name, Origin::calibration);
  if (gpu.default_scale_out_gbps > 0) origin("inter_node_gbps_per_gpu", Origin::catalog);

  if (!s.has("nodes") && !s.has("gpus")) {
    if (gpus_if_unset <= 0) throw InputError("--nodes: required unless --gpus is given");
    cs.num_gpus = gpus_if_unset;
  }
  if (cs.nodes > 0) {
    const int gpn = cs.gpus_per_node > 0 ? cs.gpus_per_node : gpu.default_gpus_per_node;
    if (cs.nodes * gpn > 2147483647LL)
      throw InputError(
          fmt::format("{}: {} nodes of {} GPUs exceed 2^31 GPUs", s.where("nodes"), cs.nodes, gpn));
  }
  out.cluster = resolve_cluster(gpu, cs, calibration);
  if (s.has("torus")) {
    const auto& t = out.cluster.torus;
    if (static_cast<std::int64_t>(t[0]) * t[1] * t[2] != out.cluster.nvlink_domain)
      throw InputError(fmt::format(
          "{}: {} is {} chips, but the scale-up domain (nvlink_domain) is {}; give dimensions "
          "whose product is the domain",
          s.where("torus"), s.at("torus").text, std::int64_t{t[0]} * t[1] * t[2],
          out.cluster.nvlink_domain));
  }
  if (const ScaleOutProblem p =
          scale_out_problem(out.cluster.scale_out, out.cluster.num_gpus, out.cluster.gpus_per_node,
                            est::switch_ports(out.cluster, calibration.network));
      !p.setting.empty())
    throw InputError(fmt::format("{}: {}", s.where(p.setting), p.message));
  out.nodes = estimator::num_nodes(out.cluster);
  return out;
}

Point resolve(const Settings& s) {
  if (!s.has("calibration")) return resolve(s, builtin_calibration());
  const CalibrationFile file = load_calibration_file(s.at("calibration").text);
  Point pt = resolve(s, file.calibration);
  pt.support = file.support;
  return pt;
}

PointInterval point_interval(const Point& pt, const est::Plan& plan) {
  PointInterval out;
  out.support = point_support(pt.support, support_family(pt.workload.model), pt.gpu_name,
                              pt.workload.precision, regime_of(plan, pt.workload.model), plan.cp);
  out.interval = supported_interval(est::step_interval(pt.calibration, pt.workload.model),
                                    out.support.runs, pt.calibration.interval_widening);
  return out;
}

DlrmPoint resolve_dlrm(const Settings& s) {
  if (!s.has("calibration")) return resolve_dlrm(s, builtin_calibration());
  const CalibrationFile file = load_calibration_file(s.at("calibration").text);
  DlrmPoint pt = resolve_dlrm(s, file.calibration);
  pt.support = file.support;
  return pt;
}

PointInterval point_interval(const DlrmPoint& pt) {
  PointInterval out;
  out.support = point_support(pt.support, SupportFamily::dlrm, pt.gpu_name, pt.workload.precision,
                              regime_of(pt.best_sharding, pt.sharding), 1);
  out.interval = supported_interval(est::step_interval(pt.calibration.dlrm), out.support.runs,
                                    pt.calibration.interval_widening);
  return out;
}

Point resolve(const Settings& s, const est::Calibration& calibration) {
  for (const auto& info : setting_infos())
    if (s.has(info.name) && info.family == SettingFamily::dlrm)
      throw InputError(fmt::format("{}: not a setting of transformer models", s.where(info.name)));
  Point pt;
  auto origin = [&pt, &s](const char* name, Origin o) {
    if (!s.has(name)) pt.origin[name] = o;
  };
  const auto& catalog = Catalog::builtin();
  pt.calibration = calibration;
  pt.support = builtin_support();

  // ---- workload
  ModelChoice model;
  est::Model& m = model.model;
  if (s.has("model")) {
    const auto& entry = catalog.model(s.at("model").text, s.where("model"));
    model = {entry.key, entry.model, entry.seq_len, entry.global_batch};
    for (const char* name : {"layers", "hidden", "heads", "kv_heads", "ffn_hidden", "mlp", "vocab",
                             "seq_len", "global_batch"})
      origin(name, Origin::catalog);
  } else {
    for (const char* name : {"layers", "hidden", "heads", "vocab", "seq_len", "global_batch"})
      if (!s.has(name))
        throw InputError(
            fmt::format("--{}: required without --model (or give --model with a catalog name)",
                        flag_name(name)));
    model.key = "custom";
  }
  pt.model_name = model.key;
  m.layers = static_cast<int>(s.integer("layers", m.layers));
  m.hidden = static_cast<int>(s.integer("hidden", m.hidden));
  m.heads = static_cast<int>(s.integer("heads", m.heads));
  // An inline architecture without kv_heads has none of its own: one per head.
  m.kv_heads = static_cast<int>(s.integer("kv_heads", s.has("heads") ? m.heads : m.kv_heads));
  read_enum(s, "mlp", est::parse_mlp, mlp_name, 2, m.mlp);
  // An inline MoE model without dense layers needs no dense MLP width.
  const bool all_moe = s.integer("num_experts", 0, 0) > 0 && s.integer("dense_layers", 0, 0) == 0;
  if (!s.has("model") && !s.has("ffn_hidden") && m.mlp == est::Mlp::swiglu && !all_moe)
    throw InputError("--ffn-hidden: required with --mlp swiglu");
  m.ffn_hidden = static_cast<int>(
      s.integer("ffn_hidden", s.has("model") || all_moe ? m.ffn_hidden : std::int64_t{4} * m.hidden,
                s.has("model") || all_moe ? 0 : 1));
  m.vocab = static_cast<int>(s.integer("vocab", m.vocab));
  for (const ArchitectureField& f : architecture_fields()) {
    m.*(f.member) = static_cast<int>(s.integer(f.name, m.*(f.member), 0));
    origin(f.name, s.has("model") ? Origin::catalog : Origin::fallback);
  }
  apply_architecture_defaults(m);
  if (const auto problem = check_architecture(m); problem.field)
    throw InputError(fmt::format("{}: {}", s.where(problem.field), problem.message));
  if (m.heads % m.kv_heads != 0)
    throw InputError(fmt::format("{}: {} does not divide the {} heads", s.where("kv_heads"),
                                 m.kv_heads, m.heads));
  est::Precision precision = est::Precision::bf16;
  read_enum(s, "precision", est::parse_precision, precision_name, est::kNumPrecisions, precision);
  origin("precision", Origin::fallback);
  pt.workload = resolve_workload(model, static_cast<int>(s.integer("seq_len", 0)),
                                 s.integer("global_batch", 0), precision);
  pt.workload.lora_rank = static_cast<int>(s.integer("lora_rank", 0, 0));

  // ---- plan
  est::Plan& p = pt.plan;
  p.tp = static_cast<int>(s.integer("tp", 1));
  p.pp = static_cast<int>(s.integer("pp", 1));
  p.cp = static_cast<int>(s.integer("cp", 1));
  p.vp = static_cast<int>(s.integer("vp", 1));
  p.micro_batch = static_cast<int>(s.integer("micro_batch", 1));
  p.ep = static_cast<int>(s.integer("ep", 1));
  p.etp = static_cast<int>(s.integer("etp", 1));
  p.capacity_factor = s.number("capacity_factor", 0, true);
  p.zero = static_cast<int>(s.integer("zero", 0, 0));
  if (p.zero > 3)
    throw InputError(fmt::format("{}: must be 0, 1, 2 or 3, got '{}'", s.where("zero"), p.zero));
  p.sequence_parallel = s.boolean("sequence_parallel");
  if (s.has("recompute") &&
      !est::parse_recompute_label(s.at("recompute").text, p.recompute, p.recompute_modules))
    throw InputError(fmt::format("{}: must be {}, got '{}'", s.where("recompute"),
                                 est::recompute_values(), s.at("recompute").text));
  read_enum(s, "offload", est::parse_offload, offload_name, 4, p.offload);
  p.pipeline_split = default_pipeline_split(m, p.pp, p.vp);
  origin("pipeline_split", Origin::rule);
  read_enum(s, "pipeline_split", est::parse_pipeline_split, split_name, est::kNumPipelineSplits,
            p.pipeline_split);
  for (const char* name : {"tp", "pp", "cp", "vp", "micro_batch", "zero", "sequence_parallel",
                           "recompute", "offload", "ep", "etp", "capacity_factor"})
    origin(name, Origin::fallback);
  resolve_stack(s, p, pt.origin);
  pt.rules.allow_tp_across_nodes = s.boolean("allow_tp_across_nodes");

  // The GPU count: nodes or gpus, or tp*pp*dp*cp when only dp is given.
  // In double: three degrees of up to 2^31 overflow 64 bits.
  const double model_parallel = static_cast<double>(p.tp) * p.pp * p.cp;
  std::int64_t gpus_from_plan = 0;
  if (!s.has("nodes") && !s.has("gpus")) {
    if (!s.has("dp"))
      throw InputError("--nodes: required unless --gpus or --dp is given (GPUs = tp*pp*dp*cp)");
    const double gpus = model_parallel * static_cast<double>(s.integer("dp", 1));
    if (gpus > 2147483647.0)
      throw InputError(
          fmt::format("{}: tp*pp*dp*cp = {} GPUs exceed 2^31", s.where("dp"), format_number(gpus)));
    gpus_from_plan = static_cast<std::int64_t>(gpus);
  }
  const ResolvedCluster rc = resolve_cluster(s, pt.calibration, pt.origin, gpus_from_plan);
  pt.gpu_name = rc.gpu_name;
  pt.cluster = rc.cluster;
  pt.nodes = rc.nodes;
  const est::Cluster& c = pt.cluster;
  // A software stack runs on the vendors its profile names (NeuronX on Trainium, Primus on AMD).
  if (const std::string& vendor = Catalog::builtin().accelerator(pt.gpu_name, "--gpu").vendor;
      !framework_runs_on(p.stack.framework, vendor)) {
    const FrameworkProfile* f = framework_profile(p.stack.framework);
    throw InputError(fmt::format("{}: {} runs on {} accelerators; {} is {}'s", s.where("framework"),
                                 est::to_string(p.stack.framework), fmt::join(f->vendors, " and "),
                                 pt.gpu_name, vendor));
  }
  // dp: given, or what the GPUs leave (a remainder is the `degrees` rule's to report).
  p.dp = static_cast<int>(s.integer(
      "dp", static_cast<long long>(std::max(1.0, std::floor(c.num_gpus / model_parallel)))));
  origin("dp", Origin::rule);
  pt.training_tokens = s.number("training_tokens", kDefaultTrainingTokens);
  origin("training_tokens", Origin::fallback);
  pt.reliability = resolve_reliability(s, pt.origin);
  return pt;
}

Violation check(const Point& pt) noexcept {
  if (Violation v = check_design(pt.workload, pt.cluster)) return v;
  return check_plan(pt.workload, pt.cluster, pt.plan, pt.rules);
}

std::string explain(const Violation& v, const Settings& settings) {
  const auto names = blamed_settings(v.rule);
  std::string blamed = *names.begin();
  for (const char* name : names)
    if (settings.has(name)) {
      blamed = name;
      break;
    }
  if (v.rule == Rule::precision_unsupported)
    return fmt::format("{}: {} {}", settings.where("precision"), settings.at("gpu").text,
                       message(v));
  return fmt::format("{}: {}", settings.where(blamed), message(v));
}

// ---- Recommendation models

bool is_dlrm_model(std::string_view model) noexcept {
  return Catalog::builtin().find_dlrm_model(model) != nullptr;
}

namespace {

// "512-256-128" (or commas): the output widths of an MLP.
std::array<int, est::kMaxMlpLayers> read_mlp(const Settings& s, const std::string& name,
                                             std::array<int, est::kMaxMlpLayers> widths) {
  if (!s.has(name)) return widths;
  const Setting& v = s.at(name);
  std::array<int, est::kMaxMlpLayers> out{};
  std::size_t n = 0, start = 0;
  const std::string& text = v.text;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find_first_of("-,", start), text.size());
    std::int64_t width = 0;
    if (!read_int64(std::string_view(text).substr(start, end - start), 1, 1 << 24, width).empty() ||
        n == est::kMaxMlpLayers)
      throw InputError(
          fmt::format("{}: must be up to {} layer widths joined by '-', e.g. 512-256-128, got '{}'",
                      v.where, est::kMaxMlpLayers, text));
    out[n++] = static_cast<int>(width);
    start = end + 1;
  }
  return out;
}

const char* interaction_name(est::Interaction i) { return est::to_string(i); }

}  // namespace

DlrmPoint resolve_dlrm(const Settings& s, const est::Calibration& calibration) {
  for (const auto& info : setting_infos())
    if (s.has(info.name) && info.family == SettingFamily::transformer)
      throw InputError(
          fmt::format("{}: not a setting of recommendation models", s.where(info.name)));
  DlrmPoint pt;
  auto origin = [&pt, &s](const char* name, Origin o) {
    if (!s.has(name)) pt.origin[name] = o;
  };
  pt.calibration = calibration;
  pt.support = builtin_support();
  est::DlrmModel& m = pt.workload.model;
  std::int64_t batch = 0;
  if (s.has("model")) {
    const auto& entry = Catalog::builtin().dlrm_model(s.at("model").text, s.where("model"));
    pt.model_name = entry.key;
    m = entry.model;
    batch = entry.global_batch;
    for (const char* name : {"num_tables", "embedding_dim", "total_embedding_rows", "bottom_mlp",
                             "top_mlp", "interaction", "global_batch"})
      origin(name, Origin::catalog);
  } else {
    for (const char* name : {"num_tables", "embedding_dim", "total_embedding_rows", "bottom_mlp",
                             "top_mlp", "interaction", "global_batch"})
      if (!s.has(name))
        throw InputError(fmt::format(
            "--{}: required without --model (or give --model with a catalog recommendation model)",
            flag_name(name)));
    pt.model_name = "custom";
    // Without per-table sizes: equal tables, one lookup per sample each.
    m.num_tables = static_cast<int>(s.integer("num_tables", 0));
    if (m.num_tables > est::kMaxTables)
      throw InputError(fmt::format("{}: at most {} tables, got {}", s.where("num_tables"),
                                   est::kMaxTables, m.num_tables));
    for (int t = 0; t < m.num_tables; ++t) {
      m.rows[t] = 1;
      m.pooling[t] = 1;
    }
  }
  if (s.has("num_tables") && s.integer("num_tables", 0) != m.num_tables)
    throw InputError(fmt::format("{}: {} tables, but the model '{}' has {}", s.where("num_tables"),
                                 s.integer("num_tables", 0), pt.model_name, m.num_tables));
  m.embedding_dim = static_cast<int>(s.integer("embedding_dim", m.embedding_dim));
  if (s.has("total_embedding_rows")) est::scale_table_rows(m, s.number("total_embedding_rows", 0));
  m.bottom_mlp = read_mlp(s, "bottom_mlp", m.bottom_mlp);
  m.top_mlp = read_mlp(s, "top_mlp", m.top_mlp);
  read_enum(s, "interaction", est::parse_interaction, interaction_name, 2, m.interaction);
  pt.workload.global_batch = s.integer("global_batch", batch);
  pt.workload.precision = est::Precision::fp32;
  read_enum(s, "precision", est::parse_precision, precision_name, est::kNumPrecisions,
            pt.workload.precision);
  origin("precision", Origin::fallback);
  if (s.has("sharding") && s.at("sharding").text != "best") {
    pt.best_sharding = false;
    if (!est::parse_sharding(s.at("sharding").text, pt.sharding))
      throw InputError(fmt::format(
          "{}: must be table, row, column, table_row, data, hybrid, fused_row or best, got '{}'",
          s.at("sharding").where, s.at("sharding").text));
  }
  origin("sharding", Origin::fallback);
  if (s.has("framework") &&
      !est::parse_dlrm_framework(s.at("framework").text, pt.workload.framework))
    throw InputError(fmt::format(
        "{}: a recommendation model's framework must be any, hugectr or torchrec, got '{}'",
        s.at("framework").where, s.at("framework").text));

  const ResolvedCluster rc = resolve_cluster(s, pt.calibration, pt.origin);
  if (!s.has("framework")) {
    pt.workload.framework =
        default_dlrm_framework(Catalog::builtin().accelerator(rc.gpu_name, s.where("gpu")));
    origin("framework", Origin::catalog);
  }
  pt.gpu_name = rc.gpu_name;
  pt.cluster = rc.cluster;
  pt.nodes = rc.nodes;
  pt.training_samples = s.number("training_samples", kDefaultTrainingSamples);
  origin("training_samples", Origin::fallback);
  pt.reliability = resolve_reliability(s, pt.origin);
  return pt;
}

est::DlrmPlan place_tables(const DlrmPoint& point, const est::DlrmEstimator& estimator) {
  return point.best_sharding  ? est::plan_best_sharding(estimator)
         : point.any_row_wise ? est::plan_row_wise(estimator)
                              : est::plan_sharding(estimator, point.sharding);
}

std::vector<RankedSharding> rank_shardings(const est::DlrmEstimator& estimator) {
  std::vector<RankedSharding> out;
  auto add = [&](std::string name, const est::DlrmPlan& plan) {
    out.push_back({std::move(name), plan, estimator.estimate(plan)});
  };
  add("best", est::plan_best_sharding(estimator));
  for (int s = 0; s < est::kNumShardings; ++s) {
    const auto sharding = static_cast<est::Sharding>(s);
    if (sharding == est::Sharding::table_row_wise && estimator.num_nodes() < 2) continue;
    add(est::to_string(sharding), est::plan_sharding(estimator, sharding));
  }
  std::stable_sort(out.begin(), out.end(), [](const RankedSharding& a, const RankedSharding& b) {
    if (a.estimate.feasible != b.estimate.feasible) return a.estimate.feasible;
    return a.estimate.time.total_s < b.estimate.time.total_s;
  });
  return out;
}

std::string describe_placement(const DlrmPoint& point, const est::DlrmPlan& plan) {
  int count[est::kNumShardings] = {};
  for (int t = 0; t < point.workload.model.num_tables; ++t)
    ++count[static_cast<int>(plan.sharding[t])];
  std::string out;
  for (int s = 0; s < est::kNumShardings; ++s) {
    if (count[s] == 0) continue;
    if (count[s] == point.workload.model.num_tables) return est::to_string(est::Sharding(s));
    out +=
        fmt::format("{}{}:{}", out.empty() ? "" : " ", est::to_string(est::Sharding(s)), count[s]);
  }
  return out;
}

}  // namespace clustersweep::spaces
