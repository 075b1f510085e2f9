#include "base/names.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <tuple>

namespace clustersweep {

std::string lower_case(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> closest_names(std::string_view name,
                                       const std::vector<std::string>& candidates,
                                       std::size_t max) {
  const std::string target = lower_case(name);
  // (score, edit distance, candidate): near misses of equal score rank by their edit distance.
  std::vector<std::tuple<std::size_t, std::size_t, std::string>> scored;
  for (const auto& candidate : candidates) {
    const std::string c = lower_case(candidate);
    const std::size_t edits = edit_distance(target, c);
    std::size_t d = edits;
    // A candidate containing the name (or the reverse), or every '-'-separated part of it, is a
    // near miss whatever its length ('A100-80GB' -> 'A100-SXM4-80GB').
    if (!target.empty() &&
        (c.find(target) != std::string::npos || target.find(c) != std::string::npos))
      d = std::min<std::size_t>(d, 1);
    bool all_parts = !target.empty();
    for (std::size_t start = 0; start <= target.size();) {
      const std::size_t end = std::min(target.find('-', start), target.size());
      const std::string part = target.substr(start, end - start);
      if (!part.empty() && c.find(part) == std::string::npos) all_parts = false;
      start = end + 1;
    }
    if (all_parts) d = std::min<std::size_t>(d, 2);
    scored.emplace_back(d, edits, candidate);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  std::vector<std::string> out;
  const std::size_t limit = std::max<std::size_t>(3, target.size() / 2);
  for (const auto& [d, edits, candidate] : scored) {
    if (out.size() >= max || d > limit) break;
    out.push_back(candidate);
  }
  return out;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  const auto close = closest_names(name, candidates, 3);
  if (close.empty()) return {};
  std::string out = "; did you mean ";
  for (std::size_t i = 0; i < close.size(); ++i) {
    if (i > 0) out += i + 1 == close.size() ? " or " : ", ";
    out += fmt::format("'{}'", close[i]);
  }
  return out + "?";
}

}  // namespace clustersweep
