#include "spaces/point_table.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "base/names.h"
#include "spaces/frameworks.h"
#include "spaces/resolve.h"

namespace clustersweep::spaces {
namespace {

// The axes of each family, by store column, from a space of one point (the parser names them).
const std::vector<Axis>& family_axes(bool dlrm) {
  static const std::vector<Axis> transformer =
      Space::parse(
          "[workload]\nmodel = \"llama3-8b\"\n[cluster]\ngpu = \"H100-SXM5-80GB\"\ngpus = 8\n",
          "<axes>")
          .axes();
  static const std::vector<Axis> recommendation =
      Space::parse(
          "[workload]\nfamily = \"dlrm\"\nmodel = \"dlrmv2-dcnv2\"\n[cluster]\ngpu = "
          "\"H100-SXM5-80GB\"\ngpus = 8\n",
          "<axes>")
          .axes();
  return dlrm ? recommendation : transformer;
}

// The spec table and key of axis `i` (its store column `name`).
std::pair<const char*, std::string> spec_key(bool dlrm, int i, const std::string& name) {
  const int cluster_first = dlrm ? int{kDlrmGpu} : int{kGpu};
  const int plan_first = dlrm ? int{kDlrmSharding} : int{kTp};
  if (i < cluster_first) return {"workload", name};
  if (i >= plan_first) return {"plan", name};
  return {"cluster", std::string(setting_of_column(name))};
}

toml::table& subtable(toml::table& root, const char* name) {
  if (auto* t = root[name].as_table()) return *t;
  root.insert_or_assign(name, toml::table{});
  return *root[name].as_table();
}

// A value for the spec: integral numbers as integers (the counts' type), booleans where the axis
// takes TOML booleans, labels as strings.
void push_value(toml::array& out, const TableColumn& c, std::size_t j, bool boolean) {
  if (c.is_label) {
    const std::string& text = c.labels[j];
    if (boolean && (text == "true" || text == "false"))
      out.push_back(text == "true");
    else
      out.push_back(text);
    return;
  }
  const double v = c.numbers[j];
  if (boolean && (v == 0 || v == 1))
    out.push_back(v == 1);
  else if (v == std::floor(v) && std::fabs(v) < 9.007199254740992e15)
    out.push_back(static_cast<std::int64_t>(v));
  else
    out.push_back(v);
}

}  // namespace

namespace {

template <class T>
TableColumn numbers_column(std::string name, const T* values, std::size_t rows) {
  TableColumn c;
  c.name = std::move(name);
  c.codes.resize(rows);
  // A column of a few values (the common case: a plan axis) is looked up by a scan of them; one
  // of many by a hash.
  constexpr std::size_t kScan = 16;
  std::unordered_map<double, std::uint32_t> index;
  double last = std::numeric_limits<double>::quiet_NaN();  // equal to no value
  std::uint32_t last_code = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const double v = values[r] == 0 ? 0.0 : static_cast<double>(values[r]);  // -0 is 0
    if (v == last) {  // runs of one value: a table built as a product
      c.codes[r] = last_code;
      continue;
    }
    std::uint32_t code = 0;
    const std::size_t n = c.numbers.size();
    if (n <= kScan) {
      while (code < n && c.numbers[code] != v) ++code;
    } else {
      const auto it = index.find(v);
      code = it == index.end() ? static_cast<std::uint32_t>(n) : it->second;
    }
    if (code == n) {
      if (std::isnan(v))
        throw InputError(fmt::format("row {}, column '{}': no value (NaN)", r, c.name));
      c.numbers.push_back(v);
      c.first_row.push_back(r);
      if (n == kScan)
        for (std::uint32_t j = 0; j <= n; ++j) index.emplace(c.numbers[j], j);
      else if (n > kScan)
        index.emplace(v, code);
    }
    c.codes[r] = last_code = code;
    last = v;
  }
  if (c.numbers.size() == 1) c.codes.clear();
  return c;
}

}  // namespace

TableColumn TableColumn::from_numbers(std::string name, const double* values, std::size_t rows) {
  return numbers_column(std::move(name), values, rows);
}

TableColumn TableColumn::from_numbers(std::string name, const std::int64_t* values,
                                      std::size_t rows) {
  return numbers_column(std::move(name), values, rows);
}

