// The built-in data the estimator is fed with (spaces/data/*.toml): catalog entries, their
// sources, parse errors that name file:line:column, and the calibration file format.
#include "spaces/catalog.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "estimator/estimator.h"
#include "h100_like_cluster.h"
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

TEST(Catalog, AmpereEraAttentionKernelsRunAtTheirShareOnHopper) {
  // FlashAttention-2 and Triton's kernel use neither wgmma nor TMA: 0.62 of cuDNN's rate on every
  // Hopper part, their own kernels on an A100.
  const Catalog& c = Catalog::builtin();
  for (const char* key :
       {"H100-SXM5-80GB", "H800-SXM5-80GB", "H200-141GB", "GH200-96GB", "GH200-144GB"})
    EXPECT_DOUBLE_EQ(c.find_accelerator(key)->accelerator.legacy_attention_share, 0.62) << key;
  EXPECT_DOUBLE_EQ(c.find_accelerator("A100-SXM4-80GB")->accelerator.legacy_attention_share, 1);
  auto step = [&](const char* key, estimator::AttentionKernel kernel) {
    estimator::Cluster cl = estimator::test::cluster(8);
    cl.gpu = c.find_accelerator(key)->accelerator;
    cl.hbm_bytes = cl.gpu.hbm_bytes;
    estimator::Plan p;
    p.tp = 8;
    p.dp = 1;
    p.micro_batch = 1;
    p.stack.attention_kernel = kernel;
    const estimator::Workload w{estimator::test::gpt(24, 2048, 16, 50304), 16384, 8,
                                Precision::bf16};
    return estimator::estimate(w, cl, p, builtin_calibration()).time.total_s;
  };
  using estimator::AttentionKernel;
  EXPECT_EQ(step("A100-SXM4-80GB", AttentionKernel::flash2),
            step("A100-SXM4-80GB", AttentionKernel::cudnn));
  EXPECT_EQ(step("A100-SXM4-80GB", AttentionKernel::triton),
            step("A100-SXM4-80GB", AttentionKernel::cudnn));
  EXPECT_GT(step("H100-SXM5-80GB", AttentionKernel::flash2),
            1.1 * step("H100-SXM5-80GB", AttentionKernel::cudnn));
  EXPECT_EQ(step("H100-SXM5-80GB", AttentionKernel::flash3),
            step("H100-SXM5-80GB", AttentionKernel::cudnn));
}

// Every accelerator the published runs of other vendors name (accelerator_runs.csv), and the
// parts of those vendors without a run.
TEST(Catalog, HasTheOtherVendorsParts) {
  const Catalog& c = Catalog::builtin();
  for (const char* key :
       {"MI355X-288GB", "MI350X-288GB", "MI325X-256GB", "MI300X-192GB", "MI300A-128GB",
        "MI250X-GCD-64GB", "GH200-96GB", "GH200-144GB", "TPUv4", "TPUv5e", "TPUv5p", "TPUv6e",
        "TPUv7", "GAUDI2-96GB", "GAUDI3-128GB", "TRN1", "TRN2"}) {
    const AcceleratorEntry* a = c.find_accelerator(key);
    ASSERT_NE(a, nullptr) << key;
    EXPECT_FALSE(a->source.empty()) << key;
    EXPECT_GT(a->accelerator.hbm_bytes_per_s, 0) << key;
    EXPECT_GT(a->accelerator.nvlink_bytes_per_s, 0) << key;
    EXPECT_GT(a->accelerator.tdp_w, a->accelerator.idle_w) << key;
    EXPECT_GT(a->accelerator.peak_flops[static_cast<int>(Precision::bf16)], 0) << key;
    EXPECT_GE(a->max_domain, a->default_nvlink_domain) << key;
    EXPECT_EQ(a->default_nvlink_domain % a->default_gpus_per_node, 0) << key;
    EXPECT_EQ(a->torus_dims != 0, a->fabric == estimator::Fabric::torus) << key;
  }
  const auto& tpu = c.accelerator("TPUv6e", "test");
  EXPECT_EQ(tpu.vendor, "google");
  EXPECT_EQ(fabric_label(tpu), "torus 2D 256 (pod 256)");
  EXPECT_DOUBLE_EQ(tpu.accelerator.peak_flops[static_cast<int>(Precision::int8)], 1836e12);
  EXPECT_DOUBLE_EQ(tpu.accelerator.nvlink_bytes_per_s, 400e9);  // 800 GB/s bidirectional ICI
  EXPECT_EQ(fabric_label(c.accelerator("TPUv5p", "test")), "torus 3D 64 (pod 8960)");
  EXPECT_EQ(fabric_label(c.accelerator("MI300X-192GB", "test")), "mesh 8");
  EXPECT_EQ(fabric_label(c.accelerator("H100-SXM5-80GB", "test")), "switch 8");
  EXPECT_EQ(fabric_label(c.accelerator("TRN2", "test")), "torus 2D 16 (pod 64)");
  EXPECT_EQ(fabric_label(c.accelerator("GB200-186GB", "test")), "switch 72");
  EXPECT_EQ(c.accelerator("TRN2", "test").cores_per_chip, 8);
  EXPECT_EQ(c.accelerator("TPUv7", "test").cores_per_chip, 2);
  EXPECT_EQ(c.accelerator("GAUDI3-128GB", "test").default_scale_out_gbps, 600);
  EXPECT_GT(c.accelerator("MI355X-288GB", "test")
                .accelerator.peak_flops[static_cast<int>(Precision::fp4)],
            0);  // MXFP4
  const auto& gh200 = c.accelerator("GH200-96GB", "test");
  EXPECT_EQ(gh200.default_gpus_per_node, 4);
  EXPECT_EQ(gh200.default_scale_out_gbps, 200);
  EXPECT_GT(gh200.default_expansion_gb, 0);
  EXPECT_GT(gh200.default_expansion_gbytes_per_s, 0);
  // A price comes with where it is published; the parts without one have neither.
  for (const AcceleratorEntry& a : c.accelerators())
    EXPECT_EQ(a.price_usd_per_chip_hour > 0, !a.price_source.empty()) << a.key;
}

