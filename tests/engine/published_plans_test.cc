// Sweeps represent the plans real frameworks run: Meta's Llama 3.1 405B layout (126 layers with
// the embedding and the loss on 16 pipeline stages) and NVIDIA's tuned 512-GPU recipe.
#include <gtest/gtest.h>

#include "engine/evaluate.h"
#include "engine/schema.h"
#include "spaces/space.h"

namespace clustersweep::engine {
namespace {

// Every row a keep mode keeps for the one design of `spec`.
RowBlock sweep(const std::string& spec, Schema& schema) {
  const spaces::Space space = spaces::Space::parse(spec, "405b.toml");
  EXPECT_EQ(space.designs(), 1u);
  schema = make_schema(space);
  ChunkEvaluator evaluator(space, schema);
  Chunk chunk;
  chunk.design_end = 1;
  chunk.point_end = space.size();
  evaluator.start(chunk);
  EXPECT_TRUE(evaluator.advance(space.size()));
  return evaluator.rows();
}

TEST(PublishedPlans, Llama405bOn16kH100KeepsAFeasibleTp8Pp16Plan) {
  Schema schema;
  const RowBlock rows = sweep(R"(
[workload]
model = "llama3.1-405b"
seq_len = 8192
global_batch = 2048
[cluster]
gpu = "H100-SXM5-80GB"
nodes = 2048
[plan]
tp = "all"
pp = "all"
vp = [1, 2, 4]
zero = [0, 1]
recompute = "all"
sequence_parallel = "all"
[output]
keep = "feasible"
)",
                              schema);
  int tp8_pp16 = 0;
  for (std::size_t r = 0; r < rows.rows(); ++r)
    if (rows.number(schema.index("tp"), r) == 8 && rows.number(schema.index("pp"), r) == 16)
      ++tp8_pp16;
  EXPECT_GT(tp8_pp16, 0);
}

TEST(PublishedPlans, BestPlanFor405bOn512H100IsNoSlowerThanNvidiasRecipe) {
  // DGXC_BENCH: TP8 PP8 CP2 VP8, sequence parallel, distributed optimizer, 19.78 s a step
  // (../shared/validation/transformer_runs.csv, id 85).
  Schema schema;
  const RowBlock rows = sweep(R"(
[workload]
model = "llama3.1-405b"
seq_len = 8192
global_batch = 256
precision = "bf16"
[cluster]
gpu = "H100-SXM5-80GB"
nodes = 64
inter_node_gbps_per_gpu = 400
[plan]
tp = "all"
pp = "all"
cp = [1, 2, 4]
vp = "all"
micro_batch = [1, 2]
zero = [0, 1]
recompute = "all"
sequence_parallel = "all"
[output]
keep = "best-per-design"
objective = "step_time"
)",
                              schema);
  ASSERT_EQ(rows.rows(), 1u);
  EXPECT_LE(rows.number(schema.index("step_time_s"), 0), 19.78 * 1.02);
}

}  // namespace
}  // namespace clustersweep::engine
