// clustersweep validate and bench end to end: the published runs are predicted within the
// required error, bad CSV input gets one clear line, and the shipped calibration is reproducible.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <sstream>
#include <utility>

#include "spaces/catalog.h"
#include "tests/apps/run.h"

namespace clustersweep::apps_test {
namespace {

const std::string kRuns = source_path("tests/apps/data/transformer_runs.csv");
const std::string kMoeRuns = source_path("tests/apps/data/moe_runs.csv");
const std::string kAcceleratorRuns = source_path("tests/apps/data/accelerator_runs.csv");
const std::string kDlrmRuns = source_path("tests/apps/data/dlrm_runs.csv");
const std::string kEnergyRuns = source_path("tests/apps/data/energy_runs.csv");

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The [calibration] section of a calibration file: the part a fit determines.
std::string calibration_section(const std::string& text) {
  const auto at = text.find("[calibration]");
  return at == std::string::npos ? std::string() : text.substr(at);
}

TEST(Validate, PredictsEveryPublishedRunWithinTheRequiredError) {
  TempDir dir;
  const std::string predictions = (dir.path() / "predictions.csv").string();
  const Result r = run({"validate", kRuns, "-o", predictions});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = lines(read_file(predictions));
  ASSERT_EQ(rows.size(), 225u);
  EXPECT_EQ(rows[0],
            "id,source,measured_step_time_s,predicted_step_time_s,predicted_step_time_s_lo,"
            "predicted_step_time_s_hi,rel_error,framework,mem_per_gpu_gb,fits_hbm,reason");
  for (std::size_t i = 1; i < rows.size(); ++i) {
    // A reason says only which runtime settings the row leaves unknown.
    if (rows[i].back() != ',') {
      EXPECT_NE(rows[i].find(": predicted with "), std::string::npos) << rows[i];
    }
    EXPECT_EQ(rows[i].find(",,"), std::string::npos) << "row without a prediction: " << rows[i];
    // The interval holds the prediction, at the shipped ratios of a dense step.
    std::vector<double> cells;
    std::istringstream in(rows[i]);
    std::string cell;
    for (int c = 0; c < 6 && std::getline(in, cell, ','); ++c)
      cells.push_back(c >= 2 ? std::stod(cell) : 0);
    EXPECT_NEAR(cells[4] / cells[3], spaces::builtin_calibration().interval_lo, 3e-5) << rows[i];
    EXPECT_NEAR(cells[5] / cells[3], spaces::builtin_calibration().interval_hi, 3e-5) << rows[i];
  }
  std::smatch m;
  const std::string out = r.out;
  ASSERT_TRUE(std::regex_search(
      out, m, std::regex(R"(step-time MAPE: ([0-9.]+)%  median: ([0-9.]+)%  geomean: ([0-9.]+)%)")))
      << out;
  EXPECT_LE(std::stod(m[1]), 15.0);
  EXPECT_LE(std::stod(m[2]), 10.0);
  EXPECT_NE(out.find("predicted 224 of 224 rows"), std::string::npos);
  for (const char* source : {"DGXC_BENCH", "MBRIDGE_PERF", "MEGATRON_README_2020",
                             "MOSAIC_LLMFOUNDRY", "NARAYANAN_SC21_T1", "NARAYANAN_SC21_T2"})
    EXPECT_NE(out.find(source), std::string::npos) << source;
}

TEST(Validate, PredictsEveryMixtureOfExpertsRunRepairingOnlyAnImpossibleExpertGroup) {
  TempDir dir;
  const std::string predictions = (dir.path() / "predictions.csv").string();
  const Result r = run({"validate", kMoeRuns, "-o", predictions});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = lines(read_file(predictions));
  ASSERT_EQ(rows.size(), 92u);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].find(",,"), std::string::npos) << "row without a prediction: " << rows[i];
    // Only MB126 (ep 64 in a 32-GPU pipeline stage) is repaired; every other row is as published,
    // but for runtime settings its source leaves unknown, which the reason names.
    if (!rows[i].starts_with("MB126,") && rows[i].back() != ',') {
      EXPECT_NE(rows[i].find(": predicted with "), std::string::npos) << rows[i];
      EXPECT_EQ(rows[i].find("ep ="), std::string::npos) << rows[i];
    }
  }
  const auto mb126 = std::find_if(rows.begin(), rows.end(),
                                  [](const std::string& row) { return row.starts_with("MB126,"); });
  ASSERT_NE(mb126, rows.end());
  EXPECT_NE(
      mb126->find(",predicted with ep = 32: ep*etp = 64*1 = 64 does not divide tp*cp*dp = 32;"),
      std::string::npos)
      << *mb126;
  // Its assumed recompute does not fit: the lightest that does is what ran.
  EXPECT_TRUE(
      mb126->ends_with("; recompute assumed: predicted with "
                       "selective:core_attn+layernorm+mla_up_proj+moe_act "
                       "(selective:core_attn does not fit HBM)"))
      << *mb126;
  EXPECT_NE(r.out.find("predicted 91 of 91 rows; 1 with a misreported plan repaired"),
            std::string::npos)
      << r.out;
  // Not the issue's target (MAPE <= 15%, median <= 10%; docs/calibration.md says why): a guard
  // that the figures documented there do not get worse.
  std::smatch m;
  const std::string out = r.out;
  ASSERT_TRUE(
      std::regex_search(out, m, std::regex(R"(step-time MAPE: ([0-9.]+)%  median: ([0-9.]+)%)")))
      << out;
  EXPECT_LE(std::stod(m[1]), 18.0);
  EXPECT_LE(std::stod(m[2]), 12.5);
}

