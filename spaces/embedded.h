#pragma once
// Data files compiled into the binary (cmake/embed.cmake), so an installed clustersweep needs no
// source tree.
#include <span>
#include <string_view>

namespace clustersweep::embedded {
struct File {
  std::string_view name;  // base name, e.g. "accelerators.toml"
  std::string_view text;
};
std::span<const File> catalog();  // spaces/data/*.toml
}  // namespace clustersweep::embedded