TableColumn TableColumn::from_codes(std::string name, std::vector<std::string> categories,
                                    const std::int64_t* codes, std::size_t rows) {
  TableColumn c;
  c.name = std::move(name);
  c.is_label = true;
  c.codes.resize(rows);
  // Only the categories some row uses become values: an unused category is no point's.
  std::vector<std::int64_t> code_of(categories.size(), -1);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::int64_t k = codes[r];
    if (k < 0 || static_cast<std::size_t>(k) >= categories.size())
      throw InputError(fmt::format("row {}, column '{}': no value", r, c.name));
    std::int64_t& to = code_of[static_cast<std::size_t>(k)];
    if (to < 0) {
      to = static_cast<std::int64_t>(c.labels.size());
      c.labels.push_back(categories[static_cast<std::size_t>(k)]);
      c.first_row.push_back(r);
    }
    c.codes[r] = static_cast<std::uint32_t>(to);
  }
  if (c.labels.size() == 1) c.codes.clear();
  return c;
}

namespace {

// The family of the table: the spec's `workload.family`, else its models' (recommendation models
// of the catalog are the DLRM family's).
bool table_is_dlrm(const PointTable& table, const toml::table& spec) {
  if (const auto family = spec["workload"]["family"].value<std::string>()) return *family == "dlrm";
  for (const TableColumn& c : table.columns) {
    if (c.name != "model" || !c.is_label) continue;
    std::vector<std::string> dlrm, transformer;
    for (const auto& m : c.labels) (is_dlrm_model(m) ? dlrm : transformer).push_back(m);
    if (!dlrm.empty() && !transformer.empty())
      throw InputError(fmt::format(
          "column 'model': the rows mix recommendation models ({}) and transformers ({}); "
          "evaluate each family's rows in a call of its own",
          dlrm.front(), transformer.front()));
    return !dlrm.empty();
  }
  return false;
}

// A transformer table that names frameworks but not every stack setting: the missing ones take
// each row's framework's default, as `estimate --framework` and a spec's framework axis do.
void add_framework_defaults(PointTable& table) {
  const auto settings = stack_settings();
  const auto has = [&](std::string_view name) {
    return std::any_of(table.columns.begin(), table.columns.end(),
                       [&](const TableColumn& c) { return c.name == name; });
  };
  const auto fw = std::find_if(table.columns.begin(), table.columns.end(),
                               [&](const TableColumn& c) { return c.name == settings[0].name; });
  if (fw == table.columns.end() || !fw->is_label) return;
  std::vector<estimator::Stack> defaults;  // per framework value of the column
  for (const auto& label : fw->labels) {
    const int v = parse_stack_value(settings[0], label);
    if (v < 0) return;  // the space's parser names the bad value
    const FrameworkProfile* p = framework_profile(static_cast<estimator::Framework>(v));
    defaults.push_back(p ? p->defaults : estimator::Stack{});
  }
  const TableColumn frameworks = *fw;  // fw moves as columns grow
  for (std::size_t i = 1; i < settings.size(); ++i) {
    const StackSetting& st = settings[i];
    if (has(st.name)) continue;
    std::vector<std::string> names;
    std::vector<std::int64_t> code_of_framework;
    for (const auto& d : defaults) {
      const std::string name = st.value_name(st.get(d));
      auto at = std::find(names.begin(), names.end(), name);
      if (at == names.end()) at = names.insert(names.end(), name);
      code_of_framework.push_back(at - names.begin());
    }
    if (names.size() == 1) continue;  // one default for every row: the parser's own
    std::vector<std::int64_t> codes(table.rows);
    for (std::size_t r = 0; r < table.rows; ++r) codes[r] = code_of_framework[frameworks.code(r)];
    table.columns.push_back(
        TableColumn::from_codes(st.name, std::move(names), codes.data(), table.rows));
  }
}

// A store's rows hold expansion_gbytes_per_s = 0 where no design has an expansion tier, and a
// table may give 0 to the rows without one; a spec takes only positive bandwidths. Those rows take
// the column's first positive value, which the space numbers first, as a sweep stores them (a
// design without expansion and another bandwidth would be a duplicate).
void drop_unused_expansion_bandwidth(PointTable& table) {
  auto find = [&](std::string_view name) {
    return std::find_if(table.columns.begin(), table.columns.end(),
                        [&](const TableColumn& c) { return c.name == name; });
  };
  auto bw = find("expansion_gbytes_per_s");
  if (bw == table.columns.end() || bw->is_label) return;
  const auto zero = std::find(bw->numbers.begin(), bw->numbers.end(), 0.0);
  if (zero == bw->numbers.end()) return;
  if (bw->numbers.size() == 1) {  // no expansion anywhere: the column says nothing
    table.columns.erase(bw);
    return;
  }
  const auto gb = find("expansion_gb");
  const auto zero_code = static_cast<std::uint32_t>(zero - bw->numbers.begin());
  for (std::size_t r = 0; r < table.rows; ++r)
    if (bw->code(r) == zero_code &&
        (gb != table.columns.end() && !gb->is_label && gb->numbers[gb->code(r)] != 0))
      return;  // a tier without bandwidth: the space's message names it
  // The first positive value first, then the others in their order; zero becomes the first.
  const std::uint32_t positive = zero_code == 0 ? 1 : 0;
  std::vector<std::uint32_t> to(bw->numbers.size(), 0);
  std::vector<double> numbers;
  std::vector<std::size_t> first_row;
  numbers.push_back(bw->numbers[positive]);
  first_row.push_back(std::min(bw->first_row[positive], bw->first_row[zero_code]));
  for (std::uint32_t j = 0; j < bw->numbers.size(); ++j) {
    if (j == positive || j == zero_code) continue;
    to[j] = static_cast<std::uint32_t>(numbers.size());
    numbers.push_back(bw->numbers[j]);
    first_row.push_back(bw->first_row[j]);
  }
  for (auto& code : bw->codes) code = to[code];
  bw->numbers = std::move(numbers);
  bw->first_row = std::move(first_row);
}

// The spec's message for a value of a column, as the column's: "row R, column 'C': ...". The
// spec's own keys keep theirs, without the place in the generated text.
[[noreturn]] void rethrow_for_table(const InputError& e, std::string_view spec_name,
                                    const PointTable& table,
                                    const std::vector<std::string>& column_key) {
  std::string_view what = e.what();
  if (what.starts_with(spec_name) && what.substr(spec_name.size()).starts_with(":")) {
    // "NAME:LINE:COLUMN: key: message"
    what.remove_prefix(spec_name.size() + 1);
    for (int colon = 0; colon < 2 && !what.empty(); ++colon)
      what.remove_prefix(std::min(what.size(), what.find(':') + 1));
    if (what.starts_with(" ")) what.remove_prefix(1);
  }
  const auto end = what.find(": ");
  if (end != std::string_view::npos) {
    std::string_view key = what.substr(0, end);
    std::size_t index = 0;
    bool indexed = false;
    if (const auto open = key.find('['); open != std::string_view::npos && key.ends_with("]")) {
      index = std::stoul(std::string(key.substr(open + 1, key.size() - open - 2)));
      key = key.substr(0, open);
      indexed = true;
    }
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
      if (column_key[c] != key) continue;
      const TableColumn& col = table.columns[c];
      const std::string_view message = what.substr(end + 2);
      // A message about the whole list names the bad value: its first row is the one to blame.
      if (!indexed && col.is_label) {
        std::size_t first = std::string_view::npos;
        for (std::size_t j = 0; j < col.labels.size(); ++j)
          for (const auto& quoted :
               {fmt::format("'{}'", col.labels[j]), fmt::format("\"{}\"", col.labels[j])})
            if (const auto at = message.find(quoted); at < first) {
              first = at;
              index = j;
              indexed = true;
            }
      }
      if (indexed && index < col.first_row.size())
        throw InputError(
            fmt::format("row {}, column '{}': {}", col.first_row[index], col.name, message));
      throw InputError(fmt::format("column '{}': {}", col.name, message));
    }
  }
  throw InputError(fmt::format("{}: {}", spec_name, what));
}

}  // namespace

