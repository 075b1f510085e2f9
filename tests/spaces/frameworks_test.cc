// Framework profiles: the built-in file reads, each framework's rules with their messages, its
// defaults for the stack settings a plan leaves unset, the validation runs' software mapped to a
// framework, and every published run's own plan one its framework runs.
#include "spaces/frameworks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "base/csv.h"
#include "calibration/runs.h"
#include "spaces/catalog.h"
#include "spaces/resolve.h"
#include "spaces/rules.h"

namespace clustersweep::spaces {
namespace {

namespace est = estimator;

est::Plan on(est::Framework framework) {
  est::Plan p;
  p.stack.framework = framework;
  return p;
}

// Every framework but `any`.
std::vector<est::Framework> frameworks() {
  std::vector<est::Framework> out;
  for (int i = 1; i < est::kNumFrameworks; ++i) out.push_back(static_cast<est::Framework>(i));
  return out;
}

TEST(Frameworks, EveryProfileReads) {
  EXPECT_EQ(framework_profile(est::Framework::any), nullptr);
  for (auto f : frameworks()) {
    const FrameworkProfile* p = framework_profile(f);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->framework, f);
    EXPECT_FALSE(p->title.empty());
    EXPECT_FALSE(p->source.empty());
    EXPECT_FALSE(p->software.empty());
    EXPECT_EQ(p->defaults.framework, f);
    // Each default is one the framework runs.
    for (std::size_t i = 0; i < stack_settings().size(); ++i)
      EXPECT_TRUE((p->stack[i] >> stack_settings()[i].get(p->defaults)) & 1u)
          << est::to_string(f) << " " << stack_settings()[i].name;
  }
}

TEST(Frameworks, RulesNameWhatTheFrameworkDoesNotRun) {
  auto expect = [](const est::Plan& p, Rule rule, const std::string& text) {
    const Violation v = check_framework(p);
    EXPECT_EQ(v.rule, rule) << to_string(v.rule);
    EXPECT_EQ(message(v), text);
  };
  EXPECT_FALSE(check_framework(on(est::Framework::any)));
  est::Plan megatron = on(est::Framework::megatron_core);
  megatron.zero = 1;
  megatron.pp = 8;
  EXPECT_FALSE(check_framework(megatron));
  megatron.zero = 3;
  expect(megatron, Rule::framework_memory,
         "megatron-core does not run ZeRO stage 3 with pp > 1 (with a pipeline it runs zero 0 or "
         "1)");
  megatron.pp = 1;  // Megatron-FSDP
  EXPECT_FALSE(check_framework(megatron));
  megatron.zero = 2;
  expect(megatron, Rule::framework_memory,
         "megatron-core does not run ZeRO stage 2 (it runs zero 0, 1 or 3)");
  est::Plan deepspeed = on(est::Framework::deepspeed);
  deepspeed.stack.tp_comm_overlap = false;
  deepspeed.stack.pp_comm_overlap = false;
  deepspeed.stack.attention_kernel = est::AttentionKernel::flash2;
  EXPECT_FALSE(check_framework(deepspeed));
  deepspeed.cp = 2;
  expect(deepspeed, Rule::framework_parallelism, "deepspeed has no context parallelism (degree 2)");
  deepspeed.cp = 1;
  deepspeed.stack.cuda_graph = est::CudaGraph::full;
  expect(deepspeed, Rule::framework_stack, "deepspeed does not run cuda_graph full (it runs none)");
  est::Plan fsdp = on(est::Framework::fsdp2);
  fsdp.zero = 1;
  expect(fsdp, Rule::framework_memory, "fsdp2 does not run ZeRO stage 1 (it runs zero 0, 2 or 3)");
  fsdp.zero = 3;
  fsdp.etp = 2;
  expect(fsdp, Rule::framework_parallelism, "fsdp2 has no expert tensor parallelism (degree 2)");
  fsdp.etp = 1;
  fsdp.offload = est::Offload::optimizer;
  expect(fsdp, Rule::framework_memory,
         "fsdp2 does not offload optimizer (it offloads none or all)");
  fsdp.offload = est::Offload::none;
  fsdp.stack.dispatcher = est::Dispatcher::hybridep;
  expect(fsdp, Rule::framework_stack,
         "fsdp2 does not run dispatcher hybridep (it runs alltoall or deepep)");
  // MaxText: FSDP and plain data parallelism over its mesh, one compiled program a step.
  est::Plan maxtext = on(est::Framework::maxtext);
  maxtext.stack = framework_profile(est::Framework::maxtext)->defaults;
  maxtext.zero = 3;
  maxtext.tp = 4;
  maxtext.cp = 2;
  maxtext.ep = 8;
  EXPECT_FALSE(check_framework(maxtext)) << message(check_framework(maxtext));
  maxtext.zero = 1;
  expect(maxtext, Rule::framework_memory,
         "maxtext does not run ZeRO stage 1 (it runs zero 0 or 3)");
  maxtext.zero = 3;
  maxtext.stack.cuda_graph = est::CudaGraph::none;
  expect(maxtext, Rule::framework_stack, "maxtext does not run cuda_graph none (it runs full)");
  maxtext.stack.cuda_graph = est::CudaGraph::full;
  maxtext.stack.attention_kernel = est::AttentionKernel::cudnn;
  expect(maxtext, Rule::framework_stack,
         "maxtext does not run attention_kernel cudnn (it runs unfused or fused)");
  maxtext.stack.attention_kernel = est::AttentionKernel::fused;
  // Its capacity routing is the dense path's one-hot einsums, never the sorted tokens.
  maxtext.stack.token_routing = est::TokenRouting::capacity;
  maxtext.capacity_factor = 1.25;
  expect(maxtext, Rule::framework_stack,
         "maxtext runs dispatcher einsum with capacity routing, not alltoall");
  maxtext.stack.dispatcher = est::Dispatcher::einsum;
  EXPECT_FALSE(check_framework(maxtext)) << message(check_framework(maxtext));
  // use_random_routing spreads the tokens evenly over the experts (the TPU recipes' benchmarks).
  maxtext.stack.token_routing = est::TokenRouting::balanced;
  maxtext.capacity_factor = 0;
  maxtext.stack.dispatcher = est::Dispatcher::alltoall;
  EXPECT_FALSE(check_framework(maxtext)) << message(check_framework(maxtext));
  // NeuronX Distributed: tp, pp and ZeRO-1 data parallelism.
  est::Plan neuronx = on(est::Framework::neuronx);
  neuronx.stack = framework_profile(est::Framework::neuronx)->defaults;
  neuronx.tp = 8;
  neuronx.pp = 4;
  neuronx.zero = 1;
  neuronx.sequence_parallel = true;
  EXPECT_FALSE(check_framework(neuronx)) << message(check_framework(neuronx));
  neuronx.cp = 2;
  expect(neuronx, Rule::framework_parallelism, "neuronx has no context parallelism (degree 2)");
  neuronx.cp = 1;
  neuronx.zero = 3;
  expect(neuronx, Rule::framework_memory,
         "neuronx does not run ZeRO stage 3 with pp > 1 (with a pipeline it runs zero 0 or 1)");
  // Primus: Megatron-Core's plans, without NVIDIA's HybridEP.
  est::Plan primus = on(est::Framework::primus);
  primus.stack = framework_profile(est::Framework::primus)->defaults;
  primus.stack.dispatcher = est::Dispatcher::deepep;
  EXPECT_FALSE(check_framework(primus));
  primus.stack.dispatcher = est::Dispatcher::hybridep;
  expect(primus, Rule::framework_stack,
         "primus does not run dispatcher hybridep (it runs alltoall, allgather or deepep)");
}

// A profile names the vendors whose parts it runs on; `best` lists only those frameworks.
TEST(Frameworks, RunOnTheirVendorsParts) {
  EXPECT_TRUE(framework_runs_on(est::Framework::any, "aws"));
  EXPECT_TRUE(framework_runs_on(est::Framework::fsdp2, "google"));  // no list: every vendor
  EXPECT_TRUE(framework_runs_on(est::Framework::maxtext, "google"));
  EXPECT_FALSE(framework_runs_on(est::Framework::maxtext, "nvidia"));
  EXPECT_TRUE(framework_runs_on(est::Framework::neuronx, "aws"));
  EXPECT_FALSE(framework_runs_on(est::Framework::neuronx, "amd"));
  EXPECT_TRUE(framework_runs_on(est::Framework::primus, "amd"));
  EXPECT_FALSE(framework_runs_on(est::Framework::primus, "nvidia"));
  EXPECT_TRUE(framework_runs_on(est::Framework::megatron_core, "amd"));
  EXPECT_TRUE(framework_runs_on(est::Framework::deepspeed, "intel"));
  est::Plan plan;
  plan.tp = 2;
  plan.zero = 1;
  std::array<bool, kNumStackSettings> given{};
  EXPECT_EQ(frameworks_running(plan, given, "nvidia"),
            (std::vector<std::string>{"megatron-core", "deepspeed"}));
  EXPECT_EQ(frameworks_running(plan, given, "aws"), (std::vector<std::string>{"neuronx"}));
  EXPECT_EQ(frameworks_running(plan, given, "amd"),
            (std::vector<std::string>{"megatron-core", "deepspeed", "primus"}));
}

TEST(Frameworks, APlanOfAFrameworkTakesItsDefaults) {
  std::array<bool, kNumStackSettings> given{};
  est::Stack stack;
  apply_framework_defaults(est::Framework::deepspeed, given, stack);
  EXPECT_EQ(stack.framework, est::Framework::deepspeed);
  EXPECT_FALSE(stack.tp_comm_overlap);
  EXPECT_FALSE(stack.pp_comm_overlap);
  EXPECT_EQ(stack.attention_kernel, est::AttentionKernel::flash2);
  // A setting given keeps its value.
  est::Stack mine;
  mine.attention_kernel = est::AttentionKernel::unfused;
  given[static_cast<std::size_t>(find_stack_setting("attention_kernel") -
                                 stack_settings().data())] = true;
  apply_framework_defaults(est::Framework::deepspeed, given, mine);
  EXPECT_EQ(mine.attention_kernel, est::AttentionKernel::unfused);
  // Through resolve(), as estimate and best take it.
  Settings s;
  s.set("model", "gpt3-175b", "--model");
  s.set("gpu", "H100-SXM5-80GB", "--gpu");
  s.set("gpus", "8", "--gpus");
  s.set("framework", "fsdp2", "--framework");
  const Point pt = resolve(s);
  EXPECT_EQ(pt.plan.stack.framework, est::Framework::fsdp2);
  EXPECT_FALSE(pt.plan.stack.tp_comm_overlap);
  EXPECT_EQ(pt.plan.stack.attention_kernel, est::AttentionKernel::flash2);
  EXPECT_EQ(pt.origin.at("attention_kernel"), Origin::catalog);
}

TEST(Frameworks, MaxTextsCapacityRoutingTakesTheEinsumDispatch) {
  auto dispatcher = [](std::vector<std::pair<const char*, const char*>> more) {
    Settings s;
    s.set("model", "mixtral-8x7b", "--model");
    s.set("gpu", "TPUv6e", "--gpu");
    s.set("gpus", "256", "--gpus");
    s.set("framework", "maxtext", "--framework");
    for (const auto& [key, value] : more) s.set(key, value, key);
    return resolve(s).plan.stack.dispatcher;
  };
  // Dropless runs the sorted tokens of megablox; a capacity factor alone, or capacity routing,
  // the one-hot masks; a dispatcher given is kept.
  EXPECT_EQ(dispatcher({}), est::Dispatcher::alltoall);
  EXPECT_EQ(dispatcher({{"capacity_factor", "1.25"}}), est::Dispatcher::einsum);
  EXPECT_EQ(dispatcher({{"token_routing", "capacity"}}), est::Dispatcher::einsum);
  EXPECT_EQ(dispatcher({{"capacity_factor", "1.25"}, {"dispatcher", "alltoall"}}),
            est::Dispatcher::alltoall);
  // Other frameworks keep their one default.
  Settings s;
  s.set("model", "mixtral-8x7b", "--model");
  s.set("gpu", "H100-SXM5-80GB", "--gpu");
  s.set("gpus", "64", "--gpus");
  s.set("framework", "megatron-core", "--framework");
  s.set("capacity_factor", "1.25", "--capacity-factor");
  EXPECT_EQ(resolve(s).plan.stack.dispatcher, est::Dispatcher::alltoall);
}

TEST(Frameworks, EachRunsSoftwareIsAFramework) {
  EXPECT_EQ(framework_of_software("nemo 25.02.01"), est::Framework::megatron_core);
  EXPECT_EQ(framework_of_software("megatron-bridge 26.04.01"), est::Framework::megatron_core);
  EXPECT_EQ(framework_of_software("Megatron-LM 2021 (Table 2 PTD-P)"),
            est::Framework::megatron_core);
  EXPECT_EQ(framework_of_software("nemo-automodel main@8d9bfb90e"), est::Framework::fsdp2);
  EXPECT_EQ(framework_of_software("llm-foundry 0.3.0"), est::Framework::fsdp2);
  EXPECT_EQ(framework_of_software("mosaicml-examples 0.0.4 (llm)"), est::Framework::fsdp2);
  EXPECT_EQ(framework_of_software("deepspeed ZeRO-3 (2021, version not stated)"),
            est::Framework::deepspeed);
  // Other vendors' published runs (accelerator_runs.csv, accelerator_moe_runs.csv).
  EXPECT_EQ(framework_of_software("nemo 2.5.0rc0 (AMD MLPerf v5.1 llama31_8b, ROCm 7.0)"),
            est::Framework::megatron_core);
  EXPECT_EQ(framework_of_software("nemo (AMD MLPerf v5.1 llama2_70b_lora)"),
            est::Framework::megatron_core);
  EXPECT_EQ(framework_of_software("megatron-lm (OpenEuroLLM oellm-autoexp, JUPITER)"),
            est::Framework::megatron_core);
  EXPECT_EQ(framework_of_software("maxtext tpu-recipes-v0.1.2 (jax 0.5.2 stable stack)"),
            est::Framework::maxtext);
  EXPECT_EQ(framework_of_software("maxtext Dec 2023 (configs as of 76bd53b0f)"),
            est::Framework::maxtext);
  EXPECT_EQ(framework_of_software("megatron-deepspeed (HabanaAI fork) 1.19.0, Intel Gaudi "
                                  "software 1.19.0, PyTorch 2.5.1"),
            est::Framework::deepspeed);
  EXPECT_EQ(framework_of_software("neuronx-distributed (Neuron SDK 2.21.0)"),
            est::Framework::neuronx);
  EXPECT_EQ(framework_of_software("primus megatron (rocm/megatron-lm:v25.10)"),
            est::Framework::primus);
  EXPECT_EQ(framework_of_software("deepseek internal"), est::Framework::any);
  EXPECT_EQ(framework_of_software(""), est::Framework::any);
}

TEST(Frameworks, ASoftwareWithADefaultOfItsOwnSetsIt) {
  // NeMo AutoModel runs FSDP2 with Transformer Engine's attention, torchtitan SDPA's
  // FlashAttention-2 (the profile's first value).
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(software_stack_defaults("nemo-automodel main@8d9bfb90e"),
            (Pairs{{"attention_kernel", "cudnn"}}));
  EXPECT_EQ(software_stack_defaults("NeMo-AutoModel"), (Pairs{{"attention_kernel", "cudnn"}}));
  EXPECT_EQ(software_stack_defaults("torchtitan 0.1"), Pairs{});
  EXPECT_EQ(software_stack_defaults(""), Pairs{});
  EXPECT_EQ(framework_profile(est::Framework::fsdp2)->defaults.attention_kernel,
            est::AttentionKernel::flash2);
  // A run file's row of that software is predicted with it unless its own column says otherwise.
  const std::string header =
      "id,source,model,layers,hidden,heads,kv_heads,ffn_hidden,ffn_act,seq_len,vocab,gpu,num_gpus,"
      "gpus_per_node,nvlink_domain,inter_node_gbps_per_gpu,tp,pp,dp,cp,vp,sequence_parallel,zero,"
      "recompute,micro_batch,global_batch,precision,step_time_s,software";
  const std::string row =
      ",x,m,32,4096,32,8,14336,swiglu,4096,128256,H100-SXM5-80GB,8,8,8,400,1,1,"
      "8,1,1,0,3,none,1,8,bf16,1.0,";
  const auto path = std::filesystem::temp_directory_path() / "software_stack_runs.csv";
  std::ofstream(path) << header << "\n1" << row << "nemo-automodel main\n2" << row
                      << "torchtitan\n";
  const auto runs = read_runs(path.string(), builtin_calibration());
  std::filesystem::remove(path);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].sample.plan.stack.attention_kernel, est::AttentionKernel::cudnn);
  EXPECT_EQ(runs[1].sample.plan.stack.attention_kernel, est::AttentionKernel::flash2);
}