// Other vendors' runs (AMD, GH200, TPU, Gaudi, Trainium), the dense ones in the fit through the
// mechanisms they share with the published NVIDIA runs, no parameter of their own: every row is
// predicted from its datasheet, fabric and stack, none refused by a rule. The figures are a guard
// that docs/calibration.md's ("Result on other vendors' runs") do not get worse, not the targets.
TEST(Validate, PredictsEveryOtherVendorsRunFromItsDatasheetAndFabric) {
  TempDir dir;
  const std::string predictions = (dir.path() / "predictions.csv").string();
  const Result r =
      run({"validate", kAcceleratorRuns, source_path("tests/apps/data/accelerator_moe_runs.csv"),
           "-o", predictions});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("predicted 34 of 34 rows;"), std::string::npos) << r.out;
  const auto rows = lines(read_file(predictions));
  ASSERT_EQ(rows.size(), 35u);
  for (std::size_t i = 1; i < rows.size(); ++i)
    EXPECT_EQ(rows[i].find(",,"), std::string::npos) << "row without a prediction: " << rows[i];
  std::smatch m;
  const std::string out = r.out;
  ASSERT_TRUE(
      std::regex_search(out, m, std::regex(R"(step-time MAPE: ([0-9.]+)%  median: ([0-9.]+)%)")))
      << out;
  EXPECT_LE(std::stod(m[1]), 16.5);
  EXPECT_LE(std::stod(m[2]), 12.5);
}

