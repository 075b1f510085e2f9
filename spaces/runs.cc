#include "spaces/runs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include "estimator/error.h"
#include "spaces/catalog.h"
#include "spaces/resolve.h"

namespace clustersweep::spaces {

namespace {

// Splits one CSV record (RFC 4180 quoting; no embedded newlines in this format).
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        field += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      fields.push_back(std::move(field));
      field.clear();
    } else if (ch != '\r') {
      field += ch;
    }
  }
  fields.push_back(std::move(field));
  return fields;
}

constexpr const char* kRequiredColumns[] = {"id",
                                            "source",
                                            "layers",
                                            "hidden",
                                            "heads",
                                            "kv_heads",
                                            "ffn_hidden",
                                            "ffn_act",
                                            "seq_len",
                                            "vocab",
                                            "gpu",
                                            "num_gpus",
                                            "gpus_per_node",
                                            "nvlink_domain",
                                            "inter_node_gbps_per_gpu",
                                            "tp",
                                            "pp",
                                            "dp",
                                            "cp",
                                            "vp",
                                            "sequence_parallel",
                                            "zero",
                                            "recompute",
                                            "micro_batch",
                                            "global_batch",
                                            "precision",
                                            "step_time_s"};

// Columns read as settings of the same name, and those whose names differ.
constexpr const char* kSameName[] = {"layers",
                                     "hidden",
                                     "heads",
                                     "kv_heads",
                                     "ffn_hidden",
                                     "vocab",
                                     "seq_len",
                                     "global_batch",
                                     "precision",
                                     "gpu",
                                     "gpus_per_node",
                                     "nvlink_domain",
                                     "inter_node_gbps_per_gpu",
                                     "tp",
                                     "pp",
                                     "dp",
                                     "cp",
                                     "vp",
                                     "sequence_parallel",
                                     "zero",
                                     "recompute",
                                     "micro_batch"};

}  // namespace

std::vector<MeasuredRun> read_runs(const std::string& path,
                                   const estimator::Calibration& calibration) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot open runs file '{}'", path));
  std::string line;
  if (!std::getline(in, line))
    throw InputError(fmt::format("{}:1: empty file; expected a CSV header", path));
  std::map<std::string, std::size_t> columns;
  const auto header = split_csv(line);
  for (std::size_t i = 0; i < header.size(); ++i) columns[header[i]] = i;
  for (const char* column : kRequiredColumns)
    if (!columns.count(column))
      throw InputError(fmt::format(
          "{}:1: missing column '{}' (see the README of the validation data)", path, column));

  const auto& catalog = Catalog::builtin();
  std::vector<MeasuredRun> runs;
  for (int line_number = 2; std::getline(in, line); ++line_number) {
    if (line.empty() || line == "\r") continue;
    const auto fields = split_csv(line);
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
    for (const char* column : kSameName)
      if (!text(column).empty()) settings.set(column, text(column), where(column));
    settings.set("mlp", text("ffn_act"), where("ffn_act"));
    settings.set("gpus", text("num_gpus"), where("num_gpus"));
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
