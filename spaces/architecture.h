#pragma once
// The architecture fields of a transformer beyond its dense core (head dimensions, MLA,
// Mixture-of-Experts, MTP, sliding windows): one table, read the same way by the catalog, a spec's
// [models.X], the settings of `estimate` and the columns of a runs CSV, and one consistency check.
#include <span>
#include <string>

#include "estimator/estimator.h"

namespace clustersweep::spaces {

struct ArchitectureField {
  const char* name;  // key, setting and column name
  int estimator::Model::*member;
  const char* help;
};
// Every field is a non-negative integer; 0 (or not given) means absent.
std::span<const ArchitectureField> architecture_fields() noexcept;

// The defaults a given architecture implies: MLA's rotary key dimension (64, as every MLA model
// so far) and one key/value head per query head under MLA, whose heads all have their own K and V.
void apply_architecture_defaults(estimator::Model& model) noexcept;

// The first inconsistency of a model's architecture: the field to blame and why ("top_k", "must
// be between 1 and num_experts (8), got 9"); field == nullptr when it is consistent.
struct ArchitectureProblem {
  const char* field = nullptr;
  std::string message;
};
ArchitectureProblem check_architecture(const estimator::Model& model);

}  // namespace clustersweep::spaces
