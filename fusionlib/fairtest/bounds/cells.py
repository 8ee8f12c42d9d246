"""Fairness bounds on seed 002's datasets as cells: one cell per dataset.

Importing this module registers the experiment ``fairness_bounds``
(``notebooks/fairness_bounds.md``). A cell runs
:func:`fusionlib.fairtest.bounds.runs.dataset_bounds` with the scale's settings
(:data:`BOUNDS_CONFIG`); its rows are the intervals, its figures hold the point values
(``points``) and the status. A dataset whose files are missing gives a provisional "not run"
shard.
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from fusionlib.compendium.cells import (
    Cell,
    Experiment,
    Shard,
    frame_from_json,
    frame_to_json,
    register,
    results,
)

__all__ = ["BOUNDS_CONFIG", "BOUNDS", "bounds_tables"]

#: settings per scale: ``datasets``, ``tol`` (certified gap the exact search stops at),
#: ``n_grid`` (LPs of the grid cross-check), ``n_boot`` (real-test bootstrap) and the
#: ProtocolConfig fields of the synthetic sets (CTGAN reduced at cpu scale)
BOUNDS_CONFIG: dict[str, dict[str, Any]] = {
    "smoke": dict(datasets=["compas"], tol=1e-10, n_grid=9, n_boot=20,
                  protocol=dict(max_rows=600, ctgan_epochs=1, ctgan_max_rows=300,
                                latent_restarts=1)),
    "cpu": dict(datasets=["adult", "compas", "german"], tol=1e-10, n_grid=41, n_boot=200,
                protocol=dict(ctgan_epochs=10, ctgan_max_rows=2000, latent_restarts=1)),
    "paper": dict(datasets=["adult", "compas", "german"], tol=1e-10, n_grid=81, n_boot=1000,
                  protocol=dict(ctgan_epochs=300, latent_restarts=1)),
}


def _grid(scale: str, seed: int) -> list[Cell]:
    cfg = BOUNDS_CONFIG[scale]
    return [Cell("fairness_bounds", {"dataset": d, "tol": cfg["tol"], "n_grid": cfg["n_grid"],
                                     "n_boot": cfg["n_boot"], "protocol": cfg["protocol"]},
                 seed, label=d) for d in cfg["datasets"]]


def _compute(cell: Cell) -> Shard:
    from fusionlib.errors import DataUnavailableError
    from fusionlib.fairtest.bounds.runs import dataset_bounds
    from fusionlib.fairtest.protocol.runs import ProtocolConfig
    from fusionlib.gan.trainer import torch_threads
    c = cell.config
    try:  # small CTGAN networks: one thread is faster on a CPU
        with torch_threads(1, cpu_only=True):
            intervals, points = dataset_bounds(c["dataset"], ProtocolConfig(**c["protocol"]),
                                               seed=cell.seed, n_grid=c["n_grid"],
                                               tol=c["tol"], n_boot=c["n_boot"])
    except DataUnavailableError as err:
        return Shard(pd.DataFrame(), {"status": "not run", "reason": f"data unavailable: {err}",
                                      "points": frame_to_json(pd.DataFrame())}, provisional=True)
    return Shard(_store_infinities(intervals),
                 {"status": "run", "reason": "", "points": frame_to_json(points)})


def _store_infinities(df: pd.DataFrame) -> pd.DataFrame:
    """Infinite bounds (unbounded DI) as NaN plus a flag: shard frames do not round-trip inf
    in a column that also holds finite values."""
    import numpy as np

    out = df.copy()
    for col in ("lower", "upper", "lower_gap", "upper_gap"):
        if col in out:
            out[f"{col}_inf"] = np.sign(out[col]).where(np.isinf(out[col]), 0).astype(int)
            out[col] = out[col].where(~np.isinf(out[col]))
    return out


def _restore_infinities(df: pd.DataFrame) -> pd.DataFrame:
    import numpy as np

    out = df.copy()
    for col in ("lower", "upper", "lower_gap", "upper_gap"):
        if f"{col}_inf" in out:
            flag = out.pop(f"{col}_inf").astype(int)
            out[col] = out[col].where(flag == 0, flag * np.inf)
    return out


BOUNDS = register(Experiment(
    "fairness_bounds", _grid, _compute, (__name__, "fusionlib.fairtest.bounds.runs"),
    description="sharp DI/AOD/EOD/DP bounds from two tables (seed 002 future work), per dataset"))


def bounds_tables(scale: str, seed: int = 0, *, root: str | os.PathLike[str] | None = None,
                  progress: bool = True) -> dict[str, pd.DataFrame]:
    """``intervals``, ``points`` and ``status`` over every dataset of ``scale``."""
    rows, figures = results("fairness_bounds", scale, seed=seed, root=root, progress=progress)
    cells = BOUNDS.cells(scale, seed)
    fig = [figures[c.cell_id] for c in cells]
    points = [frame_from_json(f["points"]) for f in fig]
    return {
        "intervals": _restore_infinities(rows.drop(columns="cell_id", errors="ignore")),
        "points": pd.concat([p for p in points if len(p)] or points, ignore_index=True),
        "status": pd.DataFrame([dict(dataset=c.config["dataset"], status=f["status"],
                                     reason=f["reason"]) for c, f in zip(cells, fig, strict=True)]),
    }
