"""clustersweep in Python: the estimator, the plan search and the store from a notebook.

The functions mirror the commands of the `clustersweep` binary and run the same C++ (the
extension `clustersweep._core`), with the same names, defaults and error messages:

    estimate(model=..., gpu=..., gpus=..., tp=...)   # clustersweep estimate --json
    best(model=..., gpu=..., nodes=..., top=5)       # clustersweep best --json
    validate("runs.csv")                             # clustersweep validate -o (a DataFrame)
    calibrate("mine.csv")                            # clustersweep calibrate -o (a Calibration)
    plan("spec.toml")                                # clustersweep plan --json
    open_store("results.h5")                         # clustersweep export -o FILE.nc (xarray)
    catalog.models(), catalog.accelerators()         # clustersweep catalog --json
    estimate_many(points)                            # a DataFrame of points, at the C++ speed

A keyword argument is the command's flag with '_' for '-' (tp=8 is --tp 8, sequence_parallel=True
is --sequence-parallel true), or the store's column of it (num_gpus=8 is --gpus 8); None leaves a
flag out. estimate_many's columns and keyword arguments take either name as well. Bad input raises
InputError with the one line the command prints after "error: ". See docs/python.md.
"""

import os as _os
import tempfile as _tempfile

from . import _core
from ._core import Error, InputError, TableTooLarge

__version__ = _core.__version__
__all__ = [
    "Error",
    "InputError",
    "Calibration",
    "Result",
    "best",
    "calibrate",
    "catalog",
    "estimate",
    "estimate_many",
    "open_store",
    "plan",
    "validate",
]


