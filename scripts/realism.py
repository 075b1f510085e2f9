#!/usr/bin/python3
"""Regenerates the realism tables of docs/search.md: each published run's best plan, searched
within its own framework and software stack, against the run NVIDIA (or its publisher) tuned.

It runs `clustersweep validate RUNS --best -o` twice, ranking plans by the estimate and by the
upper end of their 90% interval (`--robust`), and writes per framework and family, and per
source, how many best plans come within 0.85-1.10 of the measured step. The tables sit between
`<!-- begin generated: realism -->` and `<!-- end generated: realism -->`; the test
`RealismTablesAreCurrent` runs `--check`.

Usage: scripts/realism.py [--check] [--bin build/bin/clustersweep] [--doc docs/search.md]
  --check  write nothing; print a diff and exit 1 when the document is not current
(About 40 s on one core.)"""
import argparse
import csv
import difflib
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = [os.path.join(ROOT, "tests/apps/data", f) for f in ("transformer_runs.csv", "moe_runs.csv")]
# The runs whose plans NVIDIA tuned for the cluster they ran on: its DGX Cloud benchmarks and
# Megatron-Bridge's performance summaries.
TUNED = {"DGXC_BENCH", "MBRIDGE_PERF", "dgxc-benchmarking README",
         "Megatron-Bridge performance summary"}
LO, HI = 0.85, 1.10


def predictions(binary, robust, scratch):
    out = os.path.join(scratch, "robust.csv" if robust else "best.csv")
    args = [binary, "validate", *RUNS, "--best", "-o", out] + (["--robust"] if robust else [])
    subprocess.run(args, check=True, capture_output=True, text=True)
    with open(out, newline="") as f:
        return {row["id"]: row for row in csv.DictReader(f)}


def families():
    family = {}
    for path in RUNS:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                family[row["id"]] = "moe" if "num_experts" in row else "dense"
    return family


def stats(ratios):
    inside = sum(LO <= r <= HI for r in ratios)
    return f"{len(ratios)} | {statistics.median(ratios):.3f} | {inside} of {len(ratios)}"


def table(title, key, best, robust, family):
    groups = {}
    for rid, row in best.items():
        if not row["best_step_time_s"]:
            continue
        measured = float(row["measured_step_time_s"])
        groups.setdefault(key(row, family[rid]), []).append(
            (float(row["best_step_time_s"]) / measured,
             float(robust[rid]["best_step_time_s"]) / measured))
    lines = [f"| {title} | runs | best / measured, median | in {LO:.2f}-{HI:.2f} | "
             f"`--robust`: runs | median | in {LO:.2f}-{HI:.2f} |",
             "|---|---|---|---|---|---|---|"]
    for name in sorted(groups):
        ratios = groups[name]
        lines.append(f"| {name} | {stats([r for r, _ in ratios])} | "
                     f"{stats([r for _, r in ratios])} |")
    return lines


def generate(binary):
    with tempfile.TemporaryDirectory() as scratch:
        best, robust = predictions(binary, False, scratch), predictions(binary, True, scratch)
    family = families()
    lines = table("framework (family)", lambda row, fam: f"{row['framework']} ({fam})", best,
                  robust, family)
    lines += [""]
    lines += table("NVIDIA-tuned source (family)",
                   lambda row, fam: f"{row['source']} ({fam})" if row["source"] in TUNED
                   else "other sources", best, robust, family)
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--bin", default=os.path.join(ROOT, "build/bin/clustersweep"))
    parser.add_argument("--doc", default=os.path.join(ROOT, "docs/search.md"))
    args = parser.parse_args()
    with open(args.doc) as f:
        doc = f.read()
    begin, end = "<!-- begin generated: realism -->\n", "<!-- end generated: realism -->"
    if begin not in doc or end not in doc:
        sys.exit(f"{args.doc}: no '{begin.strip()}' ... '{end}' block")
    head, rest = doc.split(begin, 1)
    old, tail = rest.split(end, 1)
    new = generate(args.bin)
    if args.check:
        if old != new:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                       "docs", "now"))
            sys.exit(1)
        print("realism tables are current")
        return
    with open(args.doc, "w") as f:
        f.write(head + begin + new + end + tail)


if __name__ == "__main__":
    main()
