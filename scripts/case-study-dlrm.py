#!/usr/bin/python3
"""The DLRM case study of docs/case-studies.md: MLPerf DLRMv2 (fp16, 65,536 samples a step) on
H100 clusters, evaluated with `clustersweep estimate --json` point by point: which sharding and
which cluster as the GPU count and the scale-out bandwidth vary, and what an expansion tier buys
DLRM-xlarge on GPUs too small to hold its tables.

Usage: scripts/case-study-dlrm.py [path/to/clustersweep]"""
import json
import subprocess
import sys

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/bin/clustersweep"
SHARDINGS = ["table", "row", "column", "table_row", "data", "best"]


def estimate(*args):
    out = subprocess.run([BIN, "estimate", "--json", *args], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def placement(e):
    counts = {}
    for t in e["tables"]:
        counts[t["sharding"]] = counts.get(t["sharding"], 0) + 1
    return " ".join(f"{k}:{v}" for k, v in sorted(counts.items()))


print("## MLPerf DLRMv2 on H100-SXM5-80GB: samples/s (millions) by sharding")
print("| GPUs | scale-out Gbit/s | " + " | ".join(SHARDINGS) + " | best placement |")
print("|---:|---:|" + "---:|" * len(SHARDINGS) + "---|")
for gpus in [8, 16, 32, 64, 128]:
    for gbps in [100, 400] if gpus > 8 else [400]:
        row, best = [], None
        for s in SHARDINGS:
            e = estimate("--model", "dlrmv2-dcnv2", "--gpu", "H100-SXM5-80GB", "--gpus", str(gpus),
                         "--precision", "fp16", "--inter-node-gbps-per-gpu", str(gbps),
                         "--sharding", s)
            row.append(f"{e['samples_per_s'] / 1e6:.1f}" if e["feasible"] else "OOM")
            if s == "best":
                best = e
        print(f"| {gpus} | {gbps} | " + " | ".join(row) + f" | {placement(best)} |")

print()
print("## DLRM-xlarge (882.9 M rows, 452 GB of fp32 tables) on 8 A100s")
print("| GPU | expansion tier | samples/s (millions) | in HBM GB | in the tier GB | lookups s | step s |")
print("|---|---|---:|---:|---:|---:|---:|")
for gpu, gb, bw in [("A100-SXM4-40GB", 0, 0), ("A100-SXM4-40GB", 64, 32),
                    ("A100-SXM4-40GB", 64, 64), ("A100-SXM4-40GB", 64, 128),
                    ("A100-SXM4-80GB", 0, 0)]:
    args = ["--model", "dlrm-criteo-xlarge", "--gpu", gpu, "--gpus", "8", "--precision", "tf32"]
    if gb:
        args += ["--expansion-gb", str(gb), "--expansion-gbytes-per-s", str(bw)]
    e = estimate(*args)
    m, t = e["memory_bytes"], e["step_time_s"]
    tier = f"{gb} GB at {bw} GB/s" if gb else "none"
    rate = f"{e['samples_per_s'] / 1e6:.2f}" if e["feasible"] else "OOM"
    print(f"| {gpu} | {tier} | {rate} | {m['hbm'] / 1e9:.1f} | {m['expansion'] / 1e9:.1f} | "
          f"{t['embedding_fwd'] + t['embedding_bwd']:.4f} | {t['total']:.4f} |")
