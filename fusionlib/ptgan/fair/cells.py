"""Fair data generation (seed 001, Section 5.2, Tables 4 and 12, Figure 7) as cells of the grid.

Importing this module registers the experiment ``fairptgan``: one cell per (method, dataset,
repetition) with method ``fairptgan`` (FairPTGAN, plus GeoRepair on the same model's alpha = 1
samples) or ``fairwgangp``. Both methods of a repetition share its seed, hence its 90/10 split.
Each cell returns one row per (synthetic set, classifier) with AUC and SP
(:func:`fusionlib.ptgan.fair.runs.run_fair`). A dataset whose file is absent gives a
*provisional* shard with a "not run" row naming what to provide (recomputed once it is there).

:data:`FAIR_CONFIG` holds the per-scale settings; :func:`fair_scores` is what the chapter
(``notebooks/fairptgan.md``) calls.
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from fusionlib.compendium.cells import Cell, Experiment, Shard, register, results
from fusionlib.rng import seed_int

__all__ = ["FAIR", "FAIR_CONFIG", "FAIR_METHODS", "THRESHOLDS", "fair_scores"]

#: the settings per scale. paper: Appendix D.3 (T = 100k, batch 200, 10 runs, 20 sets of 1,000
#: rows per run). cpu: Adult only, a reduced protocol within the book's per-notebook budget
FAIR_CONFIG: dict[str, dict[str, Any]] = {
    "smoke": dict(datasets=["adult"], n_seeds=1, n_iter=10, n_sets=5, n_rows=200,
                  n_test=500, batch_size=200),
    "cpu": dict(datasets=["adult"], n_seeds=1, n_iter=1_500, n_sets=10, n_rows=1_000,
                n_test=None, batch_size=200),
    "paper": dict(datasets=["adult", "law_school"], n_seeds=10, n_iter=100_000, n_sets=20,
                  n_rows=1_000, n_test=None, batch_size=200),
}
#: the trained methods (GeoRepair is computed inside the FairPTGAN cells)
FAIR_METHODS: tuple[str, ...] = ("fairptgan", "fairwgangp")
#: the AUC thresholds of Table 4 and Table 12 per dataset
THRESHOLDS: dict[str, dict[str, float]] = {
    "Table 4": {"adult": 0.85, "law_school": 0.65},
    "Table 12": {"adult": 0.70, "law_school": 0.70},
}


def _device(scale: str) -> str:
    return "auto" if scale == "paper" else "cpu"


def _grid(scale: str, seed: int) -> list[Cell]:
    cfg = FAIR_CONFIG[scale]
    settings = {k: cfg[k] for k in ("n_iter", "n_sets", "n_rows", "n_test", "batch_size")}
    return [Cell("fairptgan", dict(method=m, dataset=d, rep=i, device=_device(scale), **settings),
                 seed_int(seed, "fair", d, "rep", i), label=f"{m} {d} rep {i}")
            for d in cfg["datasets"] for m in FAIR_METHODS for i in range(cfg["n_seeds"])]


def _compute(cell: Cell) -> Shard:
    """Train one model and score its synthetic sets (pure function of the cell on CPU)."""
    from fusionlib.errors import DataIntegrityError, DataUnavailableError
    from fusionlib.ptgan.fair.runs import fair_table, run_fair

    cfg = cell.config
    device = cfg["device"]
    if device == "auto":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    labels = {"dataset": cfg["dataset"], "rep": cfg["rep"], "seed": cell.seed}
    try:
        table = fair_table(cfg["dataset"])
    except (DataUnavailableError, DataIntegrityError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        row = {**labels, "method": cfg["method"], "status": "not run", "reason": reason}
        return Shard(pd.DataFrame([row]), meta={"device": device}, provisional=True)
    rows, timing = run_fair(cfg["method"], table, seed=cell.seed, n_iter=cfg["n_iter"],
                            n_sets=cfg["n_sets"], n_rows=cfg["n_rows"], n_test=cfg["n_test"],
                            batch_size=cfg["batch_size"], device=device)
    for k, v in {**labels, "status": "run", "reason": ""}.items():
        rows[k] = v
    return Shard(rows, {"timing": timing}, meta={"device": device})


FAIR = register(Experiment(
    "fairptgan", _grid, _compute, (__name__, "fusionlib.ptgan.fair.runs"),
    description="FairPTGAN vs FairWGANGP vs GeoRepair: AUC and SP of synthetic sets per "
                "(method, dataset, repetition); Tables 4, 12, Figure 7"))


def fair_scores(scale: str, seed: int = 0, *, root: str | os.PathLike[str] | None = None,
                progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The per-set scores, the datasets not run, and the timings of every cell.

    Returns ``(scores, not_run, timings)``: ``scores`` has one row per (set, classifier) with
    dataset, rep, method (FairPTGAN, GeoRepair, FairWGANGP), set, level (alpha or lambda_p),
    classifier, auc, sp; ``not_run`` one row per (dataset, method) cell that was not run, with
    its reason; ``timings`` one row per cell run (train_s, eval_s).
    """
    rows, figures = results("fairptgan", scale, seed=seed, root=root, progress=progress)
    ran = rows[rows["status"] == "run"]
    not_run = rows.loc[rows["status"] != "run", ["dataset", "method", "reason"]]
    timings = []
    for cell_id, fig in figures.items():
        sub = rows[(rows["cell_id"] == cell_id) & (rows["status"] == "run")]
        if len(sub) and "timing" in fig:
            timings.append({"dataset": sub["dataset"].iloc[0], "rep": int(sub["rep"].iloc[0]),
                            "cell": str(sub["method"].iloc[0]), **fig["timing"]})
    keep = ["dataset", "rep", "method", "set", "level", "classifier", "auc", "sp",
            "positive_rate"]
    return (ran.reindex(columns=keep).reset_index(drop=True),
            not_run.drop_duplicates().reset_index(drop=True), pd.DataFrame(timings))
