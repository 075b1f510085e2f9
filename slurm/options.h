#pragma once
// Parsing and validation of the submit options, before anything is written or submitted.
// Each function throws InputError naming the flag and what would be valid.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clustersweep::slurm {

// A duration in any form sbatch's --time takes (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM,
// D-HH:MM:SS; squeue prints the same), in seconds; nullopt for anything else (UNLIMITED).
std::optional<std::uint64_t> slurm_duration(std::string_view text);
// The --time of a job (`flag` names it in errors), in seconds: a slurm_duration() of at least one
// second.
std::uint64_t parse_time_limit(std::string_view text, std::string_view flag = "--time");
// The inverse: "HH:MM:SS", or "D-HH:MM:SS" from one day on.
std::string format_time_limit(std::uint64_t seconds);

// A positive whole number for `flag` (e.g. "--nodes"), at most `max`.
std::uint32_t parse_positive(std::string_view flag, std::string_view text,
                             std::uint32_t max = 1u << 20);

// --array K[%T]: K shards, at most T running at once (0: no limit).
struct ArrayShape {
  std::uint32_t tasks = 0;
  std::uint32_t at_once = 0;
};
ArrayShape parse_array(std::string_view text);

// Splits a command line the way a POSIX shell splits words: blanks separate words, '...' and
// "..." quote, a backslash escapes the next character. InputError (naming `flag`) on an
// unterminated quote or an empty command.
std::vector<std::string> split_words(std::string_view flag, std::string_view command);

// `word` quoted for a POSIX shell: unchanged when it is made only of safe characters, else in
// single quotes.
std::string shell_quote(std::string_view word);

}  // namespace clustersweep::slurm
