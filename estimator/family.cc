#include "estimator/family.h"

namespace clustersweep::estimator {

const char* to_string(Family family) noexcept {
  switch (family) {
    case Family::transformer:
      return "transformer";
    case Family::dlrm:
      return "dlrm";
  }
  return "?";
}

bool parse_family(std::string_view name, Family& out) noexcept {
  for (int i = 0; i < kNumFamilies; ++i) {
    const auto family = static_cast<Family>(i);
    if (name == to_string(family)) {
      out = family;
      return true;
    }
  }
  return false;
}

const char* family_names() noexcept { return "transformer, dlrm"; }

}  // namespace clustersweep::estimator
