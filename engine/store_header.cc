#include "engine/store_header.h"

#include <type_traits>

namespace clustersweep::engine {

namespace {

// Writes one attribute in its field's type; a flag is an int64 0/1 (h5py reads it as a number).
struct Writer {
  hid_t root;
  const std::string& context;
  template <class T>
  void operator()(const char* name, const T& value) const {
    if constexpr (std::is_same_v<T, spaces::GpuPrice>) {
      // One number for every accelerator, else the text form (spaces::stored_pricing reads both).
      if (value.by_gpu.empty())
        h5::write_attribute(root, name, value.all, context);
      else
        h5::write_attribute(root, name, spaces::to_string(value), context);
    } else if constexpr (std::is_same_v<T, bool>)
      h5::write_attribute(root, name, std::int64_t{value ? 1 : 0}, context);
    else
      h5::write_attribute(root, name, value, context);
  }
};

struct Reader {
  hid_t root;
  template <class T>
  void operator()(const char* name, T& field) const {
    if constexpr (std::is_same_v<T, spaces::GpuPrice>) {
      if (auto text = h5::read_string_attribute(root, name))
        field = spaces::parse_gpu_price(*text, name);
      else if (auto value = h5::read_number_attribute(root, name))
        field.all = *value;
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (auto value = h5::read_string_attribute(root, name)) field = *value;
    } else if (auto value = h5::read_number_attribute(root, name)) {
      if constexpr (std::is_same_v<T, bool>)
        field = *value != 0;
      else
        field = static_cast<T>(*value);
    }
  }
};

}  // namespace

void write_header(hid_t root, const StoreHeader& header, const RunStats& stats,
                  const std::string& context) {
  const Writer write{root, context};
  write("format", std::string(kStoreFormat));
  write("format_version", kStoreFormatVersion);
  StoreHeader::for_each_attribute(header, write);
  write("point_begin", header.design_begin * header.plan_points);
  write("point_end", header.design_end * header.plan_points);
  RunStats::for_each_attribute(stats, write);
  std::vector<std::string> names;
  for (const auto& c : header.schema.columns) names.push_back(c.name);
  h5::write_attribute(root, "columns", names, context);
}

void write_run_stats(hid_t root, const RunStats& stats, const std::string& context) {
  RunStats::for_each_attribute(stats, Writer{root, context});
}

StoreHeader read_header(hid_t root) {
  StoreHeader header;
  StoreHeader::for_each_attribute(header, Reader{root});
  return header;
}

RunStats read_run_stats(hid_t root) {
  RunStats stats;
  RunStats::for_each_attribute(stats, Reader{root});
  return stats;
}

}  // namespace clustersweep::engine
