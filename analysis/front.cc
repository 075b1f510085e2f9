#include "analysis/front.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <numeric>
#include <ostream>
#include <random>

#include "analysis/output.h"
#include "analysis/rank.h"
#include "base/error.h"
#include "base/format.h"
#include "engine/mpi_gather.h"

namespace clustersweep::analysis {
namespace {

// A uniform sample of at most `capacity` points of a stream (Vitter's reservoir algorithm R).
class Reservoir {
 public:
  Reservoir(std::size_t capacity, std::size_t k, std::uint64_t seed)
      : capacity_(capacity), k_(k), rng_(seed) {}
  void add(const double* p) {
    ++seen_;
    if (values_.size() < capacity_ * k_) {
      values_.insert(values_.end(), p, p + k_);
      return;
    }
    const std::uint64_t slot = std::uniform_int_distribution<std::uint64_t>(0, seen_ - 1)(rng_);
    if (slot < capacity_)
      std::copy(p, p + k_, values_.begin() + static_cast<std::ptrdiff_t>(slot * k_));
  }
  std::vector<double>& values() { return values_; }

 private:
  std::size_t capacity_, k_;
  std::mt19937_64 rng_;
  std::uint64_t seen_ = 0;
  std::vector<double> values_;
};

}  // namespace

namespace {

// Keeps one row of each set of equal objective vectors: the one on the fewest GPUs, then with the
// least memory per GPU, then the first; the others become its ties.
void collapse_ties(const Dataset& data, std::size_t k, Front& f) {
  const auto at = [&](std::size_t i) {
    return f.values.begin() + static_cast<std::ptrdiff_t>(i * k);
  };
  const auto same = [&](std::size_t a, std::size_t b) {
    return std::equal(at(a), at(a + 1), at(b));
  };
  std::vector<std::size_t> order(f.rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::lexicographical_compare(at(a), at(a + 1), at(b), at(b + 1));
  });
  bool any = false;
  for (std::size_t i = 1; i < order.size() && !any; ++i) any = same(order[i], order[i - 1]);
  if (!any) return;
  // The tie-break columns where the store has them.
  std::vector<std::string> keys;
  for (const char* name : {"num_gpus", "mem_per_gpu_bytes"})
    if (data.find(name)) keys.push_back(name);
  const auto key_values = fetch_rows(data, f.rows, keys);
  const auto before = [&](std::size_t a, std::size_t b) {
    for (const auto& column : key_values)
      if (column[a] != column[b]) return column[a] < column[b];
    return f.rows[a] < f.rows[b];
  };
  std::vector<char> kept(f.rows.size(), 0);
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i + 1;
    while (j < order.size() && same(order[j], order[i])) ++j;
    const std::size_t best =
        *std::min_element(order.begin() + static_cast<std::ptrdiff_t>(i),
                          order.begin() + static_cast<std::ptrdiff_t>(j), before);
    kept[best] = 1;
    for (std::size_t t = i; t < j; ++t)
      if (order[t] != best) f.ties[best].push_back(f.rows[order[t]]);
    std::sort(f.ties[best].begin(), f.ties[best].end());
    i = j;
  }
  // The kept rows, still ascending.
  Front out;
  out.group = f.group;
  for (std::size_t i = 0; i < f.rows.size(); ++i) {
    if (!kept[i]) continue;
    out.rows.push_back(f.rows[i]);
    out.values.insert(out.values.end(), at(i), at(i + 1));
    out.ties.push_back(std::move(f.ties[i]));
  }
  f = std::move(out);
}

}  // namespace

