"""Speed of the FusionGAN sample-weighting strategies (appendix D) at n = 50,000, d = 20.

Data: a Gaussian mixture (10 components, means N(0, 3^2 I), unit covariance) with every column
multiplied by a random unit in 10^[-2, 3] (so standardisation matters), drawn with a numpy
Generator on stream ``numpy_rng(seed, "bench_weighting", "data")``.

Times, each the median of ``--rounds`` interleaved runs (every step once per round, order
reversed every other round; the tree method once, after them, as it is slow): uniform;
cluster (k = 20, n_init = 1 default and n_init = 10); density end to end with the default
(exact) method; the KDE step alone (standardised data) with method="exact" and method="tree"
(scikit-learn ball tree, rtol = 1e-4), and the maximum relative error of the tree method against
the exact one, for p_hat and for the final weights, over ``--tree-queries`` rows (all rows by
default; a random subsample otherwise, for which the tree KDE is evaluated at those rows only).
Writes benchmarks/results/weighting.json atomically.

    python benchmarks/bench_weighting.py [--n 50000] [--d 20] [--rounds 3] [--tree-queries 0]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import scipy
import sklearn
from sklearn.neighbors import KernelDensity

from fusionlib.fusion.weighting import (
    cluster_weights,
    density_weights,
    log_kde_at_points,
    uniform_weights,
    weights_from_log_density,
)
from fusionlib.io import atomic_write_json
from fusionlib.rng import numpy_rng

TREE_RTOL = 1e-4
BANDWIDTH = 0.5


def make_data(n: int, d: int, seed: int = 0, components: int = 10) -> np.ndarray:
    rng = numpy_rng(seed, "bench_weighting", "data")
    means = rng.normal(0.0, 3.0, (components, d))
    x = means[rng.integers(0, components, n)] + rng.normal(size=(n, d))
    return x * 10.0 ** rng.uniform(-2.0, 3.0, d)


def timed(fn, rounds: int):
    times, out = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return out, summary(times)


def summary(times: list[float]) -> dict:
    return {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
            "rounds": len(times), "all_s": times}


def interleaved(tasks: dict, rounds: int) -> tuple[dict, dict]:
    """Run every task once per round (order reversed every other round), so that load from
    other processes on the shared machine hits all tasks alike; return outputs and timings."""
    times: dict = {name: [] for name in tasks}
    outputs: dict = {}
    order = list(tasks)
    for r in range(rounds):
        for name in order if r % 2 == 0 else order[::-1]:
            start = time.perf_counter()
            outputs[name] = tasks[name]()
            times[name].append(time.perf_counter() - start)
    return outputs, {name: summary(ts) for name, ts in times.items()}


def tree_comparison(z: np.ndarray, log_exact: np.ndarray, w_exact: np.ndarray,
                    queries: int) -> dict:
    """Tree-method time and its error against the exact KDE (all rows, or a subsample)."""
    n = len(z)
    if queries <= 0 or queries >= n:
        log_tree, t = timed(lambda: log_kde_at_points(z, method="tree", tree_rtol=TREE_RTOL), 1)
        w_tree = weights_from_log_density(log_tree)  # as density_weights(method="tree")
        w_err = float(np.max(np.abs(w_tree / w_exact - 1.0)))
        rows = np.arange(n)
    else:
        rows = np.sort(numpy_rng(0, "bench_weighting", "subsample").choice(n, queries, False))
        kde = KernelDensity(bandwidth=BANDWIDTH, algorithm="ball_tree", rtol=TREE_RTOL).fit(z)
        log_tree, t = timed(lambda: kde.score_samples(z[rows]), 1)
        t["extrapolated_full_s"] = t["median_s"] * n / queries
        w_err = None  # final weights need p_hat at every row
    rel = np.abs(np.expm1(log_tree - log_exact[rows]))
    return {"time": t, "rows_compared": int(len(rows)), "rtol": TREE_RTOL,
            "max_rel_err_p_hat": float(rel.max()), "max_rel_err_weights": w_err}


def measure(n: int, d: int, rounds: int, queries: int) -> dict:
    x = make_data(n, d)
    z = (x - x.mean(axis=0)) / x.std(axis=0)  # what density_weights does (no constant column)
    cluster_weights(x[:2000], n_init=2)  # warm-up: OpenMP/BLAS thread pools, first imports
    density_weights(x[:2000])
    outputs, res = interleaved({
        "uniform": lambda: uniform_weights(x),
        "cluster_n_init_1": lambda: cluster_weights(x),
        "cluster_n_init_10": lambda: cluster_weights(x, n_init=10),
        "density_exact": lambda: density_weights(x),
        "kde_exact": lambda: log_kde_at_points(z, method="exact"),
    }, rounds)
    w_exact, log_exact = outputs["density_exact"], outputs["kde_exact"]
    res["kde_tree"] = tree_comparison(z, log_exact, w_exact, queries)
    self_term = -math.log(n) - 0.5 * d * math.log(2 * math.pi * BANDWIDTH**2)
    res["p_hat"] = {"log_min": float(log_exact.min()), "log_median": float(np.median(log_exact)),
                    "log_max": float(log_exact.max()), "log_self_term_bound": self_term,
                    "self_term_bound": math.exp(self_term)}
    res["weights_density"] = {"min": float(w_exact.min()), "max": float(w_exact.max())}
    return res


def print_table(res: dict, n: int, d: int) -> None:
    print(f"n = {n}, d = {d}, {os.cpu_count()} CPU(s)")
    print(f"{'step':<34}{'median s':>10}{'min s':>10}{'max s':>10}")
    for key in ("uniform", "cluster_n_init_1", "cluster_n_init_10", "density_exact",
                "kde_exact"):
        t = res[key]
        print(f"{key:<34}{t['median_s']:>10.3f}{t['min_s']:>10.3f}{t['max_s']:>10.3f}")
    tree = res["kde_tree"]
    t = tree["time"]
    extra = f" (extrapolated full: {t['extrapolated_full_s']:.1f} s)" \
        if "extrapolated_full_s" in t else ""
    print(f"{'kde_tree (rtol=1e-4, 1 run)':<34}{t['median_s']:>10.3f}{extra}")
    print(f"tree vs exact over {tree['rows_compared']} rows: max rel err p_hat "
          f"{tree['max_rel_err_p_hat']:.2e}, weights {tree['max_rel_err_weights']}")
    p = res["p_hat"]
    print(f"p_hat: min {math.exp(p['log_min']):.3e}, median {math.exp(p['log_median']):.3e}, "
          f"max {math.exp(p['log_max']):.3e}; self-term bound {p['self_term_bound']:.3e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tree-queries", type=int, default=0,
                        help="rows for the tree method (0 = all rows)")
    parser.add_argument("--out",
                        default=str(Path(__file__).parent / "results" / "weighting.json"))
    args = parser.parse_args()
    res = measure(args.n, args.d, args.rounds, args.tree_queries)
    print_table(res, args.n, args.d)
    atomic_write_json(args.out, {
        "benchmark": "fusion_weighting", "n": args.n, "d": args.d, "rounds": args.rounds,
        "bandwidth": BANDWIDTH, "results": res, "numpy": np.__version__,
        "scipy": scipy.__version__, "sklearn": sklearn.__version__,
        "python": platform.python_version(), "cpu_count": os.cpu_count(),
        "load_average_at_end": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "caveat": "shared 2-core machine: absolute times are noisy"})


if __name__ == "__main__":
    main()
