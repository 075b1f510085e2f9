// engine::run in-process on the ranks of this mpiexec: the store's rows equal a serial evaluation
// of the whole space, for every keep mode and chunk size.
#include <gtest/gtest.h>

#include <sstream>

#include "../test_support.h"
#include "engine/evaluate.h"
#include "engine/mpi.h"
#include "engine/run.h"
#include "engine/store_reader.h"

namespace clustersweep::engine {
namespace {

TEST(RunOnRanks, StoreEqualsASerialEvaluationForEveryKeepModeAndChunkSize) {
  const mpi::Comm comm;
  std::string dir;
  std::unique_ptr<test::TempDir> temp;
  if (comm.rank() == 0) {
    temp = std::make_unique<test::TempDir>();
    dir = temp->path();
  }
  comm.broadcast(dir);
  // Uncompressed, and compressed (written collectively, a chunk of rows per rank and round).
  for (const std::string& output :
       {test::kAllColumns, test::kAllColumns + "compression = \"fast\"\n"})
    for (const char* family : {"transformer", "dlrm"})
      for (const char* keep : {"all", "feasible", "best-per-design", "pareto-per-design"}) {
        const std::string text =
            std::string(family) == "dlrm"
                ? test::small_dlrm_spec(keep, "time_to_train", output)
                : test::small_spec(keep, "time_to_train", "[2, 4]", "", output);
        const std::string spec = dir + "/" + family + "-" + keep + ".toml";
        if (comm.rank() == 0) test::write_file(spec, text);
        comm.barrier();
        // The reference: one chunk over the whole space, in this process.
        const spaces::Space space = spaces::Space::parse(text, spec);
        const Schema schema = make_schema(space);
        ChunkEvaluator evaluator(space, schema);
        evaluator.start(
            ChunkLayout::make(0, space.designs(), space.plan_points(), space.keep(), 1ull << 40)
                .chunk(0));
        ASSERT_TRUE(evaluator.advance(1ull << 40));
        const RowBlock& want = evaluator.rows();
        for (std::uint64_t chunk_points : {0, 3456, 100}) {
          jobs::Job job;
          job.spec_path = spec;
          job.store_path = dir + "/" + family + "-" + keep + "-" + std::to_string(chunk_points) +
                           "-" + std::to_string(output.size()) + ".h5";
          job.options.chunk_points = chunk_points;
          job.options.progress = jobs::ProgressMode::none;
          job.options.summary = false;
          std::ostringstream out;
          ASSERT_EQ(run(job, {"test"}, out), 0);
          if (comm.rank() != 0) continue;
          const StoreReader store(job.store_path);
          ASSERT_EQ(store.rows(), want.rows()) << keep << " " << chunk_points;
          RowBlock got;
          store.read_rows(0, store.rows(), got);
          for (std::size_t c = 0; c < got.columns(); ++c)
            for (std::size_t r = 0; r < got.rows(); ++r) {
              const double a = got.number(c, r), b = want.number(c, r);
              ASSERT_TRUE(a == b || (a != a && b != b))
                  << keep << " chunk_points " << chunk_points << " " << output << " column "
                  << schema.columns[c].name << " row " << r;
            }
          EXPECT_EQ(store.number_attribute("mpi_size"), comm.size());
        }
      }
  comm.barrier();
}

}  // namespace
}  // namespace clustersweep::engine
