// Kept apart from source.cc so that code using only MemoryTable does not link the HDF5 reader.
#include "analysis/source.h"

namespace clustersweep::analysis {

StoreSource::StoreSource(const std::string& path) : reader_(path) {}

const std::string& StoreSource::path() const { return reader_.path(); }
std::uint64_t StoreSource::rows() const { return reader_.rows(); }
const std::vector<ColumnInfo>& StoreSource::columns() const { return reader_.columns(); }

void StoreSource::read(const std::string& column, std::uint64_t offset, std::uint64_t count,
                       std::vector<double>& out) const {
  reader_.read(column, offset, count, out);
}

std::optional<std::string> StoreSource::string_attribute(const std::string& name) const {
  return reader_.string_attribute(name);
}

std::optional<double> StoreSource::number_attribute(const std::string& name) const {
  return reader_.number_attribute(name);
}

}  // namespace clustersweep::analysis
