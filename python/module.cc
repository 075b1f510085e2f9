// clustersweep._core: the C++ side of the Python module (python/clustersweep/__init__.py wraps
// it; docs/python.md). The commands run from the same arguments as on the command line, through
// the same functions (apps/commands.h), so that their results, defaults and error messages are
// the command's; a table of points evaluates through the engine's chunk evaluator. The GIL is
// released while C++ runs; result arrays are numpy views of the engine's own rows.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "analysis/dataset.h"
#include "apps/commands.h"
#include "base/error.h"
#include "clustersweep/version.h"
#include "engine/point_table.h"
#include "spaces/point_table.h"
#include "spaces/resolve.h"

namespace py = pybind11;
using namespace clustersweep;

namespace {

py::object to_python(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded:
      return py::none();
    case nlohmann::json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return py::int_(j.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(j.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float:
      return py::float_(j.get<double>());
    case nlohmann::json::value_t::string:
      return py::str(j.get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      py::list out;
      for (const auto& e : j) out.append(to_python(e));
      return out;
    }
    case nlohmann::json::value_t::object: {
      py::dict out;
      for (const auto& [key, value] : j.items()) out[py::str(key)] = to_python(value);
      return out;
    }
    case nlohmann::json::value_t::binary:
      break;
  }
  return py::none();
}

const cli::Command& command(const std::string& name) {
  for (const auto& c : cli::commands())
    if (c.name == name) return c;
  throw py::value_error("no command '" + name + "'");
}

// A command's JSON result from its arguments, computed without the GIL.
template <class F>
py::object json_call(F f, const cli::Args& args) {
  nlohmann::ordered_json out;
  {
    py::gil_scoped_release release;
    out = f(args);
  }
  return to_python(out);
}

py::dtype dtype_of(engine::ColumnType type) {
  switch (type) {
    case engine::ColumnType::u64:
      return py::dtype::of<std::uint64_t>();
    case engine::ColumnType::u32:
      return py::dtype::of<std::uint32_t>();
    case engine::ColumnType::u16:
    case engine::ColumnType::label:
      return py::dtype::of<std::uint16_t>();
    case engine::ColumnType::u8:
    case engine::ColumnType::label8:
      return py::dtype::of<std::uint8_t>();
    case engine::ColumnType::boolean:
      return py::dtype("bool");
    case engine::ColumnType::i32:
      return py::dtype::of<std::int32_t>();
    case engine::ColumnType::f32:
      return py::dtype::of<float>();
    case engine::ColumnType::f64:
      break;
  }
  return py::dtype::of<double>();
}

// A column of Python objects (pandas' strings) as its distinct texts and each row's code into them
// (-1 for None and NaN): the same object as the row before, or as a row seen, by its address,
// which a column of a few strings repeated a million times mostly is; others by their text.
std::pair<std::vector<std::string>, py::array_t<std::int64_t>> factorize_objects(
    const py::array& objects) {
  const py::array array = py::array::ensure(objects, py::array::c_style);
  if (!array || array.ndim() != 1)
    throw InputError("a column of objects that is not one-dimensional");
  const std::size_t n = static_cast<std::size_t>(array.size());
  py::array_t<std::int64_t> codes(static_cast<py::ssize_t>(n));
  std::int64_t* out = codes.mutable_data();
  std::vector<std::string> texts;
  std::vector<std::pair<PyObject*, std::int64_t>> seen;  // objects met, with their code
  PyObject* last = nullptr;
  std::int64_t last_code = -1;
  const auto* data = static_cast<PyObject* const*>(array.data());
  for (std::size_t r = 0; r < n; ++r) {
    PyObject* o = data[r];
    if (o != last) {
      last = o;
      last_code = -1;
      for (const auto& [object, code] : seen)
        if (object == o) last_code = code;
      if (last_code < 0) {
        const py::handle h(o);
        const bool missing = o == Py_None || (PyFloat_Check(o) && std::isnan(PyFloat_AS_DOUBLE(o)));
        if (!missing) {
          const std::string text =
              PyBool_Check(o) ? (o == Py_True ? "true" : "false") : py::str(h).cast<std::string>();
          const auto at = std::find(texts.begin(), texts.end(), text);
          last_code = at - texts.begin();
          if (at == texts.end()) texts.push_back(text);
        }
        // A column of many distinct objects (all different strings) is not worth remembering.
        if (seen.size() < 64) seen.push_back({o, last_code});
      }
    }
    out[r] = last_code;
  }
  return {std::move(texts), std::move(codes)};
}

// columns: (name, array) for numbers (integers, booleans or floats), (name, categories, codes)
// for labels; an array of one value gives every row that value. Returns [(name, array, labels or
// None, unit)] of the store's columns but the ids, each array a view of the evaluated rows.
py::list evaluate_table(const py::list& columns, std::size_t rows, const std::string& spec_text,
                        const std::string& spec_name, const std::string& output_columns) {
  spaces::PointTable table;
  table.rows = rows;
  struct Input {
    std::string name;
    std::vector<std::string> categories;
    py::array values;  // int64 codes, int64 or float64 numbers; kept while the GIL is released
    bool label = false;
  };
  std::vector<Input> inputs;
  for (const auto& item : columns) {
    const auto t = item.cast<py::tuple>();
    Input in;
    in.name = t[0].cast<std::string>();
    in.label = t.size() == 3;
    const auto given = py::array::ensure(t[in.label ? 2 : 1]);
    if (!given) throw InputError("column '" + in.name + "': not an array of values");
    if (in.label) in.categories = t[1].cast<std::vector<std::string>>();
    const char kind = given.dtype().kind();
    if (kind == 'O') {  // text (or other objects): factorized here, by each row's str()
      const auto [categories, codes] = factorize_objects(given);
      in.label = true;
      in.categories = categories;
      in.values = codes;
    } else if (in.label || kind == 'i' || kind == 'u' || kind == 'b') {
      // Whole numbers as they are (no copy of an int64 column), others as float64.
      in.values = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>(given);
    } else {
      in.values = py::array_t<double, py::array::c_style | py::array::forcecast>(given);
    }
    const auto size = static_cast<std::size_t>(in.values.size());
    if (size != rows && size != 1)
      throw InputError("column '" + in.name + "': not as long as the others");
    inputs.push_back(std::move(in));
  }
  auto result = std::make_shared<engine::TableRows>();
  {
    py::gil_scoped_release release;
    for (auto& in : inputs) {
      const auto size = static_cast<std::size_t>(in.values.size());
      const void* data = in.values.data();
      if (in.label)
        table.columns.push_back(spaces::TableColumn::from_codes(
            in.name, std::move(in.categories), static_cast<const std::int64_t*>(data), size));
      else if (in.values.dtype().kind() == 'i')
        table.columns.push_back(spaces::TableColumn::from_numbers(
            in.name, static_cast<const std::int64_t*>(data), size));
      else
        table.columns.push_back(
            spaces::TableColumn::from_numbers(in.name, static_cast<const double*>(data), size));
    }
    *result = engine::evaluate_table(
        spaces::table_space(std::move(table), spec_text, spec_name, output_columns));
  }
  // One owner for every view: the rows live as long as any of their arrays.
  auto* owner = new std::shared_ptr<engine::TableRows>(result);
  py::capsule base(owner,
                   [](void* p) { delete static_cast<std::shared_ptr<engine::TableRows>*>(p); });
  py::list out;
  const auto& schema = result->schema;
  for (std::size_t c = 0; c < schema.columns.size(); ++c) {
    const engine::Column& col = schema.columns[c];
    if (col.role == "id") continue;
    py::array array(dtype_of(col.type), {static_cast<py::ssize_t>(result->rows.rows())},
                    {static_cast<py::ssize_t>(engine::element_size(col.type))}, result->rows.raw(c),
                    base);
    py::object labels = engine::is_label(col.type) ? py::object(py::cast(col.labels)) : py::none();
    out.append(py::make_tuple(col.name, array, labels, col.unit));
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "The C++ side of clustersweep; use the clustersweep package (docs/python.md).";
  m.attr("__version__") = std::string(kVersion);
  m.attr("git_revision") = std::string(kGitRevision);

  // Every error of the tool is an Error; bad input (the command line's exit code 2) an InputError
  // with the command's one-line message.
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  static py::exception<InputError> input_error(m, "InputError", error.ptr());
  static py::exception<spaces::TableTooLarge> too_large(m, "TableTooLarge", input_error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const spaces::TableTooLarge& e) {
      too_large(e.what());
    } catch (const InputError& e) {
      input_error(e.what());
    } catch (const Error& e) {
      error(e.what());
    }
  });

  m.def(
      "describe",
      [](const std::string& name) {
        const cli::CommandInfo info = cli::describe(command(name));
        py::list options;
        for (const auto& o : info.options)
          options.append(py::make_tuple(o.name, o.takes_value, o.description));
        return py::make_tuple(info.help, options, info.positional);
      },
      "(help text, [(option, takes a value, description)], positional option names) of a "
      "command");
  m.def("estimate", [](const cli::Args& a) { return json_call(cli::estimate_json, a); });
  m.def("best", [](const cli::Args& a) { return json_call(cli::best_json, a); });
  m.def("plan", [](const cli::Args& a) { return json_call(cli::plan_json, a); });
  m.def("catalog", [](const cli::Args& a) { return json_call(cli::catalog_json, a); });
  m.def("validate", [](const cli::Args& a) {
    cli::ValidateResult r;
    {
      py::gil_scoped_release release;
      r = cli::validate_result(a);
    }
    return py::make_tuple(r.predictions_csv, r.report);
  });
  m.def("calibrate", [](const cli::Args& a) {
    cli::CalibrateResult r;
    {
      py::gil_scoped_release release;
      r = cli::calibrate_result(a);
    }
    return py::make_tuple(r.output, r.toml, r.report, to_python(r.json));
  });
  m.def("export", [](const cli::Args& a) {
    py::gil_scoped_release release;
    return cli::export_rows(a);
  });
  m.def("evaluate_table", &evaluate_table, py::arg("columns"), py::arg("rows"),
        py::arg("spec_text"), py::arg("spec_name"), py::arg("output_columns"));
  // A column estimate_many computes again: a store's own, or one analysis prices from them (what
  // open_store's rows hold besides the axes).
  // {store column: setting} of the names that differ ("num_gpus": "gpus"), each an alias of the
  // other in the module's keyword arguments and tables.
  m.def("column_settings", [] {
    py::dict out;
    for (const auto& [column, setting] : spaces::kColumnSettings) out[column] = setting;
    return out;
  });
  m.def("is_output_column", [](const std::string& name) {
    return engine::is_output_column(name) || analysis::is_priced_column(name);
  });
}
