"""Training-step speed of PTGAN and its baselines with the Table 9 network sizes.

Measures iterations per second of one Algorithm 3 iteration (critic step + generator step) for
plain GAN, MP, GP and PT+CP (plus PT+CP with the forward-mode coherency penalty, for reference)
on tabular-shaped random data (100 columns in [-1, 1], batch 100), with 1 and with 2 torch
threads, in one run. Repetitions are interleaved (every method and thread count once per round)
so that load from other processes hits all of them alike (the order is reversed every other
round); the table reports the median over rounds, and the PT+CP / MP ratio is the median of the
per-round ratios (each from two measurements taken seconds apart). Writes
benchmarks/results/ptgan.json atomically.

    python benchmarks/bench_ptgan.py [--rounds 10] [--iters 50]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from fusionlib.gan import Trainer, tabular_networks
from fusionlib.io import atomic_write_json
from fusionlib.ptgan import default_config, ptgan_trainer
from fusionlib.rng import numpy_rng

VARIANTS = {  # label -> (method, config overrides)
    "plain": ("plain", {}),
    "mp": ("mp", {}),
    "gp": ("gp", {}),
    "pt+cp": ("pt+cp", {"r": 0.5}),
    "pt+cp (jvp)": ("pt+cp", {"r": 0.5, "cp_mode": "jvp"}),
}
THREADS = (1, 2)


def make_trainer(label: str, seed: int = 0) -> Trainer:
    method, overrides = VARIANTS[label]
    cfg = default_config(method, latent_dim=16, batch_size=100, **overrides)
    g, c = tabular_networks(100, conditional=cfg.conditional, seed=seed)
    return ptgan_trainer(cfg, g, c, seed=seed, log_every=0)


def measure(rounds: int, iters: int, data: np.ndarray) -> dict:
    trainers = {(lab, th): make_trainer(lab) for lab in VARIANTS for th in THREADS}
    for (_lab, th), tr in trainers.items():  # warm-up: allocator, fused kernels, first jit
        tr.n_threads = th
        tr.fit(data, 10)
    times: dict = {key: [] for key in trainers}
    order = list(trainers)
    for i in range(rounds):
        for key in order if i % 2 == 0 else order[::-1]:
            tr = trainers[key]
            start = time.perf_counter()
            tr.fit(data, tr.iteration_ + iters)
            times[key].append((time.perf_counter() - start) / iters)
    return times


def summarise(times: dict) -> dict:
    out = {}
    for (lab, th), ts in times.items():
        med = statistics.median(ts)
        out.setdefault(lab, {})[f"threads_{th}"] = {
            "it_per_s_median": 1.0 / med, "ms_per_it_median": 1e3 * med,
            "ms_per_it_min": 1e3 * min(ts), "ms_per_it_max": 1e3 * max(ts), "rounds": len(ts)}
    for th in THREADS:
        ratios = sorted(a / b for a, b in zip(times[("pt+cp", th)], times[("mp", th)], strict=True))
        q = np.quantile(ratios, [0.25, 0.5, 0.75])
        out.setdefault("ratio_ptcp_over_mp", {})[f"threads_{th}"] = {
            "median": float(q[1]), "q25": float(q[0]), "q75": float(q[2]),
            "per_round": ratios}
    return out


def print_table(summary: dict) -> None:
    print(f"{'variant':<14}" + "".join(f"{f'it/s {th} thr':>14}{f'ms/it {th} thr':>14}"
                                        for th in THREADS))
    for lab in VARIANTS:
        row = summary[lab]
        print(f"{lab:<14}" + "".join(
            f"{row[f'threads_{th}']['it_per_s_median']:>14.1f}"
            f"{row[f'threads_{th}']['ms_per_it_median']:>14.2f}" for th in THREADS))
    for th in THREADS:
        r = summary["ratio_ptcp_over_mp"][f"threads_{th}"]
        print(f"time per iteration PT+CP / MP, {th} thread(s): median {r['median']:.3f} "
              f"(IQR {r['q25']:.3f}-{r['q75']:.3f} over rounds; target <= 1.15)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "ptgan.json"))
    args = parser.parse_args()
    data = numpy_rng(0, "bench-data").uniform(-1, 1, size=(5000, 100)).astype(np.float32)
    summary = summarise(measure(args.rounds, args.iters, data))
    print_table(summary)
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    atomic_write_json(args.out, {
        "benchmark": "ptgan_training_step", "networks": "Table 9: critic 7x64 ReLU; generator "
        "latent 16, 7x64 batch norm + ReLU; data 100 columns; batch 100; T' = 1",
        "rounds": args.rounds, "iters_per_round": args.iters, "results": summary,
        "torch": torch.__version__, "python": platform.python_version(),
        "cpu_count": os.cpu_count(), "load_average_at_end": load,
        "caveat": "shared 2-core machine with other jobs running: absolute numbers are noisy; "
                  "the interleaved ratios are the meaningful output"})


if __name__ == "__main__":
    main()
