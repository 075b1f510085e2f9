// The built-in data the estimator is fed with (spaces/data/*.toml): catalog entries, their
// sources, parse errors that name file:line:column, and the calibration file format.
#include "spaces/catalog.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "spaces/frameworks.h"

namespace clustersweep::spaces {
namespace {

using estimator::Precision;

std::string parse_error(std::string_view accelerators, std::string_view models) {
  try {
    Catalog::parse(accelerators, models);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

const char* kOneAccelerator = R"(format_version = 1
[[accelerator]]
key = "X1"
peak_tflops = { bf16 = 100.0 }
hbm_gb = 80
hbm_gbytes_per_s = 2000
nvlink_gbytes_per_s = 300
tdp_w = 400
idle_w = 50
gpus_per_node = 8
nvlink_domain = 8
source = "test"
)";

const char* kOneModel = R"(format_version = 1
[[model]]
key = "m"
layers = 2
hidden = 256
heads = 4
ffn_hidden = 1024
mlp = "gelu"
vocab = 1000
seq_len = 128
global_batch = 8
source = "test"
)";

TEST(Catalog, HasEveryRequiredAcceleratorWithItsSource) {
  const Catalog& c = Catalog::builtin();
  for (const char* key :
       {"V100-SXM2-32GB", "V100-SXM3-32GB", "A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB",
        "H200-141GB", "B200-180GB", "GB200-186GB", "GB300-279GB", "MI300X-192GB"}) {
    const AcceleratorEntry* a = c.find_accelerator(key);
    ASSERT_NE(a, nullptr) << key;
    EXPECT_FALSE(a->source.empty()) << key;
    EXPECT_GT(a->accelerator.hbm_bytes, 0) << key;
    EXPECT_GT(a->accelerator.hbm_bytes_per_s, 0) << key;
    EXPECT_GT(a->accelerator.nvlink_bytes_per_s, 0) << key;
    EXPECT_GT(a->accelerator.tdp_w, a->accelerator.idle_w) << key;
    EXPECT_GT(a->accelerator.peak_flops[static_cast<int>(Precision::fp16)], 0) << key;
    EXPECT_GE(a->default_nvlink_domain, a->default_gpus_per_node) << key;
  }
  // Spot checks against the datasheets.
  EXPECT_DOUBLE_EQ(c.find_accelerator("A100-SXM4-80GB")
                       ->accelerator.peak_flops[static_cast<int>(Precision::bf16)],
                   312e12);
  EXPECT_DOUBLE_EQ(c.find_accelerator("H100-SXM5-80GB")
                       ->accelerator.peak_flops[static_cast<int>(Precision::fp8)],
                   1978.9e12);
  EXPECT_EQ(c.find_accelerator("V100-SXM2-32GB")
                ->accelerator.peak_flops[static_cast<int>(Precision::bf16)],
            0);
  EXPECT_EQ(c.find_accelerator("GB200-186GB")->default_nvlink_domain, 72);
  EXPECT_EQ(c.find_accelerator("GB200-186GB")->default_gpus_per_node, 4);
}

TEST(Catalog, HasEveryRequiredModel) {
  const Catalog& c = Catalog::builtin();
  for (const char* key :
       {"gpt3-125m",       "gpt3-350m",       "gpt3-760m",      "gpt3-1.3b",      "gpt3-2.7b",
        "gpt3-6.7b",       "gpt3-13b",        "gpt3-175b",      "megatron-1.7b",  "megatron-3.6b",
        "megatron-7.5b",   "megatron-18.4b",  "megatron-39.1b", "megatron-76.1b", "megatron-145.6b",
        "megatron-310.1b", "megatron-529.6b", "megatron-1t",    "llama2-7b",      "llama2-13b",
        "llama2-70b",      "llama3-8b",       "llama3-70b",     "llama3.1-8b",    "llama3.1-70b",
        "llama3.1-405b",   "mpt-7b",          "mpt-30b",        "bloom-176b",     "nemotron4-15b",
        "nemotron4-340b"}) {
    const ModelEntry* m = c.find_model(key);
    ASSERT_NE(m, nullptr) << key;
    EXPECT_FALSE(m->source.empty()) << key;
    EXPECT_EQ(m->model.hidden % m->model.heads, 0) << key;
    EXPECT_EQ(m->model.heads % m->model.kv_heads, 0) << key;
    EXPECT_GT(m->seq_len, 0) << key;
    EXPECT_GT(m->global_batch, 0) << key;
  }
  // Parameter counts land on the names (within the embedding conventions).
  for (const auto& [key, billions] :
       std::vector<std::pair<const char*, double>>{{"gpt3-175b", 175},
                                                   {"megatron-1t", 1008},
                                                   {"llama3.1-405b", 405},
                                                   {"llama2-70b", 69},
                                                   {"bloom-176b", 176},
                                                   {"nemotron4-340b", 340},
                                                   {"megatron-529.6b", 529.6}}) {
    const double p = estimator::total_params(c.find_model(key)->model) / 1e9;
    EXPECT_NEAR(p / billions, 1.0, 0.04) << key << ": " << p << "B";
  }
}

TEST(Catalog, HasTheRecommendationModelsOfThePublishedRuns) {
  const Catalog& c = Catalog::builtin();
  const DlrmModelEntry& v2 = c.dlrm_model("dlrmv2-dcnv2", "test");
  EXPECT_EQ(&v2, c.find_dlrm_model("DLRMv2-DCNv2-MLPerf"));
  EXPECT_EQ(&v2, c.find_dlrm_model("dlrmv2-dcnv2-mlperf"));  // aliases without regard to case
  double rows = 0, lookups = 0;
  for (int t = 0; t < v2.model.num_tables; ++t) {
    rows += v2.model.rows[t];
    lookups += v2.model.pooling[t];
  }
  EXPECT_EQ(v2.model.num_tables, 26);
  EXPECT_EQ(rows, 204184588);  // the MLPerf reference's tables
  EXPECT_EQ(lookups, 214);     // its multi-hot sizes
  EXPECT_EQ(v2.model.interaction, estimator::Interaction::dcnv2);
  // Totals without per-table sizes keep their total when scaled into the MLPerf shape.
  for (const auto& [name, total] : {std::pair{"DLRM-small", 32709138.0},
                                    {"DLRM-TF2-large", 178048205.0},
                                    {"DLRM-TF2-xlarge", 882900992.0}}) {
    const DlrmModelEntry* e = c.find_dlrm_model(name);
    ASSERT_NE(e, nullptr) << name;
    double sum = 0;
    for (int t = 0; t < e->model.num_tables; ++t) sum += e->model.rows[t];
    EXPECT_NEAR(sum, total, 26) << name;
    EXPECT_FALSE(e->source.empty());
  }
  try {
    c.dlrm_model("dlrm-smal", "--model");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "--model: unknown recommendation model 'dlrm-smal'; did you mean "
                 "'dlrm-criteo-small'?");
  }
}

TEST(Catalog, UnknownNamesSuggestTheClosest) {
  const Catalog& c = Catalog::builtin();
  try {
    c.accelerator("H100", "--gpu");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--gpu: unknown accelerator 'H100'; did you mean 'H100-SXM5-80GB'?");
  }
  try {
    c.model("llama3-7b", "spec.toml:3:9: workload.model");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(
        e.what(),
        "spec.toml:3:9: workload.model: unknown model 'llama3-7b'; did you mean 'llama2-7b', "
        "'llama3-8b' or 'llama3-70b'?");
  }
}

TEST(Catalog, ParsesAMinimalCatalog) {
  const Catalog c = Catalog::parse(kOneAccelerator, kOneModel);
  ASSERT_EQ(c.accelerators().size(), 1u);
  EXPECT_DOUBLE_EQ(c.accelerators()[0].accelerator.peak_flops[static_cast<int>(Precision::bf16)],
                   100e12);
  EXPECT_EQ(c.models()[0].model.kv_heads, 4);       // defaults to heads
  EXPECT_EQ(c.accelerators()[0].vendor, "nvidia");  // when not given
}

// The vendor says which stacks run on a part: a recommendation model on an NVIDIA part is taken to
// run HugeCTR's whole-step graphs when no framework is given, elsewhere `any`.
TEST(Catalog, VendorOfAPart) {
  EXPECT_EQ(Catalog::builtin().accelerator("MI300X-192GB", "--gpu").vendor, "amd");
  EXPECT_EQ(default_dlrm_framework(Catalog::builtin().accelerator("MI300X-192GB", "--gpu")),
            estimator::DlrmFramework::any);
  EXPECT_EQ(default_dlrm_framework(Catalog::builtin().accelerator("GB200-186GB", "--gpu")),
            estimator::DlrmFramework::hugectr);
  EXPECT_EQ(parse_error(std::string(kOneAccelerator) + "vendor = \"acme\"\n", kOneModel),
            "accelerators.toml:13:10: accelerator.vendor: must be one of nvidia, amd, google, "
            "intel, aws, got 'acme'");
}

TEST(Catalog, ParseErrorsNameFileLineAndColumn) {
  std::string bad = kOneAccelerator;
  bad.replace(bad.find("hbm_gb = 80"), 11, "hbm_gb = -80");
  EXPECT_EQ(parse_error(bad, kOneModel),
            "accelerators.toml:5:10: accelerator.hbm_gb: must be a positive number, got -80");
  bad = kOneAccelerator;
  bad.replace(bad.find("tdp_w"), 5, "tdp_watts");
  EXPECT_EQ(parse_error(bad, kOneModel), "accelerators.toml:2:1: accelerator: missing key 'tdp_w'");
  bad = kOneAccelerator;
  bad += "colour = \"green\"\n";
  EXPECT_TRUE(parse_error(bad, kOneModel)
                  .starts_with("accelerators.toml:13:1: accelerator.colour: unknown key; "
                               "valid keys: key, peak_tflops, hbm_gb,"))
      << parse_error(bad, kOneModel);
  bad = kOneAccelerator;
  bad.replace(bad.find("bf16"), 4, "bf17");
  EXPECT_TRUE(parse_error(bad, kOneModel)
                  .starts_with("accelerators.toml:4:17: accelerator 'X1'.peak_tflops.bf17: "
                               "unknown key; valid keys: fp32, tf32, fp16, bf16, fp8, fp4, int8"))
      << parse_error(bad, kOneModel);
  std::string model = kOneModel;
  model.replace(model.find("mlp = \"gelu\""), 12, "mlp = \"relu\"");
  EXPECT_EQ(parse_error(kOneAccelerator, model),
            "models.toml:8:7: model.mlp: must be \"gelu\" or \"swiglu\", got \"relu\"");
  model = kOneModel;
  model.replace(model.find("key = \"m\""), 9, "key = \"M\"");
  EXPECT_EQ(parse_error(kOneAccelerator, model),
            "models.toml:3:7: model.key: must be lower-case, got 'M'");
  model = kOneModel;
  model.replace(model.find("layers = 2"), 10, "layers = 2.5");
  EXPECT_EQ(parse_error(kOneAccelerator, model),
            "models.toml:4:10: model.layers: must be a positive integer, got 2.5");
  EXPECT_EQ(
      parse_error("format_version = 2\n", kOneModel),
      "accelerators.toml:1:18: format_version: unsupported version; this clustersweep reads 1");
  EXPECT_TRUE(parse_error("format_version = 1\nkey = [\n", kOneModel)
                  .starts_with("accelerators.toml:2:9: "));
  EXPECT_EQ(parse_error(std::string(kOneAccelerator) + std::string(kOneAccelerator).substr(19),
                        kOneModel),
            "accelerators.toml:13:1: accelerator.key: 'X1' is defined twice");
}

TEST(Calibration, BuiltinIsTheShippedFile) {
  const estimator::Calibration& c = builtin_calibration();
  EXPECT_GT(c.gemm_eff_max, 0.3);
  EXPECT_LE(c.gemm_eff_max, 1.0);
  EXPECT_EQ(c.default_inter_node_gbps_per_gpu, 400);
}

TEST(Calibration, OverrideKeepsUnnamedValuesAndRoundTrips) {
  const estimator::Calibration base = builtin_calibration();
  const estimator::Calibration c =
      parse_calibration("format_version = 1\n[calibration]\nhbm_eff = 0.5\n", "mine.toml");
  EXPECT_EQ(c.hbm_eff, 0.5);
  EXPECT_EQ(c.gemm_eff_max, base.gemm_eff_max);
  const std::string text = format_calibration(c, "a header\nline two", builtin_support());
  EXPECT_EQ(text.substr(0, 22), "# a header\n# line two\n");
  const estimator::Calibration again =
      parse_calibration(text, "again.toml", estimator::Calibration{});
  for (auto* f = estimator::calibration_fields_begin(); f != estimator::calibration_fields_end();
       ++f)
    EXPECT_NEAR(again.*(f->member), c.*(f->member), 1e-5 * std::fabs(c.*(f->member))) << f->name;
  const CalibrationSupport support = parse_support(text, "again.toml", CalibrationSupport{});
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(support.family[i].runs, builtin_support().family[i].runs);
    EXPECT_EQ(support.family[i].max_cp, builtin_support().family[i].max_cp);
    EXPECT_EQ(support.family[i].accelerators, builtin_support().family[i].accelerators);
    EXPECT_EQ(support.family[i].regimes, builtin_support().family[i].regimes);
  }
}

TEST(Calibration, ErrorsNameFileLineAndColumn) {
  auto error = [](std::string_view text) {
    try {
      parse_calibration(text, "cal.toml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("format_version = 1\n[calibration]\nhbm_eff = -1\n"),
            "cal.toml:3:11: calibration.hbm_eff: must be a non-negative number");
  EXPECT_EQ(error("format_version = 1\n[calibration]\nhbm = 0.5\n"),
            "cal.toml:3:1: calibration.hbm: unknown parameter; did you mean 'hbm_eff'?");
  EXPECT_EQ(error("[calibration]\n"), "cal.toml:1:1: format_version: missing; expected 1");
  EXPECT_EQ(error("format_version = 1\n"), "cal.toml:1:1: missing the [calibration] table");
  EXPECT_THROW(load_calibration("/nonexistent/cal.toml"), InputError);
}

}  // namespace
}  // namespace clustersweep::spaces
