#include "slurm/options.h"

#include <fmt/format.h>

#include <limits>
#include <optional>

#include "base/error.h"
#include "base/numbers.h"

namespace clustersweep::slurm {
namespace {

// Parses all of `text` as an unsigned number; false if anything else is in it.
bool parse_number(std::string_view text, std::uint64_t& value) {
  return read_uint64(text, 0, std::numeric_limits<std::uint64_t>::max(), value).empty();
}

}  // namespace

std::optional<std::uint64_t> slurm_duration(std::string_view text) {
  // [days-]clock: the day count, then up to three colon-separated fields whose meaning depends on
  // the form (sbatch(1), --time): with days, hours[:minutes[:seconds]]; without, minutes,
  // minutes:seconds or hours:minutes:seconds.
  std::uint64_t days = 0;
  std::string_view clock = text;
  const auto dash = text.find('-');
  const bool has_days = dash != std::string_view::npos;
  if (has_days) {
    if (!parse_number(text.substr(0, dash), days) || days > 1'000'000) return std::nullopt;
    clock = text.substr(dash + 1);
  }
  std::uint64_t field[3] = {0, 0, 0};
  int fields = 0;
  for (;;) {
    const auto colon = clock.find(':');
    const auto part = clock.substr(0, colon);
    // The leading field may be long (minutes or hours without a day count); the others have at
    // most two digits.
    if (fields == 3 || (part.size() > 2 && (fields > 0 || has_days)) ||
        !parse_number(part, field[fields]) || field[fields] > 100'000'000)
      return std::nullopt;
    ++fields;
    if (colon == std::string_view::npos) break;
    clock.remove_prefix(colon + 1);
  }
  const bool hours_first = has_days || fields == 3;
  const bool has_seconds = has_days ? fields == 3 : fields >= 2;
  const std::uint64_t hours = hours_first ? field[0] : 0;
  const std::uint64_t minutes = hours_first ? field[1] : field[0];
  const std::uint64_t seconds = hours_first ? field[2] : field[1];
  if ((has_days && hours >= 24) || (hours_first && minutes >= 60) || (has_seconds && seconds >= 60))
    return std::nullopt;
  return ((days * 24 + hours) * 60 + minutes) * 60 + seconds;
}

std::uint64_t parse_time_limit(std::string_view text, std::string_view flag) {
  const auto seconds = slurm_duration(text);
  if (!seconds)
    throw InputError(fmt::format(
        "{}: expected one of sbatch's forms MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or "
        "D-HH:MM:SS (for example 90, 02:30:00 or 1-12), with minutes and seconds below 60 and "
        "hours below 24 after a day count, got '{}'",
        flag, text));
  if (*seconds == 0)
    throw InputError(fmt::format(
        "{}: a job of clustersweep needs a time limit; got '{}' (to Slurm, no limit at all)", flag,
        text));
  return *seconds;
}

std::string format_time_limit(std::uint64_t seconds) {
  const std::uint64_t days = seconds / 86400;
  const std::uint64_t rest = seconds % 86400;
  const auto clock = fmt::format("{:02}:{:02}:{:02}", rest / 3600, rest / 60 % 60, rest % 60);
  return days > 0 ? fmt::format("{}-{}", days, clock) : clock;
}

std::uint32_t parse_positive(std::string_view flag, std::string_view text, std::uint32_t max) {
  return static_cast<std::uint32_t>(parse_uint64(flag, text, 1, max));
}

ArrayShape parse_array(std::string_view text) {
  const auto percent = text.find('%');
  std::uint64_t tasks = 0, at_once = 0;
  const bool ok = parse_number(text.substr(0, percent), tasks) && tasks >= 1 &&
                  (percent == std::string_view::npos ||
                   (parse_number(text.substr(percent + 1), at_once) && at_once >= 1));
  if (!ok || tasks > 100000 || at_once > 100000)
    throw InputError(fmt::format(
        "--array: expected K or K%T, K shards of which at most T run at once (for example 16%4), "
        "got '{}'",
        text));
  return {static_cast<std::uint32_t>(tasks), static_cast<std::uint32_t>(at_once)};
}

std::vector<std::string> split_words(std::string_view flag, std::string_view command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (quote == '\'') {
      if (c == '\'')
        quote = 0;
      else
        word += c;
    } else if (quote == '"') {
      if (c == '"')
        quote = 0;
      else if (c == '\\' && i + 1 < command.size() &&
               std::string_view("\"\\$`").find(command[i + 1]) != std::string_view::npos)
        word += command[++i];
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < command.size()) {
      word += command[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0)
    throw InputError(fmt::format("{}: unterminated {} quote in '{}'", flag,
                                 quote == '"' ? "double" : "single", command));
  if (in_word) words.push_back(std::move(word));
  if (words.empty())
    throw InputError(fmt::format("{}: expected a command, got '{}'", flag, command));
  return words;
}

std::string shell_quote(std::string_view word) {
  const bool safe =
      !word.empty() &&
      word.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,/:@%") ==
          std::string_view::npos;
  if (safe) return std::string(word);
  std::string quoted = "'";
  for (const char c : word) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  return quoted + "'";
}

}  // namespace clustersweep::slurm