TEST(Validate, ShippedCalibrationIsReproducible) {
  // One fit of the dense, the MoE and the other vendors' dense runs together gives every section of
  // the shipped file (the other families' sections kept as shipped) and, from the same per-source
  // fits that set the intervals, the leave-one-source-out figures: fitting once keeps this test to
  // one refit.
  TempDir dir;
  const std::string fitted = (dir.path() / "calibration.toml").string();
  const Result r =
      run({"validate", kRuns, kMoeRuns, kAcceleratorRuns, "--fit", fitted, "--held-out"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(calibration_section(read_file(fitted)),
            calibration_section(read_file(source_path("spaces/data/calibration.toml"))));
  // Each source predicted by a fit on the others, in the interval of the others' held-out
  // residuals: the nominal 90% must hold within 80-98%. The median half-width is not the 20%
  // once asked for (docs/calibration.md says why): a guard that the documented 25.2% does not grow.
  std::smatch m;
  const std::string out = r.out;
  ASSERT_TRUE(std::regex_search(
      out, m,
      std::regex(R"(held-out coverage ([0-9.]+)% of 345 runs, median half-width ([0-9.]+)%)")))
      << out;
  EXPECT_GE(std::stod(m[1]), 80.0);
  EXPECT_LE(std::stod(m[1]), 98.0);
  EXPECT_LE(std::stod(m[2]), 30.0);
  // Neither family's accuracy on a stack the fit never saw may be bought with the other's: the
  // leave-one-source-out MAPEs when the other vendors' runs came (dense 12.04% with their dense
  // runs, MoE 15.11%; shipped now 11.90% and 15.30%) plus 0.3 points.
  for (const auto& [family, limit] : {std::pair{"dense", 12.34}, std::pair{"moe", 15.41}}) {
    ASSERT_TRUE(std::regex_search(
        out, m,
        std::regex(fmt::format(R"(held-out {} MAPE ([0-9.]+)%  median ([0-9.]+)%)", family))))
        << out;
    EXPECT_LE(std::stod(m[1]), limit) << family;
  }
}

// The cells of a CSV line without quoted commas in the columns asked for.
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  bool quoted = false;
  for (char ch : line) {
    if (ch == '"') {
      quoted = !quoted;
    } else if (ch == ',' && !quoted) {
      out.push_back(std::exchange(cell, {}));
    } else {
      cell += ch;
    }
  }
  out.push_back(cell);
  return out;
}

TEST(Validate, PredictsEveryRecommendationRunWithinTheRequiredError) {
  TempDir dir;
  const std::string predictions = (dir.path() / "predictions.csv").string();
  const Result r = run({"validate", kDlrmRuns, "-o", predictions});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = lines(read_file(predictions));
  ASSERT_EQ(rows.size(), 80u);
  EXPECT_EQ(rows[0],
            "id,source,measured_samples_per_s,predicted_samples_per_s,predicted_samples_per_s_lo,"
            "predicted_samples_per_s_hi,rel_error,sharding,published_sharding,planner_matches,"
            "sharding_ranking,reason");
  const std::string runs = read_file(kDlrmRuns);
  int train_only = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto c = cells(rows[i]);
    ASSERT_EQ(c.size(), 12u) << rows[i];
    EXPECT_FALSE(c[3].empty()) << "row without a prediction: " << rows[i];
    // Like with like: MLPerf's throughput without its evaluations where the file gives it.
    EXPECT_TRUE(c[11] == "compared with train_only_samples_per_s" ||
                c[11] == "compared with samples_per_s")
        << rows[i];
    train_only += c[11] == "compared with train_only_samples_per_s";
    // The ranking names the planner's placement and every sharding once.
    for (const char* name : {"best", "table", "row", "column", "data", "hybrid", "fused_row"})
      EXPECT_TRUE(std::regex_search(c[10], std::regex(std::string("(^| )") + name + "( |$)")))
          << name << " in " << c[10];
  }
  EXPECT_EQ(train_only, 47);
  // The issue's targets, on step time (global batch / throughput).
  std::smatch m;
  const std::string out = r.out;
  ASSERT_TRUE(std::regex_search(
      out, m, std::regex(R"(step-time MAPE: ([0-9.]+)%  median: ([0-9.]+)%  geomean: ([0-9.]+)%)")))
      << out;
  EXPECT_LE(std::stod(m[1]), 12.0);
  EXPECT_LE(std::stod(m[2]), 6.0);
  EXPECT_LE(std::stod(m[3]), 5.0);
  EXPECT_NE(out.find("predicted 79 of 79 rows"), std::string::npos) << out;
  EXPECT_TRUE(std::regex_search(
      out, std::regex(R"(the planner picks the published sharding on \d+ of 79 runs)")))
      << out;
  // No source worse than 25%.
  for (const char* source : {"NV_DLE_DLRM", "MLPERF_V30_DLRMV2", "MLPERF_V31_DLRMV2",
                             "MLPERF_V40_DLRMV2", "MLPERF_V41_DLRMV2", "MLPERF_V50_DLRMV2",
                             "MLPERF_V51_DLRMV2", "HUGECTR_SOK_DLRM", "TORCHREC_DLRM_README"}) {
    ASSERT_TRUE(std::regex_search(out, m, std::regex(std::string(source) + R"( +\d+ +([0-9.]+)%)")))
        << source;
    EXPECT_LE(std::stod(m[1]), 25.0) << source;
  }
}

