#pragma once
// The --json output of the analysis commands (docs/analysis.md, "JSON output"): one object per
// command with a "schema" key naming it and its version; numbers as computed, never formatted;
// units in the keys (column names end in their unit: _s, _kwh, _usd, _bytes); labels as their
// names; a row as an object of every column, stored and priced.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/dataset.h"
#include "analysis/front.h"
#include "analysis/rank.h"
#include "analysis/sensitivity.h"
#include "analysis/summary.h"

namespace clustersweep::analysis {

// Keys keep the order they were written in, so the output reads like the terminal tables.
using Json = nlohmann::ordered_json;

// One value of `column`: the name for labels, true/false for booleans, null for NaN and
// infinities (not JSON numbers), an integer for integral columns, else the double.
Json json_value(const Column& column, double value);

// Store rows as objects of `columns` (every column, point_id first, when empty).
Json rows_json(const Dataset& data, const std::vector<std::uint64_t>& rows,
               std::vector<std::string> columns = {});

// The "schema", "store" and "filter" keys every command's object starts with.
Json json_header(const char* schema, const Dataset& data, const std::string& where);

Json summary_json(const Dataset& data, const Summary& summary, const std::string& where);
Json top_json(const Dataset& data, const Objective& by, const TiedRows& rows,
              const std::string& where);
Json fronts_json(const Dataset& data, const FrontRequest& request, const FrontResult& result,
                 const std::string& where);
// `origin`: per pricing field, "--flag", "store" or "default" (resolve_pricing).
Json energy_json(const Dataset& data, const EnergyReport& report,
                 const std::vector<std::string>& origin, const std::string& where);
Json sensitivity_json(const Dataset& data, const Sensitivity& result, const std::string& where);

}  // namespace clustersweep::analysis
