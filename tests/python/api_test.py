"""The module against the binary: every function returns what its command prints (or writes), for
the same settings, and raises the command's own message for the same mistake."""
import json
import math
import os
import random
import tempfile
import unittest

import numpy as np
import pandas as pd
import xarray as xr

import clustersweep
from support import SOURCE, cli, cli_error, cli_json, flags


def random_settings(rng, family):
    """A random point of a family: often valid, sometimes breaking a rule or a limit."""
    gpu = rng.choice(["A100-SXM4-80GB", "H100-SXM5-80GB", "B200-180GB", "MI300X-192GB"])
    if family == "dlrm":
        return dict(
            model=rng.choice(["dlrmv2-dcnv2", "dlrm-criteo-small", "dcnv2-criteo-large"]),
            gpu=gpu,
            gpus=rng.choice([1, 8, 16, 64]),
            sharding=rng.choice(["best", "table", "row", "column", "table_row", "data"]),
            precision=rng.choice(["fp32", "fp16"]),
        )
    settings = dict(
        gpu=gpu,
        gpus=rng.choice([8, 16, 64, 256]),
        tp=rng.choice([1, 2, 4, 8]),
        pp=rng.choice([1, 2, 4]),
        micro_batch=rng.choice([1, 2]),
        zero=rng.choice([0, 1, 3]),
        recompute=rng.choice(["none", "selective", "full"]),
        sequence_parallel=rng.choice([True, False]),
        training_tokens=rng.choice([1e12, 15e12]),
    )
    if family == "dense":
        settings["model"] = rng.choice(["llama3-8b", "llama3-70b", "gpt3-175b"])
    else:
        settings["model"] = rng.choice(["mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v3"])
        settings["ep"] = rng.choice([1, 2, 4, 8])
        settings["dispatcher"] = rng.choice(["alltoall", "deepep"])
    if rng.random() < 0.3:
        settings["power_cap_w"] = rng.choice([400, 500])
    if rng.random() < 0.4:
        settings["network"] = rng.choice(["rail_only", "dragonfly"])
        settings["oversubscription"] = rng.choice([1, 4])
    return settings


def error_text(call):
    try:
        call()
    except clustersweep.InputError as e:
        return str(e)
    raise AssertionError("no InputError")


class Estimate(unittest.TestCase):
    def test_equals_the_commands_json_on_random_points_of_every_family(self):
        rng = random.Random(36)
        compared = {"dense": [0, 0], "moe": [0, 0], "dlrm": [0, 0]}
        for family in compared:
            for _ in range(15):
                settings = random_settings(rng, family)
                with self.subTest(family=family, **settings):
                    code, out, err = cli("estimate", *flags(settings), "--json")
                    if code == 0:
                        self.assertEqual(clustersweep.estimate(**settings), json.loads(out))
                        compared[family][0] += 1
                    else:
                        self.assertEqual(code, 2, err)
                        message = err.strip().split("clustersweep estimate: error: ", 1)[1]
                        self.assertEqual(error_text(lambda: clustersweep.estimate(**settings)), message)
                        compared[family][1] += 1
        for family, (points, errors) in compared.items():
            self.assertGreater(points, 3, family)  # the comparison is of results, mostly

    def test_result_fields_are_attributes(self):
        r = clustersweep.estimate(model="llama3-8b", gpu="H100-SXM5-80GB", gpus=8, tp=2)
        self.assertEqual(r.step_time_s.total, r["step_time_s"]["total"])
        self.assertEqual(r.plan.tp, 2)
        self.assertIn("step_time_s", dir(r))
        with self.assertRaises(AttributeError):
            r.no_such_field

    def test_a_file_of_settings_and_flags_over_it(self):
        path = os.path.join(SOURCE, "examples", "estimate-gpt3-175b.toml")
        want = cli_json("estimate", path, "--micro-batch", "2", "--json")
        self.assertEqual(clustersweep.estimate(path, micro_batch=2), want)