TEST(Validate, PredictsEveryMeteredEnergyRunAtItsScopeWithinTheRequiredError) {
  TempDir dir;
  const std::string predictions = (dir.path() / "energy.csv").string();
  const Result r = run({"validate", kEnergyRuns, "-o", predictions});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = lines(read_file(predictions));
  ASSERT_EQ(rows.size(), 36u);
  EXPECT_EQ(rows[0],
            "id,source,family,energy_scope,measured_energy_kwh,predicted_energy_kwh,"
            "measured_avg_power_w,predicted_avg_power_w,energy_rel_error,power_rel_error,reason");
  std::size_t predicted = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto c = cells(rows[i]);
    ASSERT_EQ(c.size(), 11u) << rows[i];
    const bool is_predicted = !c[5].empty();
    predicted += is_predicted;
    // A TDP estimate is never compared as a measurement.
    if (c[3] == "tdp_estimate") {
      EXPECT_NE(c[10].find("TDP estimate"), std::string::npos);
    }
    if (is_predicted) {
      EXPECT_NE(c[3], "tdp_estimate") << rows[i];
      EXPECT_NE(c[10].find("steps from"), std::string::npos) << rows[i];
    } else {
      // Why not: a reason that is none of the predictable kinds'.
      EXPECT_FALSE(c[10].empty()) << rows[i];
    }
    // The metered MLPerf GPT-3 run within 10% in power at its scope.
    if (c[0] == "mlperf40_smc_ac_gpt3_512xH100") {
      ASSERT_FALSE(c[9].empty());
      EXPECT_LE(std::fabs(std::stod(c[9])), 0.10) << rows[i];
    }
  }
  // Every metered transformer, LoRA and DLRM row with a GPU count, a catalog accelerator and a
  // shape: 2 GPT-3, 3 LoRA, 1 DLRM, OLMo 1 on A100, Olmo 3.
  EXPECT_EQ(predicted, 8u);
  std::smatch m;
  const std::string out = r.out;
  ASSERT_TRUE(std::regex_search(
      out, m, std::regex(R"(average power per GPU: median \|error\| ([0-9.]+)%.* over 7 rows)")))
      << out;
  EXPECT_LE(std::stod(m[1]), 10.0);
  ASSERT_TRUE(std::regex_search(
      out, m, std::regex(R"(energy at each row's scope: median \|error\| ([0-9.]+)%.* over 8)")))
      << out;
  EXPECT_LE(std::stod(m[1]), 15.0);
}

TEST(Validate, ShippedPowerCalibrationIsReproducible) {
  TempDir dir;
  const std::string fitted = (dir.path() / "calibration.toml").string();
  const Result r = run({"validate", kEnergyRuns, "--fit", fitted});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(calibration_section(read_file(fitted)),
            calibration_section(read_file(source_path("spaces/data/calibration.toml"))));
}

TEST(Validate, EnergyRunsAloneAndWithoutBestOrHeldOut) {
  Result r = run({"validate", kEnergyRuns, kRuns});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, fmt::format("clustersweep validate: error: {}: a step-time runs file cannot be "
                               "validated with {}; give training-energy runs alone\n",
                               kRuns, kEnergyRuns));
  r = run({"validate", kEnergyRuns, "--best"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, fmt::format("clustersweep validate: error: --best: applies to step-time runs, "
                               "not to the training-energy runs of {}\n",
                               kEnergyRuns));
}

