#!/usr/bin/python3
"""Regenerates the figures of docs/case-studies.md from what clustersweep computes now.

The document marks every generated part: a block between `<!-- begin generated: NAME -->` and
`<!-- end generated: NAME -->`, a value inside prose between `<!--v:NAME-->` and `<!--/v-->`.
The script runs the studies' sweeps (COMET GPT-3 175B and Transformer-1T, DeepSeek-V3, Llama 3.1
405B with and without failures, both on tapered networks) into a scratch folder, reads them back
with `summary --json`, `sensitivity --json`, `top --json`, `pareto --json` and `status --json`,
evaluates the DLRM points and the software stack's settings with `estimate --json` (their plans
from `best --json`), and fills the marks. Prose between the marks is written by hand and must stay
true of the figures it cites; the test `CaseStudiesAreCurrent` runs `--check`.

Usage: scripts/case-studies.py [--check] [--bin build/bin/clustersweep] [--doc docs/case-studies.md]
  --check  write nothing; print a diff and exit 1 when the document is not current
(About 5 s on one core.)"""
import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Clustersweep:
    def __init__(self, binary, scratch):
        self.binary, self.scratch = binary, scratch

    def __call__(self, *args):
        return subprocess.run([self.binary, *args], check=True, capture_output=True,
                              text=True).stdout

    def json(self, *args):
        return json.loads(self(*args, "--json"))

    def sweep(self, example):
        store = os.path.join(self.scratch, example.replace(".toml", ".h5"))
        if os.path.exists(store):  # swept already for another study
            return store
        self("run", os.path.join(ROOT, "examples", example), "-o", store, "--progress", "none",
             "--no-summary")
        return store


# How the figures read: the same rules throughout the document.
def x(ratio):
    return f"{ratio:.3g}x" if ratio < 10 else f"{ratio:.1f}x"


def days(seconds):
    d = seconds / 86400
    return f"{d:.3g} days"


def pct(fraction):
    p = 100 * fraction
    return f"{p:.1f}%" if p >= 0.1 else f"{p:.2f}%" if p >= 0.01 else f"{p:.3f}%"


def commas(n):
    return f"{n:,}"


def ratio_range(ratios):
    lo, hi = min(ratios), max(ratios)
    return x(lo) if f"{lo:.3g}" == f"{hi:.3g}" else f"{lo:.3g}–{x(hi)}"


SHORT = {"num_nodes": "num_nodes", "inter_node_gbps_per_gpu": "scale-out", "hbm_gb": "HBM",
         "expansion_gb": "expansion", "expansion_gbytes_per_s": "expansion bandwidth",
         "gpu": "gpu", "nvlink_gbytes_per_s": "NVLink"}


def shares(sensitivity, n=4):
    parts = []
    for e in sensitivity["effects"][:n]:
        name = " with ".join(SHORT.get(a, a) for a in e["axes"])
        parts.append(f"{name} {pct(e['share_r2'])}")
    return ", ".join(parts)


def spec_list(value):
    return value if isinstance(value, str) else ", ".join(str(v) for v in value)


def settings(row, axes):
    return " ".join(f"{a}={row[a]}" for a in axes)


