#!/usr/bin/python3
"""estimate_many against `clustersweep bench`, side by side on one core (README, "Performance").

The table is bench's own set of plans (GPT-3 175B on 1,024 H100: every tp, pp, cp, vp,
micro-batch, ZeRO stage, recompute and sequence parallelism whose degrees divide the GPU count),
repeated over scale-out bandwidths to 1,000,000 points, built as a notebook would (a pandas
DataFrame, recompute as text). Each round times the whole estimate_many call (the table's
conversion, the C++ evaluation and the returned DataFrame) and then `clustersweep bench`; the best
of each is compared, since a busy machine only ever slows a run down. Both are also timed in CPU
seconds (the process's, the child's), which a virtual machine's stolen time does not inflate: the
rate per core.

    /usr/bin/python3 scripts/bench-python.py [--build build] [--rounds 5] [--points 1000000]
"""
import argparse
import itertools
import os
import re
import resource
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

best_many = best_bench = cpu_many = cpu_bench = 0.0
for _ in range(args.rounds):
    start, start_cpu = time.perf_counter(), time.process_time()
    out = clustersweep.estimate_many(
        table, model="gpt3-175b", gpu="H100-SXM5-80GB", num_gpus=1024, pipeline_split="even"
    )
    seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    best_many = max(best_many, len(table) / seconds)
    cpu_many = max(cpu_many, len(table) / cpu)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    bench = subprocess.run(
        [os.path.join(args.build, "bin", "clustersweep"), "bench", "--seconds", "1"],
        check=True, capture_output=True, text=True,
    ).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    rate = float(re.search(r"evaluations_per_second: (\d+)", bench)[1])
    evaluations = float(re.search(r"evaluations: (\d+)", bench)[1])
    best_bench = max(best_bench, rate)
    cpu_bench = max(cpu_bench, evaluations / (after.ru_utime - before.ru_utime
                                              + after.ru_stime - before.ru_stime))
    print(f"estimate_many {len(table) / seconds / 1e6:.2f} M points/s ({seconds:.3f} s), "
          f"bench {rate / 1e6:.2f} M/s", flush=True)
print(f"points: {len(table):,}, feasible {out.feasible.mean():.1%}, columns {out.shape[1]}")
print(f"wall clock, best of {args.rounds}: estimate_many {best_many / 1e6:.2f} M points/s, "
      f"bench {best_bench / 1e6:.2f} M evaluations/s, ratio {best_many / best_bench:.2f}")
print(f"CPU time, best of {args.rounds}:   estimate_many {cpu_many / 1e6:.2f} M points/s, "
      f"bench {cpu_bench / 1e6:.2f} M evaluations/s, ratio {cpu_many / cpu_bench:.2f}")