// What a recommendation run's columns say beyond its shape: the throughput to compare with, the
// NVLink domain, and the framework (its own column, else the one its model label names).
TEST(Validate, RecommendationRunsReadTheirTargetDomainAndFramework) {
  TempDir dir;
  const std::string header =
      "id,source,model,num_tables,embedding_dim,total_embedding_rows,bottom_mlp,top_mlp,"
      "interaction,gpu,num_gpus,gpus_per_node,inter_node_gbps_per_gpu,sharding,global_batch,"
      "precision,samples_per_s,assumed,nvlink_domain,train_only_samples_per_s";
  const std::string shape =
      ",26,128,177944275,512-256-128,1024-1024-512-256-1,dot,GB200-186GB,64,4,400,table,";
  auto row = [&](const std::string& id, const std::string& model, const std::string& batch,
                 const std::string& domain, const std::string& train_only,
                 const std::string& framework) {
    return id + ",S," + model + shape + batch + ",fp16,1000000,," + domain + "," + train_only +
           (framework == "-" ? "" : "," + framework) + "\n";
  };
  const std::string csv =
      dir.file("runs.csv", header + "\n" + row("1", "DLRM-HugeCTR-X", "2048", "72", "", "-") +
                               row("2", "DLRM-TorchRec-X", "2048", "72", "", "-") +
                               row("3", "DLRM-hugectr", "2048", "4", "1200000", "-") +
                               row("4", "DLRM-torchrec", "2048", "4", "", "-"));
  const std::string out = (dir.path() / "p.csv").string();
  ASSERT_EQ(run({"validate", csv, "-o", out}).exit_code, 0);
  const auto rows = lines(read_file(out));
  ASSERT_EQ(rows.size(), 5u);
  std::vector<std::vector<std::string>> c;
  for (std::size_t i = 1; i < rows.size(); ++i) c.push_back(cells(rows[i]));
  const auto rate = [&](int i) { return std::stod(c[i][3]); };
  // The train-only throughput where given, and the reason column says so.
  EXPECT_EQ(c[0][2], "1e+06");
  EXPECT_EQ(c[0][11], "compared with samples_per_s");
  EXPECT_EQ(c[2][2], "1.2e+06");
  EXPECT_EQ(c[2][11], "compared with train_only_samples_per_s");
  // One 72-GPU domain keeps the exchange on NVLink: faster than trays of 4 over the network.
  EXPECT_GT(rate(0), rate(2));
  // TorchRec named in the label syncs with the host every step: slower at a small batch than
  // HugeCTR's whole-step CUDA graphs.
  EXPECT_LT(rate(1), rate(0));
  EXPECT_LT(rate(3), rate(2));

  // A framework column wins over the label; a bad value names the line and the column.
  const std::string framed =
      dir.file("framed.csv", header + ",framework\n" +
                                 row("1", "DLRM-TorchRec-X", "2048", "72", "", "hugectr") +
                                 row("2", "DLRM-X", "2048", "72", "", "torchrec"));
  ASSERT_EQ(run({"validate", framed, "-o", out}).exit_code, 0);
  const auto framed_rows = lines(read_file(out));
  EXPECT_EQ(cells(framed_rows[1])[3], c[0][3]);
  EXPECT_EQ(cells(framed_rows[2])[3], c[1][3]);
  const std::string bad = dir.file(
      "bad.csv", header + ",framework\n" + row("1", "DLRM-X", "2048", "72", "", "pytorch"));
  const Result r = run({"validate", bad, "-o", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, fmt::format("clustersweep validate: error: {}:2: column 'framework': a "
                               "recommendation model's framework must be any, hugectr or "
                               "torchrec, got 'pytorch'\n",
                               bad));
}

TEST(Validate, BadRecommendationCsvNamesFileLineAndColumnAndKeepsTheOutput) {
  TempDir dir;
  const std::string out = dir.file("keep.csv", "previous content\n");
  const std::string header =
      "id,source,model,num_tables,embedding_dim,total_embedding_rows,bottom_mlp,top_mlp,"
      "interaction,gpu,num_gpus,gpus_per_node,inter_node_gbps_per_gpu,sharding,global_batch,"
      "precision,samples_per_s,assumed\n";
  const std::string row =
      "1,X,DLRM-small,26,128,32709138,512-256-128,1024-1024-512-256-1,dot,A100-SXM4-80GB,8,8,,"
      "table,65536,tf32,2880000,\n";
  std::string bad = row;
  bad.replace(bad.find(",table,"), 7, ",tables,");
  const std::string csv = dir.file("bad.csv", header + row + bad);
  Result r = run({"validate", csv, "-o", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            fmt::format("clustersweep validate: error: {}:3: column 'sharding': must be table, "
                        "row, column, table_row, data, hybrid, fused_row or best, got 'tables'\n",
                        csv));
  EXPECT_EQ(read_file(out), "previous content\n");
  std::string mlp = row;
  mlp.replace(mlp.find("512-256-128"), 11, "512-x-128");
  r = run({"validate", dir.file("mlp.csv", header + mlp)});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, fmt::format("clustersweep validate: error: {}:2: column 'bottom_mlp': must be "
                               "up to 8 layer widths joined by '-', e.g. 512-256-128, got "
                               "'512-x-128'\n",
                               (dir.path() / "mlp.csv").string()));
  const std::string missing = dir.file("m.csv", "id,source,num_tables\n1,X,26\n");
  r = run({"validate", missing});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, fmt::format("clustersweep validate: error: {}:1: missing column 'model' (see "
                               "the README of the validation data)\n",
                               missing));
}