def comet(cs, values, blocks):
    studies = {}
    for key, example in [("175b", "comet-gpt3-175b.toml"), ("1t", "comet-transformer-1t.toml")]:
        store = cs.sweep(example)
        with open(os.path.join(ROOT, "examples", example), "rb") as f:
            spec = tomllib.load(f)
        summary = cs.json("summary", store)
        per_gpu = {gpu: cs.json("summary", store, "--where", f"gpu == '{gpu}'")
                   for gpu in summary["best_per_accelerator"]}
        studies[key] = dict(store=store, spec=spec, summary=summary, per_gpu=per_gpu,
                            sensitivity=cs.json("sensitivity", store),
                            status=cs.json("status", store, "--interval", "0"))
    a, b = studies["175b"], studies["1t"]

    def axis(study, name):
        return next(ax["values"] for ax in study["summary"]["axes"] if ax["name"] == name)

    def listed(values, unit=""):
        return ", ".join(str(v) for v in values) + unit

    rows = [
        ("tokens", lambda s: f"{s['spec']['workload']['training_tokens'] / 1e9:.0f} B"),
        ("accelerators", lambda s: ", ".join(axis(s, "gpu"))),
        ("cluster sizes", lambda s: f"{min(axis(s, 'num_gpus'))}–{max(axis(s, 'num_gpus'))} GPUs "
                                    f"({min(axis(s, 'num_nodes'))}–{max(axis(s, 'num_nodes'))} "
                                    "nodes)"),
        ("scale-out per GPU", lambda s: listed(axis(s, "inter_node_gbps_per_gpu"), " Gbit/s")),
        ("HBM per GPU (what-if)", lambda s: listed(axis(s, "hbm_gb"), " GB")),
        ("expansion tier per GPU", lambda s: listed(axis(s, "expansion_gb"), " GB") + " at " +
         " or ".join(str(v) for v in axis(s, "expansion_gbytes_per_s")) + " GB/s"),
        ("plans", lambda s: "; ".join(f"{k} {spec_list(v)}" for k, v in s["spec"]["plan"].items())),
        ("points evaluated / designs kept",
         lambda s: f"{commas(s['status']['points'])} / {commas(s['summary']['rows'])}"),
    ]
    table = ["| | GPT-3 175B (`comet-gpt3-175b.toml`) | Transformer-1T "
             "(`comet-transformer-1t.toml`) |", "|---|---|---|"]
    table += [f"| {name} | {f(a)} | {f(b)} |" for name, f in rows]
    blocks["comet-studies"] = "\n".join(table)

    def spread(study):
        s = study["summary"]["spreads"][0]
        return (f"{x(s['ratio'])} ({days(s['worst']['time_to_train_s'])} vs "
                f"{days(s['best']['time_to_train_s'])})")

    def within(study):
        if len(study["per_gpu"]) == 1:
            return f"{x(study['summary']['spreads'][0]['ratio'])} (one type)"
        return ", ".join(f"{x(p['spreads'][0]['ratio'])} {gpu.split('-')[0]}"
                         for gpu, p in study["per_gpu"].items())

    def equal_gpus(study):
        eq = study["summary"]["spreads_at_equal_gpus"]
        widest = max(eq, key=lambda s: s["ratio"])
        text = (f"{ratio_range([s['ratio'] for s in eq])} ({x(widest['ratio'])} at "
                f"{widest['workload'].split('=')[1]} GPUs)")
        if len(study["per_gpu"]) > 1:
            text += "; one accelerator: " + ", ".join(
                f"{ratio_range([s['ratio'] for s in p['spreads_at_equal_gpus']])} "
                f"{gpu.split('-')[0]}" for gpu, p in study["per_gpu"].items())
        return text

    def expansion(study, what):
        e = study["summary"]["expansion"]
        if what == "max":
            return f"**{x(e['max_gain'])}**"
        return (f"{x(e['median_gain'])}; {e['faster_with_tier']} of "
                f"{e['clusters_compared']}")

    results = [
        ("spread over all configurations (worst best-plan time / best)", "up to 7.7x", spread),
        ("spread within one accelerator type", "", within),
        ("spread at equal GPU count (widest size)", "", equal_gpus),
        ("expansion tier: max gain (best without / best with)", "up to 1.4x",
         lambda s: expansion(s, "max")),
        ("expansion tier: median gain; clusters faster with it", "",
         lambda s: expansion(s, "median")),
        ("what explains log(time) (sensitivity, Shapley share)", "",
         lambda s: shares(s["sensitivity"])),
    ]
    table = ["| quantity | COMET | GPT-3 175B | Transformer-1T |", "|---|---|---|---|"]
    table += [f"| {name} | {theirs} | {f(a)} | {f(b)} |" for name, theirs, f in results]
    blocks["comet-results"] = "\n".join(table)

    e = a["summary"]["expansion"]
    without, with_ = e["max_gain_without"], e["max_gain_with"]
    plan = ["tp", "pp", "vp", "micro_batch", "offload", "dp"]
    blocks["comet-expansion-example"] = "\n".join([
        "```",
        f"without: {days(without['time_to_train_s']):<10} {settings(without, plan)}",
        f"with:    {days(with_['time_to_train_s']):<10} "
        f"{settings(with_, ['expansion_gb', 'expansion_gbytes_per_s'])} | "
        f"{settings(with_, plan)}",
        "```"])
    values["175b-example-cluster"] = (
        f"{without['num_gpus']} H100s with {without['hbm_gb']} GB of HBM and "
        f"{without['inter_node_gbps_per_gpu']} Gbit/s per GPU")
    values["175b-example-tp"] = f"{without['tp']} → {with_['tp']}"

    s = a["summary"]["spreads"][0]
    values["175b-spread"] = x(s["ratio"])
    values["175b-spread-ends"] = (
        f"{s['worst']['num_gpus']} GPUs at {s['worst']['inter_node_gbps_per_gpu']} Gbit/s with "
        f"{s['best']['num_gpus']} GPUs at {s['best']['inter_node_gbps_per_gpu']} Gbit/s")
    values["175b-size-range"] = f"{max(axis(a, 'num_gpus')) // min(axis(a, 'num_gpus'))}"
    values["1t-size-range"] = f"{max(axis(b, 'num_gpus')) // min(axis(b, 'num_gpus'))}"
    eq = {s["workload"]: s["ratio"] for s in a["summary"]["spreads_at_equal_gpus"]}
    largest = max(axis(a, "num_gpus"))
    values["175b-equal-largest"] = x(eq[f"num_gpus={largest}"])
    values["175b-largest"] = commas(max(axis(a, "num_gpus")))
    one_gpu = [r for p in b["per_gpu"].values() for r in
               (s["ratio"] for s in p["spreads_at_equal_gpus"])]
    values["1t-equal-one-gpu"] = f"{min(one_gpu):.3g}–{x(max(one_gpu))}"
    eq_b = max(b["summary"]["spreads_at_equal_gpus"], key=lambda s: s["ratio"])
    values["1t-equal-two-gpus"] = (f"{x(eq_b['ratio'])} at {eq_b['workload'].split('=')[1]} "
                                   "GPUs")
    within_b = [p["spreads"][0]["ratio"] for p in b["per_gpu"].values()]
    values["1t-within"] = ratio_range(within_b)
    values["175b-max-gain"] = x(e["max_gain"])
    values["175b-median-gain"] = x(e["median_gain"])
    values["1t-max-gain"] = x(b["summary"]["expansion"]["max_gain"])
    for hbm in (40, 80):
        tier = cs.json("summary", a["store"], "--where", f"hbm_gb == {hbm}")["expansion"]
        values[f"175b-gain-hbm{hbm}"] = x(tier["max_gain"])
    plans = cs.json("top", a["store"], "-n", str(a["summary"]["rows"]), "--all-ties")["rows"]
    values["175b-best-plans"] = (
        "tp " + ", ".join(str(v) for v in sorted({r["tp"] for r in plans})) +
        "; pp " + ", ".join(str(v) for v in sorted({r["pp"] for r in plans})) +
        "; offload " + ", ".join(sorted({r["offload"] for r in plans})))


# MLPerf DLRMv2 and DLRM-xlarge, point by point with `estimate --json`.
SHARDINGS = ["table", "row", "column", "table_row", "data", "hybrid", "fused_row", "best"]
# What each part of a recommendation model's step is called in the prose.
DLRM_PARTS = {"embedding_fwd": "lookups", "embedding_bwd": "lookups",
              "all_to_all": "embedding exchange", "dense_allreduce": "MLP all-reduce",
              "mlp_compute": "dense compute", "memory_bound": "dense compute",
              "optimizer": "dense compute", "overhead": "per-step overhead"}


