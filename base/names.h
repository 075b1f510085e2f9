#pragma once
// "Did you mean" suggestions: every unknown name (a flag value, a spec key, a column, a command)
// is answered with the closest valid ones, ranked the same way everywhere.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace clustersweep {

// `s` in ASCII lower case: how names compare without regard to case.
std::string lower_case(std::string_view s);

// Up to `max` candidates closest to `name`, best first: by edit distance (case-insensitive), a
// candidate containing the name (or contained in it) or all of its '-'-separated parts counting as
// a near miss; none farther than max(3, half the name's length).
std::vector<std::string> closest_names(std::string_view name,
                                       const std::vector<std::string>& candidates,
                                       std::size_t max = 3);

// "; did you mean 'a', 'b' or 'c'?" with closest_names(), or "" when none is close.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace clustersweep