TEST(Catalog, FabricAndPriceKeysAreChecked) {
  const auto with = [](std::string_view lines) {
    return parse_error(std::string(kOneAccelerator) + std::string(lines), kOneModel);
  };
  EXPECT_EQ(with("fabric = \"ring\"\n"),
            "accelerators.toml:13:10: accelerator.fabric: must be one of switch, mesh, torus, "
            "got 'ring'");
  EXPECT_EQ(with("fabric = \"torus\"\n"),
            "accelerators.toml:13:10: accelerator.torus_dims: missing; a torus needs its "
            "dimensions, 2 or 3");
  EXPECT_EQ(with("fabric = \"torus\"\ntorus_dims = 4\n"),
            "accelerators.toml:14:14: accelerator.torus_dims: must be 2 or 3, got 4");
  EXPECT_EQ(with("fabric = \"torus\"\ntorus_dims = 0\n"),
            "accelerators.toml:14:14: accelerator.torus_dims: must be a positive integer, got 0");
  EXPECT_EQ(with("fabric = \"mesh\"\ntorus_dims = 2\n"),
            "accelerators.toml:14:14: accelerator.torus_dims: only a torus has dimensions; this "
            "part's fabric is \"mesh\"");
  EXPECT_EQ(with("torus_dims = 2\n"),
            "accelerators.toml:13:14: accelerator.torus_dims: only a torus has dimensions; this "
            "part's fabric is \"switch\"");
  EXPECT_EQ(with("max_domain = 4\n"),
            "accelerators.toml:13:14: accelerator.max_domain: must be at least nvlink_domain (8), "
            "got 4");
  EXPECT_EQ(with("max_domain = 1.5\n"),
            "accelerators.toml:13:14: accelerator.max_domain: must be a positive integer, got 1.5");
  EXPECT_EQ(with("scale_out_gbps = -1\n"),
            "accelerators.toml:13:18: accelerator.scale_out_gbps: must be a non-negative number, "
            "got -1");
  EXPECT_EQ(with("cores_per_chip = 0\n"),
            "accelerators.toml:13:18: accelerator.cores_per_chip: must be a positive integer, "
            "got 0");
  EXPECT_EQ(with("price_usd_per_chip_hour = 2.5\n"),
            "accelerators.toml:13:27: accelerator.price_usd_per_chip_hour: needs price_source "
            "too (both or neither)");
  EXPECT_EQ(with("price_source = \"a page\"\n"),
            "accelerators.toml:13:16: accelerator.price_source: needs price_usd_per_chip_hour "
            "too (both or neither)");
  EXPECT_EQ(with("price_usd_per_chip_hour = 0\nprice_source = \"a page\"\n"),
            "accelerators.toml:13:27: accelerator.price_usd_per_chip_hour: must be a positive "
            "number, got 0");
  EXPECT_EQ(with("expansion_gbytes_per_s = 450\n"),
            "accelerators.toml:13:26: accelerator.expansion_gbytes_per_s: needs expansion_gb, "
            "the tier's capacity");
  EXPECT_EQ(with("expansion_gb = -1\n"),
            "accelerators.toml:13:16: accelerator.expansion_gb: must be a positive number, got -1");

  // Defaults: a switch of nvlink_domain chips, one core, no price, no expansion tier.
  const Catalog ok = Catalog::parse(kOneAccelerator, kOneModel);
  const AcceleratorEntry& x = ok.accelerator("X1", "test");
  EXPECT_EQ(x.fabric, estimator::Fabric::switched);
  EXPECT_EQ(x.torus_dims, 0);
  EXPECT_EQ(x.max_domain, 8);
  EXPECT_EQ(x.default_scale_out_gbps, 0);
  EXPECT_EQ(x.cores_per_chip, 1);
  EXPECT_EQ(x.price_usd_per_chip_hour, 0);
  EXPECT_EQ(x.default_expansion_gb, 0);
  const Catalog torus = Catalog::parse(
      std::string(kOneAccelerator) +
          "fabric = \"torus\"\ntorus_dims = 2\nmax_domain = 256\nscale_out_gbps = 25\n"
          "cores_per_chip = 2\nprice_usd_per_chip_hour = 1.5\nprice_source = \"a page\"\n"
          "expansion_gb = 480\nexpansion_gbytes_per_s = 450\n",
      kOneModel);
  const AcceleratorEntry& t = torus.accelerator("X1", "test");
  EXPECT_EQ(t.fabric, estimator::Fabric::torus);
  EXPECT_EQ(t.torus_dims, 2);
  EXPECT_EQ(fabric_label(t), "torus 2D 8 (pod 256)");
  EXPECT_EQ(t.default_scale_out_gbps, 25);
  EXPECT_EQ(t.cores_per_chip, 2);
  EXPECT_EQ(t.price_usd_per_chip_hour, 1.5);
  EXPECT_EQ(t.price_source, "a page");
  EXPECT_EQ(t.default_expansion_gb, 480);
  EXPECT_EQ(t.default_expansion_gbytes_per_s, 450);
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
  EXPECT_EQ(parse_error(std::string(kOneAccelerator) + "legacy_attention_share = 1.5\n", kOneModel),
            "accelerators.toml:13:26: accelerator.legacy_attention_share: is a share of the part's "
            "own attention rate, at most 1, got 1.5");
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