def dlrm(cs, values, blocks):
    def estimate(*args):
        return json.loads(cs("estimate", "--json", *args))

    def placement(e):
        counts = {}
        for t in e["tables"]:
            counts[t["sharding"]] = counts.get(t["sharding"], 0) + 1
        return " ".join(f"{k}:{v}" for k, v in sorted(counts.items()))

    def rate(e):
        return e["samples_per_s"] if e["feasible"] else 0.0

    def cell(e):
        return f"{e['samples_per_s'] / 1e6:.1f}" if e["feasible"] else "OOM"

    def parts(e, n=3):
        share = {}
        for k, v in e["step_time_s"].items():
            if k in DLRM_PARTS:
                share[DLRM_PARTS[k]] = share.get(DLRM_PARTS[k], 0) + v / e["step_time_s"]["total"]
        top = sorted(share.items(), key=lambda kv: -kv[1])[:n]
        return ", ".join(f"{name} {pct(f)}" for name, f in top)

    def runner_up(row, best_e):
        # The fastest single sharding other than the planner's placement, and its rate.
        name, e = max(((s, e) for s, e in row.items() if s != "best" and e["feasible"]),
                      key=lambda se: se[1]["samples_per_s"])
        if placement(e) == placement(best_e):  # the best is one sharding: the next one
            name, e = max(((s, o) for s, o in row.items()
                           if s not in ("best", name) and o["feasible"]),
                          key=lambda se: se[1]["samples_per_s"])
        return f"{name}, {e['samples_per_s'] / 1e6:.1f} M samples/s"

    # HugeCTR, as MLPerf's DLRMv2 submissions: whole-step CUDA graphs, no host launches per step.
    model = ["--model", "dlrmv2-dcnv2", "--precision", "fp16"]
    dlrmv2 = model + ["--framework", "hugectr"]
    table = ["| GPUs | scale-out Gbit/s | " + " | ".join(SHARDINGS) + " | best placement |",
             "|---:|---:|" + "---:|" * len(SHARDINGS) + "---|"]
    h100 = {}
    for gpus in [8, 16, 32, 64, 128]:
        for gbps in [100, 400] if gpus > 8 else [400]:
            row = h100[gpus, gbps] = {
                s: estimate(*dlrmv2, "--gpu", "H100-SXM5-80GB", "--gpus", str(gpus),
                            "--inter-node-gbps-per-gpu", str(gbps), "--sharding", s)
                for s in SHARDINGS}
            table.append(f"| {gpus} | {gbps} | " + " | ".join(cell(row[s]) for s in SHARDINGS) +
                         f" | {placement(row['best'])} |")
    blocks["dlrmv2-sharding"] = "\n".join(table)

    best = {k: row["best"] for k, row in h100.items()}
    r = {k: rate(e) for k, e in best.items()}
    values["dlrmv2-gain-400"] = x(r[128, 400] / r[8, 400])
    values["dlrmv2-gain-64"] = x(r[64, 400] / r[8, 400])
    values["dlrmv2-gain-100"] = x(r[128, 100] / r[8, 400])
    nic = [r[g, 400] / r[g, 100] for g in [16, 32, 64, 128]]
    values["dlrmv2-nic"] = ratio_range(nic)
    values["dlrmv2-one-node"] = f"{r[8, 400] / 1e6:.1f} M"
    values["dlrmv2-128"] = f"{r[128, 400] / 1e6:.1f} M"
    values["dlrmv2-128-parts"] = parts(best[128, 400])
    values["dlrmv2-placement"] = placement(best[128, 400])
    values["dlrmv2-runner-up"] = runner_up(h100[128, 400], best[128, 400])
    data = h100[8, 400]["data"]
    values["dlrmv2-data"] = (
        f"{data['memory_bytes']['hbm'] / 1e9:.0f} GB a GPU, "
        + ("more than an H100's HBM" if not data["feasible"] else "within an H100's HBM"))

    # The same model on GB200 NVL72: trays of 4 in a 72-GPU NVLink domain (one rack), two racks
    # joined by the scale-out at 400 Gbit/s a GPU; next to H100 nodes of 8 at the same GPU count.
    nvl72_sizes = [8, 16, 32, 64, 144]
    table = ["| GPUs | racks | " + " | ".join(SHARDINGS) + " | best placement | "
             "best vs H100 nodes of 8 |", "|---:|---:|" + "---:|" * len(SHARDINGS) + "---|---:|"]
    nvl72, vs_h100 = {}, {}
    for gpus in nvl72_sizes:
        row = nvl72[gpus] = {
            s: estimate(*dlrmv2, "--gpu", "GB200-186GB", "--gpus", str(gpus), "--nvlink-domain",
                        "72", "--inter-node-gbps-per-gpu", "400", "--sharding", s)
            for s in SHARDINGS}
        h = h100[gpus, 400]["best"] if (gpus, 400) in h100 else estimate(
            *dlrmv2, "--gpu", "H100-SXM5-80GB", "--gpus", str(gpus), "--inter-node-gbps-per-gpu",
            "400")
        if h["feasible"] and row["best"]["feasible"]:
            vs_h100[gpus] = rate(row["best"]) / rate(h)
        ratio = x(vs_h100[gpus]) if gpus in vs_h100 else "n/a"
        table.append(f"| {gpus} | {-(-gpus // 72)} | " +
                     " | ".join(cell(row[s]) for s in SHARDINGS) +
                     f" | {placement(row['best'])} | {ratio} |")
    blocks["dlrmv2-nvl72"] = "\n".join(table)

    nb = {g: row["best"] for g, row in nvl72.items()}
    values["nvl72-gain"] = x(rate(nb[64]) / rate(nb[8]))
    values["nvl72-vs-h100-64"] = x(vs_h100[64])
    values["nvl72-vs-h100"] = ratio_range(list(vs_h100.values()))
    peak = max(vs_h100, key=vs_h100.get)
    values["nvl72-vs-h100-peak"] = f"{x(vs_h100[peak])} at {peak} GPUs"
    values["nvl72-placement"] = placement(nb[64])
    values["nvl72-runner-up"] = runner_up(nvl72[64], nb[64])
    values["nvl72-64-parts"] = parts(nb[64])
    values["nvl72-64"] = f"{rate(nb[64]) / 1e6:.1f} M"
    values["nvl72-144"] = f"{rate(nb[144]) / 1e6:.1f} M"
    values["nvl72-two-racks"] = f"{rate(nb[144]) / rate(nb[64]) - 1:+.1%}"
    values["nvl72-a2a-144"] = x(nb[144]["step_time_s"]["all_to_all"] /
                                nb[64]["step_time_s"]["all_to_all"])
    values["nvl72-data"] = pct(rate(nvl72[64]["data"]) / rate(nb[64]))
    cross = {s: rate(nvl72[144][s]) / rate(nvl72[64][s]) for s in SHARDINGS
             if s != "best" and nvl72[64][s]["feasible"] and nvl72[144][s]["feasible"]}
    worst = min(cross, key=cross.get)
    values["nvl72-two-racks-worst"] = f"{worst} at {x(cross[worst])}"
    # The same rack without CUDA graphs: the host launches every kernel (framework any).
    eager = estimate(*model, "--gpu", "GB200-186GB", "--gpus", "64", "--nvlink-domain", "72",
                     "--inter-node-gbps-per-gpu", "400", "--framework", "any")
    values["nvl72-graphs"] = x(rate(nb[64]) / rate(eager))

    table = ["| GPU | expansion tier | samples/s (millions) | in HBM GB | in the tier GB | "
             "lookups s | step s |", "|---|---|---:|---:|---:|---:|---:|"]
    runs = {}
    for gpu, gb, bw in [("A100-SXM4-40GB", 0, 0), ("A100-SXM4-40GB", 64, 32),
                        ("A100-SXM4-40GB", 64, 64), ("A100-SXM4-40GB", 64, 128),
                        ("A100-SXM4-80GB", 0, 0)]:
        args = ["--model", "dlrm-criteo-xlarge", "--gpu", gpu, "--gpus", "8", "--precision",
                "tf32"]
        if gb:
            args += ["--expansion-gb", str(gb), "--expansion-gbytes-per-s", str(bw)]
        e = runs[gpu, bw] = estimate(*args)
        m, t = e["memory_bytes"], e["step_time_s"]
        tier = f"{gb} GB at {bw} GB/s" if gb else "none"
        r = f"{e['samples_per_s'] / 1e6:.2f}" if e["feasible"] else "OOM"
        table.append(f"| {gpu} | {tier} | {r} | {m['hbm'] / 1e9:.1f} | "
                     f"{m['expansion'] / 1e9:.1f} | "
                     f"{t['embedding_fwd'] + t['embedding_bwd']:.4f} | {t['total']:.4f} |")
    blocks["dlrm-xlarge-tier"] = "\n".join(table)
    slow, fast = runs["A100-SXM4-40GB", 32], runs["A100-SXM4-40GB", 128]
    values["xlarge-need"] = f"{runs['A100-SXM4-40GB', 0]['memory_bytes']['hbm'] / 1e9:.0f} GB"
    values["xlarge-tier"] = f"{slow['memory_bytes']['expansion'] / 1e9:.0f} GB"
    values["xlarge-slow-tier"] = pct(slow["step_time_s"]["total"] /
                                     fast["step_time_s"]["total"] - 1)
    values["xlarge-80gb"] = pct(runs["A100-SXM4-80GB", 0]["samples_per_s"] /
                                fast["samples_per_s"] - 1)


