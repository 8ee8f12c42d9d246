"""FusionGAN epoch time for K = 2 and 4 sources, n = 50,000 rows per source, d = 20 columns.

One epoch is ceil(n / B) = 782 iterations of Algorithm B's inner loop (batch 64, Appendix C
networks, one torch thread). We time ``--iters`` iterations per round, interleave K = 2 and 4
within each round (so machine load hits both alike), and extrapolate to an epoch; the K = 4 / K = 2
ratio is the median of per-round ratios (section H predicts 2). Writes benchmarks/results/
fusion.json atomically.

    python benchmarks/bench_fusion.py [--rounds 5] [--iters 40]
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
from pathlib import Path

from fusionlib.fusion.complexity import time_iterations
from fusionlib.io import atomic_write_json

N, D, BATCH = 50_000, 20, 64


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iters", type=int, default=40)
    args = parser.parse_args()
    per_iter: dict[int, list[float]] = {2: [], 4: []}
    ratios = []
    for r in range(args.rounds):
        order = (2, 4) if r % 2 == 0 else (4, 2)
        got = {k: time_iterations(k, N, D, 128, n_iter=args.iters, batch=BATCH, seed=r)
               for k in order}
        for k, s in got.items():
            per_iter[k].append(s)
        ratios.append(got[4] / got[2])
    iters_per_epoch = math.ceil(N / BATCH)
    rows = {f"K={k}": {"ms_per_iteration": 1e3 * statistics.median(v),
                       "s_per_epoch": statistics.median(v) * iters_per_epoch}
            for k, v in per_iter.items()}
    out = {"n_per_source": N, "d": D, "batch": BATCH, "iterations_per_epoch": iters_per_epoch,
           "results": rows, "k4_over_k2": statistics.median(ratios),
           "machine": platform.processor() or platform.machine(), "rounds": args.rounds}
    for k, v in rows.items():
        print(f"{k}: {v['ms_per_iteration']:.2f} ms/iteration, {v['s_per_epoch']:.1f} s/epoch")
    print(f"K=4 / K=2 epoch time: {out['k4_over_k2']:.2f} (section H: 2)")
    atomic_write_json(Path(__file__).parent / "results" / "fusion.json", out)


if __name__ == "__main__":
    main()