class Errors(unittest.TestCase):
    """One exception, the command's own line, for each kind of mistake."""

    def test_the_same_message_as_the_command_line(self):
        base = dict(model="llama3-8b", gpu="H100-SXM5-80GB", gpus=8)
        cases = [
            ("estimate", dict(base, tp=3)),  # a rule
            ("estimate", dict(base, tpp=2)),  # an unknown flag
            ("estimate", dict(base, tp="two")),  # a bad value
            ("estimate", dict(base, gpu="H100")),  # an unknown accelerator
            ("estimate", dict(base, model="llama-8b")),  # an unknown model
            ("best", dict(base, objective="fast")),
            ("best", dict(base, top=0)),
            ("best", dict(base, model="dlrmv2-dcnv2", sharding="row")),
            ("best", dict(base, model="dlrmv2-dcnv2", objective="energy")),
        ]
        for command, settings in cases:
            with self.subTest(command=command, **settings):
                want = cli_error(command, *flags(settings))
                got = error_text(lambda: getattr(clustersweep, command)(**settings))
                self.assertEqual(got, want)

    def test_files_that_do_not_exist(self):
        self.assertEqual(
            error_text(lambda: clustersweep.plan("no-such.toml")), cli_error("plan", "no-such.toml")
        )
        self.assertEqual(
            error_text(lambda: clustersweep.validate("no-such.csv")),
            cli_error("validate", "no-such.csv"),
        )
        self.assertEqual(
            error_text(lambda: clustersweep.open_store("no-such.h5")),
            cli_error("export", "no-such.h5", "-o", "x.nc"),
        )

    def test_errors_are_input_errors_and_value_errors_of_the_tool(self):
        self.assertTrue(issubclass(clustersweep.InputError, clustersweep.Error))
        self.assertTrue(issubclass(clustersweep.Error, RuntimeError))