def deepseek(cs, values, blocks):
    store = cs.sweep("deepseek-v3-ep.toml")
    tokens_per_step = 15360 * 4096
    names = {"H800-SXM5-80GB": "H800", "H100-SXM5-80GB": "H100", "GB200-186GB": "GB200 NVL72"}
    table = ["| cluster | best plan | step | tokens/s/GPU | GPU-h per 10^12 tokens | "
             "exposed all-to-all |", "|---|---|---:|---:|---:|---:|",
             "| DeepSeek's report, 2,048 H800 | tp 1, pp 16 (DualPipe), ep 64, ZeRO-1 | 19.9 s | "
             "1,543 | 180 K | ~0 (DualPipe) |"]
    best = {}
    for gpu, name in names.items():
        top = cs.json("top", store, "--where", f"gpu == '{gpu}' and num_gpus == 2048", "-n", "1",
                      "--by", "step_time_s")
        r = best[name] = top["rows"][0]
        gpu_hours = r["num_gpus"] * r["step_time_s"] / tokens_per_step * 1e12 / 3600
        table.append(f"| 2,048 {name} (model) | tp {r['tp']}, pp {r['pp']}, ep {r['ep']}, "
                     f"{r['recompute']} recompute | {r['step_time_s']:.1f} s | "
                     f"{commas(round(r['tokens_per_s'] / r['num_gpus']))} | "
                     f"{gpu_hours / 1e3:.0f} K | {r['time_ep_a2a_s']:.1f} s |")
        r["gpu_hours"] = gpu_hours
    blocks["deepseek-best"] = "\n".join(table)
    h800, gb200 = best["H800"], best["GB200 NVL72"]
    values["ds-slower"] = pct(h800["gpu_hours"] / 180e3 - 1).replace(".0%", "%")
    values["ds-gpu-hours"] = f"{h800['gpu_hours'] / 1e3:.0f} K"
    values["ds-h800-ep"] = str(h800["ep"])
    values["ds-gb200-ep"] = str(gb200["ep"])
    values["ds-gb200-a2a"] = f"{gb200['time_ep_a2a_s']:.1f} s of the {gb200['step_time_s']:.1f} s"
    values["ds-gb200-speedup"] = x(h800["step_time_s"] / gb200["step_time_s"])
    values["ds-h800-step"] = f"{h800['step_time_s']:.1f} s"


# What the software stack is worth: each model on each accelerator at one plan (the best with the
# default stack at a published-like expert-parallel degree), estimated under stack variations.
STACK_MODELS = [("deepseek-v3", "DeepSeek-V3", 1024, 64), ("qwen3-235b-a22b", "Qwen3-235B-A22B",
                                                           256, 32),
                ("qwen3-30b-a3b", "Qwen3-30B-A3B", 64, 8)]
STACK_GPUS = [("H100-SXM5-80GB", "H100"), ("B200-180GB", "B200"), ("GB200-186GB", "GB200 NVL72")]
BASELINE = {"dispatcher": "alltoall", "cuda_graph": "none", "a2a_overlap": "off",
            "token_routing": "dropless"}
VARIATIONS = [
    ("deepep", {"dispatcher": "deepep"}),
    ("hybridep", {"dispatcher": "hybridep"}),
    ("partial graphs", {"cuda_graph": "partial"}),
    ("a2a overlap", {"a2a_overlap": "on"}),
    ("balanced", {"token_routing": "balanced"}),
    ("full graphs (balanced)", {"cuda_graph": "full", "token_routing": "balanced"}),
    ("all, dropless", {"dispatcher": "hybridep", "cuda_graph": "partial", "a2a_overlap": "on"}),
    ("all, balanced", {"dispatcher": "hybridep", "cuda_graph": "full", "a2a_overlap": "on",
                       "token_routing": "balanced"}),
]
PLAN_FLAGS = ["tp", "pp", "vp", "cp", "micro_batch", "zero", "recompute", "sequence_parallel",
              "pipeline_split", "offload", "ep", "etp"]


def stack(cs, values, blocks):
    table = ["| model | cluster | plan | baseline step | " +
             " | ".join(name for name, _ in VARIATIONS) + " |",
             "|---|---|---|---:|" + "---:|" * len(VARIATIONS)]
    speedups = {}
    for model, model_name, gpus, ep in STACK_MODELS:
        for gpu, gpu_name in STACK_GPUS:
            workload = ["--model", model, "--gpu", gpu, "--gpus", str(gpus), "--precision", "fp8"]
            plan = cs.json("best", *workload, "--ep", str(ep))["plans"][0]
            flags = [f for k in PLAN_FLAGS
                     for f in (f"--{k.replace('_', '-')}={str(plan[k]).lower()}",)]

            def step(settings):
                args = [f"--{k.replace('_', '-')}={v}" for k, v in {**BASELINE,
                                                                      **settings}.items()]
                return json.loads(cs("estimate", "--json", *workload, *flags,
                                     *args))["step_time_s"]["total"]

            base = step({})
            cells = []
            for name, settings in VARIATIONS:
                speedups[model, gpu, name] = base / step(settings)
                cells.append(x(speedups[model, gpu, name]))
            described = (f"tp {plan['tp']}, cp {plan['cp']}, ep {plan['ep']}, mb "
                         f"{plan['micro_batch']}, ZeRO-{plan['zero']}")
            table.append(f"| {model_name} | {commas(gpus)} {gpu_name} | {described} | "
                         f"{base:.2f} s | " + " | ".join(cells) + " |")
    blocks["stack-study"] = "\n".join(table)

    def span(name, models=None):
        return ratio_range([v for (m, g, n), v in speedups.items()
                            if n == name and (models is None or m in models)])

    for name, key in [("hybridep", "hybridep"), ("deepep", "deepep"),
                      ("partial graphs", "partial"), ("a2a overlap", "overlap"),
                      ("all, dropless", "all-dropless"), ("all, balanced", "all-balanced")]:
        values[f"stack-{key}"] = span(name)
    values["stack-balanced"] = span("balanced")
    values["stack-full"] = ratio_range(
        [v / speedups[m, g, "balanced"] for (m, g, n), v in speedups.items()
         if n == "full graphs (balanced)"])
    with open(os.path.join(ROOT, "spaces", "data", "calibration.toml"), "rb") as f:
        values["stack-load-cv"] = f"{tomllib.load(f)['moe']['load_cv']:.3g}"
    values["stack-hybridep-h100"] = ratio_range(
        [v for (m, g, n), v in speedups.items() if n == "hybridep" and g == "H100-SXM5-80GB"])
    values["stack-hybridep-gb200"] = ratio_range(
        [v for (m, g, n), v in speedups.items() if n == "hybridep" and g == "GB200-186GB"])

    store = cs.sweep("qwen3-30b-stack.toml")
    summary = cs("summary", store)
    section = summary[summary.index("Software stack settings"):].rstrip("\n")
    blocks["stack-summary"] = "```\n" + section + "\n```"


