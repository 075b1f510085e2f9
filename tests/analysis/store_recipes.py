"""Runs the Python recipes of docs/store-format.md on a real store and on its exports, then checks
what they read: every column, labels by name, and exports that round-trip the store's rows with
the priced columns `top` prints.

usage: store_recipes.py DOC STORE EXPORT.csv EXPORT.jsonl EXPORT.nc TOP.csv PRICES
  EXPORT.jsonl holds the rows with num_nodes == 2 only; PRICES is the --gpu-hour-usd text
  (NAME=price,...) both the exports and TOP.csv were priced with.
"""
import re
import sys

import numpy as np
import pandas as pd
import xarray as xr

doc, store, csv, jsonl, nc, top_csv, prices = sys.argv[1:8]
blocks = re.findall(r"```python\n(.*?)```", open(doc, encoding="utf-8").read(), re.S)
assert len(blocks) == 4, f"{doc}: expected 4 python recipes, found {len(blocks)}"


def run(block):
    for name, path in (("results.h5", store), ("results.csv", csv), ("results.jsonl", jsonl),
                       ("results.nc", nc)):
        block = block.replace(f'"{name}"', repr(path))
    namespace = {}
    exec(compile(block, doc, "exec"), namespace)
    return namespace


# h5py: every column, label codes with their names.
h = run(blocks[0])
cols, table = list(h["cols"]), h["table"]
n = len(table["point_id"])
assert n > 0 and all(len(v) == n for v in table.values())
gpu_names = sorted(h["gpus"], key=h["gpus"].get)
assert gpu_names == ["A100-SXM4-80GB", "H100-SXM5-80GB"], gpu_names
assert table["feasible"].dtype == np.bool_
assert 0 < h["h100"].sum() < n
assert "[workload]" in h["spec"]

# pandas: the same rows, labels compared by name.
p = run(blocks[1])
df = p["df"]
assert list(df.columns) == cols
assert list(df.gpu.cat.categories) == gpu_names
assert len(p["ok"]) == h["h100"].sum()
assert (p["ok"].gpu == "H100-SXM5-80GB").all() and len(p["best"]) == 5
assert p["best"].time_to_train_s.iloc[0] == table["time_to_train_s"][h["h100"]].min()

# xarray: every column on point_id, labels decoded to their names.
x = run(blocks[2])
ds = x["ds"]
assert set(ds.variables) == set(cols), set(cols) ^ set(ds.variables)
assert ds.sizes["point_id"] == n
for c in cols:
    codes = df[c].cat.codes.to_numpy() if hasattr(df[c], "cat") else None
    if codes is not None:
        assert (ds[c].values == np.asarray(df[c].cat.categories)[codes]).all(), c
    else:
        assert np.array_equal(ds[c].values, table[c], equal_nan=table[c].dtype.kind == "f"), c
assert x["h100"].sizes["point_id"] == h["h100"].sum()
assert list(x["axes"]["gpu"].values) == gpu_names

# Exports: the same rows, labels as text, booleans as booleans, priced columns.
e = run(blocks[3])
exported = e["exported"]
assert len(exported) == n and (exported.point_id.to_numpy() == table["point_id"]).all()
assert exported.feasible.dtype == bool and (exported.feasible.to_numpy() == table["feasible"]).all()
assert (exported.gpu.to_numpy() == np.asarray(df.gpu)).all()
for c in cols:
    if not hasattr(df[c], "cat") and c != "feasible":
        assert np.array_equal(exported[c].to_numpy(dtype=float), table[c].astype(float),
                              equal_nan=True), c
price = {k: float(v) for k, v in (kv.split("=") for kv in prices.split(","))}
ok = exported[exported.feasible]
usd_per_kwh = float(e["nc"].attrs["usd_per_kwh"])
expected = ok.energy_kwh * usd_per_kwh + ok.gpu_hours * ok.gpu.map(price)
assert np.allclose(ok.cost_usd, expected, rtol=1e-12), "cost_usd is not priced per accelerator"
assert len(e["cheapest"]) == 3

nc_ds = e["nc"]
assert nc_ds.sizes["point_id"] == n and nc_ds.gpu.dtype == object
assert (nc_ds.gpu.values == exported.gpu.to_numpy()).all()
assert nc_ds.feasible.dtype == bool
for c in ("cost_usd", "energy_kwh", "gpu_hours", "co2e_kg", "time_to_train_s", "num_gpus"):
    assert np.array_equal(nc_ds[c].values, exported[c].to_numpy(), equal_nan=True), c
assert nc_ds.cost_usd.attrs["units"] == "USD" and nc_ds.attrs["gpu_hour_usd"] == prices

lines = e["lines"]
two = exported[exported.num_nodes == 2].reset_index(drop=True)
assert len(lines) == len(two) > 0 and list(lines.columns) == list(exported.columns)
for c in exported.columns:
    if exported[c].dtype == object or exported[c].dtype == bool:
        assert (lines[c].to_numpy() == two[c].to_numpy()).all(), c
    else:
        assert np.array_equal(lines[c].to_numpy(dtype=float), two[c].to_numpy(dtype=float),
                              equal_nan=True), c

# The priced columns equal those `top` writes for the same rows under the same prices.
top = pd.read_csv(top_csv, float_precision="round_trip")
joined = top.merge(exported, on="point_id", suffixes=("_top", ""))
assert len(joined) == len(top) > 0
for c in ("cost_usd", "energy_kwh", "gpu_hours", "co2e_kg", "time_to_train_s"):
    assert (joined[c + "_top"] == joined[c]).all(), c
print("ok", n, len(lines))
