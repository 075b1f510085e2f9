// clustersweep validate: predict published training runs and report the error; --fit refits the
// calibration on them (docs/calibration.md).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "apps/commands.h"
#include "estimator/error.h"
#include "estimator/estimator.h"
#include "estimator/fit.h"
#include "spaces/catalog.h"

namespace clustersweep::cli {
namespace {

namespace est = estimator;

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

std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

// One row of the runs file, with the file:line its errors name.
class Row {
 public:
  Row(const std::map<std::string, std::size_t>& columns, std::vector<std::string> fields,
      std::string where)
      : columns_(columns), fields_(std::move(fields)), where_(std::move(where)) {}

  const std::string& text(const char* column) const { return fields_[columns_.at(column)]; }
  bool empty(const char* column) const { return text(column).empty(); }
  [[noreturn]] void fail(const char* column, const std::string& what) const {
    throw InputError(fmt::format("{}: column '{}': {}", where_, column, what));
  }
  long long integer(const char* column, long long min_value = 1) const {
    const std::string& s = text(column);
    std::size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (s.empty() || used != s.size() || value < min_value)
      fail(column, fmt::format("expected an integer >= {}, got '{}'", min_value, s));
    return value;
  }
  double number(const char* column) const {
    const std::string& s = text(column);
    std::size_t used = 0;
    double value = 0;
    try {
      value = std::stod(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (s.empty() || used != s.size() || !std::isfinite(value) || value <= 0)
      fail(column, fmt::format("expected a positive number, got '{}'", s));
    return value;
  }

 private:
  const std::map<std::string, std::size_t>& columns_;
  std::vector<std::string> fields_;
  std::string where_;
};

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

struct RunRow {
  std::string id;
  std::string source;
  double measured_s = 0;
  std::string reason;  // why it cannot be predicted (then `sample` is unused)
  est::Sample sample;
};

// Reads the runs file. Malformed values are input errors; rows the estimator cannot represent
// (an accelerator the catalog lacks, an invalid plan) get a reason instead.
std::vector<RunRow> read_runs(const std::string& path, const est::Calibration& calibration) {
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

  const auto& catalog = spaces::Catalog::builtin();
  std::vector<RunRow> rows;
  for (int line_number = 2; std::getline(in, line); ++line_number) {
    if (line.empty() || line == "\r") continue;
    auto fields = split_csv(line);
    const std::string where = fmt::format("{}:{}", path, line_number);
    if (fields.size() != header.size())
      throw InputError(fmt::format("{}: expected {} columns as in the header, got {}", where,
                                   header.size(), fields.size()));
    const Row row(columns, std::move(fields), where);
    RunRow run;
    run.id = row.text("id");
    run.source = row.text("source");
    if (row.empty("step_time_s")) {
      run.reason = "no measured step_time_s";
      rows.push_back(std::move(run));
      continue;
    }
    run.measured_s = row.number("step_time_s");

    est::Workload& w = run.sample.workload;
    est::Model& m = w.model;
    m.layers = static_cast<int>(row.integer("layers"));
    m.hidden = static_cast<int>(row.integer("hidden"));
    m.heads = static_cast<int>(row.integer("heads"));
    m.kv_heads = row.empty("kv_heads") ? m.heads : static_cast<int>(row.integer("kv_heads"));
    m.ffn_hidden =
        row.empty("ffn_hidden") ? 4 * m.hidden : static_cast<int>(row.integer("ffn_hidden"));
    if (!est::parse_mlp(row.text("ffn_act"), m.mlp))
      row.fail("ffn_act", fmt::format("expected gelu or swiglu, got '{}'", row.text("ffn_act")));
    m.vocab = static_cast<int>(row.integer("vocab"));
    w.seq_len = static_cast<int>(row.integer("seq_len"));
    w.global_batch = row.integer("global_batch");
    if (!est::parse_precision(row.text("precision"), w.precision))
      row.fail("precision", fmt::format("expected fp32, tf32, fp16, bf16, fp8 or fp4, got '{}'",
                                        row.text("precision")));

    est::Plan& p = run.sample.plan;
    p.tp = static_cast<int>(row.integer("tp"));
    p.pp = static_cast<int>(row.integer("pp"));
    p.cp = row.empty("cp") ? 1 : static_cast<int>(row.integer("cp"));
    p.vp = row.empty("vp") ? 1 : static_cast<int>(row.integer("vp"));
    p.sequence_parallel = row.integer("sequence_parallel", 0) != 0;
    p.zero = static_cast<int>(row.integer("zero", 0));
    if (!est::parse_recompute(row.text("recompute"), p.recompute))
      row.fail("recompute",
               fmt::format("expected none, selective or full, got '{}'", row.text("recompute")));
    p.micro_batch = static_cast<int>(row.integer("micro_batch"));
    // A measured run ran: accept Megatron-Core's uneven pipeline splits, and read interleaving
    // without a pipeline as no interleaving.
    p.uneven_pipeline = true;
    if (p.pp == 1) p.vp = 1;

    est::Cluster& c = run.sample.cluster;
    c.num_gpus = static_cast<int>(row.integer("num_gpus"));
    p.dp = row.empty("dp") ? std::max(1, c.num_gpus / (p.tp * p.pp * p.cp))
                           : static_cast<int>(row.integer("dp"));
    c.gpus_per_node = static_cast<int>(row.integer("gpus_per_node"));
    c.nvlink_domain = static_cast<int>(row.integer("nvlink_domain"));
    const double gbps = row.empty("inter_node_gbps_per_gpu")
                            ? calibration.default_inter_node_gbps_per_gpu
                            : row.number("inter_node_gbps_per_gpu");
    c.inter_node_bytes_per_s = gbps * 1e9 / 8;
    const auto* gpu = catalog.find_accelerator(row.text("gpu"));
    if (!gpu) {
      run.reason = fmt::format("unknown accelerator '{}'", row.text("gpu"));
      rows.push_back(std::move(run));
      continue;
    }
    c.gpu = gpu->accelerator;
    c.nvlink_bytes_per_s = gpu->accelerator.nvlink_bytes_per_s;
    c.hbm_bytes = gpu->accelerator.hbm_bytes;
    c.node_overhead_w = gpu->default_node_overhead_w;
    run.sample.measured_step_s = run.measured_s;

    const est::Estimate e = est::estimate(w, c, p, calibration);
    if (e.reason != est::Infeasible::none && e.reason != est::Infeasible::out_of_memory)
      run.reason = fmt::format("cannot be estimated: {}", est::to_string(e.reason));
    rows.push_back(std::move(run));
  }
  return rows;
}

struct Stats {
  std::size_t n = 0;
  double mape = 0, median = 0, geomean = 0, max = 0;
};

Stats stats(std::vector<double> abs_errors) {
  Stats s;
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

// Writes `text` to `path` through a temporary file, so a failure never leaves half a file.
void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(fmt::format("cannot write '{}'", tmp));
    out << text;
    out.flush();
    if (!out) throw Error(fmt::format("cannot write '{}'", tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw Error(fmt::format("cannot rename '{}' to '{}': {}", tmp, path, ec.message()));
}

}  // namespace

int validate(const Args& args) {
  po::options_description options("Options");
  options.add_options()("runs", po::value<std::string>(),
                        "CSV of measured runs (format of validation/transformer_runs.csv)")(
      "output,o", po::value<std::string>(), "write per-row predictions to this CSV")(
      "calibration", po::value<std::string>(), "calibration TOML overriding the built-in one")(
      "fit", po::value<std::string>(),
      "fit the calibration on the runs and write it to this TOML file")(
      "fit-sweeps", po::value<int>()->default_value(12), "coordinate-descent passes of --fit");
  po::positional_options_description positional;
  positional.add("runs", 1);
  const auto vm =
      parse(args, options, positional, "validate RUNS.csv [-o predictions.csv] [--fit OUT.toml]",
            "Predicts the step time of every run in RUNS.csv, writes\n"
            "id,source,measured_step_time_s,predicted_step_time_s,rel_error,reason\n"
            "and prints the MAPE, median and geometric mean of the absolute relative error,\n"
            "overall and per source. --fit refits the calibration on the runs first.");
  if (!vm) return kExitOk;
  const auto runs_path = required<std::string>(*vm, "runs");
  // --fit starts from the fixed prior (the Calibration defaults) so that the shipped calibration
  // is reproducible; --calibration FILE starts it (or the plain validation) from FILE instead.
  est::Calibration calibration =
      vm->count("calibration") ? spaces::load_calibration((*vm)["calibration"].as<std::string>())
      : vm->count("fit")       ? est::Calibration{}
                               : spaces::builtin_calibration();
  auto rows = read_runs(runs_path, calibration);

  if (vm->count("fit")) {
    const std::string out_path = (*vm)["fit"].as<std::string>();
    const int sweeps = (*vm)["fit-sweeps"].as<int>();
    if (sweeps < 1) throw InputError("--fit-sweeps: must be a positive integer");
    // Every run counts the same: the objective is the error a user sees on a published run.
    std::vector<est::Sample> samples;
    for (const auto& r : rows)
      if (r.reason.empty()) samples.push_back(r.sample);
    if (samples.empty())
      throw InputError(fmt::format("{}: no predictable rows to fit on", runs_path));
    est::FitOptions fit_options;
    fit_options.sweeps = sweeps;
    const auto fit = est::fit_calibration(samples, calibration, fit_options);
    calibration = fit.calibration;
    const std::string header = fmt::format(
        "clustersweep estimator calibration, format version 1.\n"
        "Fitted by `clustersweep validate {} --fit {}` (deterministic coordinate descent on the\n"
        "mean |log(predicted/measured)| over {} runs, {} sweeps):\n"
        "objective {:.4f} -> {:.4f} in {} evaluations. See docs/calibration.md.",
        std::filesystem::path(runs_path).filename().string(),
        std::filesystem::path(out_path).filename().string(), samples.size(), sweeps,
        fit.objective_before, fit.objective_after, fit.evaluations);
    write_file_atomically(out_path, spaces::format_calibration(calibration, header));
    std::cout << fmt::format("fit: objective {:.4f} -> {:.4f} ({} evaluations); wrote {}\n",
                             fit.objective_before, fit.objective_after, fit.evaluations, out_path);
    // Re-derive the rows with the fitted defaults (e.g. the default scale-out bandwidth).
    rows = read_runs(runs_path, calibration);
  }

  std::string csv = "id,source,measured_step_time_s,predicted_step_time_s,rel_error,reason\n";
  std::map<std::string, std::vector<double>> errors_by_source;
  std::vector<double> all_errors;
  std::size_t unpredicted = 0, out_of_memory = 0;
  for (const auto& r : rows) {
    if (!r.reason.empty()) {
      ++unpredicted;
      csv += fmt::format("{},{},{},,,{}\n", csv_quote(r.id), csv_quote(r.source),
                         r.measured_s > 0 ? fmt::format("{:g}", r.measured_s) : "",
                         csv_quote(r.reason));
      continue;
    }
    const est::Estimate e =
        est::estimate(r.sample.workload, r.sample.cluster, r.sample.plan, calibration);
    if (e.reason == est::Infeasible::out_of_memory) ++out_of_memory;
    const double error = est::relative_error(e.time.total_s, r.measured_s);
    all_errors.push_back(std::fabs(error));
    errors_by_source[r.source].push_back(std::fabs(error));
    csv += fmt::format("{},{},{:g},{:.6g},{:.6f},\n", csv_quote(r.id), csv_quote(r.source),
                       r.measured_s, e.time.total_s, error);
  }
  if (vm->count("output")) write_file_atomically((*vm)["output"].as<std::string>(), csv);

  std::cout << fmt::format("{:<24} {:>5} {:>8} {:>8} {:>8} {:>8}\n", "source", "rows", "MAPE",
                           "median", "geomean", "max");
  auto print = [](const std::string& name, const Stats& s) {
    std::cout << fmt::format("{:<24} {:>5} {:>7.2f}% {:>7.2f}% {:>7.2f}% {:>7.2f}%\n", name, s.n,
                             100 * s.mape, 100 * s.median, 100 * s.geomean, 100 * s.max);
  };
  for (const auto& [source, errors] : errors_by_source) print(source, stats(errors));
  const Stats overall = stats(all_errors);
  print("all", overall);
  std::cout << fmt::format("predicted {} of {} rows", all_errors.size(), rows.size());
  if (unpredicted)
    std::cout << fmt::format("; {} could not be predicted (see the reason column)", unpredicted);
  if (out_of_memory)
    std::cout << fmt::format("; the memory model puts {} measured runs over HBM capacity",
                             out_of_memory);
  std::cout << '\n';
  std::cout << fmt::format("step-time MAPE: {:.2f}%  median: {:.2f}%  geomean: {:.2f}%\n",
                           100 * overall.mape, 100 * overall.median, 100 * overall.geomean);
  return kExitOk;
}

}  // namespace clustersweep::cli
