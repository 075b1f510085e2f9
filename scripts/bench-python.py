#!/usr/bin/python3
"""estimate_many against `clustersweep bench`, side by side on one core (README, "Performance").

The table is bench's own set of plans (GPT-3 175B on 1,024 H100: every tp, pp, cp, vp,
micro-batch, ZeRO stage, recompute and sequence parallelism whose degrees divide the GPU count),
repeated over scale-out bandwidths to 1,000,000 points, built as a notebook would (a pandas
DataFrame, recompute as text). Each round times the whole estimate_many call (the table's
conversion, the C++ evaluation and the returned DataFrame) and then `clustersweep bench`; the best
of each is compared, since a busy machine only ever slows a run down.

    /usr/bin/python3 scripts/bench-python.py [--build build] [--rounds 5] [--points 1000000]
"""
import argparse
import itertools
import os
import re
import subprocess
import sys
import time

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--build", default="build", help="the build folder (default: build)")
parser.add_argument("--rounds", type=int, default=5)
parser.add_argument("--points", type=int, default=1_000_000)
args = parser.parse_args()
sys.path.insert(0, os.path.join(args.build, "python"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import clustersweep  # noqa: E402

plans = [
    p
    for p in itertools.product(
        [1, 2, 4, 8], [1, 2, 4, 8, 16], [1, 2], [1, 2, 3], [1, 2, 4], [0, 1, 2, 3],
        ["none", "selective", "full"], [False, True],
    )
    if 1024 % (p[0] * p[1] * p[2]) == 0 and not (p[1] == 1 and p[3] > 1)
]
names = ["tp", "pp", "cp", "vp", "micro_batch", "zero", "recompute", "sequence_parallel"]
copies = -(-args.points // len(plans))
table = pd.DataFrame(plans * copies, columns=names).iloc[: args.points]
table["inter_node_gbps_per_gpu"] = np.repeat(100.0 + 10 * np.arange(copies), len(plans))[: args.points]

best_many = best_bench = 0.0
for _ in range(args.rounds):
    start = time.perf_counter()
    out = clustersweep.estimate_many(
        table, model="gpt3-175b", gpu="H100-SXM5-80GB", num_gpus=1024, pipeline_split="even"
    )
    seconds = time.perf_counter() - start
    best_many = max(best_many, len(table) / seconds)
    bench = subprocess.run(
        [os.path.join(args.build, "bin", "clustersweep"), "bench", "--seconds", "1"],
        check=True, capture_output=True, text=True,
    ).stdout
    best_bench = max(best_bench, float(re.search(r"evaluations_per_second: (\d+)", bench)[1]))
    print(f"estimate_many {len(table) / seconds / 1e6:.2f} M points/s ({seconds:.3f} s), "
          f"bench {best_bench / 1e6:.2f} M/s so far", flush=True)
print(f"points: {len(table):,}, feasible {out.feasible.mean():.1%}, columns {out.shape[1]}")
print(f"estimate_many: {best_many / 1e6:.2f} M points/s (best of {args.rounds})")
print(f"bench:         {best_bench / 1e6:.2f} M evaluations/s (best of {args.rounds})")
print(f"ratio:         {best_many / best_bench:.2f}")