class Result(dict):
    """A command's JSON result: a dict whose keys are also attributes (r.step_time_s.total)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __dir__(self):
        return list(super().__dir__()) + list(self.keys())


def _result(value):
    if isinstance(value, dict):
        return Result((k, _result(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_result(v) for v in value]
    return value


_described = {}
_column_settings = _core.column_settings()  # a store column's name is an alias of its flag's


def _options(command):
    """{flag: whether it takes a value} of a command."""
    if command not in _described:
        _described[command] = {name: takes for name, takes, _ in _core.describe(command)[1]}
    return _described[command]


def _text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(_text(v) for v in value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _argv(command, kwargs, positional=()):
    """The command line of keyword arguments: the same flags, so the same parsing and errors."""
    takes_value = _options(command)
    argv = [_text(p) for p in positional]
    for key, value in kwargs.items():
        if value is None:
            continue
        flag = _column_settings.get(key, key).replace("_", "-")
        if flag not in takes_value:  # the command names it as the command line would
            argv += ["--" + flag, _text(value)]
            continue
        if takes_value[flag] is False:  # a switch: True sets it, False leaves it out
            if value is True:
                argv.append("--" + flag)
            elif value is not False:
                argv.append("--%s=%s" % (flag, _text(value)))
            continue
        argv.append("--%s=%s" % (flag, _text(value)))
    return argv


def _document(function, command, intro):
    function.__doc__ = (
        intro.strip()
        + "\n\nThe keyword arguments are the flags of `clustersweep %s` ('_' for '-'):\n\n" % command
        + _core.describe(command)[0]
    )
    return function


def estimate(file=None, **settings):
    result = _core.estimate(_argv("estimate", dict(file=file, **settings)))
    return _result(result)


def best(file=None, *, objective="step_time", top=5, **settings):
    result = _core.best(
        _argv("best", dict(file=file, objective=objective, top=top, **settings))
    )
    return _result(result)


def plan(spec, **options):
    return _result(_core.plan(_argv("plan", dict(spec=spec, **options))))


def validate(*runs, **options):
    import io

    import pandas as pd

    csv, report = _core.validate(_argv("validate", options, positional=runs))
    frame = pd.read_csv(io.StringIO(csv), keep_default_na=False, na_values=["", "nan", "NaN"])
    frame.attrs["report"] = report
    return frame


class Calibration:
    """A site calibration (`clustersweep calibrate`): the TOML text of the calibration file, the
    printed report and its JSON (`site`), kept in a file of its own for as long as the object
    lives. estimate, best, validate and estimate_many take it as calibration=; os.fspath() and
    str() give its file."""

    def __init__(self, text, report, site):
        import shutil
        import weakref

        folder = _tempfile.mkdtemp(prefix="clustersweep-calibration-")
        weakref.finalize(self, shutil.rmtree, folder, ignore_errors=True)
        self.path = _os.path.join(folder, "site.toml")
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(text)
        self.text = text
        self.report = report
        self.site = _result(site)

    def __fspath__(self):
        return self.path

    def __str__(self):
        return self.path

    def __repr__(self):
        return "Calibration(%r)" % self.report.splitlines()[0] if self.report else "Calibration()"


def calibrate(runs, base=None):
    import pandas as pd

    with _tempfile.TemporaryDirectory(prefix="clustersweep-") as folder:
        if isinstance(runs, pd.DataFrame):
            path = _os.path.join(folder, "runs.csv")
            runs.to_csv(path, index=False)
            paths = [path]
        elif isinstance(runs, (str, _os.PathLike)):
            paths = [_os.fspath(runs)]
        else:
            paths = [_os.fspath(r) for r in runs]
        output = _os.path.join(folder, "site.toml")
        argv = paths + ["-o", output]
        if base is not None:
            argv += ["--calibration", _os.fspath(base)]
        _, text, report, site = _core.calibrate(argv)
    return Calibration(text, report, site)


class _Catalog:
    """The built-in catalog (`clustersweep catalog --json`), as DataFrames."""

    @staticmethod
    def _frame(kind):
        import pandas as pd

        return pd.DataFrame(_core.catalog([kind]))

    def models(self):
        """Transformer models: shapes, parameters, published sequence length and batch."""
        return self._frame("models")

    def dlrm_models(self):
        """Recommendation models: tables, rows, embedding dimension, published batch."""
        return self._frame("dlrm-models")

    def accelerators(self):
        """Accelerators: peak TFLOP/s per precision, HBM, NVLink, power, servers."""
        return self._frame("accelerators")


catalog = _Catalog()


def open_store(store, **options):
    import xarray as xr

    with _tempfile.TemporaryDirectory(prefix="clustersweep-") as folder:
        path = _os.path.join(folder, "store.nc")
        _core.export(_argv("export", dict(output=path, **options), positional=[store]))
        with xr.open_dataset(path, engine="h5netcdf") as dataset:
            return dataset.load()


def _table_columns(frame, constants):
    """The table's columns for _core.evaluate_table: numbers as arrays, labels as categories
    and codes, a constant as one value."""
    import numpy as np
    import pandas as pd

    names = [str(name) for name in frame.columns]
    columns = []
    for name, (_, series) in zip(names, frame.items()):
        if _core.is_output_column(name) or (name == "num_gpus" and "num_nodes" in names):
            continue
        if isinstance(series.dtype, pd.CategoricalDtype):
            categories = [str(c) for c in series.cat.categories]
            columns.append((name, categories, series.cat.codes.to_numpy()))
        elif pd.api.types.is_bool_dtype(series.dtype) or pd.api.types.is_numeric_dtype(series.dtype):
            columns.append((name, series.to_numpy()))
        else:  # text: factorized by the extension, faster than pandas for a few repeated labels
            columns.append((name, series.to_numpy(dtype=object)))
    for name, value in constants.items():
        if isinstance(value, str):
            columns.append((name, [value], np.zeros(1, np.int64)))
        else:
            columns.append((name, np.array([value])))
    return columns


def _evaluate(frame, constants, spec_text, spec_name, columns):
    import pandas as pd

    try:
        out = _core.evaluate_table(
            _table_columns(frame, constants), len(frame), spec_text, spec_name, columns
        )
    except TableTooLarge:
        # The table's distinct values span more points than one space numbers: its halves.
        if len(frame) < 2:
            raise
        half = len(frame) // 2
        return pd.concat(
            [
                _evaluate(frame.iloc[:half], constants, spec_text, spec_name, columns),
                _evaluate(frame.iloc[half:], constants, spec_text, spec_name, columns),
            ]
        )
    data = {}
    for name, array, labels, _unit in out:
        data[name] = pd.Categorical.from_codes(array, labels) if labels is not None else array
    return pd.DataFrame(data, index=frame.index, copy=False)


def estimate_many(points, spec=None, columns="summary", calibration=None, **constants):
    import json

    import pandas as pd

    frame = points if isinstance(points, pd.DataFrame) else pd.DataFrame(points)
    spec_text = ""
    if spec is not None:
        try:
            with open(spec, encoding="utf-8") as f:
                spec_text = f.read()
        except OSError as e:
            raise InputError("cannot read spec '%s': %s" % (spec, e.strerror)) from None
    if calibration is not None:
        # The spec's top-level key, before any table of the spec's own.
        path = _os.path.abspath(_os.fspath(calibration))
        spec_text = "calibration = %s\n" % json.dumps(path) + spec_text
    return _evaluate(
        frame,
        constants,
        spec_text,
        spec if spec is not None else "<estimate_many>",
        json.dumps(columns if isinstance(columns, str) else list(columns)),
    )


_document(
    estimate,
    "estimate",
    """
