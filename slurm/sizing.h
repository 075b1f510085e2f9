#pragma once
// How a submission's request compares with what the forecast (`clustersweep plan`) says the
// sweep needs, so that an allocation far too large or too small is noticed before it queues.
#include <cstdint>
#include <string>

#include "slurm/submit.h"

namespace clustersweep::slurm {

// What the sweep needs, from spaces::forecast() and forecast_rows().
struct SweepNeed {
  double core_seconds = 0;  // the whole sweep's compute on one core
  double store_bytes = 0;   // the store it writes
};

// Slurm counts time limits in minutes: no job asks for less, and a request within ten of them
// is never "too large".
inline constexpr std::uint64_t kShortestJob_s = 60;

// One line (without a trailing newline) when the request is far from the need, else empty:
//  - too large: each job's allocation (ranks x time limit) is more than 10x the rank-seconds the
//    forecast needs for its share of the sweep (at least one rank for a minute);
//  - too small: the time the jobs may run before their checkpoint signal, over every segment or
//    requeue the request allows, is shorter than the forecast run on the ranks asked for.
std::string allocation_warning(const SubmitRequest& request, const SweepNeed& need);

// The default time limit of a --then analysis job: five minutes, more for a store it needs
// longer to read, never more than the sweep's own limit.
std::uint64_t default_then_time_limit(const SweepNeed& need, std::uint64_t sweep_time_limit_s);

}  // namespace clustersweep::slurm
