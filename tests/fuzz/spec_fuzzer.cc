// libFuzzer target: sweep-spec text through spaces::Space::parse (docs/testing.md), then what a
// sweep reads first from what parses. InputError (any clustersweep::Error) is the parser's answer
// to bad input; anything else that escapes (another exception type, a crash, a sanitizer report,
// a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "spaces/rules.h"
#include "spaces/space.h"

namespace {

using clustersweep::spaces::Space;

// The first and last design with their first and last plans: the resolution of every axis's
// extreme values, as the engine meets them (a rule's violation is an answer, not a finding).
void resolve_corners(const Space& space) {
  namespace sp = clustersweep::spaces;
  for (const std::uint64_t id : {std::uint64_t{0}, space.designs() - 1}) {
    sp::Violation why;
    if (space.family() == clustersweep::estimator::Family::dlrm) {
      sp::DlrmDesign design;
      if (!space.dlrm_design(id, design, why)) {
        (void)sp::message(why);
        continue;
      }
      for (std::uint64_t digit : {std::uint64_t{0}, space.plan_points() - 1})
        if (!space.dlrm_plan(design, static_cast<std::uint32_t>(digit), why))
          (void)sp::message(why);
    } else {
      sp::Design design;
      if (!space.design(id, design, why)) {
        (void)sp::message(why);
        continue;
      }
      clustersweep::estimator::Plan plan;
      for (std::uint64_t p : {std::uint64_t{0}, space.plan_points() - 1})
        if (!space.plan(design, p, plan, why)) (void)sp::message(why);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // A spec's `calibration` names a file to read; a device such as /dev/zero or /dev/stdin never
  // ends, which says nothing about the parser.
  for (std::string_view device : {"/dev", "/proc", "/sys"}) {
    if (text.find(device) != std::string_view::npos) return -1;
  }
  try {
    const Space space = Space::parse(text, "fuzz.toml");
    // The point-id layout (axes, radixes, strides) at both ends of the space.
    std::vector<std::uint32_t> digits(space.axes().size());
    for (const std::uint64_t id : {std::uint64_t{0}, space.size() - 1}) {
      space.decode(id, digits.data());
      if (space.encode(digits.data()) != id) __builtin_trap();
      (void)space.describe_point(id);
    }
    resolve_corners(space);
  } catch (const clustersweep::Error&) {
  }
  return 0;
}