TEST(Validate, ShippedRecommendationCalibrationIsReproducible) {
  // Fitting either family's runs keeps the other family's section: both reproduce the file.
  TempDir dir;
  const std::string fitted = (dir.path() / "calibration.toml").string();
  const Result r = run({"validate", kDlrmRuns, "--fit", fitted});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(calibration_section(read_file(fitted)),
            calibration_section(read_file(source_path("spaces/data/calibration.toml"))));
}

TEST(Validate, UserCalibrationOverridesTheBuiltIn) {
  TempDir dir;
  const std::string slow =
      dir.file("slow.toml", "format_version = 1\n[calibration]\ngemm_eff_max = 0.35\n");
  const Result builtin = run({"validate", kRuns});
  const Result user = run({"validate", kRuns, "--calibration", slow});
  ASSERT_EQ(user.exit_code, 0) << user.err;
  EXPECT_NE(builtin.out, user.out);
  const std::string typo =
      dir.file("typo.toml", "format_version = 1\n[calibration]\ngemm_eff = 0.5\n");
  const Result bad = run({"validate", kRuns, "--calibration", typo});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(
      bad.err,
      fmt::format("clustersweep validate: error: {}:3:1: calibration.gemm_eff: unknown parameter; "
                  "did you mean 'gemm_eff_max', 'low_precision_gemm_eff' or 'hbm_eff'?\n",
                  typo));
}

const std::string kHeader =
    "id,source,model,layers,hidden,heads,kv_heads,ffn_hidden,ffn_act,seq_len,vocab,gpu,num_gpus,"
    "gpus_per_node,"
    "nvlink_domain,inter_node_gbps_per_gpu,tp,pp,dp,cp,vp,sequence_parallel,zero,recompute,micro_"
    "batch,"
    "global_batch,precision,step_time_s,tokens_per_s_per_gpu,mfu,step_time_derived,assumed\n";
const std::string kRow =
    "1,TEST,GPT-175B,96,12288,96,96,49152,gelu,2048,51200,H100-SXM5-80GB,256,8,8,400,4,8,8,1,6,1,1,"
    "none,1,512,"
    "bf16,8.408,487.2,,0,\n";

