"""The runs of the PTGAN theory chapter (``notebooks/ptgan_theory.md``) as cells of the grid.

Importing this module registers three experiments in
:data:`fusionlib.compendium.cells.EXPERIMENTS`, with the settings per scale of
:data:`THEORY_CONFIG`:

``ptgan_theory_training``
    one cell per (method, repetition): a ring run with the checks of
    :func:`fusionlib.ptgan.theory.runs.training_checks` (Proposition 1, Lemma 4,
    Theorem 1, Corollary 1, (A1), Remarks 3 and 4) along training;
``ptgan_theory_collapse``
    one cell per (mu2, repetition): the Figure 2 toy with the checks of
    :func:`fusionlib.ptgan.theory.variance.collapse_checks` (Proposition 2, Lemmas 1-3,
    Remark 3, Proposition 1);
``ptgan_theory_rates``
    one cell per repetition: the estimation error and Rademacher complexity of Theorem 2 and
    Lemma 10 at every sample size (:func:`fusionlib.ptgan.theory.rates.theorem2_trace`).

The cheap exact checks (Lemmas 6-8, Proposition 4, Theorem 3, the algorithms, Definition 1
and the assumptions) run in the chapter itself. A repetition's seed is
``seed_int(root seed, "theory", <experiment>, "rep", i)``. Every cell uses one torch thread.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import pandas as pd

from fusionlib.compendium.cells import Cell, Experiment, Shard, register, results
from fusionlib.rng import seed_int

__all__ = ["THEORY_CONFIG", "TRAINING_METHODS", "TRAINING", "COLLAPSE", "RATES",
           "theory_results"]

#: the chapter's settings per scale (notebooks/ptgan_theory.md reads them from here)
THEORY_CONFIG: dict[str, dict[str, Any]] = {
    "smoke": dict(t_seeds=1, t_iter=20, t_every=10, t_check=100,
                  c_seeds=1, c_hidden=[16, 16], c_iter=20, c_every=10, c_batches=40,
                  c_big=2_000, r_reps=1, r_sizes=[16, 32, 64], r_pool=512, r_steps=20,
                  r_hidden=[8, 8], thm3_sizes=[50, 100, 200], thm3_sims=200,
                  p4_widths=[2, 4, 8, 16], lemma_depths=[2, 4, 7], alg_draws=200, p1_points=200),
    "cpu": dict(t_seeds=2, t_iter=1000, t_every=100, t_check=500,
                c_seeds=2, c_hidden=[64, 64, 64], c_iter=300, c_every=50, c_batches=400,
                c_big=10_000, r_reps=4, r_sizes=[32, 64, 128, 256, 512, 1024, 2048],
                r_pool=4096,
                r_steps=150, r_hidden=[32, 32],
                thm3_sizes=[25, 50, 100, 200, 400, 800, 1600], thm3_sims=4000,
                p4_widths=[2, 4, 8, 16, 32, 64, 128, 256, 512], lemma_depths=[2, 3, 4, 5, 6, 7],
                alg_draws=20_000, p1_points=600),
    "paper": dict(t_seeds=10, t_iter=10_000, t_every=500, t_check=1000,
                  c_seeds=10, c_hidden=[256] * 4, c_iter=2000, c_every=100, c_batches=1000,
                  c_big=20_000, r_reps=10, r_sizes=[32, 64, 128, 256, 512, 1024, 2048, 4096],
                  r_pool=16_384, r_steps=300, r_hidden=[32, 32],
                  thm3_sizes=[25, 50, 100, 200, 400, 800, 1600, 3200, 6400], thm3_sims=20_000,
                  p4_widths=[2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
                  lemma_depths=[2, 3, 4, 5, 6, 7, 8], alg_draws=100_000, p1_points=2000),
}
#: the methods of the training checks, the Lipschitz GAN (untempered) and PTGAN (tempered)
TRAINING_METHODS: tuple[str, ...] = ("mp", "pt+cp")
#: mode distances of the collapse checks (Figure 2)
COLLAPSE_MU2: tuple[float, ...] = (1.5, 3.0)
_MODULES = (__name__, "fusionlib.ptgan.theory.runs", "fusionlib.ptgan.theory.variance",
            "fusionlib.ptgan.theory.rates")


def _one_thread() -> contextlib.AbstractContextManager[None]:
    from fusionlib.gan.trainer import torch_threads

    return torch_threads(1)


def _training_grid(scale: str, seed: int) -> list[Cell]:
    cfg = THEORY_CONFIG[scale]
    return [Cell("ptgan_theory_training",
                 {"method": m, "rep": i, "n_iter": cfg["t_iter"], "every": cfg["t_every"],
                  "n_check": cfg["t_check"]},
                 seed_int(seed, "theory", "training", "rep", i), label=f"{m} rep {i}")
            for m in TRAINING_METHODS for i in range(cfg["t_seeds"])]


def _training(cell: Cell) -> Shard:
    from fusionlib.ptgan.theory.runs import training_checks

    c = cell.config
    with _one_thread():
        frame = training_checks(c["method"], cell.seed, c["n_iter"], check_every=c["every"],
                                n_check=c["n_check"])
    frame["rep"] = c["rep"]
    return Shard(frame)


def _collapse_grid(scale: str, seed: int) -> list[Cell]:
    cfg = THEORY_CONFIG[scale]
    return [Cell("ptgan_theory_collapse",
                 {"mu2": mu2, "rep": i, "hidden": cfg["c_hidden"], "n_iter": cfg["c_iter"],
                  "every": cfg["c_every"], "n_batches": cfg["c_batches"], "n_big": cfg["c_big"]},
                 seed_int(seed, "theory", "collapse", "rep", i), label=f"mu2 {mu2} rep {i}")
            for mu2 in COLLAPSE_MU2 for i in range(cfg["c_seeds"])]


def _collapse(cell: Cell) -> Shard:
    from fusionlib.ptgan.theory.variance import CollapseCheck, collapse_checks

    c = cell.config
    check = CollapseCheck(mu2=c["mu2"], hidden=tuple(c["hidden"]), n_iter=c["n_iter"],
                          check_every=c["every"], n_batches=c["n_batches"], n_big=c["n_big"])
    with _one_thread():
        frame = collapse_checks(check, cell.seed)
    frame["rep"] = c["rep"]
    return Shard(frame)


def _rates_grid(scale: str, seed: int) -> list[Cell]:
    cfg = THEORY_CONFIG[scale]
    return [Cell("ptgan_theory_rates",
                 {"rep": i, "sizes": cfg["r_sizes"], "pool": cfg["r_pool"],
                  "pool_seed": seed_int(seed, "theory", "pool"),
                  "steps": cfg["r_steps"], "hidden": cfg["r_hidden"]},
                 seed_int(seed, "theory", "rates", "rep", i), label=f"rates rep {i}")
            for i in range(cfg["r_reps"])]


def _rates(cell: Cell) -> Shard:
    from fusionlib.ptgan.theory.rates import BallClass, tempered_pool, theorem2_trace

    c = cell.config
    # the target p (a fixed pool) is the same for every repetition
    pool = tempered_pool(c["pool"], c["pool_seed"])
    cls = BallClass(pool.shape[1], tuple(c["hidden"]), 1.0)
    with _one_thread():
        frame = theorem2_trace(cls, pool, c["sizes"], 1, cell.seed, steps=c["steps"])
    frame["rep"] = c["rep"]
    return Shard(frame)


TRAINING = register(Experiment(
    "ptgan_theory_training", _training_grid, _training, _MODULES,
    description="PTGAN theory: Theorem 1, Corollary 1, Proposition 1, (A1) along ring runs"))
COLLAPSE = register(Experiment(
    "ptgan_theory_collapse", _collapse_grid, _collapse, _MODULES,
    description="PTGAN theory: Proposition 2, Lemmas 1-3, Remark 3 on the Figure 2 toy"))
RATES = register(Experiment(
    "ptgan_theory_rates", _rates_grid, _rates, _MODULES,
    description="PTGAN theory: Theorem 2 / Lemma 10 estimation error and complexity vs n"))


def theory_results(scale: str, seed: int = 0, *, root: str | os.PathLike[str] | None = None,
                   progress: bool = True) -> dict[str, pd.DataFrame]:
    """``training``, ``collapse`` and ``rates``: the rows of every cell at ``scale`` (missing
    cells computed in-process)."""
    out = {}
    for key, exp in (("training", TRAINING), ("collapse", COLLAPSE), ("rates", RATES)):
        rows, _ = results(exp, scale, seed=seed, root=root, progress=progress)
        out[key] = rows.drop(columns="cell_id").reset_index(drop=True)
    return out
