#pragma once
// Ranking and re-pricing: `clustersweep top` (the n best rows by a column) and `clustersweep
// energy` (kWh, cost and CO2e of every design under a Pricing, and the deadline / budget
// questions).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "analysis/dataset.h"
#include "analysis/output.h"
#include "analysis/pareto.h"
#include "analysis/summary.h"

namespace clustersweep::analysis {

// The n feasible rows with the smallest `by` (largest with by.maximize), best first; ties keep
// store order. Memory: n rows.
std::vector<RowRef> top_rows(const Dataset& data, const Objective& by, std::size_t n,
                             ScanOptions options);

// Rows that each stand for others of equal values (their ties), as `top`, Pareto fronts and the
// report show them.
struct TiedRows {
  std::vector<RowRef> rows;
  std::vector<std::vector<std::uint64_t>> ties;  // per row, the store rows it stands for, ascending
  std::size_t tied() const noexcept;             // rows stood for, in all
};

// The n best feasible rows by `by`, best first, where rows equal in `by` and in every column of
// `same` count once: the one on the fewest GPUs, then with the least memory per GPU, then the
// first in the store stands for the others. Memory: n rows and their ties.
TiedRows top_distinct_rows(const Dataset& data, const Objective& by, std::size_t n,
                           ScanOptions options, const std::vector<std::string>& same);

// The axis settings in which a row's ties differ from it, compactly:
// "expansion_gb=128|256|512 inter_node_gbps_per_gpu=400 (4 rows)".
std::string tie_settings(const Dataset& data, std::uint64_t row,
                         const std::vector<std::uint64_t>& ties);

// A table of rows (rank, point_id, the axes that differ, the metrics) with a "ties" column when any
// row stands for others, the settings common to every row and tie, and one
// "k: also <tie_settings>" line per tied row.
struct TiedTable {
  TextTable table;
  std::vector<std::string> common;
  std::vector<std::string> also;
  std::string legend;  // the short headings and the column names they stand for
};
// `labels` (optional, one per row) replaces the rank column.
TiedTable tied_table(const Dataset& data, const TiedRows& rows,
                     const std::vector<std::string>& metrics,
                     const std::vector<std::string>& labels = {});
void print_tied_table(std::ostream& out, const TiedTable& table);

// The metric columns of a table: every column of `always`, then those of `candidates` the store
// has and that are not design axes (the table shows the axes that vary), each once.
std::vector<std::string> metric_columns(const Dataset& data, const std::vector<std::string>& always,
                                        const std::vector<std::string>& candidates);

// Pricing flags; unset ones keep the store's (spec's) value, or the documented default.
struct PricingOverrides {
  std::optional<double> pue, usd_per_kwh, carbon_g_per_kwh;
  std::optional<spaces::GpuPrice> gpu_hour_usd, capex_usd_per_gpu;  // one price, or per accelerator
  std::optional<double> amortize_years;
};

// The flags of the PricingOverrides fields, in declaration order (= Pricing::for_each order).
inline constexpr const char* kPricingFlags[] = {
    "--pue",          "--price-per-kwh",     "--carbon-g-per-kwh",
    "--gpu-hour-usd", "--capex-usd-per-gpu", "--amortize-years"};

// `pricing` with the overrides applied; InputError naming the flag for a bad value (as below).
Pricing override_pricing(Pricing pricing, const PricingOverrides& overrides);
// The store's pricing with the overrides applied; InputError naming the flag for a bad value
// (PUE < 1, a negative price, amortize_years <= 0, --gpu-hour-usd with --capex-usd-per-gpu).
// `origin` (optional) receives, per field in declaration order, "--flag", "store" or "default".
Pricing resolve_pricing(const ColumnSource& source, const PricingOverrides& overrides,
                        std::vector<std::string>* origin = nullptr);

struct Range {
  double min = INFINITY, max = -INFINITY, sum = 0;
  void add(double v) {
    min = std::min(min, v);
    max = std::max(max, v);
    sum += v;
  }
};

struct EnergyReport {
  std::uint64_t feasible = 0;
  Range time_s, energy_kwh, cost_usd, co2e_kg;
  RowRef fastest, least_energy, cheapest, least_carbon;
  std::optional<double> deadline_s;  // --deadline-days
  RowRef cheapest_within_deadline;   // min cost_usd with time_to_train_s <= deadline
  std::optional<double> budget_usd;  // --budget-usd
  RowRef fastest_within_budget;      // min time_to_train_s with cost_usd <= budget
};

// energy_report() as text: the pricing lines, the ranges of every priced quantity, the designs
// that answer each question, and the questions no design answers.
struct EnergyView {
  std::vector<std::string> pricing;
  std::uint64_t feasible = 0;
  TextTable ranges;
  TiedTable answers;
  std::vector<std::string> unanswered;
};
EnergyView energy_view(const Dataset& data, const EnergyReport& report,
                       const std::vector<std::string>& origin);

EnergyReport energy_report(const Dataset& data, ScanOptions options,
                           std::optional<double> deadline_days, std::optional<double> budget_usd);
void print_energy(std::ostream& out, const Dataset& data, const EnergyReport& report,
                  const std::vector<std::string>& origin);

}  // namespace clustersweep::analysis
