"""Speed of the S_T protocol on Adult: the Table 9 step (PT+CP against MP) and the evaluation.

In one run, on Adult's real encoding (89 columns: Table 9 networks with the Gumbel-softmax head):

* iterations per second of :class:`~fusionlib.ptgan.tabular.TabularPTGAN` training for PT+CP
  (r = 0.5, lambda = 100, Z^alpha) and MP (lambda_MP = 1), interleaved in rounds so that load from
  other processes hits both alike; the PT+CP / MP ratio is the median of per-round ratios;
* the wall seconds of one evaluation point (1,000 samples, RF + SVM + LR fitted and scored on
  D_test), and the share of wall time the paper protocol (50 points over 57,000 iterations)
  would spend evaluating at the measured speeds.

Writes benchmarks/results/ptgan_tabular.json atomically.

    python benchmarks/bench_ptgan_tabular.py [--rounds 5] [--iters 100]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import torch

from fusionlib.io import atomic_write_json
from fusionlib.ptgan.tabular import TabularPTGAN
from fusionlib.ptgan.tabular_cells import ITERATIONS
from fusionlib.ptgan.tabular_data import load_tabular
from fusionlib.ptgan.utility import DownstreamEvaluator, split_train_test

METHODS = {"pt+cp": ("pt+cp", {}), "mp": ("mp", {"penalty_weight": 1.0})}
OUT = Path(__file__).resolve().parent / "results" / "ptgan_tabular.json"


def measure_steps(rounds: int, iters: int, train) -> dict:
    data = load_tabular("adult")
    models = {k: TabularPTGAN(m, discrete_columns=data.discrete_columns, n_iter=1,
                              overrides=o, seed=0).fit(train) for k, (m, o) in METHODS.items()}
    per: dict[str, list[float]] = {k: [] for k in METHODS}
    ratios = []
    for r in range(rounds):
        order = list(METHODS) if r % 2 == 0 else list(reversed(METHODS))
        this = {}
        for k in order:
            model = models[k]
            start = time.perf_counter()
            model.fit_more(model.trainer_.iteration_ + iters)
            this[k] = iters / (time.perf_counter() - start)
            per[k].append(this[k])
        ratios.append(this["pt+cp"] / this["mp"])
    return {"iterations_per_s": {k: statistics.median(v) for k, v in per.items()},
            "pt+cp_over_mp_speed": statistics.median(ratios), "models": models}


def measure_evaluation(models: dict, train, test, repeats: int = 3) -> float:
    data = load_tabular("adult")
    ev = DownstreamEvaluator(train, test, data.target, data.discrete_columns)
    times = []
    for i in range(repeats):
        start = time.perf_counter()
        ev.auc(models["mp"].sample(1_000, i), i)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iters", type=int, default=100)
    args = parser.parse_args()
    torch.set_num_threads(1)
    data = load_tabular("adult")
    train, test = split_train_test(data.frame, 0)
    steps = measure_steps(args.rounds, args.iters, train)
    eval_s = measure_evaluation(steps.pop("models"), train, test)
    share = {}
    for k, ips in steps["iterations_per_s"].items():
        train_s = ITERATIONS["adult"] / ips
        share[k] = 50 * eval_s / (train_s + 50 * eval_s)
    result = {**steps, "seconds_per_evaluation_point": eval_s,
              "paper_protocol_evaluation_share": share, "rounds": args.rounds,
              "iters": args.iters, "machine": platform.platform(), "cpus": os.cpu_count(),
              "torch": torch.__version__}
    atomic_write_json(OUT, result)
    for k, v in result.items():
        print(f"{k}: {v}")


if __name__ == "__main__":
    main()
