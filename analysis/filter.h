#pragma once
// --where filters: a small expression language over columns (docs/analysis.md).
//
//   gpu == 'H100-SXM5-80GB' and num_gpus <= 1024 and feasible
//   not (tp > 8 or recompute == 'full') and time_to_train_s < 30 * 86400
//
// Comparisons (== != < <= > >=), and/or/not (also && || !), parentheses, numbers, +-*/ on
// numbers, strings in single or double quotes compared (== / !=) with label columns, and a bare
// column meaning "is not zero". Errors name the 1-based character position:
//   --where:1:10: unknown column 'gpux'; did you mean 'gpu'?
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace clustersweep::analysis {

class Dataset;

class Filter {
 public:
  // Parses `text` against the columns of `data`; InputError "<what>:1:<col>: <message>".
  static Filter parse(std::string_view text, const Dataset& data,
                      std::string_view what = "--where");

  Filter(Filter&&) noexcept;
  Filter& operator=(Filter&&) noexcept;
  ~Filter();

  const std::string& text() const noexcept { return text_; }
  // The columns the filter reads, in the order apply() expects them.
  const std::vector<std::string>& columns() const noexcept { return columns_; }
  // Clears keep[i] for each of the n rows that do not pass. columns[j] holds the rows of
  // columns()[j].
  void apply(const std::vector<const double*>& columns, std::size_t n,
             std::vector<std::uint8_t>& keep) const;

  struct Node;

 private:
  Filter() = default;
  std::string text_;
  std::vector<std::string> columns_;
  std::unique_ptr<Node> root_;
};

}  // namespace clustersweep::analysis