FrontResult compute_fronts(const Dataset& data, const FrontRequest& request,
                           const engine::MpiShare* mpi) {
  const std::size_t k = request.objectives.size();
  std::vector<std::string> columns;
  for (const auto& o : request.objectives) columns.push_back(o.column);
  const bool grouped = !request.group_by.empty();
  if (grouped) columns.push_back(request.group_by);

  ScanOptions options = request.scan;
  const int rank = mpi ? mpi->rank() : 0;
  if (mpi && mpi->size() > 1) {
    options.begin = mpi->share_begin(data.rows());
    options.end = mpi->share_end(data.rows());
    if (options.begin == options.end) options.begin = options.end = data.rows();  // empty share
  }
  std::map<double, ParetoAccumulator> fronts;
  Reservoir sample(request.sample_size, k, 0x5eed + static_cast<std::uint64_t>(rank));
  std::uint64_t selected = 0;
  std::vector<double> point(k), raw(k);
  if (options.begin < data.rows() || options.end == 0) {
    Scan scan(data, columns, options);
    while (scan.next()) {
      for (std::size_t i = 0; i < scan.size(); ++i) {
        if (!scan.keep(i)) continue;
        bool finite = true;
        for (std::size_t j = 0; j < k; ++j) {
          raw[j] = scan[j][i];
          finite = finite && std::isfinite(raw[j]);
          point[j] = request.objectives[j].maximize ? -raw[j] : raw[j];
        }
        if (!finite) continue;
        ++selected;
        const double group = grouped ? scan[k][i] : 0;
        auto it = fronts.find(group);
        if (it == fronts.end()) {
          if (fronts.size() == kMaxGroups)
            throw InputError(
                fmt::format("--group-by: column '{}' has more than {} values; group by an axis "
                            "such as gpu or num_nodes",
                            request.group_by, kMaxGroups));
          it = fronts.emplace(group, ParetoAccumulator(k)).first;
        }
        it->second.add(scan.offset() + i, point.data());
        sample.add(raw.data());
      }
    }
  }

  FrontResult result;
  if (mpi && mpi->size() > 1) {
    // Each rank's local fronts as [group, row, k negated values] records, merged on rank 0: the
    // front of the union of the shares equals the front of the union of their fronts.
    std::vector<double> records;
    for (auto& [group, front] : fronts) {
      const auto& rows = front.rows();
      const auto& values = front.values();
      for (std::size_t i = 0; i < rows.size(); ++i) {
        records.push_back(group);
        records.push_back(static_cast<double>(rows[i]));
        records.insert(records.end(), values.begin() + static_cast<std::ptrdiff_t>(i * k),
                       values.begin() + static_cast<std::ptrdiff_t>((i + 1) * k));
      }
    }
    const auto all_records = mpi->gather(records);
    const auto counts = mpi->gather({static_cast<double>(selected)});
    auto samples = mpi->gather(sample.values());
    if (rank != 0) return result;
    fronts.clear();
    for (std::size_t at = 0; at < all_records.size(); at += k + 2) {
      auto it = fronts.find(all_records[at]);
      if (it == fronts.end()) it = fronts.emplace(all_records[at], ParetoAccumulator(k)).first;
      it->second.add(static_cast<std::uint64_t>(all_records[at + 1]), &all_records[at + 2]);
    }
    selected = 0;
    for (double c : counts) selected += static_cast<std::uint64_t>(c);
    Reservoir merged(request.sample_size, k, 0x5eed);
    for (std::size_t at = 0; at + k <= samples.size(); at += k) merged.add(&samples[at]);
    result.sample = std::move(merged.values());
  } else {
    result.sample = std::move(sample.values());
  }
  result.rows_selected = selected;
  for (auto& [group, accumulator] : fronts) {
    Front f;
    f.group = grouped ? group : std::numeric_limits<double>::quiet_NaN();
    f.rows = accumulator.rows();
    f.values = accumulator.values();
    for (std::size_t i = 0; i < f.rows.size(); ++i)
      for (std::size_t j = 0; j < k; ++j)
        if (request.objectives[j].maximize) f.values[i * k + j] = -f.values[i * k + j];
    f.ties.resize(f.rows.size());
    if (!request.all_ties) collapse_ties(data, k, f);
    result.fronts.push_back(std::move(f));
  }
  return result;
}

}  // namespace clustersweep::analysis