def failures(cs, values, blocks):
    # The example as written (Llama 3's failure rate), and the same sweep without failures: there
    # each design's best plan is its fastest.
    with_failures = cs.sweep("failures-at-scale.toml")
    with open(os.path.join(ROOT, "examples", "failures-at-scale.toml")) as f:
        spec = f.read()
    free_spec = os.path.join(cs.scratch, "no-failures.toml")
    with open(free_spec, "w") as f:
        f.write(re.sub(r"gpu_mtbf_hours = \d+", "gpu_mtbf_hours = inf", spec))
    free = os.path.join(cs.scratch, "no-failures.h5")
    cs("run", free_spec, "-o", free, "--progress", "none", "--no-summary")

    def by_size(store):
        return cs.json("top", store, "--by", "num_nodes", "-n", "100")["rows"]

    def plan(r):
        return f"tp {r['tp']} pp {r['pp']} cp {r['cp']} vp {r['vp']}"

    rows, free_rows = by_size(with_failures), by_size(free)
    table = ["| GPUs | without failures: best plan | time to train | with failures: best plan | "
             "time to train | 90% interval | goodput | checkpoint every | support |",
             "|---:|---|---:|---|---:|---|---:|---:|---:|"]
    for r, f in zip(rows, free_rows):
        table.append(
            f"| {commas(r['num_gpus'])} | {plan(f)} | {days(f['time_to_train_s'])} | {plan(r)} | "
            f"{days(r['time_to_train_s'])} | {r['time_to_train_lo_s'] / 86400:.3g}–"
            f"{days(r['time_to_train_hi_s'])} | {pct(r['goodput'])} | "
            f"{r['checkpoint_interval_s'] / 60:.3g} min | {r['calibration_support']:.0f} |")
    blocks["failures-at-scale"] = "\n".join(table)
    best_free = min(free_rows, key=lambda r: r["time_to_train_s"])
    best = min(rows, key=lambda r: r["time_to_train_s"])
    largest = rows[-1]
    values["fs-free-best"] = commas(best_free["num_gpus"])
    values["fs-free-best-days"] = days(best_free["time_to_train_s"])
    values["fs-best"] = commas(best["num_gpus"])
    values["fs-best-days"] = days(best["time_to_train_s"])
    values["fs-largest-days"] = days(largest["time_to_train_s"])
    values["fs-largest-goodput"] = pct(largest["goodput"])
    values["fs-best-goodput"] = pct(best["goodput"])
    values["fs-loss"] = x(largest["time_to_train_s"] / best["time_to_train_s"])
    mtbf_hours = tomllib.loads(spec)["reliability"]["gpu_mtbf_hours"]
    values["fs-largest-mtbf"] = f"{mtbf_hours / largest['num_gpus'] * 60:.3g} minutes"


def power_caps(cs, values, blocks):
    # Llama 3.1 405B on 16,384 H100 under each power cap (best plan per cap), and DeepSeek-V3's
    # energy per trillion tokens on H800 against GB200 NVL72 from the expert-parallel sweep.
    store = cs.sweep("power-caps-405b.toml")
    rows = cs.json("top", store, "--by", "power_cap_w", "-n", "100", "--columns",
                   "power_cap_w,time_to_train_s,energy_kwh,energy_gpu_to_train_j,gpu_power_w")["rows"]
    rows.sort(key=lambda r: -(r["power_cap_w"] or 1e9))
    base = next(r for r in rows if r["power_cap_w"] == 0)
    front = cs.json("pareto", store, "--objectives",
                    "time_to_train_s,energy_kwh")["fronts"][0]["rows"]
    on_front = {r["power_cap_w"] for r in front}
    table = ["| power cap | GPU power | time to train | facility energy | time | facility energy | "
             "GPU energy | on the front |", "|---:|---:|---:|---:|---:|---:|---:|:---:|"]
    for r in rows:
        cap = "none (700 W)" if r["power_cap_w"] == 0 else f"{r['power_cap_w']:.0f} W"
        table.append(
            f"| {cap} | {r['gpu_power_w']:.0f} W | {days(r['time_to_train_s'])} | "
            f"{r['energy_kwh'] / 1e3:,.0f} MWh | "
            f"{r['time_to_train_s'] / base['time_to_train_s'] - 1:+.1%} | "
            f"{r['energy_kwh'] / base['energy_kwh'] - 1:+.1%} | "
            f"{r['energy_gpu_to_train_j'] / base['energy_gpu_to_train_j'] - 1:+.1%} | "
            f"{'yes' if r['power_cap_w'] in on_front else ''} |")
    blocks["power-caps"] = "\n".join(table)
    least = min(rows, key=lambda r: r["energy_kwh"])
    values["pc-least-cap"] = f"{least['power_cap_w']:.0f} W"
    values["pc-least-time"] = f"{least['time_to_train_s'] / base['time_to_train_s'] - 1:+.0%}"
    values["pc-least-energy"] = f"{least['energy_kwh'] / base['energy_kwh'] - 1:+.0%}"
    values["pc-front"] = str(len(front))
    gpu_least = min(rows, key=lambda r: r["energy_gpu_to_train_j"])
    values["pc-gpu-cap"] = f"{gpu_least['power_cap_w']:.0f} W"
    values["pc-gpu-energy"] = (
        f"{gpu_least['energy_gpu_to_train_j'] / base['energy_gpu_to_train_j'] - 1:+.0%}")

    ds = cs.sweep("deepseek-v3-ep.toml")
    with open(os.path.join(ROOT, "examples", "deepseek-v3-ep.toml")) as f:
        tokens = tomllib.loads(f.read())["workload"]["training_tokens"]
    names = {"H800-SXM5-80GB": "2,048 H800", "H100-SXM5-80GB": "2,048 H100",
             "GB200-186GB": "2,048 GB200 NVL72"}
    table = ["| cluster | best plan (time to train) | time to train | GPU power | "
             "MWh per 10^12 tokens (facility) |", "|---|---|---:|---:|---:|"]
    per_t, days_of, power_of = {}, {}, {}
    for gpu, name in names.items():
        r = cs.json("top", ds, "--where", f"gpu == '{gpu}' and num_gpus == 2048", "-n", "1",
                    "--by", "time_to_train_s", "--columns",
                    "tp,pp,ep,time_to_train_s,energy_kwh,gpu_power_w")["rows"][0]
        per_t[name] = r["energy_kwh"] / 1e3 / (tokens / 1e12)
        days_of[name], power_of[name] = r["time_to_train_s"], r["gpu_power_w"]
        table.append(f"| {name} | tp {r['tp']}, pp {r['pp']}, ep {r['ep']} | "
                     f"{days(r['time_to_train_s'])} | {r['gpu_power_w']:.0f} W | "
                     f"{per_t[name]:.0f} |")
    blocks["power-deepseek"] = "\n".join(table)
    values["pc-ds-ratio"] = x(per_t["2,048 H800"] / per_t["2,048 GB200 NVL72"])
    values["pc-ds-faster"] = x(days_of["2,048 H800"] / days_of["2,048 GB200 NVL72"])
    values["pc-ds-power"] = x(power_of["2,048 GB200 NVL72"] / power_of["2,048 H800"])


