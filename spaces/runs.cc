#include "spaces/runs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include "base/csv.h"
#include "base/error.h"
#include "spaces/catalog.h"
#include "spaces/resolve.h"

namespace clustersweep::spaces {

namespace {

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

}  // namespace

std::vector<MeasuredRun> read_runs(const std::string& path,
                                   const estimator::Calibration& calibration) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot open runs file '{}'", path));
  std::string line;
  if (!std::getline(in, line))
    throw InputError(fmt::format("{}:1: empty file; expected a CSV header", path));
  std::map<std::string, std::size_t> columns;
  const auto header = split_csv_record(line);
  for (std::size_t i = 0; i < header.size(); ++i) columns[header[i]] = i;
  std::vector<const char*> required = {"id", "source"};
  for (const auto& c : kColumns) required.push_back(c.column);
  required.push_back("step_time_s");
  for (const char* column : required)
    if (!columns.count(column))
      throw InputError(fmt::format(
          "{}:1: missing column '{}' (see the README of the validation data)", path, column));

  const auto& catalog = Catalog::builtin();
  std::vector<MeasuredRun> runs;
  for (int line_number = 2; std::getline(in, line); ++line_number) {
    if (line.empty() || line == "\r") continue;
    const auto fields = split_csv_record(line);
    const std::string at = fmt::format("{}:{}", path, line_number);
    if (fields.size() != header.size())
      throw InputError(fmt::format("{}: expected {} columns as in the header, got {}", at,
                                   header.size(), fields.size()));
    auto text = [&](const char* column) -> const std::string& {
      return fields[columns.at(column)];
    };
    auto where = [&](const char* column) { return fmt::format("{}: column '{}'", at, column); };
    MeasuredRun run;
    run.id = text("id");
    run.source = text("source");
    if (text("step_time_s").empty()) {
      run.reason = "no measured step_time_s";
      runs.push_back(std::move(run));
      continue;
    }
    Settings settings;
    settings.set("step_time_s", text("step_time_s"), where("step_time_s"));
    run.measured_s = settings.number("step_time_s", 0);
    // An empty cell is a setting not given: its default applies (e.g. the calibration's
    // scale-out bandwidth, dp from the GPU count).
    for (const auto& c : kColumns)
      if (!text(c.column).empty()) settings.set(c.setting, text(c.column), where(c.column));
    // Interleaving without a pipeline means no interleaving.
    if (settings.integer("pp", 1) == 1 && settings.has("vp")) settings.set("vp", "1", where("vp"));
    if (!catalog.find_accelerator(text("gpu"))) {
      run.reason = fmt::format("unknown accelerator '{}'", text("gpu"));
      runs.push_back(std::move(run));
      continue;
    }
    const Point pt = resolve(settings, calibration);
    run.gpu = pt.gpu_name;
    if (const Violation v = check(pt))
      run.reason = fmt::format("cannot be estimated: {}: {}", to_string(v.rule), message(v));
    run.sample = {pt.workload, pt.cluster, pt.plan, run.measured_s};
    runs.push_back(std::move(run));
  }
  return runs;
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
  s.median = s.n % 2 ? abs_errors[s.n / 2] : 0.5 * (abs_errors[s.n / 2 - 1] + abs_errors[s.n / 2]);
  s.geomean = std::exp(log_sum / s.n);
  s.max = abs_errors.back();
  return s;
}

}  // namespace clustersweep::spaces
