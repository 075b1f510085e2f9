#pragma once
// The TOML reading and writing shared by the data files of spaces/ (the catalog, the calibration,
// its support tables and a site's [site] table): errors as "FILE:LINE:COLUMN: ...".
#include <toml++/toml.h>

#include <string>
#include <string_view>

namespace clustersweep::spaces {

// "FILE:LINE:COLUMN" of a region of `file`.
std::string where(std::string_view file, const toml::source_region& region);
// The document, or an InputError naming where it is malformed.
toml::table parse_toml(std::string_view text, std::string_view file);
// `text` as a TOML basic string ("...", with TOML's escapes), for a value or a quoted key.
std::string toml_quoted(std::string_view text);
// A data file compiled into the binary (spaces/data/NAME).
std::string_view embedded_text(std::string_view name);

}  // namespace clustersweep::spaces
