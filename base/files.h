#pragma once
// Whole-file writes that never leave half a file and never touch another file: the text goes to a
// fresh temporary beside `path` (a name no other file has) and is renamed over `path` once
// complete, so a reader sees the old file or the new one, and a user's `path.tmp` is left alone.
#include <string>
#include <string_view>

namespace clustersweep {

// Error "<what>: cannot write <path>: <reason>" on failure (the temporary is removed).
void write_file_atomically(const std::string& path, std::string_view text, std::string_view what,
                           bool executable = false);

}  // namespace clustersweep