namespace clustersweep::analysis {
namespace {

std::string group_name(const Dataset& data, const FrontRequest& request, const Front& front) {
  if (request.group_by.empty()) return "";
  return fmt::format("{}={}", request.group_by, data.find(request.group_by)->format(front.group));
}

std::string objective_label(const Dataset& data, const Objective& o) {
  const Column* c = data.find(o.column);
  return fmt::format("{}{}", c ? c->heading() : o.column, o.maximize ? ", maximized" : "");
}

}  // namespace

void print_fronts(std::ostream& out, const Dataset& data, const FrontRequest& request,
                  const FrontResult& result, std::size_t limit) {
  std::vector<std::string> names;
  for (const auto& o : request.objectives)
    names.push_back(fmt::format("{} ({})", o.column, o.maximize ? "max" : "min"));
  std::size_t total = 0;
  for (const auto& f : result.fronts) total += f.rows.size();
  out << fmt::format("Pareto front over {}: {} of {} feasible rows{}{}\n", fmt::join(names, ", "),
                     total, result.rows_selected, request.scan.where ? " matching --where" : "",
                     result.fronts.size() > 1
                         ? fmt::format(", {} fronts by {}", result.fronts.size(), request.group_by)
                         : "");
  std::vector<std::string> objectives;
  for (const auto& o : request.objectives) objectives.push_back(o.column);
  const auto metrics = metric_columns(data, objectives, {"time_to_train_s", "num_gpus", "mfu"});
  const std::size_t k = request.objectives.size();
  for (const auto& f : result.fronts) {
    std::vector<std::size_t> order(f.rows.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const double x = f.values[a * k], y = f.values[b * k];
      return request.objectives[0].maximize ? x > y : x < y;
    });
    order.resize(std::min(limit, order.size()));
    std::size_t tied = 0;
    for (const auto& t : f.ties) tied += t.size();
    out << '\n';
    if (!request.group_by.empty())
      out << fmt::format("{}: {} points on the front\n", group_name(data, request, f),
                         f.rows.size());
    if (tied > 0)
      out << wrap_words(fmt::format("{} more rows tie with a front row in every objective; each "
                                    "front row stands for its ties (the one on the fewest GPUs, "
                                    "then with the least memory; --all-ties lists them)",
                                    tied),
                        TextTable::kWidth, "")
          << '\n';
    if (order.empty()) {
      out << "No row matches.\n";
      continue;
    }
    TiedRows shown;
    for (std::size_t i : order) {
      shown.rows.push_back({f.rows[i], f.values[i * k]});
      shown.ties.push_back(f.ties[i]);
    }
    print_tied_table(out, tied_table(data, shown, metrics));
    if (order.size() < f.rows.size())
      out << fmt::format("... {} more on this front (--limit, or --csv FILE for all)\n",
                         f.rows.size() - order.size());
  }
}

void write_fronts_csv(const std::string& path, const Dataset& data, const FrontRequest& request,
                      const FrontResult& result) {
  const std::vector<std::string> columns = data.column_names();
  std::vector<std::uint64_t> rows;
  std::vector<std::vector<std::string>> extra;
  for (const auto& f : result.fronts)
    for (std::size_t i = 0; i < f.rows.size(); ++i) {
      rows.push_back(f.rows[i]);
      const std::string ties = fmt::format("{}", f.ties[i].size());
      if (request.group_by.empty())
        extra.push_back({ties});
      else
        extra.push_back({group_name(data, request, f), ties});
    }
  const auto values = fetch_rows(data, rows, columns);
  write_csv(path, data, columns, values,
            request.group_by.empty() ? std::vector<std::string>{"ties"}
                                     : std::vector<std::string>{"group", "ties"},
            extra);
}

ScatterPlot front_plot(const Dataset& data, const FrontRequest& request,
                       const FrontResult& result) {
  static const char* const colors[] = {"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e",
                                       "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
  const std::size_t k = request.objectives.size();
  ScatterPlot plot;
  std::size_t on_front = 0;
  for (const auto& f : result.fronts) on_front += f.rows.size();
  plot.title = fmt::format("Pareto front{}: {} of {} points{}",
                           k > 2 ? fmt::format(" in {} objectives", k) : "", on_front,
                           result.rows_selected, k > 2 ? ", projected on the first two" : "");
  plot.x_label = objective_label(data, request.objectives[0]);
  plot.y_label = objective_label(data, request.objectives[1]);
  plot.x_unit = data.find(request.objectives[0].column)->unit;
  plot.y_unit = data.find(request.objectives[1].column)->unit;
  Series all{fmt::format("all points ({} sampled)", result.sample.size() / k),
             "#b0b0b0",
             1.6,
             false,
             {},
             {}};
  for (std::size_t i = 0; i + k <= result.sample.size(); i += k) {
    all.x.push_back(result.sample[i]);
    all.y.push_back(result.sample[i + 1]);
  }
  plot.series.push_back(std::move(all));
  for (std::size_t g = 0; g < result.fronts.size(); ++g) {
    const Front& f = result.fronts[g];
    Series s{request.group_by.empty() ? "Pareto front" : group_name(data, request, f),
             colors[g % std::size(colors)],
             3.2,
             k == 2 && !request.objectives[0].maximize && !request.objectives[1].maximize,
             {},
             {}};
    for (std::size_t i = 0; i < f.rows.size(); ++i) {
      s.x.push_back(f.values[i * k]);
      s.y.push_back(f.values[i * k + 1]);
    }
    plot.series.push_back(std::move(s));
  }
  return plot;
}

}  // namespace clustersweep::analysis