TableSpace table_space(PointTable table, std::string_view spec_text, std::string_view spec_name,
                       std::string_view columns) {
  toml::table spec;
  try {
    spec = toml::parse(spec_text, spec_name);
  } catch (const toml::parse_error& e) {
    throw InputError(fmt::format("{}:{}:{}: {}", spec_name, e.source().begin.line,
                                 e.source().begin.column, e.description()));
  }
  // A column may be named as the flag is ("gpus") or as the store names it ("num_gpus").
  for (TableColumn& c : table.columns) c.name = column_of_setting(c.name);
  const bool dlrm = table_is_dlrm(table, spec);
  if (!dlrm) add_framework_defaults(table);
  drop_unused_expansion_bandwidth(table);
  // A recommendation model's framework is no axis but the spec's `[workload] framework`, else
  // each accelerator's default; a store's rows name it in a column: one value is the spec's,
  // several must each be the row's default (checked once the space resolves the rows' designs).
  std::optional<TableColumn> dlrm_framework;
  std::vector<estimator::DlrmFramework> dlrm_framework_values;
  const bool spec_framework = spec["workload"]["framework"].is_value();
  if (const auto at = std::find_if(table.columns.begin(), table.columns.end(),
                                   [](const TableColumn& c) { return c.name == "framework"; });
      dlrm && at != table.columns.end()) {
    for (std::size_t j = 0; j < at->size(); ++j) {
      estimator::DlrmFramework f{};
      if (!at->is_label || !estimator::parse_dlrm_framework(at->labels[j], f))
        throw InputError(
            fmt::format("row {}, column 'framework': must be any, hugectr or torchrec, got {}",
                        at->first_row[j],
                        at->is_label ? fmt::format("\"{}\"", at->labels[j])
                                     : fmt::format("{}", at->numbers[j])));
      dlrm_framework_values.push_back(f);
    }
    if (at->size() == 1)
      subtable(spec, "workload").insert_or_assign("framework", at->labels.front());
    else
      dlrm_framework = std::move(*at);
    table.columns.erase(at);
  }
  const std::vector<Axis>& axes = family_axes(dlrm);
  std::vector<std::string> names;
  for (const Axis& a : axes) names.push_back(a.name);
  names.push_back("num_nodes");  // the cluster size's other name

  // Each column's axis and spec key; the space's point count.
  std::vector<int> axis_of_column;
  std::vector<std::string> column_key;
  long double points = 1;
  const bool has_nodes = std::any_of(table.columns.begin(), table.columns.end(),
                                     [](const TableColumn& c) { return c.name == "num_nodes"; });
  for (const TableColumn& c : table.columns) {
    const auto at = std::find(names.begin(), names.end(), c.name);
    if (at == names.end())
      throw InputError(fmt::format("column '{}' is not an axis of a {} point{}", c.name,
                                   dlrm ? "recommendation-model" : "transformer",
                                   did_you_mean(c.name, names)));
    if (c.name == "num_gpus" && has_nodes)
      throw InputError(
          "columns 'num_nodes' and 'num_gpus': give the cluster size once (num_gpus is "
          "num_nodes x gpus_per_node)");
    int axis = static_cast<int>(at - names.begin());
    if (c.name == "num_nodes") axis = dlrm ? int{kDlrmClusterSize} : int{kClusterSize};
    axis_of_column.push_back(axis);
    const auto [section, key] = spec_key(dlrm, axis, c.name);
    column_key.push_back(fmt::format("{}.{}", section, key));
    points *= static_cast<long double>(c.size());
  }
  if (points > static_cast<long double>(std::uint64_t{1} << 62))
    throw TableTooLarge(fmt::format(
        "the table's distinct values span {:.3g} points, more than a space numbers (2^62); "
        "evaluate it in parts",
        static_cast<double>(points)));

  // The spec with the table's axes: every other setting as the spec gives it, every row kept.
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    const TableColumn& col = table.columns[c];
    const int axis = axis_of_column[c];
    const auto [section, key] = spec_key(dlrm, axis, col.name);
    toml::table& t = subtable(spec, section);
    if (key == "nodes" || key == "gpus") {
      t.erase("nodes");
      t.erase("gpus");
    }
    const bool boolean =
        !dlrm && (axis == kSequenceParallel ||
                  (axis >= kFirstStackAxis && stack_settings()[axis - kFirstStackAxis].boolean));
    toml::array values;
    for (std::size_t j = 0; j < col.size(); ++j) push_value(values, col, j, boolean);
    t.insert_or_assign(key, std::move(values));
  }
  if (dlrm) subtable(spec, "workload").insert_or_assign("family", "dlrm");
  toml::table output{{"keep", "all"}};
  try {
    output.insert_or_assign("columns",
                            *toml::parse(fmt::format("columns = {}", columns))["columns"].node());
  } catch (const toml::parse_error&) {
    throw InputError(fmt::format(
        "columns: must be \"summary\", \"all\" or a list of column names, got {}", columns));
  }
  spec.insert_or_assign("output", std::move(output));
  std::ostringstream text;
  text << spec;
  std::optional<Space> space;
  try {
    space = Space::parse(text.str(), spec_name);
  } catch (const InputError& e) {
    rethrow_for_table(e, spec_name, table, column_key);
  }

  // A transformer table without pipeline splits: each row's, as `estimate` takes it (the first
  // split that places the layers of the row's model on its pipeline), where the spec's space
  // offers several.
  if (!dlrm && space->axes()[kPipelineSplit].size() > 1 &&
      std::find(axis_of_column.begin(), axis_of_column.end(), int{kPipelineSplit}) ==
          axis_of_column.end()) {
    TableSpace probe{*space, std::move(table), axis_of_column};
    const TableDigits digits = table_digits(probe);
    table = std::move(probe.table);
    const auto& axes = space->axes();
    auto value = [&](int axis, std::size_t r) {
      return static_cast<int>(axes[axis].numbers[digits.axis[axis] ? digits.axis[axis][r] : 0]);
    };
    std::vector<std::int64_t> codes(table.rows);
    std::vector<std::string> names;
    Design design;
    std::uint64_t loaded = ~std::uint64_t{0};
    bool ok = false;
    for (std::size_t r = 0; r < table.rows; ++r) {
      if (digits.design[r] != loaded) {
        Violation why;
        loaded = digits.design[r];
        ok = space->design(loaded, design, why);
      }
      // A design the rules remove has no plan to split: its rows take the first split.
      const std::string name = estimator::to_string(
          ok ? default_pipeline_split(design.workload.model, value(kPp, r), value(kVp, r))
             : estimator::PipelineSplit::even);
      auto at = std::find(names.begin(), names.end(), name);
      if (at == names.end()) at = names.insert(names.end(), name);
      codes[r] = at - names.begin();
    }
    table.columns.push_back(
        TableColumn::from_codes("pipeline_split", std::move(names), codes.data(), table.rows));
    return table_space(std::move(table), spec_text, spec_name, columns);
  }

  if (dlrm_framework) {
    TableSpace probe{*space, std::move(table), axis_of_column};
    const TableDigits digits = table_digits(probe);
    table = std::move(probe.table);
    DlrmDesign design;
    for (std::size_t r = 0; r < table.rows; ++r) {
      Violation why;
      space->dlrm_design(digits.design[r], design, why);
      const estimator::DlrmFramework given = dlrm_framework_values[dlrm_framework->code(r)];
      if (given != design.workload.framework)
        throw InputError(fmt::format(
            "row {}, column 'framework': {} is not {} ({}); a table gives a recommendation model "
            "one framework, or each accelerator's default",
            r, estimator::to_string(given),
            spec_framework ? "the spec's framework" : "the default of the row's accelerator",
            estimator::to_string(design.workload.framework)));
    }
  }

  // Every row is one point: an axis no column gives must have one value.
  const auto& space_axes = space->axes();
  for (std::size_t i = 0; i < space_axes.size(); ++i) {
    const auto given = std::find(axis_of_column.begin(), axis_of_column.end(), static_cast<int>(i));
    if (given == axis_of_column.end()) {
      if (space_axes[i].size() > 1)
        throw InputError(fmt::format(
            "{}: sweeps '{}' ({} values) and the table has no '{}' column; give each row its "
            "value",
            spec_name, space_axes[i].name, space_axes[i].size(), space_axes[i].name));
      continue;
    }
    // The parser keeps a list's order: value j of the column is value j of the axis.
    const TableColumn& col =
        table.columns[static_cast<std::size_t>(given - axis_of_column.begin())];
    bool same = space_axes[i].size() == col.size();
    for (std::size_t j = 0; same && !space_axes[i].is_label && j < col.size(); ++j)
      same = !col.is_label && space_axes[i].numbers[j] == col.numbers[j];
    if (!same)
      throw Error(fmt::format("internal: axis '{}' does not hold column '{}' in order",
                              space_axes[i].name, col.name));
  }
  return TableSpace{std::move(*space), std::move(table), std::move(axis_of_column)};
}