def accelerators(cs, values, blocks):
    # Llama 3.1 405B at 10 MW on every vendor's part: the best design of each accelerator, its
    # 90% interval and its calibration support (how many published runs are like it).
    store = cs.sweep("accelerators.toml")
    rows = cs.json("top", store, "-n", "1000")["rows"]
    fabrics = {a["gpu"]: a["scale_up"] for a in cs.json("catalog", "accelerators")}
    best = {}
    for r in rows:
        if r["gpu"] not in best or r["time_to_train_s"] < best[r["gpu"]]["time_to_train_s"]:
            best[r["gpu"]] = r
    ranked = sorted(best.values(), key=lambda r: r["time_to_train_s"])
    front = {r["point_id"] for r in cs.json("pareto", store, "--objectives",
                                            "time_to_train_s,energy_kwh")["fronts"][0]["rows"]}
    table = ["| accelerator | scale-up | chips at <= 10 MW | best plan | time to train | 90% interval | "
             "MFU | facility energy | runs like it | on the front |",
             "|---|---|---:|---|---:|---|---:|---:|---:|:---:|"]
    for r in ranked:
        table.append(
            f"| {r['gpu']} | {fabrics[r['gpu']]} | {commas(r['num_gpus'])} | "
            f"tp {r['tp']}, pp {r['pp']}, vp {r['vp']}, recompute {r['recompute']} | "
            f"{days(r['time_to_train_s'])} | {days(r['time_to_train_lo_s'])} - "
            f"{days(r['time_to_train_hi_s'])} | {pct(r['mfu'])} | "
            f"{r['energy_kwh'] / 1e6:,.1f} GWh | {r['calibration_support']:.0f} | "
            f"{'yes' if r['point_id'] in front else ''} |")
    blocks["accelerators"] = "\n".join(table)
    values["acc-parts"] = str(len(ranked))
    values["acc-fastest"] = ranked[0]["gpu"]
    values["acc-datasheet"] = str(sum(1 for r in ranked if r["calibration_support"] < 3))


# The network studies: each model's best plan on each network, planes and taper, the time against
# the network's bill and the cost to train, and what the taper does to the plan and to the step.
NETWORK_ORDER = ["fat_tree", "rail_optimized", "rail_only", "dragonfly"]
# The plan's choices in the order a plan is read, with the short names the tables use. rank_order
# is read when the store has it (a plan axis the model may not have) and skipped when it does not.
PLAN_NAMES = [("tp", "tp"), ("pp", "pp"), ("vp", "vp"), ("cp", "cp"), ("ep", "ep"),
              ("etp", "etp"), ("dp", "dp"), ("micro_batch", "mb"), ("zero", "ZeRO"),
              ("recompute", "recompute"), ("sequence_parallel", "sp"), ("offload", "offload"),
              ("pipeline_split", "split"), ("dispatcher", "dispatcher"),
              ("a2a_overlap", "a2a overlap"), ("cuda_graph", "CUDA graphs"),
              ("token_routing", "routing"), ("rank_order", "rank order")]
# What the step spends its time on (the store's breakdown), for what a taper lengthens.
STEP_PARTS = [("time_compute_s", "compute"), ("time_memory_bound_s", "memory-bound kernels"),
              ("time_tp_comm_s", "tensor-parallel communication"),
              ("time_cp_comm_s", "context-parallel communication"),
              ("time_pp_p2p_s", "pipeline sends"), ("time_pp_bubble_s", "pipeline bubble"),
              ("time_ep_a2a_s", "expert all-to-all"),
              ("time_dp_exposed_s", "data-parallel reduction"),
              ("time_edp_exposed_s", "expert data-parallel reduction"),
              ("time_optimizer_s", "optimizer"), ("time_offload_s", "offload"),
              ("time_host_s", "host"), ("time_overhead_s", "overheads")]


# The store's design and plan columns that `estimate` takes as flags of the same name, to estimate a
# stored plan on another design (num_gpus is --gpus).
ESTIMATE_KEYS = ["model", "seq_len", "global_batch", "precision", "gpu", "num_gpus", "gpus_per_node",
                 "nvlink_domain", "nvlink_gbytes_per_s", "inter_node_gbps_per_gpu", "hbm_gb",
                 "fabric", "network", "oversubscription", "pod_gpus", "planes", "group_gpus",
                 "global_taper", "tp", "pp", "cp", "vp", "pipeline_split", "sequence_parallel",
                 "zero", "recompute", "micro_batch", "ep", "etp", "framework", "cuda_graph",
                 "dispatcher", "token_routing", "a2a_overlap", "fp8_attention", "tp_comm_overlap",
                 "dp_overlap", "param_gather_overlap", "pp_comm_overlap", "fp8_recipe",
                 "attention_kernel", "offload", "rank_order"]


def estimate_row(cs, r, **design):
    """The step of row r's plan on its design with the given columns changed. The row's own
    design must give back its stored step: a flag the store spells differently fails here."""
    def args(row):
        flags = []
        for k in ESTIMATE_KEYS:
            if row.get(k) is not None:
                v = row[k]
                name = "gpus" if k == "num_gpus" else k.replace("_", "-")
                flags.append(f"--{name}={v:g}" if isinstance(v, float) else f"--{name}={v}")
        return flags
    same = cs.json("estimate", *args(r))["step_time_s"]
    if abs(same["total"] - r["step_time_s"]) > 1e-6 * r["step_time_s"]:
        sys.exit(f"case-studies.py: estimate gives {same['total']} s for a stored step of "
                 f"{r['step_time_s']} s")
    return cs.json("estimate", *args({**r, **design}))["step_time_s"]


def plan_text(r, keys):
    return ", ".join(f"{dict(PLAN_NAMES)[k]} {r[k]}" for k in keys if r.get(k) is not None)


def plan_change(r, base):
    # Every plan choice the store holds, not only the ones the table shows: any change is named.
    changes = [f"{name} {base[k]}→{r[k]}" for k, name in PLAN_NAMES
               if r.get(k) is not None and r.get(k) != base.get(k)]
    return ", ".join(changes) if changes else "none"


