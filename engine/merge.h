#pragma once
// `clustersweep merge`: joins the shard stores of one sweep (`clustersweep run --shard I/K`, or the
// tasks of `clustersweep submit --array K`) into one store whose data equal a single run's.
#include <cstdint>
#include <string>
#include <vector>

namespace clustersweep::engine {

struct MergeResult {
  std::uint64_t rows = 0;
  std::uint32_t shards = 0;
  double wall_time_s = 0;
};

// Checks that `shards` (in any order) are complete stores of one spec that together are every
// shard 0..K-1 of a K-way split, exactly once; then writes their rows in shard order (= point-id
// order) into `output`, under a temporary name renamed into place at the end. InputError, naming
// the files, for anything else; an existing `output` is replaced only with `force`.
MergeResult merge_shards(const std::vector<std::string>& shards, const std::string& output,
                         bool force, const std::vector<std::string>& command_line);

}  // namespace clustersweep::engine
