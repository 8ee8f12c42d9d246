"""Time and memory of the seed 000 distance metrics at 50,000 x 50,000 records in d = 20.

Measures, on standard Gaussian data (real and synthetic drawn independently):

- ``coverage``: :func:`fusionlib.metrics.coverage.coverage`, ``variant="as_written"``, k = 1;
- ``mmd``: :func:`fusionlib.metrics.mmd.mmd`, unbiased, median heuristic on a 2,000,000-pair
  subsample of the pooled 100,000 records (float64 tiles, the default), and ``mmd32``: the same
  with ``precision="float32"`` tiles (sums in float64; its MMD^2 is shown beside the float64
  one);
- ``median``: the relative error of that subsampled median against the exact median over all
  49,995,000 pairs of 10,000 pooled records (seed 0, and the largest over seeds 0-4).

Each measurement runs in its own fresh process (this script with ``--worker``), so the process
peak RSS belongs to that metric alone; coverage and MMD are measured ``--repeats`` times and the
table shows the median (and minimum) wall time and the largest memory. CPU seconds (all
threads) are reported beside wall seconds: on a shared machine they show the work done when
other jobs slow the wall clock down. Peak memory is reported two ways: the tracemalloc peak
during the call (every NumPy array is tracked; scikit-learn's compiled neighbour search
allocates outside it) and the growth of the process's maximum RSS during the call. Targets:
<= 30 s and <= 2 GB for coverage and MMD. Writes benchmarks/results/metrics.json atomically.

    python benchmarks/bench_metrics.py [--n 50000] [--d 20] [--median-n 10000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

from fusionlib.io import atomic_write_json
from fusionlib.metrics.coverage import coverage
from fusionlib.metrics.mmd import DEFAULT_MAX_PAIRS, median_distance, mmd
from fusionlib.rng import numpy_rng

TARGET_S, TARGET_BYTES = 30.0, 2 * 1024**3
MEDIAN_SEEDS = range(5)


def _data(n: int, d: int, role: str) -> np.ndarray:
    return numpy_rng(0, "bench_metrics", role).standard_normal((n, d))


def _measure(fn) -> tuple[object, dict]:
    """Run ``fn()`` once: wall and CPU time (all threads), tracemalloc peak, max-RSS growth."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    tracemalloc.start()
    start = time.perf_counter()
    value = fn()
    seconds = time.perf_counter() - start
    traced_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return value, {"seconds": seconds, "cpu_seconds": cpu, "tracemalloc_peak_bytes": traced_peak,
                   "max_rss_growth_bytes": (after.ru_maxrss - before.ru_maxrss) * 1024,  # KiB
                   "process_max_rss_bytes": after.ru_maxrss * 1024}


def worker(name: str, n: int, d: int, median_n: int) -> dict:
    """One measurement (called in a fresh process)."""
    if name == "median":
        z = _data(median_n, d, "median")
        all_pairs = median_n * (median_n - 1) // 2
        exact, stats = _measure(lambda: median_distance(z, max_pairs=all_pairs))
        approx = {s: median_distance(z, seed=s) for s in MEDIAN_SEEDS}
        errors = [abs(approx[s] - exact) / exact for s in MEDIAN_SEEDS]
        return {"n_pooled": median_n, "d": d, "exact_median": exact, "subsample_pairs":
                DEFAULT_MAX_PAIRS, "subsampled_median_seed0": approx[0],
                "relative_error_seed0": errors[0], "relative_error_seeds_0_4": errors,
                "relative_error_max_seeds_0_4": max(errors), "exact_median_cost": stats}
    x, y = _data(n, d, "real"), _data(n, d, "synthetic")
    if name == "coverage":
        value, stats = _measure(lambda: coverage(x, y, k=1, variant="as_written"))
        return {"value": value, **stats}
    precision = "float32" if name == "mmd32" else "float64"
    res, stats = _measure(lambda: mmd(x, y, unbiased=True, precision=precision))
    return {"mmd2": res.mmd2, "gamma": res.gamma, "median": res.median,
            "n_pairs_for_median": res.n_pairs_for_median, "exact_median": res.exact_median,
            **stats}


