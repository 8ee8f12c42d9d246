"""Speed of FairPTGAN's runs on Adult: R stacked repetitions against one separate run.

In one run, on Adult with race binarised (the encoding of the whole table, batch 200, one
torch thread), for FairPTGAN (PT+CP, r = 0.2, Algorithm 2's group-mixed minibatches) and for
FairWGANGP's WGAN-GP in its second phase (the fairness penalty on; the first phase is plain
WGAN-GP and costs the same without the penalty's few operations):

* one training iteration of R repetitions trained as one model
  (:class:`~fusionlib.ptgan.fair.stacked.StackedFairGAN`), R in {1, 5, 10}, each repetition on
  its own 90 % split, against one iteration of one separate run
  (:class:`~fusionlib.ptgan.tabular.model.TabularPTGAN` with ``GroupMixing`` or
  ``FairnessPenalty``; R separate runs cost R of them). Reported per R: the stacked iteration's
  time over one separate iteration ("cost of R") and the throughput gain R / cost. Rounds are
  interleaved (order reversed every other round) and the minimum over rounds is kept;
* what that means for a paper cell (100,000 iterations, 150,000 for FairWGANGP; 5 stacked
  repetitions a cell): training hours per 10 repetitions, stacked and separate.

Writes benchmarks/results/ptgan_fair.json atomically.

    python benchmarks/bench_ptgan_fair.py [--rounds 3] [--iters 20]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np
import torch

from fusionlib.gan.trainer import torch_threads
from fusionlib.io import atomic_write_json
from fusionlib.ptgan.fair.baselines import FairnessPenalty
from fusionlib.ptgan.fair.cells import FAIR_CONFIG
from fusionlib.ptgan.fair.mixing import FAIR_R, GroupMixing
from fusionlib.ptgan.fair.runs import _split_rows, fair_table
from fusionlib.ptgan.fair.stacked import StackedFairGAN
from fusionlib.ptgan.tabular.model import TabularPTGAN

REPS = (1, 5, 10)
OUT = Path(__file__).resolve().parent / "results" / "ptgan_fair.json"


def _separate(method: str, table, train):
    if method == "fairptgan":
        m = TabularPTGAN("pt+cp", "nd", discrete_columns=table.discrete_columns, n_iter=3,
                         overrides={"r": FAIR_R, "batch_size": 200},
                         minibatch=GroupMixing(table.sensitive, table.privileged), seed=0)
        return m.fit(train)
    m = TabularPTGAN("gp", "nd", discrete_columns=table.discrete_columns, n_iter=3,
                     overrides={"batch_size": 200}, seed=0).fit(train)
    return m.fit_more(4, generator_term=FairnessPenalty(table.sensitive, table.privileged,
                                                        table.target, "1"))


def _stacked(method: str, table, r: int):
    seeds = list(range(r))
    rows = np.stack([_split_rows(len(table.frame), s)[0] for s in seeds])
    m = StackedFairGAN(method, sensitive=table.sensitive, privileged=table.privileged,
                       seeds=seeds, discrete_columns=table.discrete_columns, n_iter=3)
    if method == "fairwgangp":
        return m.fit_two_phases(table.frame, rows=rows, total=4, target=table.target,
                                positive="1")
    return m.fit(table.frame, rows=rows)


def measure(table, rounds: int, iters: int) -> list[dict]:
    from fusionlib.ptgan.utility import split_train_test

    train, _ = split_train_test(table.frame, 0)
    rows = []
    for method in ("fairptgan", "fairwgangp"):
        models = {"separate": _separate(method, table, train),
                  **{r: _stacked(method, table, r) for r in REPS}}
        trainers = {k: (m.trainer_, m.trainer_.step.prepare(
            m._x if k == "separate" else m._data, "cpu")) for k, m in models.items()}
        keys = list(trainers)
        best = {k: float("inf") for k in keys}
        with torch_threads(1):
            for i in range(rounds):
                for k in keys if i % 2 == 0 else keys[::-1]:
                    tr, batch = trainers[k]
                    w = time.perf_counter()
                    for _ in range(iters):
                        tr._one(batch)
                    best[k] = min(best[k], (time.perf_counter() - w) / iters)
        sep = best["separate"]
        n_iter = FAIR_CONFIG["paper"]["n_iter"] * (1.5 if method == "fairwgangp" else 1.0)
        for r in REPS:
            rows.append(dict(method=method, R=r, stacked_ms=1e3 * best[r],
                             separate_ms=1e3 * sep, cost_of_R=best[r] / sep,
                             throughput_gain=r * sep / best[r],
                             paper_hours_per_10_reps_stacked=10 / r * n_iter * best[r] / 3600,
                             paper_hours_per_10_reps_separate=10 * n_iter * sep / 3600))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iters", type=int, default=20)
    args = parser.parse_args()
    rows = measure(fair_table("adult"), args.rounds, args.iters)
    result = {"rows": rows, "rounds": args.rounds, "iters": args.iters, "threads": 1,
              "machine": platform.platform(), "cpus": os.cpu_count(),
              "load_average": os.getloadavg(), "torch": torch.__version__}
    atomic_write_json(OUT, result)
    print(f"{'method':10} {'R':>3} {'stacked ms':>10} {'separate ms':>11} {'cost of R':>9} "
          f"{'gain':>5} {'h/10 reps stacked':>17} {'h/10 reps separate':>18}")
    for r in rows:
        print(f"{r['method']:10} {r['R']:>3} {r['stacked_ms']:>10.2f} {r['separate_ms']:>11.2f} "
              f"{r['cost_of_R']:>9.2f} {r['throughput_gain']:>5.2f} "
              f"{r['paper_hours_per_10_reps_stacked']:>17.2f} "
              f"{r['paper_hours_per_10_reps_separate']:>18.2f}")
    print(f"load_average: {result['load_average']}")


if __name__ == "__main__":
    main()
