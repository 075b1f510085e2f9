#include "engine/evaluate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>

#include "engine/evaluate_dlrm.h"
#include "engine/evaluate_transformer.h"

namespace clustersweep::engine {

ChunkEvaluator::ChunkEvaluator(const spaces::Space& space, const Schema& schema, bool exhaustive) {
  switch (space.family()) {
    case estimator::Family::transformer:
      family_ = std::make_unique<TransformerChunkEvaluator>(space, schema, exhaustive);
      break;
    case estimator::Family::dlrm:
      family_ = std::make_unique<DlrmChunkEvaluator>(space, schema);
      break;
  }
}

}  // namespace clustersweep::engine
