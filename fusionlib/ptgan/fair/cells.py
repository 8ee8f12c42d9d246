"""Fair data generation (seed 001, Section 5.2, Tables 4 and 12, Figure 7) as cells of the grid.

Importing this module registers the experiment ``fairptgan``: one cell per (method, dataset,
block of ``stack`` repetitions) with method ``fairptgan`` (FairPTGAN, plus GeoRepair on the same
model's alpha = 1 samples) or ``fairwgangp``. A cell trains its repetitions as one stacked model
(:class:`~fusionlib.ptgan.fair.stacked.StackedFairGAN`: 5 repetitions cost far less than 5
separate runs on one core), each repetition on its own seed and 90/10 split; both methods of a
repetition share its seed, hence its split. A cell returns one row per (repetition, synthetic
set, classifier) with AUC and SP (:func:`fusionlib.ptgan.fair.runs.run_fair`), and resumes from
its checkpoint (every 1,000 iterations) when it was cut off. A dataset whose file is absent gives a
*provisional* shard with a "not run" row naming what to provide (recomputed once it is there).

:data:`FAIR_CONFIG` holds the per-scale settings; :func:`fair_scores` is what the chapter
(``notebooks/fairptgan.md``) calls.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from fusionlib.compendium.cells import Cell, Experiment, Shard, register, results
from fusionlib.rng import seed_int

__all__ = ["CHECKPOINT_EVERY", "FAIR", "FAIR_CONFIG", "FAIR_METHODS", "THRESHOLDS", "fair_scores",
           "rep_seed"]

#: the settings per scale. paper: Appendix D.3 (T = 100k, batch 200, 10 runs, 20 sets of 1,000
#: rows per run). cpu: Adult only, a reduced protocol within the book's per-notebook budget.
#: ``stack``: repetitions trained as one model per cell (a choice of cost: a repetition's
#: numbers are statistically those of its separate run, not numerically; rounding differs, see
#: fusionlib.ptgan.fair.stacked)
FAIR_CONFIG: dict[str, dict[str, Any]] = {
    "smoke": dict(datasets=["adult"], n_seeds=2, stack=2, n_iter=10, n_sets=5, n_rows=200,
                  n_test=500, batch_size=200),
    "cpu": dict(datasets=["adult"], n_seeds=1, stack=1, n_iter=1_500, n_sets=10, n_rows=1_000,
                n_test=None, batch_size=200),
    "paper": dict(datasets=["adult", "law_school"], n_seeds=10, stack=5, n_iter=100_000,
                  n_sets=20, n_rows=1_000, n_test=None, batch_size=200),
}
#: iterations between two checkpoints of a cell (none for runs shorter than twice this)
CHECKPOINT_EVERY = 1_000
#: the trained methods (GeoRepair is computed inside the FairPTGAN cells)
FAIR_METHODS: tuple[str, ...] = ("fairptgan", "fairwgangp")
#: the AUC thresholds of Table 4 and Table 12 per dataset
THRESHOLDS: dict[str, dict[str, float]] = {
    "Table 4": {"adult": 0.85, "law_school": 0.65},
    "Table 12": {"adult": 0.70, "law_school": 0.70},
}


def _device(scale: str) -> str:
    return "auto" if scale == "paper" else "cpu"


def rep_seed(seed: int, dataset: str, rep: int) -> int:
    """The seed of repetition ``rep`` on ``dataset`` (its split and its models)."""
    return seed_int(seed, "fair", dataset, "rep", rep)


def _blocks(n: int, size: int) -> list[list[int]]:
    return [list(range(i, min(i + size, n))) for i in range(0, n, size)]


def _grid(scale: str, seed: int) -> list[Cell]:
    cfg = FAIR_CONFIG[scale]
    settings = {k: cfg[k] for k in ("n_iter", "n_sets", "n_rows", "n_test", "batch_size")}
    return [Cell("fairptgan", dict(method=m, dataset=d, reps=b,
                                   rep_seeds=[rep_seed(seed, d, i) for i in b],
                                   device=_device(scale), **settings),
                 seed_int(seed, "fair", d, "block", b[0]),
                 label=f"{m} {d} reps {b[0]}-{b[-1]}" if len(b) > 1 else f"{m} {d} rep {b[0]}")
            for d in cfg["datasets"] for m in FAIR_METHODS
            for b in _blocks(cfg["n_seeds"], cfg["stack"])]


def _compute(cell: Cell) -> Shard:
    """Train one stacked model and score its synthetic sets (pure function of the cell on CPU)."""
    from fusionlib.compendium.cells import code_key, default_root
    from fusionlib.errors import DataIntegrityError, DataUnavailableError, InvalidInputError
    from fusionlib.ptgan.fair.runs import fair_table, run_fair

    cfg = cell.config
    reps, rep_seeds = list(cfg.get("reps") or []), list(cfg.get("rep_seeds") or [])
    if not reps or len(reps) != len(rep_seeds):
        raise InvalidInputError(
            f"cell {cell.label!r}: reps {reps} and rep_seeds {rep_seeds} must be non-empty lists "
            "of equal length (one seed per repetition); build cells with the grid")
    device = cfg["device"]
    if device == "auto":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        table = fair_table(cfg["dataset"])
    except (DataUnavailableError, DataIntegrityError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        rows = [{"dataset": cfg["dataset"], "rep": rep, "seed": s, "method": cfg["method"],
                 "status": "not run", "reason": reason}
                for rep, s in zip(reps, rep_seeds, strict=True)]
        return Shard(pd.DataFrame(rows), meta={"device": device}, provisional=True)
    checkpoint, every = None, 0
    if cfg["n_iter"] >= 2 * CHECKPOINT_EVERY:
        # a cut-off cell resumes; the file name carries the code key, so a checkpoint of other
        # code is never resumed
        folder = default_root() / "checkpoints"
        folder.mkdir(parents=True, exist_ok=True)
        checkpoint = str(folder / f"{cell.cell_id}-{code_key(FAIR)[:12]}.pt")
        every = CHECKPOINT_EVERY
    rows, timing = run_fair(cfg["method"], table, seeds=rep_seeds,
                            n_iter=cfg["n_iter"], n_sets=cfg["n_sets"], n_rows=cfg["n_rows"],
                            n_test=cfg["n_test"], batch_size=cfg["batch_size"], device=device,
                            checkpoint=checkpoint, checkpoint_every=every)
    idx = rows.pop("rep_index").to_numpy(dtype=int) if len(rows) else np.zeros(0, int)
    rows.insert(0, "seed", [rep_seeds[i] for i in idx])
    rows.insert(0, "rep", [reps[i] for i in idx])
    rows.insert(0, "dataset", cfg["dataset"])
    rows["status"], rows["reason"] = "run", ""
    # a repetition whose loss turned non-finite is not scored: one "not run" row says so
    lost = [{"dataset": cfg["dataset"], "rep": reps[i], "seed": rep_seeds[i],
             "method": cfg["method"], "status": "not run",
             "reason": f"training diverged (non-finite loss) at iteration {it}"}
            for i, it in timing["diverged"].items()]
    if lost:
        rows = pd.concat([rows, pd.DataFrame(lost)], ignore_index=True)
    timing["reps"] = reps
    return Shard(rows, {"timing": timing}, meta={"device": device})


FAIR = register(Experiment(
    "fairptgan", _grid, _compute,
    (__name__, "fusionlib.ptgan.fair.runs", "fusionlib.ptgan.fair.stacked"),
    description="FairPTGAN vs FairWGANGP vs GeoRepair: AUC and SP of synthetic sets per "
                "(method, dataset, block of stacked repetitions); Tables 4, 12, Figure 7"))


def fair_scores(scale: str, seed: int = 0, *, root: str | os.PathLike[str] | None = None,
                progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The per-set scores, the datasets not run, and the timings of every cell.

    Returns ``(scores, not_run, timings)``: ``scores`` has one row per (set, classifier) with
    dataset, rep, method (FairPTGAN, GeoRepair, FairWGANGP), set, level (alpha or lambda_p),
    classifier, auc, sp; ``not_run`` one row per (dataset, method) cell that was not run, with
    its reason; ``timings`` one row per cell run (reps, train_s, eval_s, n_reps).
    """
    rows, figures = results("fairptgan", scale, seed=seed, root=root, progress=progress)
    ran = rows[rows["status"] == "run"]
    not_run = rows.loc[rows["status"] != "run", ["dataset", "method", "reason"]]
    timings = []
    for cell_id, fig in figures.items():
        sub = rows[(rows["cell_id"] == cell_id) & (rows["status"] == "run")]
        if len(sub) and "timing" in fig:
            t = dict(fig["timing"])
            reps = t.pop("reps", sorted(sub["rep"].unique()))
            timings.append({"dataset": sub["dataset"].iloc[0],
                            "reps": f"{reps[0]}-{reps[-1]}" if len(reps) > 1 else str(reps[0]),
                            "cell": str(sub["method"].iloc[0]), **t})
    keep = ["dataset", "rep", "method", "set", "level", "classifier", "auc", "sp",
            "positive_rate"]
    return (ran.reindex(columns=keep).reset_index(drop=True),
            not_run.drop_duplicates().reset_index(drop=True), pd.DataFrame(timings))