TEST(Validate, RowsThatCannotBePredictedGetAReason) {
  TempDir dir;
  std::string unknown_gpu = kRow;
  unknown_gpu.replace(unknown_gpu.find("H100-SXM5-80GB"), 14, "TPU-v5p");
  unknown_gpu[0] = '2';
  std::string bad_plan = kRow;
  bad_plan.replace(bad_plan.find(",4,8,8,1,6,"), 11, ",4,8,7,1,6,");  // 224 of 256 GPUs
  bad_plan[0] = '3';
  std::string uneven = kRow;
  uneven.replace(uneven.find(",4,8,8,1,6,"), 11, ",4,8,8,1,5,");  // 96 layers over 40 chunks
  uneven[0] = '4';
  const std::string csv = dir.file("runs.csv", kHeader + kRow + unknown_gpu + bad_plan + uneven);
  const std::string out = (dir.path() / "p.csv").string();
  const Result r = run({"validate", csv, "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = lines(read_file(out));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[2], "2,TEST,8.408,,,,,,,,unknown accelerator 'TPU-v5p'");
  EXPECT_EQ(
      rows[3],
      "3,TEST,8.408,,,,,,,,cannot be estimated: degrees: tp*pp*cp*dp = 4*8*1*7 = 224 does not "
      "equal the 256 GPUs");
  // An uneven pipeline split ran, so it is predicted (critical stage: ceil(96/40) layers a chunk).
  EXPECT_TRUE(rows[4].starts_with("4,TEST,8.408,")) << rows[4];
  EXPECT_TRUE(rows[4].ends_with(",")) << rows[4];
  EXPECT_NE(r.out.find("predicted 2 of 4 rows; 2 could not be predicted, 1 of them refused by a "
                       "rule (see the reason column)"),
            std::string::npos)
      << r.out;
}

TEST(Validate, BadCsvNamesFileLineAndColumnAndKeepsTheOutput) {
  TempDir dir;
  const std::string out = dir.file("keep.csv", "previous content\n");
  std::string bad_tp = kRow;
  bad_tp.replace(bad_tp.find(",4,8,8,1,6,"), 11, ",x,8,8,1,6,");
  const std::string csv = dir.file("bad.csv", kHeader + kRow + bad_tp);
  Result r = run({"validate", csv, "-o", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(
      r.err,
      fmt::format(
          "clustersweep validate: error: {}:3: column 'tp': must be a positive integer, got 'x'\n",
          csv));
  EXPECT_EQ(read_file(out), "previous content\n");

  // --robust without --best: refused before the output is touched.
  r = run({"validate", dir.file("good.csv", kHeader + kRow), "-o", out, "--robust"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "clustersweep validate: error: --robust: ranks the plans of --best; add --best\n");
  EXPECT_EQ(read_file(out), "previous content\n");

  std::string bad_precision = kRow;
  bad_precision.replace(bad_precision.find("bf16"), 4, "int4");
  r = run({"validate", dir.file("p.csv", kHeader + bad_precision)});
  EXPECT_EQ(r.err,
            fmt::format(
                "clustersweep validate: error: {}:2: column 'precision': must be fp32, tf32, fp16, "
                "bf16, fp8, fp4 or int8, got 'int4'\n",
                (dir.path() / "p.csv").string()));

  const std::string missing = dir.file("m.csv", "id,source,layers\n1,X,2\n");
  r = run({"validate", missing});
  EXPECT_EQ(
      r.err,
      fmt::format(
          "clustersweep validate: error: {}:1: missing column 'hidden' (see the README of the "
          "validation data)\n",
          missing));

  const std::string short_row = dir.file("s.csv", fmt::format("{}1,TEST,GPT\n", kHeader));
  r = run({"validate", short_row});
  EXPECT_EQ(r.err,
            fmt::format(
                "clustersweep validate: error: {}:2: expected 32 columns as in the header, got 3\n",
                short_row));

  r = run({"validate", (dir.path() / "absent.csv").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, fmt::format("clustersweep validate: error: cannot open runs file '{}': No "
                               "such file or directory\n",
                               (dir.path() / "absent.csv").string()));
  // A folder, a header alone, a header twice: each named as what it is.
  r = run({"validate", dir.path().string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, fmt::format("clustersweep validate: error: cannot open runs file '{}': it is a "
                               "folder\n",
                               dir.path().string()));
  const std::string header_only = dir.file("h.csv", kHeader);
  r = run({"validate", header_only});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, fmt::format("clustersweep validate: error: {}:2: no runs after the header; "
                               "expected one per line\n",
                               header_only));
  const std::string twice = dir.file("t.csv", "id,id\n1,2\n");
  r = run({"validate", twice});
  EXPECT_EQ(r.err,
            fmt::format("clustersweep validate: error: {}:1: column 'id' appears twice\n", twice));
}

TEST(Validate, ReadsAFileWithAByteOrderMark) {
  TempDir dir;
  const std::string plain = dir.file("plain.csv", fmt::format("{}{}", kHeader, kRow));
  const std::string marked = dir.file("bom.csv", fmt::format("\xEF\xBB\xBF{}{}", kHeader, kRow));
  const auto a = run({"validate", plain});
  const auto b = run({"validate", marked});
  EXPECT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
}

TEST(Validate, EmptyInterNodeBandwidthUsesTheCalibrationDefault) {
  TempDir dir;
  std::string empty = kRow;
  empty.replace(empty.find(",400,"), 5, ",,");
  const std::string a = (dir.path() / "a.csv").string(), b = (dir.path() / "b.csv").string();
  ASSERT_EQ(run({"validate", dir.file("given.csv", kHeader + kRow), "-o", a}).exit_code, 0);
  ASSERT_EQ(run({"validate", dir.file("empty.csv", kHeader + empty), "-o", b}).exit_code, 0);
  const std::string slow = dir.file(
      "slow.toml", "format_version = 1\n[calibration]\ndefault_inter_node_gbps_per_gpu = 25\n");
  const std::string c = (dir.path() / "c.csv").string();
  ASSERT_EQ(run({"validate", (dir.path() / "empty.csv").string(), "--calibration", slow, "-o", c})
                .exit_code,
            0);
  // The shipped default is 400 Gbit/s: the same prediction as the row that states 400.
  EXPECT_EQ(lines(read_file(a))[1], lines(read_file(b))[1]);
  EXPECT_NE(lines(read_file(a))[1], lines(read_file(c))[1]);
}

TEST(Validate, BestPlanIsNeverSlowerThanTheRunsOwnPlan) {
  // NVIDIA-tuned dense runs: the search over every plan of a run's design includes the run's own
  // plan, so its best predicted step is at most the own plan's.
  TempDir dir;
  const auto all = lines(read_file(kRuns));
  std::string subset = all[0] + "\n";
  int taken = 0;
  for (std::size_t i = 1; i < all.size() && taken < 16; ++i)
    if (all[i].find(",DGXC_BENCH,") != std::string::npos) {
      subset += all[i] + "\n";
      ++taken;
    }
  const std::string runs = dir.file("tuned.csv", subset);
  const std::string predictions = (dir.path() / "predictions.csv").string();
  const Result r = run({"validate", runs, "--best", "-o", predictions});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("best plan's predicted step / measured step"), std::string::npos) << r.out;
  const auto rows = lines(read_file(predictions));
  ASSERT_GT(rows.size(), 10u);
  EXPECT_EQ(rows[0],
            "id,source,measured_step_time_s,predicted_step_time_s,predicted_step_time_s_lo,"
            "predicted_step_time_s_hi,rel_error,framework,mem_per_gpu_gb,fits_hbm,reason,"
            "best_step_time_s,best_plan");
  for (std::size_t i = 1; i < rows.size(); ++i) {
    std::vector<std::string> cells;
    std::istringstream in(rows[i]);
    for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
    ASSERT_EQ(cells.size(), 13u) << rows[i];
    EXPECT_EQ(cells[7], "megatron-core") << rows[i];  // DGX Cloud's NeMo runs
    EXPECT_LE(std::stod(cells[11]), std::stod(cells[3])) << rows[i];
    EXPECT_EQ(cells[12].rfind("tp ", 0), 0u) << rows[i];
  }
}

TEST(Bench, PrintsEvaluationsPerSecondLast) {
  const Result r = run({"bench", "--seconds", "0.2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = lines(r.out);
  ASSERT_FALSE(out.empty());
  EXPECT_TRUE(std::regex_match(out.back(), std::regex(R"(evaluations_per_second: [1-9][0-9]*)")))
      << out.back();
}

TEST(Bench, TimesTheRecommendationModelToo) {
  const Result r = run({"bench", "--workload", "dlrm", "--seconds", "0.2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = lines(r.out);
  ASSERT_EQ(out.size(), 3u) << r.out;
  EXPECT_EQ(out[0],
            "plans: 200 (DLRMv2 placements of 26 tables on 128 x H100-SXM5-80GB), feasible per "
            "pass: 200");
  EXPECT_TRUE(std::regex_match(out.back(), std::regex(R"(evaluations_per_second: [1-9][0-9]*)")))
      << out.back();
  const Result bad = run({"bench", "--workload", "moe"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err,
            "clustersweep bench: error: --workload: must be transformer or dlrm, got 'moe'\n");
}

}  // namespace
}  // namespace clustersweep::apps_test