// The runs files to check: every step-time runs file of the published-runs folder beside the
// repository (../shared/validation: the dense, MoE and other vendors' runs, in whichever format
// version), or the repository's copies of the dense and MoE files where that folder is not.
std::vector<std::string> published_runs_files() {
  const std::filesystem::path source(CLUSTERSWEEP_SOURCE_DIR);
  const std::filesystem::path shared = source / ".." / "shared" / "validation";
  if (!std::filesystem::is_directory(shared))
    return {(source / "tests/apps/data/transformer_runs.csv").string(),
            (source / "tests/apps/data/moe_runs.csv").string()};
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(shared))
    if (entry.path().extension() == ".csv" && !is_dlrm_runs(entry.path().string()) &&
        !is_energy_runs(entry.path().string()))
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// The software column of the row `id` of a runs file.
std::string software_of(const std::string& path, const std::string& id) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  std::getline(in, line);
  const auto header = split_csv_record(line);
  const auto column = [&](const char* name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const std::size_t id_at = column("id"), software_at = column("software");
  while (std::getline(in, line)) {
    const auto fields = split_csv_record(line);
    if (fields.size() == header.size() && fields[id_at] == id) return fields[software_at];
  }
  return {};
}

// Every published run ran in its framework: no rule refuses its plan (a refusal is a bug in the
// rule or the profile, and validate would drop the run from every figure), its framework runs on
// its accelerator's vendor, and each framework profile is checked by some run. A run on an
// accelerator the catalog lacks is skipped, and only for that reason: once the catalog has the
// part, its run is checked here with no change to the test. The other vendors' runs files name a
// framework on every row, whether the catalog has the part or not.
TEST(Frameworks, NoPublishedRunIsRefusedByARule) {
  int runs = 0, unknown_accelerator = 0;
  std::set<est::Framework> frameworks;
  for (const std::string& path : published_runs_files()) {
    SCOPED_TRACE(path);
    const bool other_vendors = path.find("accelerator_") != std::string::npos;
    for (const MeasuredRun& r : read_runs(path, builtin_calibration())) {
      SCOPED_TRACE(r.id);
      if (other_vendors) {
        EXPECT_NE(framework_of_software(software_of(path, r.id)), est::Framework::any)
            << software_of(path, r.id);
      }
      if (r.reason.rfind("unknown accelerator", 0) == 0) {
        ++unknown_accelerator;
        continue;
      }
      ++runs;
      EXPECT_EQ(r.reason, "");
      EXPECT_FALSE(check_framework(r.sample.plan)) << message(check_framework(r.sample.plan));
      const AcceleratorEntry* gpu = Catalog::builtin().find_accelerator(r.gpu);
      ASSERT_NE(gpu, nullptr) << r.gpu;
      EXPECT_TRUE(framework_runs_on(r.sample.plan.stack.framework, gpu->vendor))
          << est::to_string(r.sample.plan.stack.framework) << " on " << gpu->vendor;
      frameworks.insert(r.sample.plan.stack.framework);
    }
  }
  EXPECT_GE(runs, 315);  // at least the repository's copies
  for (auto f : {est::Framework::megatron_core, est::Framework::fsdp2, est::Framework::deepspeed})
    EXPECT_TRUE(frameworks.count(f)) << est::to_string(f) << " is checked by no published run";
  std::printf(
      "%d published runs pass their framework's rules; %d on accelerators not in the "
      "catalog\n",
      runs, unknown_accelerator);
}

// Megatron-DeepSpeed's --pp-partition-method 'type:transformer|embedding' counts the embeddings
// as layers: BLOOM-176B's 70 + 2 layers on 12 stages of 6, as it ran on 384 A100.
TEST(Frameworks, DeepSpeedRunsBloomsPipeline) {
  Settings s;
  s.set("model", "bloom-176b", "--model");
  s.set("gpu", "A100-SXM4-80GB", "--gpu");
  s.set("gpus", "384", "--gpus");
  s.set("tp", "4", "--tp");
  s.set("pp", "12", "--pp");
  s.set("framework", "deepspeed", "--framework");
  const Point pt = resolve(s);
  EXPECT_EQ(pt.plan.pipeline_split, est::PipelineSplit::embedding_loss);
  EXPECT_FALSE(check(pt)) << message(check(pt));
}

}  // namespace
}  // namespace clustersweep::spaces