estimate(file=None, **settings) -> Result

One training step of one model on one cluster with one plan: the JSON of
`clustersweep estimate --json` (step_time_s with its breakdown, memory_bytes, the 90% interval,
calibration_support, power, job, defaults) as a Result. `file` is a TOML file of the same
settings; keyword arguments override it, as flags do.

    >>> r = clustersweep.estimate(model="llama3-8b", gpu="H100-SXM5-80GB", gpus=8, tp=2)
    >>> r.step_time_s.total, r.mfu
""",
)
_document(
    best,
    "best",
    """
best(file=None, *, objective="step_time", top=5, framework=None, **settings) -> Result

The best parallel plans of one model on one cluster by the exact plan search: the JSON of
`clustersweep best --json` (plans, best first, each with its step time, interval, support and
frameworks; stats). A plan setting given (tp=8) fixes it. For a recommendation model
(model="dlrmv2-dcnv2"), the planner's best placement and every sharding of its tables, fits
first and fastest first (shardings: rank, sharding, placement, step_time_s, samples_per_s,
hbm_gb, fits).
""",
)
_document(
    plan,
    "plan",
    """
plan(spec, ranks=None, sample_seconds=None) -> Result

A sweep spec's axes, point counts (total, valid, removed by rule) and forecast of run time and
store size: the JSON of `clustersweep plan SPEC --json`.
""",
)
_document(
    validate,
    "validate",
    """
validate(*runs, calibration=None, fit=None, best=False, robust=False, held_out=False)
    -> pandas.DataFrame

Predicts the published runs of the CSV files `runs` (transformer_runs.csv and moe_runs.csv
together, dlrm_runs.csv or energy_runs.csv alone): one row a run, the columns `-o` writes. The
printed summary (MAPE, median, per source) is in frame.attrs["report"].
""",
)
_document(
    calibrate,
    "calibrate",
    """
calibrate(runs, base=None) -> Calibration

A site calibration from measured runs of your own cluster: `runs` is a DataFrame in the columns of
transformer_runs.csv, moe_runs.csv or dlrm_runs.csv, a CSV file or a list of them; `base` a
calibration file (default: the built-in calibration). The result is the file `clustersweep
calibrate RUNS -o site.toml` writes (its text, report and JSON), which estimate, best, validate and
estimate_many take as calibration=.

    >>> site = clustersweep.calibrate("mine.csv")
    >>> clustersweep.estimate(model="llama3-8b", gpu="H100-SXM5-80GB", gpus=8, calibration=site)
""",
)
_document(
    open_store,
    "export",
    """
open_store(store, where=None, columns=None, **pricing) -> xarray.Dataset

A store's rows as an xarray Dataset along the dimension `row`, labels as text and the priced
columns added: the same dataset `clustersweep export STORE -o FILE.nc` writes, read into memory.
`where` keeps the rows of a filter expression ("feasible", "tp >= 4").
""",
)
estimate_many.__doc__ = """
estimate_many(points, spec=None, columns="summary", calibration=None, **constants)
    -> pandas.DataFrame

Evaluates a table of points at the estimator's speed: one row a point, columns named as the
store's axis columns or as the flags (model, gpu, num_gpus or gpus, num_nodes or nodes, tp, pp,
micro_batch, recompute...; a column left out takes its default, a keyword argument gives every row
one value). Returns the
store's columns for every row, in the table's order and index: the axes with defaults resolved,
dp, feasible, infeasible_reason and the metrics, label columns as pandas Categoricals. `columns`
is the spec's `[output] columns`: "summary" (the metrics a store keeps by default), "all" (every
breakdown and interval) or a list of names. A store's
own rows (open_store(...).to_dataframe()) evaluate as they are: the computed columns are ignored.

`calibration` is a calibration file (or a Calibration from calibrate()), as a spec's top-level
`calibration` key. `spec` is a sweep spec whose other settings apply (training_tokens, [pricing], [reliability],
calibration, constraints); an axis it sweeps must be a column. Each row passes the same rules as
a sweep's point: a row the rules remove is feasible = False with its infeasible_reason. Rows of
one design (model, cluster) next to each other evaluate fastest.

    >>> import pandas as pd
    >>> points = pd.DataFrame({"tp": [1, 2, 4], "pp": [1, 1, 2]})
    >>> clustersweep.estimate_many(points, model="llama3-8b", gpu="H100-SXM5-80GB", num_gpus=8)
"""
