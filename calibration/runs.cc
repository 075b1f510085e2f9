#include "calibration/runs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>

#include "base/csv.h"
#include "base/error.h"
#include "spaces/catalog.h"
#include "spaces/frameworks.h"
#include "spaces/resolve.h"
#include "spaces/stack_settings.h"

namespace clustersweep::spaces {

namespace {

// Whether `list` ("a;b;c", a runs file's assumed column) names `item`.
bool listed(std::string_view list, std::string_view item) {
  while (!list.empty()) {
    const auto end = list.find(';');
    if (list.substr(0, end) == item) return true;
    if (end == std::string_view::npos) break;
    list.remove_prefix(end + 1);
  }
  return false;
}

// A run whose recompute its source did not state ran, so it fitted its accelerator's memory: when
// the assumed recompute does not fit, the lightest heavier one that does is what ran: selective
// recompute of the attention core, then also of the cheap-to-recompute modules (norms, MLA
// up-projections, the experts' activation: Megatron-Core's memory-saving selective set), then of
// the MLP and MoE layers too, then full; full when none fits (the stack then saved memory some
// other way too, e.g. host offload). Returns the reason column's note, empty when the assumption
// stands.
std::string lightest_recompute_that_fits(Point& pt, const estimator::Calibration& calibration) {
  namespace est = estimator;
  const auto fits = [&] {
    return est::estimate(pt.workload, pt.cluster, pt.plan, calibration).reason !=
           est::Infeasible::out_of_memory;
  };
  if (pt.plan.recompute == est::Recompute::full || fits()) return "";
  const std::string assumed = est::recompute_label(pt.plan.recompute, pt.plan.recompute_modules);
  struct Step {
    est::Recompute recompute;
    std::uint8_t modules;
  };
  constexpr std::uint8_t kCheap = est::kRecomputeCoreAttn | est::kRecomputeLayernorm |
                                  est::kRecomputeMlaUpProj | est::kRecomputeMoeAct;
  constexpr std::uint8_t kLayers =
      kCheap | est::kRecomputeMlp | est::kRecomputeMoe | est::kRecomputeSharedExperts;
  const std::uint8_t had = est::recomputed_modules(pt.plan.recompute, pt.plan.recompute_modules);
  for (const Step step :
       {Step{est::Recompute::selective, est::kRecomputeCoreAttn},
        Step{est::Recompute::selective, kCheap}, Step{est::Recompute::selective, kLayers},
        Step{est::Recompute::full, 0}}) {
    // Only heavier than what was assumed: more modules, or full.
    if (step.recompute == est::Recompute::selective && (step.modules | had) == had) continue;
    pt.plan.recompute = step.recompute;
    pt.plan.recompute_modules = step.modules == est::kRecomputeCoreAttn ? 0 : step.modules | had;
    if (fits()) break;
  }
  return fmt::format("recompute assumed: predicted with {} ({} does not fit HBM)",
                     est::recompute_label(pt.plan.recompute, pt.plan.recompute_modules), assumed);
}

// The columns of the runs format (all required; an empty cell is a setting not given) and the
// setting each one is.
struct ColumnSetting {
  const char* column;
  const char* setting;
};
constexpr ColumnSetting kColumns[] = {
    {"layers", "layers"},
    {"hidden", "hidden"},
    {"heads", "heads"},
    {"kv_heads", "kv_heads"},
    {"ffn_hidden", "ffn_hidden"},
    {"ffn_act", "mlp"},
    {"vocab", "vocab"},
    {"seq_len", "seq_len"},
    {"global_batch", "global_batch"},
    {"precision", "precision"},
    {"gpu", "gpu"},
    {"num_gpus", "gpus"},
    {"gpus_per_node", "gpus_per_node"},
    {"nvlink_domain", "nvlink_domain"},
    {"inter_node_gbps_per_gpu", "inter_node_gbps_per_gpu"},
    {"tp", "tp"},
    {"pp", "pp"},
    {"dp", "dp"},
    {"cp", "cp"},
    {"vp", "vp"},
    {"sequence_parallel", "sequence_parallel"},
    {"zero", "zero"},
    {"recompute", "recompute"},
    {"micro_batch", "micro_batch"},
};

// The columns of the Mixture-of-Experts runs format (../shared/validation/moe_runs.csv), a header
// with num_experts, beyond those of kColumns but ffn_hidden. Its attention column is implied by
// kv_lora_rank (MLA) and its shared_experts count by shared_ffn_hidden (their total width).
constexpr ColumnSetting kMoeColumns[] = {
    {"ffn_hidden_dense", "ffn_hidden"},
    {"dense_layers", "dense_layers"},
    {"q_lora_rank", "q_lora_rank"},
    {"kv_lora_rank", "kv_lora_rank"},
    {"qk_head_dim", "qk_head_dim"},
    {"v_head_dim", "v_head_dim"},
    {"num_experts", "num_experts"},
    {"top_k", "top_k"},
    {"moe_ffn_hidden", "moe_ffn_hidden"},
    {"shared_ffn_hidden", "shared_ffn_hidden"},
    {"mtp_layers", "mtp_layers"},
    {"ep", "ep"},
    {"etp", "etp"},
};

// The runtime-settings columns of the runs formats (../shared/validation/README.md, "Runtime
// settings") are named as the stack's settings: each is optional. A cell "unknown" or empty leaves
// the setting at its default, which the row's reason column says.
// The spellings of the runs files that differ from the settings' own value names.
struct ValueRename {
  std::string_view setting, from, to;
};
constexpr ValueRename kValueRenames[] = {
    {"token_routing", "dropless_balanced", "balanced"},
    // Transformer Engine's DotProductAttention picks cuDNN's fused attention on Hopper and later
    // when it can; Megatron's fused softmax between two batched GEMMs is the unfused kernel.
    {"attention_kernel", "te_fused", "cudnn"},
    {"attention_kernel", "megatron_fused", "unfused"},
    {"attention_kernel", "triton_flash", "triton"},
    // MaxText's Splash attention: a fused flash-style kernel that never materialises the scores.
    {"attention_kernel", "tpu_splash", "fused"},
};

// The optional model columns of the transformer runs formats (../shared/validation/README.md,
// "accelerator_runs.csv"), each checked where it is read so that a bad cell names its row and
// column whatever else the row holds: `head_dim`, the width of one attention head where it is not
// hidden/heads (queries, keys and values alike), and `lora_rank`, the adapter rank of a LoRA
// fine-tuning run (empty: pre-training, every weight trained).
template <class Text, class Where>
void read_model_columns(const std::map<std::string, std::size_t>& columns, Text text, Where where,
                        Settings& settings) {
  Settings row;
  if (columns.count("head_dim") && !text("head_dim").empty()) {
    row.set("head_dim", text("head_dim"), where("head_dim"));
    const std::string dim = std::to_string(row.integer("head_dim", 0));
    settings.set("qk_head_dim", dim, where("head_dim"));
    settings.set("v_head_dim", dim, where("head_dim"));
  }
  if (columns.count("lora_rank") && !text("lora_rank").empty()) {
    row.set("lora_rank", text("lora_rank"), where("lora_rank"));
    settings.set("lora_rank", std::to_string(row.integer("lora_rank", 0, 0)), where("lora_rank"));
  }
}

// A recompute_detail cell as a recompute label: "selective:mla_up_proj+mlp" from
// "selective:RMSNorm+MLA up-proj" or "selective:core_attn(mcore default)"; empty when it names
// no modules or none the estimator knows.
std::string recompute_modules_label(std::string text) {
  if (const auto paren = text.find('('); paren != std::string::npos) text.erase(paren);
  constexpr std::pair<std::string_view, std::string_view> kSpellings[] = {
      {"RMSNorm", "layernorm"}, {"MLA up-proj", "mla_up_proj"}};
  for (const auto& [from, to] : kSpellings)
    if (const auto at = text.find(from); at != std::string::npos) text.replace(at, from.size(), to);
  estimator::Recompute recompute{};
  std::uint8_t modules = 0;
  if (text.find(':') == std::string::npos ||
      !estimator::parse_recompute_label(text, recompute, modules))
    return {};
  return estimator::recompute_label(recompute, modules);
}

// A setting a row leaves at its default, and why ("empty", "unknown").
struct Defaulted {
  const StackSetting* setting;
  const char* why;
};

// Sets the stack settings of a row's runtime-settings columns; returns those left at their
// default for want of a value.
template <class Text, class Where>
std::vector<Defaulted> read_stack_columns(const std::map<std::string, std::size_t>& columns,
                                          Text text, Where where, Settings& settings) {
  std::vector<Defaulted> defaulted;
  for (const StackSetting& st : stack_settings()) {
    if (!columns.count(st.name)) continue;
    std::string value = text(st.name);
    // An fp8 recipe is only the fp8 rows'; the others leave it empty by the format's convention.
    if (value.empty() && std::string_view(st.name) == "fp8_recipe") continue;
    if (value.empty() || value == "unknown") {
      defaulted.push_back({&st, value.empty() ? "empty" : "unknown"});
      continue;
    }
    for (const ValueRename& r : kValueRenames)
      if (r.setting == st.name && r.from == value) value = r.to;
    settings.set(st.name, value, where(st.name));
  }
  return defaulted;
}

}  // namespace

namespace {

// The names of a runs file's header (empty for an empty file).
std::vector<std::string> header_of(const std::string& path);

// The first line of a runs file without the byte-order mark spreadsheets write before UTF-8 text.
bool read_header_line(std::ifstream& in, std::string& line) {
  if (!std::getline(in, line)) return false;
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
  return true;
}

// The header of a runs file by column name, after checking it has `required`.
std::map<std::string, std::size_t> read_header(std::ifstream& in, const std::string& path,
                                               const std::vector<const char*>& required) {
  std::string line;
  if (!read_header_line(in, line))
    throw InputError(fmt::format("{}:1: empty file; expected a CSV header", path));
  std::map<std::string, std::size_t> columns;
  const auto header = split_csv_record(line);
  for (std::size_t i = 0; i < header.size(); ++i)
    if (!columns.emplace(header[i], i).second)
      throw InputError(fmt::format("{}:1: column '{}' appears twice", path, header[i]));
  for (const char* column : required)
    if (!columns.count(column))
      throw InputError(fmt::format(
          "{}:1: missing column '{}' (see the README of the validation data)", path, column));
  return columns;
}

// Calls row(text, where) for each data row: text(column) is the cell, where(column) names it.
template <class Row>
void for_each_row(std::ifstream& in, const std::string& path,
                  const std::map<std::string, std::size_t>& columns, Row row) {
  std::string line;
  bool any = false;
  for (int line_number = 2; std::getline(in, line); ++line_number) {
    if (line.empty() || line == "\r") continue;
    any = true;
    const auto fields = split_csv_record(line);
    const std::string at = fmt::format("{}:{}", path, line_number);
    if (fields.size() != columns.size())
      throw InputError(fmt::format("{}: expected {} columns as in the header, got {}", at,
                                   columns.size(), fields.size()));
    auto text = [&](const char* column) -> const std::string& {
      return fields[columns.at(column)];
    };
    auto where = [&](const char* column) { return fmt::format("{}: column '{}'", at, column); };
    row(text, where);
  }
  // A header alone would validate to an error of 0%.
  if (!any)
    throw InputError(fmt::format("{}:2: no runs after the header; expected one per line", path));
}

std::ifstream open_runs(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(fmt::format("cannot open runs file '{}': it is a folder", path));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(fmt::format("cannot open runs file '{}': {}", path, std::strerror(errno)));
  return in;
}

// The columns of the recommendation-model runs format and the setting each one is.
constexpr ColumnSetting kDlrmColumns[] = {
    {"model", "model"},
    {"num_tables", "num_tables"},
    {"embedding_dim", "embedding_dim"},
    {"total_embedding_rows", "total_embedding_rows"},
    {"bottom_mlp", "bottom_mlp"},
    {"top_mlp", "top_mlp"},
    {"interaction", "interaction"},
    {"gpu", "gpu"},
    {"num_gpus", "gpus"},
    {"gpus_per_node", "gpus_per_node"},
    {"inter_node_gbps_per_gpu", "inter_node_gbps_per_gpu"},
    {"sharding", "sharding"},
    {"global_batch", "global_batch"},
    {"precision", "precision"},
};

}  // namespace

std::vector<MeasuredRun> read_runs(const std::string& path,
                                   const estimator::Calibration& calibration) {
  const auto header = header_of(path);
  const bool moe = std::find(header.begin(), header.end(), "num_experts") != header.end();
  std::vector<ColumnSetting> settings_columns;
  for (const auto& c : kColumns)
    if (!moe || std::string_view(c.column) != "ffn_hidden") settings_columns.push_back(c);
  if (moe)
    settings_columns.insert(settings_columns.end(), std::begin(kMoeColumns), std::end(kMoeColumns));
  std::ifstream in = open_runs(path);
  std::vector<const char*> required = {"id", "source"};
  for (const auto& c : settings_columns) required.push_back(c.column);
  required.push_back("step_time_s");
  const auto columns = read_header(in, path, required);

  const auto& catalog = Catalog::builtin();
  std::vector<MeasuredRun> runs;
  for_each_row(in, path, columns, [&](auto text, auto where) {
    MeasuredRun run;
    run.id = text("id");
    run.source = text("source");
    run.at = where("gpu");
    if (text("step_time_s").empty()) {
      run.reason = "no measured step_time_s";
      runs.push_back(std::move(run));
      return;
    }
    Settings settings;
    settings.set("step_time_s", text("step_time_s"), where("step_time_s"));
    run.measured_s = settings.number("step_time_s", 0);
    // Before the MoE format's own qk_head_dim and v_head_dim, which win where a row gives both.
    read_model_columns(columns, text, where, settings);
    // An empty cell is a setting not given: its default applies (e.g. the calibration's
    // scale-out bandwidth, dp from the GPU count).
    for (const auto& c : settings_columns)
      if (!text(c.column).empty()) settings.set(c.setting, text(c.column), where(c.column));
    const auto defaulted = read_stack_columns(columns, text, where, settings);
    // The recompute modules a selective recompute names ("selective:mla_up_proj+mlp").
    if (columns.count("recompute_detail"))
      if (const std::string label = recompute_modules_label(text("recompute_detail"));
          !label.empty() && label.rfind(text("recompute"), 0) == 0)
        settings.set("recompute", label, where("recompute_detail"));
    // The framework the run's software is (spaces/data/frameworks.toml): its rules check the
    // run's plan, its defaults fill the settings the row leaves unknown, and `--best` searches
    // within it; a software's own default (NeMo AutoModel's attention) fills a setting the row
    // gives no value.
    if (columns.count("software")) {
      if (const auto f = framework_of_software(text("software")); f != estimator::Framework::any)
        settings.set("framework", estimator::to_string(f), where("software"));
      for (const auto& [name, value] : software_stack_defaults(text("software")))
        if (!settings.has(name)) settings.set(name, value, where("software"));
    }
    // GPT-OSS's clamped gated activation, "swiglu_oai(clamped,gated)", has SwiGLU's three
    // matrices.
    if (moe && text("ffn_act").rfind("swiglu", 0) == 0)
      settings.set("mlp", "swiglu", where("ffn_act"));
    // Interleaving without a pipeline means no interleaving.
    if (settings.integer("pp", 1) == 1 && settings.has("vp")) settings.set("vp", "1", where("vp"));
    if (!catalog.find_accelerator(text("gpu"))) {
      run.reason = fmt::format("unknown accelerator '{}'", text("gpu"));
      run.unknown_gpu = true;
      runs.push_back(std::move(run));
      return;
    }
    Point pt = resolve(settings, calibration);
    run.gpu = pt.gpu_name;
    // Megatron-Core builds expert-parallel groups inside a pipeline stage, so a published ep that
    // does not divide the stage's GPUs cannot be what ran: the largest ep dividing both is.
    if (const Violation v = check(pt); v.rule == Rule::ep_group) {
      const int stage = pt.plan.tp * pt.plan.cp * pt.plan.dp / std::max(pt.plan.etp, 1);
      const int ep = std::gcd(pt.plan.ep, stage);
      run.repair = fmt::format("predicted with ep = {}: {}", ep, message(v));
      pt.plan.ep = ep;
    }
    std::vector<std::string> notes;
    if (columns.count("assumed") && listed(text("assumed"), "recompute"))
      if (std::string note = lightest_recompute_that_fits(pt, calibration); !note.empty())
        notes.push_back(std::move(note));
    for (const Defaulted& d : defaulted)
      notes.push_back(fmt::format("{} {}: predicted with {}", d.setting->name, d.why,
                                  d.setting->value_name(d.setting->get(pt.plan.stack))));
    run.defaults = fmt::format("{}", fmt::join(notes, "; "));
    if (const Violation v = check(pt)) {
      run.reason = fmt::format("cannot be estimated: {}: {}", to_string(v.rule), message(v));
      run.refused_by_rule = true;
    }
    run.sample = {pt.workload, pt.cluster, pt.plan, run.measured_s};
    run.settings = std::move(settings);
    runs.push_back(std::move(run));
  });
  return runs;
}

namespace {
std::vector<std::string> header_of(const std::string& path) {
  std::ifstream in = open_runs(path);
  std::string line;
  if (!read_header_line(in, line)) return {};
  return split_csv_record(line);
}
}  // namespace

namespace {
// Whether a runs file's header has `column`: what tells the formats apart.
bool has_column(const std::string& path, std::string_view column) {
  const auto header = header_of(path);
  return std::find(header.begin(), header.end(), column) != header.end();
}
}  // namespace

bool is_dlrm_runs(const std::string& path) { return has_column(path, "num_tables"); }

namespace {
// A published recommendation run that names no framework is predicted with `any`, not with
// estimate's default (the fastest its part runs): nothing says it ran whole-step graphs.
constexpr const char* kUnnamedDlrmFramework = "any";

// The recommendation-model framework a model label names as one of its words, case-insensitive
// ("DLRM-TorchRec-CriteoTB" is torchrec); empty when it names none.
std::string dlrm_framework_of_label(std::string_view label) {
  std::string word;
  for (std::size_t i = 0; i <= label.size(); ++i) {
    const unsigned char ch = i < label.size() ? label[i] : ' ';
    if (std::isalnum(ch)) {
      word += static_cast<char>(std::tolower(ch));
      continue;
    }
    for (int f = 1; f < estimator::kNumDlrmFrameworks; ++f)
      if (word == estimator::to_string(static_cast<estimator::DlrmFramework>(f))) return word;
    word.clear();
  }
  return {};
}
}  // namespace

std::vector<MeasuredDlrmRun> read_dlrm_runs(const std::string& path,
                                            const estimator::Calibration& calibration) {
  std::ifstream in = open_runs(path);
  std::vector<const char*> required = {"id", "source"};
  for (const auto& c : kDlrmColumns) required.push_back(c.column);
  required.push_back("samples_per_s");
  const auto columns = read_header(in, path, required);

  const auto& catalog = Catalog::builtin();
  std::vector<MeasuredDlrmRun> runs;
  for_each_row(in, path, columns, [&](auto text, auto where) {
    MeasuredDlrmRun run;
    run.id = text("id");
    run.source = text("source");
    run.at = where("gpu");
    if (text("samples_per_s").empty()) {
      run.reason = "no measured samples_per_s";
      runs.push_back(std::move(run));
      return;
    }
    Settings settings;
    for (const auto& c : kDlrmColumns)
      if (!text(c.column).empty()) settings.set(c.setting, text(c.column), where(c.column));
    if (columns.count("nvlink_domain") && !text("nvlink_domain").empty())
      settings.set("nvlink_domain", text("nvlink_domain"), where("nvlink_domain"));
    run.published_sharding = text("sharding");
    // The framework: the file's column, else the one the model's label names (the runs' labels
    // carry their implementation: "DLRM-TorchRec-CriteoTB"), else HugeCTR for its hybrid
    // (hier_auto) placement, else any.
    std::string framework = columns.count("framework") ? text("framework") : "";
    if (framework.empty()) framework = dlrm_framework_of_label(text("model"));
    if (framework.empty() && run.published_sharding == "hybrid") framework = "hugectr";
    if (framework.empty()) framework = kUnnamedDlrmFramework;
    settings.set("framework", framework,
                 columns.count("framework") ? where("framework") : where("model"));
    // A model the catalog does not know is described by its columns alone.
    if (settings.has("model") && !catalog.find_dlrm_model(settings.at("model").text))
      settings.erase("model");
    // A mixed (hybrid) placement is the planner's best.
    if (settings.has("sharding") && settings.at("sharding").text == "hybrid")
      settings.set("sharding", "best", where("sharding"));
    // Like with like: the model predicts training steps.
    run.target =
        columns.count("train_only_samples_per_s") && !text("train_only_samples_per_s").empty()
            ? "train_only_samples_per_s"
            : "samples_per_s";
    settings.set(run.target, text(run.target.c_str()), where(run.target.c_str()));
    run.measured_samples_per_s = settings.number(run.target, 0);
    if (!catalog.find_accelerator(text("gpu"))) {
      run.reason = fmt::format("unknown accelerator '{}'", text("gpu"));
      run.unknown_gpu = true;
      runs.push_back(std::move(run));
      return;
    }
    run.point = resolve_dlrm(settings, calibration);
    // A published "row" does not say whether the tables were one vocabulary (SOK) or not.
    run.point.any_row_wise = run.published_sharding == "row";
    run.gpu = run.point.gpu_name;
    runs.push_back(std::move(run));
  });
  return runs;
}

namespace {

// The columns of the energy runs format that are settings of a transformer point, and of a
// recommendation-model point.
constexpr ColumnSetting kEnergyColumns[] = {
    {"layers", "layers"},
    {"hidden", "hidden"},
    {"heads", "heads"},
    {"kv_heads", "kv_heads"},
    {"ffn_hidden", "ffn_hidden"},
    {"ffn_act", "mlp"},
    {"vocab", "vocab"},
    {"num_experts", "num_experts"},
    {"top_k", "top_k"},
    {"moe_ffn_hidden", "moe_ffn_hidden"},
    {"seq_len", "seq_len"},
    {"global_batch", "global_batch"},
    {"precision", "precision"},
    {"gpu", "gpu"},
    {"num_gpus", "gpus"},
    {"gpus_per_node", "gpus_per_node"},
    {"tp", "tp"},
    {"pp", "pp"},
    {"dp", "dp"},
    {"cp", "cp"},
    {"zero", "zero"},
    {"micro_batch", "micro_batch"},
};
constexpr ColumnSetting kEnergyDlrmColumns[] = {
    {"gpu", "gpu"},
    {"num_gpus", "gpus"},
    {"gpus_per_node", "gpus_per_node"},
    {"global_batch", "global_batch"},
    {"precision", "precision"},
};
constexpr const char* kScopeNames[] = {"gpu_only", "node", "node_plus_network", "facility",
                                       "tdp_estimate"};
// MLPerf's Llama 2 70B LoRA rank, for a LoRA row of a file without a lora_rank column or with the
// cell empty.
constexpr int kDefaultLoraRank = 16;

}  // namespace

const char* to_string(EnergyScope scope) noexcept { return kScopeNames[static_cast<int>(scope)]; }

bool is_energy_runs(const std::string& path) { return has_column(path, "energy_scope"); }

std::vector<MeasuredEnergyRun> read_energy_runs(const std::string& path,
                                                const estimator::Calibration& calibration) {
  std::ifstream in = open_runs(path);
  std::vector<const char*> required = {
      "id",       "source",     "family",       "model", "tokens_trained",
      "train_s",  "energy_kwh", "energy_scope", "pue",   "avg_power_w_per_gpu",
      "measured", "step_time_s"};
  for (const auto& c : kEnergyColumns) required.push_back(c.column);
  const auto columns = read_header(in, path, required);

  const auto& catalog = Catalog::builtin();
  std::vector<MeasuredEnergyRun> runs;
  for_each_row(in, path, columns, [&](auto text, auto where) {
    MeasuredEnergyRun run;
    run.id = text("id");
    run.source = text("source");
    run.family = text("family");
    Settings row;  // the row's numbers, checked as settings are
    const auto scope_name = text("energy_scope");
    const auto* scope = std::find(std::begin(kScopeNames), std::end(kScopeNames), scope_name);
    if (scope == std::end(kScopeNames))
      throw InputError(fmt::format("{}: must be one of {}, got '{}'", where("energy_scope"),
                                   fmt::join(kScopeNames, ", "), scope_name));
    run.scope = static_cast<EnergyScope>(scope - std::begin(kScopeNames));
    for (const char* column :
         {"energy_kwh", "train_s", "pue", "avg_power_w_per_gpu", "step_time_s", "tokens_trained"})
      if (!text(column).empty()) row.set(column, text(column), where(column));
    run.measured_kwh = row.number("energy_kwh", 0);
    run.pue = row.number("pue", 0);
    const double train_s = row.number("train_s", 0);
    const auto skip = [&](std::string reason) {
      run.reason = std::move(reason);
      runs.push_back(std::move(run));
    };
    if (run.scope == EnergyScope::tdp_estimate)
      return skip("a TDP estimate (GPU-hours x nameplate power), not a measurement");
    if (text("measured") != "1") return skip("an estimate, not a measurement (measured = 0)");
    if (run.family == "encoder")
      return skip("an encoder or encoder-decoder model: not a family the estimator models");
    if (text("num_gpus").empty()) return skip("no GPU count");
    if (!catalog.find_accelerator(text("gpu")))
      return skip(fmt::format("accelerator '{}' not in the catalog", text("gpu")));
    run.dlrm = run.family == "dlrm";
    const bool catalog_model = run.dlrm ? catalog.find_dlrm_model(text("model")) != nullptr
                                        : catalog.find_model(text("model")) != nullptr;
    if (!catalog_model && (run.dlrm || text("layers").empty() || text("hidden").empty()))
      return skip(fmt::format("model shape not given ('{}' is no catalog model)", text("model")));
    Settings settings;
    if (catalog_model) settings.set("model", text("model"), where("model"));
    if (run.dlrm) {
      for (const auto& c : kEnergyDlrmColumns)
        if (!text(c.column).empty()) settings.set(c.setting, text(c.column), where(c.column));
      settings.set("framework", kUnnamedDlrmFramework, where("model"));
      run.dlrm_point = resolve_dlrm(settings, calibration);
    } else {
      for (const auto& c : kEnergyColumns)
        if (!text(c.column).empty()) settings.set(c.setting, text(c.column), where(c.column));
      if (run.family == "lora")
        settings.set("lora_rank", std::to_string(kDefaultLoraRank), where("family"));
      read_model_columns(columns, text, where, settings);
      run.point = resolve(settings, calibration);
      // The runs are of HGX and DGX nodes, one NIC per GPU, on NVIDIA's rail-optimized reference
      // fabric (the DGX SuperPOD's), whose network the metered energy charges; the file has no
      // column for it.
      run.point.cluster.scale_out.network = estimator::Network::rail_optimized;
      if (const Violation v = check(run.point))
        return skip(fmt::format("cannot be estimated: {}: {}", to_string(v.rule), message(v)));
    }
    // The steps the energy covers: from the tokens where the row counts them, else from its time.
    const auto& w = run.point.workload;
    const double tokens = row.number("tokens_trained", 0);
    if (!run.dlrm && tokens > 0 && w.global_batch > 0 && w.seq_len > 0) {
      run.steps = tokens / (static_cast<double>(w.global_batch) * w.seq_len);
      run.steps_from = "tokens_trained";
    } else if (train_s > 0 && row.number("step_time_s", 0) > 0) {
      run.steps = train_s / row.number("step_time_s", 0);
      run.steps_from = "train_s / step_time_s";
    } else {
      return skip("neither tokens_trained nor train_s and step_time_s to count its steps");
    }
    const double num_gpus = run.dlrm ? run.dlrm_point.cluster.num_gpus : run.point.cluster.num_gpus;
    run.measured_w = row.number("avg_power_w_per_gpu", 0);
    if (run.measured_w == 0 && train_s > 0)
      run.measured_w = run.measured_kwh * 3.6e6 / (num_gpus * train_s) /
                       (run.scope == EnergyScope::facility && run.pue > 0 ? run.pue : 1.0);
    runs.push_back(std::move(run));
  });
  return runs;
}

double sorted_median(const std::vector<double>& v) {
  if (v.empty()) return 0;
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

ErrorStats error_stats(std::vector<double> abs_errors) {
  ErrorStats s;
  s.n = abs_errors.size();
  if (s.n == 0) return s;
  std::sort(abs_errors.begin(), abs_errors.end());
  double sum = 0, log_sum = 0;
  for (double e : abs_errors) {
    sum += e;
    log_sum += std::log(std::max(e, 1e-6));
  }
  s.mape = sum / s.n;
  s.median = sorted_median(abs_errors);
  s.geomean = std::exp(log_sum / s.n);
  s.max = abs_errors.back();
  return s;
}

}  // namespace clustersweep::spaces
