"""Training-step speed of PTGAN and its competitors on 32 px images (Table 5 networks).

Measures iterations per second of one image iteration (critic step + generator step, T' = 1)
for SN, MP, PT+MP and PT+CP side by side on random 32 px images in [-1, 1], in one run. MP and
the coherency penalty (CP) both take one critic forward pass on n_b penalty points and a
second-order gradient (double backward) for the critic's update; PT+CP / PT+MP isolates the
penalty (same tempering, temperature inputs and interpolated noise), PT+MP / MP isolates
tempering (same penalty), PT+CP / MP is the total. Repetitions are interleaved (every method once
per round, order reversed every other round) so that load from other processes hits all of them
alike; the table reports medians over rounds, and each ratio is the median of per-round ratios.
On a CPU the networks are narrowed (``--width``, default 1/8 of Table 5); on a GPU runner use
``--device cuda --width 1 --batch 100`` for the paper's setting. Writes
benchmarks/results/ptgan_images.json atomically.

    python benchmarks/bench_ptgan_images.py [--rounds 5] [--iters 5] [--width 0.125]
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

from fusionlib.gan.trainer import Trainer
from fusionlib.io import atomic_write_json
from fusionlib.ptgan.images.runs import build_trainer
from fusionlib.ptgan.images.step import ImageRunConfig
from fusionlib.rng import numpy_rng

METHODS = ("sn", "mp", "pt+mp", "pt+cp")
#: (numerator, denominator) of the reported time ratios
RATIOS = (("pt+cp", "mp"), ("pt+cp", "pt+mp"), ("pt+mp", "mp"), ("pt+cp", "sn"))


def make_trainer(method: str, width: float, batch: int, device: str, channels: int) -> Trainer:
    dataset = "cifar10" if channels == 3 else "fashion_mnist"  # only fixes the image shape
    run = ImageRunConfig(dataset, method, batch_size=batch, width=width)
    return build_trainer(run, 0, device=device)


def measure(rounds: int, iters: int, data: np.ndarray, width: float, batch: int,
            device: str) -> dict:
    trainers = {m: make_trainer(m, width, batch, device, data.shape[1]) for m in METHODS}
    for tr in trainers.values():  # warm-up
        tr.fit(data, 2)
    times: dict = {m: [] for m in METHODS}
    for i in range(rounds):
        for m in METHODS if i % 2 == 0 else METHODS[::-1]:
            tr = trainers[m]
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            start = time.perf_counter()
            tr.fit(data, tr.iteration_ + iters)
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            times[m].append((time.perf_counter() - start) / iters)
    return times


def summarise(times: dict) -> dict:
    out = {m: {"it_per_s_median": 1.0 / statistics.median(ts),
               "ms_per_it_median": 1e3 * statistics.median(ts),
               "ms_per_it_min": 1e3 * min(ts), "ms_per_it_max": 1e3 * max(ts),
               "rounds": len(ts)} for m, ts in times.items()}
    for num, den in RATIOS:
        ratios = sorted(a / b for a, b in zip(times[num], times[den], strict=True))
        q = np.quantile(ratios, [0.25, 0.5, 0.75])
        out[f"ratio_{_key(num)}_over_{_key(den)}"] = {
            "median": float(q[1]), "q25": float(q[0]), "q75": float(q[2]), "per_round": ratios}
    return out


def _key(method: str) -> str:
    return method.replace("+", "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--width", type=float, default=0.125)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--channels", type=int, default=3, choices=(1, 3))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" /
                                             "ptgan_images.json"))
    args = parser.parse_args()
    data = numpy_rng(0, "bench-images").uniform(
        -1, 1, size=(1000, args.channels, 32, 32)).astype(np.float32)
    summary = summarise(measure(args.rounds, args.iters, data, args.width, args.batch,
                                args.device))
    print(f"{'method':<8}{'it/s':>10}{'ms/it':>10}")
    for m in METHODS:
        print(f"{m:<8}{summary[m]['it_per_s_median']:>10.2f}{summary[m]['ms_per_it_median']:>10.1f}")
    for num, den in RATIOS:
        r = summary[f"ratio_{_key(num)}_over_{_key(den)}"]
        print(f"time per iteration {num.upper()} / {den.upper()}: median {r['median']:.3f} "
              f"(IQR {r['q25']:.3f}-{r['q75']:.3f} over rounds)")
    atomic_write_json(args.out, {
        "benchmark": "ptgan_images_training_step",
        "networks": f"Table 5 (32 px, {args.channels} channel(s)) at width x{args.width:g}; "
                    f"latent 128; batch {args.batch}; T' = 1",
        "device": args.device, "rounds": args.rounds, "iters_per_round": args.iters,
        "results": summary, "torch": torch.__version__, "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "load_average_at_end": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "caveat": "shared machine with other jobs running: absolute numbers are noisy; the "
                  "interleaved ratios are the meaningful output"})


if __name__ == "__main__":
    main()
