#pragma once
// The root attributes of a store (docs/store-format.md): what a run writes when it creates a store
// and what it records when it finishes, each named once in a visitor that the writer and the
// readers walk.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/h5.h"
#include "engine/schema.h"
#include "jobs/job.h"
#include "spaces/space.h"

namespace clustersweep::engine {

inline constexpr const char* kStoreFormat = "clustersweep-store";  // root attribute "format"
inline constexpr std::int64_t kStoreFormatVersion = 12;
// The oldest version this clustersweep reads: version 3 stores differ only in wider columns, and
// versions 3 and 4 in the software stack's axis columns they do not have, and recommendation-model
// stores before version 9 in their framework column (a reader finds the columns of a store by
// name).
inline constexpr std::int64_t kOldestReadableFormatVersion = 3;

// Everything written when a store is created.
struct StoreHeader {
  Schema schema;
  std::uint64_t rows = 0;          // rows of every column dataset
  std::vector<spaces::Axis> axes;  // value tables under /axes

  // Root attributes (docs/store-format.md).
  std::string spec;                    // the full spec text
  std::string spec_file;               // as given on the command line
  std::string spec_hash;               // jobs::spec_hash(spec)
  std::string family = "transformer";  // the workload family (estimator/family.h) of every row
  std::string keep;                    // "all", "feasible", "best-per-design", "pareto-per-design"
  std::string objective;               // "step_time", "time_to_train", "energy", "cost"
  std::string kept_columns = "all";    // `[output] columns`: "all", "summary" or the list
  std::string omitted_columns;         // the columns it left out, blank-separated
  std::string compression = "none";    // `[output] compression`: "none", "fast", "small"
  // How per-design keep modes found their plans: "exact-search" or "exhaustive" ("none" for
  // keep = all or feasible), by the run that created the store.
  std::string plan_search = "none";
  std::uint64_t space_points = 0;
  std::uint64_t space_designs = 0;
  std::uint64_t plan_points = 0;
  std::uint64_t design_begin = 0;  // the designs this store covers (a shard, or all)
  std::uint64_t design_end = 0;
  std::int64_t shard_index = 0;
  std::int64_t shard_count = 1;
  spaces::Pricing pricing;
  estimator::Reliability reliability;
  double training_tokens = 0;
  // The run's chunks (engine/chunks.h), kept for resume.
  std::uint64_t chunk_points = 0;
  std::uint64_t designs_per_chunk = 1;
  std::uint64_t splits_per_design = 1;
  std::uint64_t chunks = 0;
  // A filtered run's staging file: rows are per-chunk slots, not yet the result.
  bool staging = false;
  jobs::Provenance provenance;
  std::int64_t mpi_size = 1;

  // Visits every root attribute held in a field as (name, field), in file order: the one list
  // that write_header() and read_header() both walk (docs/store-format.md).
  template <class Self, class Visit>
  static void for_each_attribute(Self& h, Visit&& visit) {
    visit("tool_version", h.provenance.tool_version);
    visit("git_revision", h.provenance.git_revision);
    visit("spec", h.spec);
    visit("spec_file", h.spec_file);
    visit("spec_hash", h.spec_hash);
    visit("family", h.family);
    visit("keep", h.keep);
    visit("objective", h.objective);
    visit("kept_columns", h.kept_columns);
    visit("omitted_columns", h.omitted_columns);
    visit("compression", h.compression);
    visit("plan_search", h.plan_search);
    visit("rows", h.rows);
    visit("space_points", h.space_points);
    visit("space_designs", h.space_designs);
    visit("plan_points", h.plan_points);
    visit("design_begin", h.design_begin);
    visit("design_end", h.design_end);
    visit("shard_index", h.shard_index);
    visit("shard_count", h.shard_count);
    visit("training_tokens", h.training_tokens);
    spaces::Pricing::for_each(h.pricing, visit);
    estimator::Reliability::for_each(h.reliability, visit);
    visit("chunk_points", h.chunk_points);
    visit("designs_per_chunk", h.designs_per_chunk);
    visit("splits_per_design", h.splits_per_design);
    visit("chunks", h.chunks);
    visit("staging", h.staging);
    visit("created_utc", h.provenance.created_utc);
    visit("host", h.provenance.host);
    visit("user", h.provenance.user);
    visit("command", h.provenance.command);
  }
};

// What a finished run records in a store's root attributes (overwritten in place).
struct RunStats {
  std::int64_t mpi_size = 1;
  double wall_time_s = 0;              // of the run that finished the store
  double points_per_s = 0;             // points evaluated per second of that run
  std::uint64_t points_evaluated = 0;  // by that run (less than the range after a resume)
  double compact_time_s = 0;           // filtered modes: ordering the kept rows
  bool resumed = false;
  bool complete = false;  // the run finished: every row is final

  // As StoreHeader::for_each_attribute; finalize_store() overwrites these in place.
  template <class Self, class Visit>
  static void for_each_attribute(Self& s, Visit&& visit) {
    visit("complete", s.complete);
    visit("mpi_size", s.mpi_size);
    visit("wall_time_s", s.wall_time_s);
    visit("points_per_s", s.points_per_s);
    visit("points_evaluated", s.points_evaluated);
    visit("compact_time_s", s.compact_time_s);
    visit("resumed", s.resumed);
  }
};

// Writes the header's and the stats' attributes, and the computed ones (format, format_version,
// point_begin, point_end, columns).
void write_header(hid_t root, const StoreHeader& header, const RunStats& stats,
                  const std::string& context);
void write_run_stats(hid_t root, const RunStats& stats, const std::string& context);
// The attributes back (schema and axes are not attributes: format::read_schema reads the
// columns); an attribute a store lacks keeps the field's default.
StoreHeader read_header(hid_t root);
RunStats read_run_stats(hid_t root);

}  // namespace clustersweep::engine
