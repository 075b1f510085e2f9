#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/error.h"
#include "base/names.h"
#include "base/numbers.h"
#include "spaces/space.h"

namespace clustersweep::spaces {

double GpuPrice::of(std::string_view gpu) const noexcept {
  for (const auto& [name, price] : by_gpu)
    if (name == gpu) return price;
  return all;
}

std::string to_string(const GpuPrice& price) {
  if (price.by_gpu.empty()) return fmt::format("{}", price.all);
  std::string text;
  for (const auto& [name, value] : price.by_gpu)
    text += fmt::format("{}{}={}", text.empty() ? "" : ",", name, value);
  return text;
}

namespace {

// A price: a finite number >= 0, all of `text`.
bool read_price(std::string_view text, double& value) {
  return read_real(text, RealDomain::at_least(0), value).empty();
}

}  // namespace

GpuPrice parse_gpu_price(std::string_view text, std::string_view what) {
  GpuPrice price;
  if (text.find('=') == std::string_view::npos) {
    if (!read_price(text, price.all))
      throw InputError(
          fmt::format("{}: must be a non-negative number, or ACCELERATOR=PRICE,... (e.g. "
                      "H100-SXM5-80GB=2.5,B200-180GB=5), got '{}'",
                      what, text));
    return price;
  }
  while (!text.empty()) {
    const std::string_view item = text.substr(0, text.find(','));
    text.remove_prefix(std::min(text.size(), item.size() + 1));
    const auto eq = item.find('=');
    double value = 0;
    if (eq == std::string_view::npos || eq == 0 || !read_price(item.substr(eq + 1), value))
      throw InputError(
          fmt::format("{}: each entry must be ACCELERATOR=PRICE with a non-negative price (e.g. "
                      "H100-SXM5-80GB=2.5,B200-180GB=5), got '{}'",
                      what, item));
    const std::string name(item.substr(0, eq));
    if (std::any_of(price.by_gpu.begin(), price.by_gpu.end(),
                    [&](const auto& entry) { return entry.first == name; }))
      throw InputError(fmt::format("{}: '{}' is priced twice", what, name));
    price.by_gpu.emplace_back(name, value);
  }
  return price;
}

std::string gpu_price_problem(const GpuPrice& price, const std::vector<std::string>& gpus,
                              std::string_view source) {
  if (price.by_gpu.empty()) return "";
  for (const auto& [name, value] : price.by_gpu)
    if (std::find(gpus.begin(), gpus.end(), name) == gpus.end())
      return fmt::format("'{}' is not an accelerator of {} ({}){}", name, source,
                         fmt::join(gpus, ", "), did_you_mean(name, gpus));
  for (const auto& gpu : gpus)
    if (std::none_of(price.by_gpu.begin(), price.by_gpu.end(),
                     [&](const auto& entry) { return entry.first == gpu; }))
      return fmt::format("no price for '{}'; give one for each accelerator of {} ({})", gpu, source,
                         fmt::join(gpus, ", "));
  return "";
}

}  // namespace clustersweep::spaces