def run_worker(name: str, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, __file__, "--worker", name, "--n", str(args.n), "--d", str(args.d),
           "--median-n", str(args.median_n)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def summarise(runs: list[dict]) -> dict:
    """Median and minimum wall time over runs (each in a fresh process); the largest memory."""
    keys = ("tracemalloc_peak_bytes", "max_rss_growth_bytes", "process_max_rss_bytes")
    return {"seconds_median": statistics.median(r["seconds"] for r in runs),
            "seconds_min": min(r["seconds"] for r in runs),
            "cpu_seconds_median": statistics.median(r["cpu_seconds"] for r in runs),
            **{k: max(r[k] for r in runs) for k in keys}, "runs": runs}


def print_table(results: dict, n: int, d: int) -> None:
    gib = 1024**3
    runs = len(results["mmd"]["runs"])
    print(f"{n:,} x {n:,} records, d = {d}; times: median (min) of {runs} fresh processes")
    print(f"{'metric':<25}{'seconds':>15}{'CPU s':>7}{'tracemalloc peak':>18}"
          f"{'max RSS growth':>16}{'process max RSS':>17}")
    for name, label in (("coverage", "coverage as_written k=1"), ("mmd", "mmd unbiased, median"),
                        ("mmd32", "mmd float32 tiles")):
        r = results[name]
        ok = r["seconds_median"] <= TARGET_S and max(
            r["tracemalloc_peak_bytes"], r["max_rss_growth_bytes"]) <= TARGET_BYTES
        print(f"{label:<25}{r['seconds_median']:>8.1f} ({r['seconds_min']:>4.1f})"
              f"{r['cpu_seconds_median']:>7.1f}{r['tracemalloc_peak_bytes'] / gib:>14.3f} GiB"
              f"{r['max_rss_growth_bytes'] / gib:>12.3f} GiB"
              f"{r['process_max_rss_bytes'] / gib:>13.3f} GiB  {'ok' if ok else 'OVER TARGET'}")
    print(f"MMD^2 float64 {results['mmd']['runs'][0]['mmd2']:.6e}, float32 tiles "
          f"{results['mmd32']['runs'][0]['mmd2']:.6e}")
    m = results["median"]
    print(f"median heuristic at {m['n_pooled']:,} pooled records: exact {m['exact_median']:.6f}, "
          f"{m['subsample_pairs']:,}-pair subsample {m['subsampled_median_seed0']:.6f}; relative "
          f"error {m['relative_error_seed0']:.2e} (max over seeds 0-4: "
          f"{m['relative_error_max_seeds_0_4']:.2e})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--median-n", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--worker", choices=("coverage", "mmd", "mmd32", "median"))
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "metrics.json"))
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.n, args.d, args.median_n)))
        return
    load_start = os.getloadavg()
    results = {name: summarise([run_worker(name, args) for _ in range(args.repeats)])
               for name in ("coverage", "mmd", "mmd32")}
    results["median"] = run_worker("median", args)
    print_table(results, args.n, args.d)
    atomic_write_json(args.out, {
        "benchmark": "distance_metrics", "n_real": args.n, "n_synthetic": args.n, "d": args.d,
        "data": "independent standard Gaussian samples (fusionlib.rng streams, root seed 0)",
        "targets": {"seconds": TARGET_S, "bytes": TARGET_BYTES}, "repeats": args.repeats,
        "results": results,
        "numpy": np.__version__, "python": platform.python_version(),
        "cpu_count": os.cpu_count(), "load_average_at_start": load_start,
        "load_average_at_end": os.getloadavg(),
        "caveat": "shared 2-core machine; other jobs may run at the same time, so the times "
                  "are upper bounds of the metric alone"})


if __name__ == "__main__":
    main()