class Commands(unittest.TestCase):
    def test_best_equals_the_commands_json(self):
        settings = dict(model="llama3-70b", gpu="H100-SXM5-80GB", nodes=8, top=3)
        want = cli_json("best", *flags(settings), "--json")
        got = clustersweep.best(**settings)
        for result in (want, got):
            del result["stats"]["seconds"]  # the search's own time
        self.assertEqual(got, want)
        self.assertEqual(len(got.plans), 3)

    def test_best_within_a_framework(self):
        settings = dict(model="llama3-8b", gpu="H100-SXM5-80GB", gpus=16, framework="deepspeed")
        want = cli_json("best", *flags(settings), "--objective", "energy", "--top", "2", "--json")
        got = clustersweep.best(objective="energy", top=2, **settings)
        for result in (want, got):
            del result["stats"]["seconds"]
        self.assertEqual(got, want)

    def test_best_of_a_recommendation_model_ranks_its_shardings(self):
        settings = dict(model="dlrmv2-dcnv2", gpu="H100-SXM5-80GB", gpus=16)
        want = cli_json("best", *flags(settings), "--json")
        got = clustersweep.best(**settings)
        self.assertEqual(got, want)
        self.assertEqual([s.rank for s in got.shardings], [1, 2, 3, 4, 5])  # --top 5
        self.assertIn("best", [s.sharding for s in got.shardings])

    def test_plan_equals_the_commands_json(self):
        spec = os.path.join(SOURCE, "examples", "quick.toml")
        want = cli_json("plan", spec, "--json", "--sample-seconds", "0", "--ranks", "4")
        got = clustersweep.plan(spec, sample_seconds=0, ranks=4)
        for result in (want, got):  # the timed sample
            for timed in ("evaluations_per_second", "core_seconds", "seconds_on_ranks"):
                del result["forecast"][timed]
        self.assertEqual(got, want)
        self.assertEqual(got.points, got.designs * got.plans)

    def test_validate_is_the_csv_of_dash_o(self):
        for runs in ("transformer_runs.csv", "dlrm_runs.csv", "energy_runs.csv"):
            with self.subTest(runs=runs), tempfile.TemporaryDirectory() as folder:
                path = os.path.join(SOURCE, "tests", "apps", "data", runs)
                out = os.path.join(folder, "p.csv")
                code, printed, err = cli("validate", path, "-o", out)
                self.assertEqual(code, 0, err)
                want = pd.read_csv(out, keep_default_na=False, na_values=["", "nan", "NaN"])
                got = clustersweep.validate(path)
                pd.testing.assert_frame_equal(got, want)
                self.assertEqual(got.attrs["report"], printed)

    def test_calibrate_writes_the_commands_file(self):
        with tempfile.TemporaryDirectory() as folder:
            runs = pd.read_csv(
                os.path.join(SOURCE, "tests", "apps", "data", "transformer_runs.csv"),
                dtype=str, keep_default_na=False)
            mine = runs[runs.source == "DGXC_BENCH"].head(3)
            path = os.path.join(folder, "runs.csv")
            mine.to_csv(path, index=False)
            out = os.path.join(folder, "site.toml")
            code, printed, err = cli("calibrate", path, "-o", out)
            self.assertEqual(code, 0, err)
            with open(out, encoding="utf-8") as f:
                want = f.read()
            for given in (path, [path], mine):
                site = clustersweep.calibrate(given)
                self.assertEqual(site.text, want)
                self.assertEqual(site.report + "wrote %s\n" % out, printed)
                with open(site, encoding="utf-8") as f:
                    self.assertEqual(f.read(), want)
            self.assertEqual(site.site.runs, 3)
            # Accepted as calibration= wherever a calibration file is, with the same answer.
            point = dict(model="gpt3-175b", gpu="H100-SXM5-80GB", gpus=1024, tp=8, pp=8)
            self.assertEqual(
                clustersweep.estimate(calibration=site, **point),
                cli_json("estimate", "--json", "--calibration", out, *flags(point)),
            )
            many = clustersweep.estimate_many(
                pd.DataFrame({"tp": [8]}), calibration=site, columns=["step_time_s"],
                model="gpt3-175b", gpu="H100-SXM5-80GB", num_gpus=1024, pp=8)
            self.assertAlmostEqual(
                many.step_time_s.iloc[0],
                clustersweep.estimate(calibration=site, **point).step_time_s.total, places=12)
            self.assertEqual(clustersweep.best(calibration=out, top=1, **point)["plans"],
                             clustersweep.best(calibration=site, top=1, **point)["plans"])
            # Bad input: the command's message.
            with self.assertRaises(clustersweep.InputError) as raised:
                clustersweep.calibrate(path, base=os.path.join(folder, "none.toml"))
            self.assertEqual(str(raised.exception),
                             cli_error("calibrate", path, "-o", os.path.join(folder, "x.toml"),
                                       "--calibration", os.path.join(folder, "none.toml")))

    def test_catalog_equals_the_commands_json(self):
        for kind, function in (
            ("models", clustersweep.catalog.models),
            ("dlrm-models", clustersweep.catalog.dlrm_models),
            ("accelerators", clustersweep.catalog.accelerators),
        ):
            with self.subTest(kind=kind):
                want = pd.DataFrame(cli_json("catalog", kind, "--json"))
                pd.testing.assert_frame_equal(function(), want)
        self.assertIn("H100-SXM5-80GB", set(clustersweep.catalog.accelerators().gpu))

    def test_open_store_is_what_export_writes(self):
        with tempfile.TemporaryDirectory() as folder:
            store = os.path.join(folder, "quick.h5")
            nc = os.path.join(folder, "quick.nc")
            spec = os.path.join(SOURCE, "examples", "quick.toml")
            self.assertEqual(cli("run", spec, "-o", store, "--no-summary")[0], 0)
            self.assertEqual(cli("export", store, "-o", nc, "--where", "feasible")[0], 0)
            with xr.open_dataset(nc, engine="h5netcdf") as want:
                got = clustersweep.open_store(store, where="feasible")
                xr.testing.assert_identical(got, want.load())
            self.assertEqual(got.gpu.dtype.kind, "O")  # labels as text

    def test_help_is_the_commands_help(self):
        self.assertIn("--tp arg", clustersweep.estimate.__doc__)
        self.assertIn("Usage: clustersweep best", clustersweep.best.__doc__)
        self.assertIn("columns", clustersweep.estimate_many.__doc__)

    def test_one_version_for_the_binary_and_the_module(self):
        self.assertIn("clustersweep %s " % clustersweep.__version__, cli("--version")[1])


