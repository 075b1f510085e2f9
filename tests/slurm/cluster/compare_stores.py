#!/usr/bin/python3
"""compare_stores.py A.h5 B.h5: exit 0 when two clustersweep stores hold the same data.

The data are every dataset outside /progress (the result columns and the /axes value tables),
compared element for element and type for type, and the root attributes that describe what was
swept (spec, keep, space size). Run metadata (times, rank counts, chunk layout, host) may differ.
Prints the first difference and exits 1 otherwise. Needs only h5py (python3-h5py).
"""
import sys

import h5py
import numpy as np

DESCRIBING = ("format", "format_version", "spec", "spec_hash", "keep", "objective", "rows",
              "space_points", "space_designs", "plan_points", "complete", "columns")


def datasets(f):
    found = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and not name.startswith("progress/"):
            found[name] = obj
    f.visititems(visit)
    return found


def same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    return a == b


def main(path_a, path_b):
    with h5py.File(path_a, "r") as a, h5py.File(path_b, "r") as b:
        for name in DESCRIBING:
            if not same(a.attrs.get(name), b.attrs.get(name)):
                return f"root attribute {name}: {a.attrs.get(name)!r} != {b.attrs.get(name)!r}"
        if a.attrs.get("complete") != 1:
            return f"{path_a} is not complete"
        da, db = datasets(a), datasets(b)
        if sorted(da) != sorted(db):
            return f"datasets differ: {sorted(set(da) ^ set(db))}"
        for name in sorted(da):
            x, y = da[name], db[name]
            if x.dtype != y.dtype or x.shape != y.shape:
                return f"{name}: {x.dtype}{x.shape} != {y.dtype}{y.shape}"
            xv, yv = x[()], y[()]
            equal = (xv.tobytes() == yv.tobytes()) if xv.dtype.kind in "biufc" else np.array_equal(xv, yv)
            if not equal:
                bad = np.flatnonzero(xv != yv)
                first = int(bad[0]) if bad.size else -1
                return f"{name}: differs at row {first}: {xv[first]!r} != {yv[first]!r}"
        rows = a.attrs.get("rows")
        print(f"same data: {len(da)} datasets, {rows} rows")
    return None


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    problem = main(sys.argv[1], sys.argv[2])
    if problem:
        print(f"stores differ: {problem}", file=sys.stderr)
        sys.exit(1)