def step_growth(r, base, n=4):
    # The n parts of the step that grew (or shrank) most, by at least 0.05 s.
    deltas = [(r[k] - base[k], name) for k, name in STEP_PARTS if k in r and k in base]
    deltas = sorted((d for d in deltas if abs(d[0]) >= 0.05), key=lambda d: -abs(d[0]))[:n]
    return ", ".join(f"{name} {d:+.2f} s" for d, name in deltas) or "no part by 0.05 s"


def network_study(cs, example, plan_keys, extra_keys):
    """The best plan of each network, planes and taper of a store kept best-per-design, with the
    non-blocking row of the same network and planes it is compared with, and the time-cost front
    (ties included: designs of equal figures are one row of the front). The table's plans name
    plan_keys, and those of extra_keys that differ between rows; the others close the block."""
    store = cs.sweep(example)
    rows = cs.json("top", store, "-n", "100000", "--all-ties")["rows"]
    best = {}
    for r in rows:
        key = (r["network"], r["planes"], r["oversubscription"])
        if key not in best or r["time_to_train_s"] < best[key]["time_to_train_s"]:
            best[key] = r
    ranked = sorted(best.values(), key=lambda r: (NETWORK_ORDER.index(r["network"]), r["planes"],
                                                  r["oversubscription"]))
    front = set()
    pareto = cs.json("pareto", store, "--objectives", "time_to_train_s,cost_usd")
    for r in pareto["fronts"][0]["rows"]:
        front.add(r["point_id"])
        front.update(r.get("tied_point_ids") or [])
    varying = [k for k in extra_keys if len({r.get(k) for r in ranked}) > 1]
    common = [k for k in extra_keys if k not in varying]
    for r in ranked:
        r["base"] = best[(r["network"], r["planes"], 1.0)]
        r["on_front"] = r["point_id"] in front
        r["plan"] = plan_text(r, [k for k in plan_keys + extra_keys if k in plan_keys or
                                  k in varying])
        r["full_plan"] = plan_text(r, plan_keys + extra_keys)
        r["change"] = plan_change(r, r["base"])
    show_planes = len({r["planes"] for r in ranked}) > 1
    table = ["| network |" + (" planes |" if show_planes else "") + " taper | best plan | "
             "plan change vs non-blocking | step | time to train | network capex | "
             "network power | cost to train | on the front |",
             "|---|" + ("---:|" if show_planes else "") +
             "---:|---|---|---:|---:|---:|---:|---:|:---:|"]
    for r in ranked:
        table.append(
            f"| {r['network']} |" + (f" {r['planes']:g} |" if show_planes else "") +
            f" {r['oversubscription']:g}:1 | {r['plan']} | {r['change']} | "
            f"{r['step_time_s']:.2f} s | {days(r['time_to_train_s'])} | "
            f"${r['network_capex_usd'] / 1e6:,.{network_digits(ranked)}f}M | "
            f"{r['network_power_w'] / 1e6:.2f} MW | "
            f"${r['cost_usd'] / 1e6:,.{2 if ranked[0]['cost_usd'] < 1e7 else 1}f}M | "
            f"{'yes' if r['on_front'] else ''} |")
    shared = plan_text(ranked[0], common)
    if shared:
        table += ["", f"Every best plan has {shared}."]
    return best, ranked, "\n".join(table)


def network_digits(ranked):
    # Whole millions for a large cluster's network, cents of a million for a small one's.
    return 0 if max(r["network_capex_usd"] for r in ranked) >= 1e8 else 2


def network_favours(ranked, show_planes):
    """One line for each network (and planes): the plan it favours, where a taper changes it and
    what the most tapered row's step spends more time on than the non-blocking one's."""
    lines = []
    groups = {}
    for r in ranked:
        groups.setdefault((r["network"], r["planes"]), []).append(r)
    for (network, planes), rs in groups.items():
        base, last = rs[0]["base"], rs[-1]
        name = network
        if show_planes:
            name += f", {planes:g} plane{'s' if planes > 1 else ''}"
        if len(rs) == 1:
            lines.append(f"- **{name}**: {rs[0]['plan']}, swept without a taper.")
            continue
        steps, previous = [], "none"
        for r in rs:
            if r["change"] != previous:
                steps.append(f"from {r['oversubscription']:g}:1, {r['change']}")
                previous = r["change"]
        plan = (f"{base['plan']} without a taper; " + "; ".join(steps) if steps
                else f"{base['plan']} at every taper")
        lines.append(
            f"- **{name}**: {plan}. At {last['oversubscription']:g}:1 the step is "
            f"{pct(last['step_time_s'] / base['step_time_s'] - 1)} longer: "
            f"{step_growth(last, base)}.")
    return "\n".join(lines)