def same_columns(test, got, want, skip=()):
    """Every column of `want` (a store's rows) equals got's: numbers exactly, NaN as NaN, labels
    by their text."""
    for name in want.columns:
        if name in skip:
            continue
        with test.subTest(column=name):
            a, b = got[name], want[name]
            if isinstance(a.dtype, pd.CategoricalDtype) or b.dtype.kind == "O":
                test.assertEqual(list(a.astype(str)), list(b.astype(str)))
            else:
                np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())


class EstimateMany(unittest.TestCase):
    SPECS = {
        "transformer": """
[workload]
model = ["llama3-8b", "mixtral-8x7b"]
training_tokens = 1e12
[cluster]
gpu = ["A100-SXM4-80GB", "H100-SXM5-80GB"]
nodes = [1, 2]
power_cap_w = [0, 500]
network = ["fat_tree", "rail_only"]
oversubscription = 2
[plan]
tp = "all"
pp = [1, 2]
micro_batch = [1, 2]
zero = [0, 1]
recompute = "all"
ep = "all"
[pricing]
gpu_hour_usd = 2.5
[output]
keep = "all"
columns = "all"
""",
        "dlrm": """
[workload]
family = "dlrm"
model = ["dlrm-criteo-small", "dlrmv2-dcnv2"]
precision = ["fp32", "fp16"]
[cluster]
gpu = ["A100-SXM4-40GB", "H100-SXM5-80GB"]
gpus = [1, 8, 16]
[plan]
sharding = "all"
[output]
keep = "all"
columns = "all"
""",
    }

    def test_a_stores_own_rows_evaluate_as_the_sweep_wrote_them(self):
        for family, text in self.SPECS.items():
            with self.subTest(family=family), tempfile.TemporaryDirectory() as folder:
                spec = os.path.join(folder, "spec.toml")
                with open(spec, "w") as f:
                    f.write(text)
                store = os.path.join(folder, "s.h5")
                self.assertEqual(cli("run", spec, "-o", store, "--no-summary")[0], 0)
                rows = clustersweep.open_store(store).to_dataframe()
                # In the store's order, and shuffled (each design's rows apart).
                for order in (rows, rows.sample(frac=1, random_state=1)):
                    got = clustersweep.estimate_many(order, spec=spec, columns="all")
                    self.assertEqual(list(got.index), list(order.index))
                    priced = ("point_id", "design_id", "energy_kwh", "co2e_kg", "gpu_hours", "cost_usd")
                    same_columns(self, got, order, skip=priced)

    def test_each_row_is_what_estimate_says_of_it(self):
        rng = random.Random(7)
        points = [random_settings(rng, "dense") for _ in range(40)]
        for p in points:  # a spec's setting, not an axis: the default for every row
            del p["training_tokens"]
        table = pd.DataFrame(points).rename(columns={"gpus": "num_gpus"})
        table["power_cap_w"] = table.power_cap_w.fillna(0)  # 0: no cap, as a point without one
        table["network"] = table.network.fillna("fat_tree")
        table["oversubscription"] = table.oversubscription.fillna(1)
        got = clustersweep.estimate_many(table)
        for i, settings in enumerate(points):
            with self.subTest(**settings):
                try:
                    r = clustersweep.estimate(**settings)
                except clustersweep.InputError:
                    self.assertFalse(got.feasible[i])  # a rule removes it from a table
                    self.assertNotEqual(got.infeasible_reason[i], "none")
                    continue
                self.assertEqual(bool(got.feasible[i]), r.feasible)
                if r.feasible:
                    self.assertEqual(got.step_time_s[i], r.step_time_s.total)
                    self.assertEqual(got.time_to_train_s[i], r.job.time_to_train_s)
                    self.assertAlmostEqual(got.mfu[i], r.mfu, places=6)  # float32 in a store

    def test_columns_constants_and_labels(self):
        table = pd.DataFrame({"tp": [1, 2, 4], "recompute": pd.Categorical(["none", "full", "none"])})
        out = clustersweep.estimate_many(
            table, model="llama3-8b", gpu="H100-SXM5-80GB", num_gpus=8,
            columns=["gpu", "dp", "recompute", "mfu"],
        )
        self.assertEqual(list(out.gpu.astype(str)), ["H100-SXM5-80GB"] * 3)
        self.assertEqual(list(out.dp), [8, 4, 2])
        self.assertIn("mfu", out.columns)
        self.assertNotIn("tokens_per_s", out.columns)
        self.assertIsInstance(out.recompute.dtype, pd.CategoricalDtype)

    def test_flag_and_column_names_are_aliases_of_each_other(self):
        # estimate takes the store's column names, estimate_many the flags' names.
        by_flag = clustersweep.estimate(model="llama3-8b", gpu="H100-SXM5-80GB", gpus=64, tp=4)
        by_column = clustersweep.estimate(
            model="llama3-8b", gpu="H100-SXM5-80GB", num_gpus=64, tp=4
        )
        self.assertEqual(by_flag, by_column)
        by_nodes = clustersweep.estimate(model="llama3-8b", gpu="H100-SXM5-80GB", num_nodes=8, tp=4)
        self.assertEqual(by_nodes.step_time_s.total, by_flag.step_time_s.total)
        for table, constants in [
            (pd.DataFrame({"tp": [4], "gpus": [64]}), {}),
            (pd.DataFrame({"tp": [4], "nodes": [8]}), {}),
            (pd.DataFrame({"tp": [4]}), {"gpus": 64}),
            (pd.DataFrame({"tp": [4]}), {"num_gpus": 64}),
        ]:
            with self.subTest(columns=list(table.columns), constants=constants):
                got = clustersweep.estimate_many(
                    table, model="llama3-8b", gpu="H100-SXM5-80GB", **constants
                )
                self.assertEqual(list(got.num_gpus), [64])
                self.assertEqual(got.step_time_s[0], by_flag.step_time_s.total)
        self.assertEqual(
            error_text(lambda: clustersweep.estimate_many(
                pd.DataFrame({"gpus": [8], "num_nodes": [1]}),
                model="llama3-8b", gpu="H100-SXM5-80GB",
            )),
            "columns 'num_nodes' and 'num_gpus': give the cluster size once (num_gpus is "
            "num_nodes x gpus_per_node)",
        )

    def test_errors_name_the_row_and_the_column(self):
        base = dict(model="llama3-8b", gpu="H100-SXM5-80GB", num_gpus=8)
        cases = [
            (pd.DataFrame({"tpp": [1]}), "column 'tpp' is not an axis of a transformer point; "
             "did you mean 'tp', 'pp' or 'gpu'?"),
            (pd.DataFrame({"tp": [1, 2, -1]}), "row 2, column 'tp': must be a positive integer, got -1"),
            (pd.DataFrame({"tp": [1.0, math.nan]}), "row 1, column 'tp': no value (NaN)"),
            (pd.DataFrame({"recompute": ["none", "some"]}), "row 1, column 'recompute': must be "
             "none, selective, full or selective:MODULE+MODULE... of core_attn, layernorm, "
             "mla_up_proj, mlp, moe_act, moe, shared_experts, a list of them or \"all\", got "
             "string \"some\""),
        ]
        for table, message in cases:
            with self.subTest(message=message):
                self.assertEqual(error_text(lambda: clustersweep.estimate_many(table, **base)), message)
        self.assertEqual(
            error_text(lambda: clustersweep.estimate_many(pd.DataFrame({"tp": [1]}), columns=["mfux"], **base)),
            "columns: 'mfux' is no column of this transformer store; did you mean 'mfu'?",
        )

    def test_a_table_of_more_distinct_values_than_one_space_numbers(self):
        rng = np.random.default_rng(3)
        n = 400
        table = pd.DataFrame({
            "num_gpus": 8 * rng.integers(1, 10_000, n),
            "hbm_gb": rng.uniform(40, 200, n),
            "inter_node_gbps_per_gpu": rng.uniform(100, 800, n),
            "nvlink_gbytes_per_s": rng.uniform(100, 900, n),
            "power_cap_w": rng.uniform(400, 700, n),
            "global_batch": 8 * rng.integers(100, 5000, n),
            "micro_batch": rng.integers(1, 4, n),
        })
        out = clustersweep.estimate_many(table, model="llama3-8b", gpu="H100-SXM5-80GB")
        self.assertEqual(list(out.index), list(table.index))
        np.testing.assert_array_equal(out.hbm_gb.to_numpy(), table.hbm_gb.to_numpy())


if __name__ == "__main__":
    unittest.main()