TableDigits table_digits(const TableSpace& ts) {
  const auto& axes = ts.space.axes();
  const int first_plan = static_cast<int>(
      std::find_if(axes.begin(), axes.end(), [](const Axis& a) { return a.is_plan; }) -
      axes.begin());
  TableDigits out;
  out.axis.assign(axes.size(), nullptr);
  for (std::size_t c = 0; c < ts.table.columns.size(); ++c)
    if (!ts.table.columns[c].codes.empty())
      out.axis[static_cast<std::size_t>(ts.axis_of_column[c])] = ts.table.columns[c].codes.data();
  // Design ids: the mixed-radix number of the design axes, the first the most significant.
  std::vector<std::pair<const std::uint32_t*, std::uint64_t>> design_digits;
  std::uint64_t stride = 1;
  for (int i = first_plan - 1; i >= 0; --i) {
    if (out.axis[static_cast<std::size_t>(i)])
      design_digits.push_back({out.axis[static_cast<std::size_t>(i)], stride});
    stride *= axes[static_cast<std::size_t>(i)].size();
  }
  out.design.assign(ts.table.rows, 0);
  for (const auto& [digits, s] : design_digits)
    for (std::size_t r = 0; r < ts.table.rows; ++r) out.design[r] += digits[r] * s;
  return out;
}

}  // namespace clustersweep::spaces
