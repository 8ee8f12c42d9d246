"""FusionGAN speed: epoch time in K, and R stacked seeds against R separate runs.

**Stacked seeds** (``fusionlib.fusion.stacked``): 5 seeds of the chapter's setting (the
simulated mixture, 4,000 rows per source, Appendix C networks, one torch thread) trained as one
``StackedFusionGAN`` against the same 5 seeds trained one after the other with ``FusionGAN``,
the two interleaved within each round (load hits both alike) and each the minimum over rounds;
the throughput ratio is (time of 5 separate runs) / (time of the stacked run), the issue's
target being 3.

**The floor of the stacked iteration**: the floating-point operations of its matrix products
(``torch.utils.flop_counter``: the batched products of the 5 stacked replicas, forward and
backward) at this core's single-precision matrix rate (a 1024 x 1024 product, one thread) are a
time no implementation of the same arithmetic goes below; printed beside the measured stacked
and separate iterations, with the throughput ratio that floor would allow (5 separate
iterations over the floor). Where that bound is below 3, the target cannot be met on this core
by removing overhead alone.

**Epoch time in K** for K = 2 and 4 sources, n = 50,000 rows per source, d = 20 columns.

One epoch is ceil(n / B) = 782 iterations of Algorithm B's inner loop (batch 64, Appendix C
networks, one torch thread). We time ``--iters`` iterations per round, interleave K = 2 and 4
within each round (so machine load hits both alike), and extrapolate to an epoch; the K = 4 / K = 2
ratio is the median of per-round ratios (section H predicts 2). Writes benchmarks/results/
fusion.json atomically.

    python benchmarks/bench_fusion.py [--rounds 5] [--iters 40] [--stack-epochs 4]
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import time
from pathlib import Path

from _floor import peak_gflops  # benchmarks/_floor.py (the script folder is on sys.path)

from fusionlib.fusion.complexity import time_iterations
from fusionlib.fusion.mixture.data import mixture_sources
from fusionlib.fusion.replicas import StackedFusionGAN
from fusionlib.fusion.synthesizer import FusionGAN
from fusionlib.gan.trainer import torch_threads
from fusionlib.io import atomic_write_json

N, D, BATCH = 50_000, 20, 64


def stacked_against_separate(rounds: int, epochs: int, replicas: int = 5) -> dict:
    """Seconds of R stacked seeds and of R separate runs (minimum over interleaved rounds)."""
    sources, _ = mixture_sources(4_000, 0)
    seeds = [(0, "rep", r) for r in range(replicas)]

    def stacked() -> None:
        StackedFusionGAN(seeds, epochs).fit(sources)

    def separate() -> None:
        for s in seeds:
            FusionGAN(epochs, seed=s).fit(sources)

    best = {"stacked": math.inf, "separate": math.inf}
    with torch_threads(1):
        StackedFusionGAN(seeds[:1], 1).fit(sources)  # warm-up
        for r in range(rounds):
            for name in (("stacked", "separate") if r % 2 == 0 else ("separate", "stacked")):
                t0 = time.perf_counter()
                (stacked if name == "stacked" else separate)()
                best[name] = min(best[name], time.perf_counter() - t0)
    its = epochs * math.ceil(3_200 / BATCH)
    return {"replicas": replicas, "epochs": epochs, "iterations": its,
            "stacked_s": best["stacked"], "separate_s": best["separate"],
            "ms_per_seed_iteration_stacked": 1e3 * best["stacked"] / (replicas * its),
            "ms_per_seed_iteration_separate": 1e3 * best["separate"] / (replicas * its),
            "throughput_ratio": best["separate"] / best["stacked"], "target": 3.0}


def iteration_floor(replicas: int = 5, iters: int = 100, rounds: int = 3) -> dict:
    """One stacked iteration (R replicas) and one separate iteration, measured, and the
    stacked iteration's matrix-product floor at this core's peak rate."""
    from torch.utils.flop_counter import FlopCounterMode

    from fusionlib.rng import torch_generator

    sources, _ = mixture_sources(4_000, 0)
    seeds = [(0, "rep", r) for r in range(replicas)]
    with torch_threads(1):
        stacked = StackedFusionGAN(seeds, 1).fit(sources)
        step, data = stacked.step_, stacked.data_
        rngs = [torch_generator(s, "train") for s in range(replicas)]
        opts = step.optimizers()
        one = FusionGAN(1, seed=seeds[0]).fit(sources)
        *_, xs, weights = one._prepare(sources)
        sep_batch = one.trainer_.step.prepare(
            tuple(v for n in one.sources_ for v in (xs[n], weights[n])), "cpu")
        best = {"stacked": math.inf, "separate": math.inf}
        for r in range(rounds):
            for name in (("stacked", "separate") if r % 2 == 0 else ("separate", "stacked")):
                t0 = time.perf_counter()
                for _ in range(iters):
                    if name == "stacked":
                        step.iteration(data, rngs, opts)
                    else:
                        one.trainer_._one(sep_batch)
                best[name] = min(best[name], (time.perf_counter() - t0) / iters)
        with FlopCounterMode(display=False) as counter:
            step.iteration(data, rngs, opts)
    peak = peak_gflops()
    floor_s = counter.get_total_flops() / peak / 1e9
    return {"replicas": replicas, "gflop_per_stacked_iteration": counter.get_total_flops() / 1e9,
            "peak_gflops_1_thread": peak, "stacked_ms": 1e3 * best["stacked"],
            "separate_ms": 1e3 * best["separate"], "floor_ms": 1e3 * floor_s,
            "stacked_over_floor": best["stacked"] / floor_s,
            "throughput_ratio_per_iteration": replicas * best["separate"] / best["stacked"],
            "throughput_ratio_at_floor": replicas * best["separate"] / floor_s}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iters", type=int, default=40)
    parser.add_argument("--stack-epochs", type=int, default=4)
    args = parser.parse_args()
    stack = stacked_against_separate(args.rounds, args.stack_epochs)
    print(f"5 seeds stacked: {stack['stacked_s']:.2f} s, 5 separate runs: "
          f"{stack['separate_s']:.2f} s ({stack['iterations']} iterations each): throughput "
          f"ratio {stack['throughput_ratio']:.2f} (target 3)")
    floor = iteration_floor()
    stack["iteration_floor"] = floor
    print(f"one iteration: stacked x5 {floor['stacked_ms']:.2f} ms, separate "
          f"{floor['separate_ms']:.2f} ms (ratio {floor['throughput_ratio_per_iteration']:.2f}); "
          f"floor of the stacked iteration {floor['floor_ms']:.2f} ms "
          f"({floor['gflop_per_stacked_iteration']:.3f} GFLOP at "
          f"{floor['peak_gflops_1_thread']:.0f} GFLOP/s): stacked = "
          f"{floor['stacked_over_floor']:.2f} x floor; the floor allows a ratio of at most "
          f"{floor['throughput_ratio_at_floor']:.2f}")
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
           "machine": platform.processor() or platform.machine(), "rounds": args.rounds,
           "stacked_seeds": stack}
    for k, v in rows.items():
        print(f"{k}: {v['ms_per_iteration']:.2f} ms/iteration, {v['s_per_epoch']:.1f} s/epoch")
    print(f"K=4 / K=2 epoch time: {out['k4_over_k2']:.2f} (section H: 2)")
    atomic_write_json(Path(__file__).parent / "results" / "fusion.json", out)


if __name__ == "__main__":
    main()
