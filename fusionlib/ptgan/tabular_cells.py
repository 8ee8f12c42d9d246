"""PTGAN's tabular S_T runs (Tables 3, 10, 11 of seed 001) as cells of the compendium's grid.

Importing this module registers the experiment ``ptgan_tabular``: one cell per (dataset,
discrepancy, method, repetition). A method is PT+CP (r = 0.5, lambda = 100) or MP with
lambda_MP in {1, 10, 100} (:data:`TABULAR_METHODS`). Each cell runs
:func:`fusionlib.ptgan.tabular_runs.utility_run` and stores the AUC curve (rows) and its S_T per
classifier and timings (figure data).

Datasets whose files are absent (Law School, Credit Card Default on a machine without them) are
left out of the grid; :func:`tabular_plan` lists what was left out and why, and the chapter turns
that into "not run" claims.

:data:`TABULAR_CONFIG` holds the per-scale settings (the chapter takes them from here).
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from fusionlib.compendium.cells import Cell, Experiment, Shard, register, results
from fusionlib.rng import seed_int

__all__ = ["TABULAR", "TABULAR_CONFIG", "TABULAR_METHODS", "ITERATIONS", "method_label",
           "s_t_runs", "tabular_plan"]

#: method key -> (GANConfig method, penalty weight); PT+CP keeps its lambda = 100 (Section 4.3)
TABULAR_METHODS: dict[str, tuple[str, float]] = {
    "pt+cp": ("pt+cp", 100.0),
    "mp-1": ("mp", 1.0),
    "mp-10": ("mp", 10.0),
    "mp-100": ("mp", 100.0),
}
#: the seed's iteration counts T (Appendix D.2.3: 200 epochs Adult and Credit, 40 Law School)
ITERATIONS: dict[str, int] = {"adult": 57_000, "law_school": 35_000, "credit_default": 53_000}

#: settings per scale. cpu: Adult only, ND only, PT+CP against MP (lambda 1), 2 repetitions,
#: 3,000 iterations with 8 evaluation points; the reference classifiers see 5,000 rows of D_train
TABULAR_CONFIG: dict[str, dict[str, Any]] = {
    "smoke": dict(datasets=("adult",), discrepancies=("nd",), methods=("pt+cp", "mp-1"),
                  n_seeds=1, n_iter={"adult": 12}, n_eval=2, n_rows=300, real_rows=1_000),
    "cpu": dict(datasets=("adult",), discrepancies=("nd",), methods=("pt+cp", "mp-1"),
                n_seeds=2, n_iter={"adult": 3_000}, n_eval=8, n_rows=1_000, real_rows=5_000),
    "paper": dict(datasets=("adult", "law_school", "credit_default"),
                  discrepancies=("nd", "jsd", "pd"), methods=tuple(TABULAR_METHODS),
                  n_seeds=10, n_iter=ITERATIONS, n_eval=50, n_rows=1_000, real_rows=None),
}


def method_label(key: str) -> str:
    """The paper's label: ``"PT + CP"``, ``"MP"`` (lambda 1), ``"MP (lambda_MP=10)"``."""
    if key == "pt+cp":
        return "PT + CP"
    weight = TABULAR_METHODS[key][1]
    return "MP" if weight == 1.0 else f"MP (lambda_MP={weight:g})"


def _available(name: str) -> str | None:
    from fusionlib.ptgan.tabular_data import availability

    return availability(name)


def tabular_plan(scale: str) -> dict[str, str | None]:
    """``{dataset: None (run) or why it is not run}`` for the datasets of ``scale``."""
    return {d: _available(d) for d in TABULAR_CONFIG[scale]["datasets"]}


def _grid(scale: str, seed: int) -> list[Cell]:
    cfg = TABULAR_CONFIG[scale]
    cells = []
    for data, missing in tabular_plan(scale).items():
        if missing is not None:
            continue
        for disc in cfg["discrepancies"]:
            for m in cfg["methods"]:
                for i in range(cfg["n_seeds"]):
                    config = dict(dataset=data, discrepancy=disc, method=m, rep=i,
                                  n_iter=cfg["n_iter"][data], n_eval=cfg["n_eval"],
                                  n_rows=cfg["n_rows"], real_rows=cfg["real_rows"],
                                  device="auto" if scale == "paper" else "cpu")
                    cells.append(Cell("ptgan_tabular", config,
                                      seed_int(seed, "tabular", data, "rep", i),
                                      label=f"{data} {disc} {m} rep {i}"))
    return cells


def _compute(cell: Cell) -> Shard:
    """One S_T run (pure function of the cell on CPU)."""
    import torch

    from fusionlib.ptgan.tabular_data import load_tabular
    from fusionlib.ptgan.tabular_runs import utility_run

    cfg = cell.config
    device = cfg["device"]
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    method, weight = TABULAR_METHODS[cfg["method"]]
    run = utility_run(load_tabular(cfg["dataset"]), method, cfg["discrepancy"], cell.seed,
                      n_iter=cfg["n_iter"], n_eval=cfg["n_eval"], n_rows=cfg["n_rows"],
                      real_rows=cfg["real_rows"], overrides={"penalty_weight": weight},
                      device=device)
    curve = run.curve.assign(dataset=cfg["dataset"], discrepancy=cfg["discrepancy"],
                             method=cfg["method"], rep=cfg["rep"], seed=cell.seed)
    figures = {"s_t": run.s_t, "s_train": run.s_train, "train_s": run.train_s,
               "eval_s": run.eval_s, "n_iter": cfg["n_iter"]}
    return Shard(curve, figures, meta={"device": device})


TABULAR = register(Experiment(
    "ptgan_tabular", _grid, _compute, (__name__,),
    description="PTGAN tables: one S_T run per (dataset, discrepancy, method, repetition); "
                "Tables 3, 10, 11"))


def s_t_runs(scale: str, seed: int = 0, *, root: str | os.PathLike[str] | None = None,
             progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(curves, scores)`` of every cell at ``scale``, computing missing cells in-process.

    ``scores`` has one row per (dataset, discrepancy, method, rep, classifier) with ``s_t``,
    ``s_train`` and the run's ``train_s`` / ``eval_s`` wall seconds.
    """
    rows, figures = results("ptgan_tabular", scale, seed=seed, root=root, progress=progress)
    scores = []
    for cell_id, grp in rows.groupby("cell_id", sort=False):
        fig, first = figures[cell_id], grp.iloc[0]
        for c, v in fig["s_t"].items():
            scores.append(dict(dataset=first["dataset"], discrepancy=first["discrepancy"],
                               method=first["method"], rep=int(first["rep"]), classifier=c,
                               s_t=float(v), s_train=float(fig["s_train"][c]),
                               train_s=float(fig["train_s"]), eval_s=float(fig["eval_s"])))
    return rows, pd.DataFrame(scores)
