#include "analysis/source.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.h"

namespace clustersweep::analysis {

void MemoryTable::add(ColumnInfo info, std::vector<double> values) {
  if (!infos_.empty() && values.size() != rows_)
    throw Error(
        fmt::format("column '{}' has {} rows, the table {}", info.name, values.size(), rows_));
  info.is_label = info.is_label || !info.labels.empty();
  if (info.is_label) info.type = engine::label_type(info.labels.size());
  rows_ = values.size();
  infos_.push_back(std::move(info));
  values_.push_back(std::move(values));
}

void MemoryTable::read(const std::string& column, std::uint64_t offset, std::uint64_t count,
                       std::vector<double>& out) const {
  const auto it = std::find_if(infos_.begin(), infos_.end(),
                               [&](const ColumnInfo& c) { return c.name == column; });
  if (it == infos_.end()) throw InputError(fmt::format("{}: unknown column '{}'", path_, column));
  if (offset > rows_ || count > rows_ - offset)
    throw Error(fmt::format("{}: rows [{}, {}) out of range (rows: {})", path_, offset,
                            offset + count, rows_));
  const auto& v = values_[static_cast<std::size_t>(it - infos_.begin())];
  out.assign(v.begin() + static_cast<std::ptrdiff_t>(offset),
             v.begin() + static_cast<std::ptrdiff_t>(offset + count));
}

std::optional<std::string> MemoryTable::string_attribute(const std::string& name) const {
  const auto it = strings_.find(name);
  if (it == strings_.end()) return std::nullopt;
  return it->second;
}

std::optional<double> MemoryTable::number_attribute(const std::string& name) const {
  const auto it = numbers_.find(name);
  if (it == numbers_.end()) return std::nullopt;
  return it->second;
}

SyntheticTable::SyntheticTable(std::uint64_t rows, std::size_t objectives) : rows_(rows) {
  infos_.push_back(ColumnInfo{"point_id", "", false, {}, "id", engine::ColumnType::u64});
  infos_.push_back(ColumnInfo{"feasible", "", false, {}, "metric", engine::ColumnType::boolean});
  for (std::size_t j = 0; j < objectives; ++j)
    infos_.push_back(ColumnInfo{fmt::format("obj{}", j), "", false, {}, "metric"});
}

void SyntheticTable::read(const std::string& column, std::uint64_t offset, std::uint64_t count,
                          std::vector<double>& out) const {
  const auto it = std::find_if(infos_.begin(), infos_.end(),
                               [&](const ColumnInfo& c) { return c.name == column; });
  if (it == infos_.end()) throw InputError(fmt::format("{}: unknown column '{}'", path_, column));
  out.resize(count);
  const auto index = static_cast<std::uint64_t>(it - infos_.begin());
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t row = offset + i;
    if (index == 0) {
      out[i] = static_cast<double>(row);
    } else if (index == 1) {
      out[i] = 1;
    } else {
      // splitmix64 of (row, column): reproducible and independent of the chunking.
      std::uint64_t z =
          row * 0x9e3779b97f4a7c15ULL + index * 0xbf58476d1ce4e5b9ULL + 0x94d049bb133111ebULL;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      z ^= z >> 31;
      out[i] = (static_cast<double>(z >> 11) + 0.5) / 9007199254740992.0;
    }
  }
}

}  // namespace clustersweep::analysis