def network(cs, values, blocks):
    # Llama 3.1 405B on 16,384 H100: rail-optimized or rail-only, tapered above 1,024-GPU pods.
    best, ranked, blocks["network"] = network_study(
        cs, "network-405b.toml", ["tp", "pp", "vp", "recompute"], ["dp", "rank_order"])
    blocks["network-plans"] = network_favours(ranked, False)
    flat = best[("rail_optimized", 1, 1.0)]
    tapered = best[("rail_optimized", 1, 7.0)]
    values["net-slower"] = pct(tapered["time_to_train_s"] / flat["time_to_train_s"] - 1)
    values["net-saved"] = f"${(flat['network_capex_usd'] - tapered['network_capex_usd']) / 1e6:,.0f}M"
    # The prose says no best plan takes Llama 3's order: a sweep where one does needs new prose.
    if any(r.get("rank_order") == "tp-pp-dp" for r in ranked):
        sys.exit("case-studies.py: a best plan of network-405b.toml now takes rank_order tp-pp-dp; "
                 "the network section's prose says none does")
    # Llama 3's rank order for the same plan at the steepest taper: which group pays it instead.
    llama3 = estimate_row(cs, tapered, rank_order="tp-pp-dp")
    megatron = estimate_row(cs, tapered)
    values["net-llama3-step"] = f"{llama3['total']:.2f} s"
    values["net-megatron-step"] = f"{megatron['total']:.2f} s"
    values["net-llama3-p2p"] = f"{llama3['pp_p2p']:.2f} s"
    values["net-megatron-p2p"] = f"{megatron['pp_p2p']:.2f} s"
    values["net-llama3-dp"] = f"{llama3['dp_exposed']:.2f} s"
    values["net-megatron-dp"] = f"{megatron['dp_exposed']:.2f} s"
    rail_only = best[("rail_only", 1, 1.0)]
    values["net-rail-only-saving"] = pct(1 - rail_only["network_capex_usd"] /
                                         flat["network_capex_usd"])

    # DeepSeek-V3 on 2,048 H800: fat tree, rail-optimized or rail-only, tapered above the leaf.
    best, ranked, blocks["network-deepseek"] = network_study(
        cs, "network-deepseek-v3.toml", ["tp", "pp", "ep", "dp", "recompute"],
        ["vp", "etp", "micro_batch", "dispatcher", "a2a_overlap", "rank_order"])
    blocks["network-deepseek-plans"] = network_favours(ranked, True)
    flat = best[("fat_tree", 1, 1.0)]
    values["ds-net-step"] = f"{flat['step_time_s']:.1f} s"
    values["ds-net-plan"] = flat["full_plan"]
    # Experts are laid out etp fastest, then ep: an expert group spans ep x etp consecutive GPUs.
    values["ds-net-ep-extent"] = commas(flat["ep"] * flat["etp"])
    values["ds-net-a2a"] = f"{max(r['time_ep_a2a_s'] for r in ranked):.2f} s"
    for network in ("fat_tree", "rail_optimized", "rail_only"):
        values[f"ds-net-capex-{network.replace('_', '-')}"] = (
            f"${best[(network, 1, 1.0)]['network_capex_usd'] / 1e6:.2f}M")
    fat = [r for r in ranked if r["network"] == "fat_tree"]
    fat_change = next((r for r in fat if r["change"] != "none"), None)
    values["ds-fat-change"] = (
        f"from {fat_change['oversubscription']:g}:1 {fat_change['change']}" if fat_change
        else "none at any taper")
    values["ds-fat-ep-extent"] = commas(fat[-1]["ep"] * fat[-1]["etp"])
    values["ds-fat-growth"] = step_growth(fat[-1], flat, 2)
    # The non-blocking plan kept on the most tapered fat tree: what the taper would cost it.
    kept = estimate_row(cs, flat, oversubscription=fat[-1]["oversubscription"])
    values["ds-fat-kept-a2a"] = f"{kept['ep_a2a']:.1f} s"
    values["ds-fat-kept-step"] = f"{kept['total']:.1f} s"
    values["ds-fat-slower"] = pct(fat[-1]["step_time_s"] / flat["step_time_s"] - 1)
    rail = [r for r in ranked if r["network"] == "rail_optimized" and r["planes"] == 1]
    rail2 = [r for r in ranked if r["network"] == "rail_optimized" and r["planes"] == 2]
    values["ds-rail-slower"] = pct(rail[-1]["step_time_s"] / flat["step_time_s"] - 1)
    values["ds-rail2-slower"] = pct(rail2[-1]["step_time_s"] / flat["step_time_s"] - 1)
    values["ds-rail-changes"] = str(sum(1 for r in rail + rail2 if r["change"] != "none"))
    values["ds-rail-growth"] = step_growth(rail[-1], rail[-1]["base"])
    cheapest = min(ranked, key=lambda r: r["cost_usd"])
    values["ds-cheapest"] = (f"{cheapest['network']} with {cheapest['planes']:g} "
                             f"plane{'s' if cheapest['planes'] > 1 else ''} at "
                             f"{cheapest['oversubscription']:g}:1")
    values["ds-cheapest-saving"] = pct(1 - cheapest["cost_usd"] / flat["cost_usd"])
    values["ds-cheapest-slower"] = pct(cheapest["time_to_train_s"] / flat["time_to_train_s"] - 1)
    values["ds-front"] = front_text(ranked)
    # What a taper can save at most, against the whole cluster's capital cost (GPUs and network).
    with open(os.path.join(ROOT, "examples", "network-deepseek-v3.toml"), "rb") as f:
        capex_per_gpu = tomllib.load(f)["pricing"]["capex_usd_per_gpu"]
    saved = flat["network_capex_usd"] - min(r["network_capex_usd"] for r in ranked)
    values["ds-taper-saves"] = f"${saved / 1e6:.2f}M"
    values["ds-taper-saves-share"] = pct(saved / (flat["num_gpus"] * capex_per_gpu +
                                                  flat["network_capex_usd"]))


def front_text(ranked):
    # The front's points, designs of equal figures named together: "a or b 2:1 with 2 planes".
    points = {}
    for r in ranked:
        if r["on_front"]:
            points.setdefault((r["time_to_train_s"], r["cost_usd"]), []).append(r)
    parts = []
    for (time, cost), rs in sorted(points.items()):
        networks = list(dict.fromkeys(r["network"] for r in rs))
        tapers = list(dict.fromkeys(f"{r['oversubscription']:g}:1" for r in rs))
        planes = list(dict.fromkeys(f"{r['planes']:g}" for r in rs))
        parts.append(f"{', '.join(networks[:-1]) + ' or ' if len(networks) > 1 else ''}"
                     f"{networks[-1]} at {' or '.join(tapers)} with {' or '.join(planes)} "
                     f"plane{'s' if planes != ['1'] else ''} ({days(time)}, ${cost / 1e6:.2f}M)")
    return "; ".join(parts)


def fill(text, values, blocks):
    def block(m):
        name = m.group(1)
        if name not in blocks:
            sys.exit(f"case-studies.py: the document marks a block '{name}' the script does "
                     "not make")
        return (f"<!-- begin generated: {name} -->\n{blocks.pop(name)}\n"
                f"<!-- end generated: {name} -->")

    def value(m):
        name = m.group(1)
        if name not in values:
            sys.exit(f"case-studies.py: the document marks a value '{name}' the script does "
                     "not make")
        return f"<!--v:{name}-->{values[name]}<!--/v-->"

    used = set(values)
    text = re.sub(r"<!-- begin generated: ([\w-]+) -->\n.*?<!-- end generated: \1 -->", block,
                  text, flags=re.S)
    names = set(re.findall(r"<!--v:([\w-]+)-->", text))
    text = re.sub(r"<!--v:([\w-]+)-->.*?<!--/v-->", value, text, flags=re.S)
    unused = sorted(blocks) + sorted(used - names)
    if unused:
        sys.exit("case-studies.py: the document has no mark for " + ", ".join(unused))
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--bin", default=os.path.join(ROOT, "build/bin/clustersweep"))
    parser.add_argument("--doc", default=os.path.join(ROOT, "docs/case-studies.md"))
    args = parser.parse_args()
    values, blocks = {}, {}
    with tempfile.TemporaryDirectory(prefix="case-studies-") as scratch:
        cs = Clustersweep(args.bin, scratch)
        comet(cs, values, blocks)
        dlrm(cs, values, blocks)
        deepseek(cs, values, blocks)
        stack(cs, values, blocks)
        failures(cs, values, blocks)
        power_caps(cs, values, blocks)
        accelerators(cs, values, blocks)
        network(cs, values, blocks)
    with open(args.doc) as f:
        old = f.read()
    new = fill(old, values, blocks)
    if args.check:
        if new != old:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), new.splitlines(True), args.doc, "regenerated"))
            print(f"{args.doc} is not current: run scripts/case-studies.py")
            return 1
        return 0
    if new != old:
        with open(args.doc + ".tmp", "w") as f:
            f.write(new)
        os.replace(args.doc + ".tmp", args.doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
