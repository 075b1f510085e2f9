// clustersweep catalog: the built-in entries as a table or JSON, and its one bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/apps/run.h"

namespace clustersweep::apps_test {
namespace {

TEST(Catalog, ListsEachKindAsJson) {
  for (const auto& [kind, key, entry] : {std::tuple{"models", "model", "llama3-8b"},
                                         std::tuple{"dlrm-models", "model", "dlrmv2-dcnv2"},
                                         std::tuple{"accelerators", "gpu", "H100-SXM5-80GB"}}) {
    const Result r = run({"catalog", kind, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    bool found = false;
    for (const auto& row : nlohmann::json::parse(r.out)) found = found || row[key] == entry;
    EXPECT_TRUE(found) << kind;
  }
  const Result table = run({"catalog"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("llama3-8b"), std::string::npos) << table.out;
}

TEST(Catalog, AnUnknownKindIsOneLine) {
  const Result r = run({"catalog", "gpus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "clustersweep catalog: error: KIND: must be models, dlrm-models or accelerators, got "
            "'gpus'\n");
}

}  // namespace
}  // namespace clustersweep::apps_test
