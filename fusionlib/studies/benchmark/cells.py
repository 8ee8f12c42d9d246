"""The cross-paper benchmark as cells: one cell per (generator, dataset, seed).

Importing this module registers the experiment ``benchmark`` (``notebooks/benchmark.md``).
A cell runs :func:`fusionlib.studies.benchmark.runs.run_generator` on every task (Table 2 overlap)
of its dataset at the scale's settings (:data:`BENCH_CONFIG`) and returns one row per task.
The repetition seeds are ``seed_int(root_seed, "benchmark", "rep", r)``.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import pandas as pd

from fusionlib.compendium.cells import Cell, Experiment, Shard, register, results
from fusionlib.rng import seed_int

__all__ = ["BENCH_CONFIG", "BENCHMARK", "benchmark_table"]

#: per scale: datasets, overlaps per dataset ("first" = Table 2's first row, "all"), repetitions,
#: generators and the BenchSettings fields
BENCH_CONFIG: dict[str, dict[str, Any]] = {
    "smoke": dict(datasets=["compas"], overlaps="first", reps=1,
                  settings=dict(max_rows=600, n_eval=200, ctgan_epochs=1, ctgan_max_rows=300,
                                fusion_epochs=2, fusion_every=1, fusion_max_rows=300,
                                ptgan_iter=10,
                                ptgan_max_rows=300, dm_n_estimators=10)),
    "cpu": dict(datasets=["adult", "compas", "german"], overlaps="first", reps=1,
                settings=dict(n_eval=1500, ctgan_epochs=5, ctgan_max_rows=2000,
                              fusion_epochs=60, fusion_max_rows=2000, ptgan_iter=300,
                              ptgan_max_rows=2000, dm_n_estimators=30)),
    "paper": dict(datasets=["adult", "compas", "german"], overlaps="all", reps=10,
                  settings=dict(n_eval=5000, ctgan_epochs=300, fusion_epochs=300,
                                ptgan_iter=10_000, dm_n_estimators=100)),
}


def _overlaps(dataset: str, which: str) -> list[str]:
    from fusionlib.fairtest.separation import dataset_spec

    spec = dataset_spec(dataset)
    return list(spec.overlaps if which == "all" else spec.overlaps[:1])


def _grid(scale: str, seed: int) -> list[Cell]:
    from fusionlib.studies.benchmark.runs import GENERATORS

    cfg = BENCH_CONFIG[scale]
    return [Cell("benchmark", {"generator": g, "dataset": d,
                               "overlaps": _overlaps(d, cfg["overlaps"]),
                               "settings": cfg["settings"]},
                 seed_int(seed, "benchmark", "rep", r), label=f"{g} {d} rep {r}")
            for r in range(cfg["reps"]) for d in cfg["datasets"] for g in GENERATORS]


def _compute(cell: Cell) -> Shard:
    from fusionlib.gan.trainer import torch_threads
    from fusionlib.studies.benchmark.runs import BenchSettings, run_generator

    c = cell.config
    settings = dataclasses.replace(BenchSettings(), **c["settings"])
    with torch_threads(1, cpu_only=True):  # small networks: one thread is faster on a CPU
        rows = run_generator(c["generator"], c["dataset"], c["overlaps"], settings,
                             seed=cell.seed)
    rows = rows.assign(seed=cell.seed)
    return Shard(rows, {}, provisional=bool((rows["status"] != "run").any()))


BENCHMARK = register(Experiment(
    "benchmark", _grid, _compute, (__name__, "fusionlib.studies.benchmark.runs"),
    description="every generator of the compendium on seed 002's separated-data tasks"))


def benchmark_table(scale: str, seed: int = 0, *, root: str | os.PathLike[str] | None = None,
                    progress: bool = True) -> pd.DataFrame:
    """One row per (generator, dataset, overlap, repetition), computing missing cells."""
    rows, _ = results("benchmark", scale, seed=seed, root=root, progress=progress)
    return rows.drop(columns="cell_id")
