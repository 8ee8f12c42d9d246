"""The protocol of seed 002 as cells of the compendium's grid: one cell per dataset.

Importing this module registers the experiment ``fairtest_protocol`` in
:data:`fusionlib.compendium.cells.EXPERIMENTS`. Its cell for dataset ``d`` runs
:func:`fusionlib.fairtest.protocol.run_dataset` with the scale's
:class:`~fusionlib.fairtest.records.ProtocolConfig` (:data:`PROTOCOL_CONFIG`, the settings of
``notebooks/fairness_testing.md``) and the root seed, exactly as the notebook's
``run_protocol`` call does. The shard holds:

- rows: the fidelity table of the dataset (Tables 3, 7, 8: 1-TVD, CS, DM, KL per protected
  attribute; one row per synthetic set and the reference row);
- figures: ``table9`` (the Table 9 rows of :func:`fusionlib.fairtest.audit.table9`, as
  :func:`~fusionlib.compendium.cells.frame_to_json`), ``boots`` (the bootstrap table behind
  Figure 4 and Table 9), ``status``, ``reason``, ``train_rows``, ``test_rows``.

A dataset whose files are missing gives "not run" rows in a *provisional* shard: written, but
recomputed on the next request, so a later ``make data`` is picked up.

One cell per dataset is a first cut: a cell fits every estimator of every separation plus
both baselines in sequence, so at paper scale the CTGAN baseline (300 epochs on the full
training table) dominates one long job per dataset. A finer grid would make each (dataset,
synthetic set) a cell that stores its synthetic table, plus a per-dataset reduction cell for
the fidelity table, the audited trees and the bootstraps.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
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

__all__ = ["PROTOCOL_CONFIG", "PROTOCOL", "protocol_tables"]

#: the chapter's settings per scale (notebooks/fairness_testing.md); ``datasets`` and
#: ``em_seeds`` are the notebook's, the rest are ProtocolConfig fields
PROTOCOL_CONFIG: dict[str, dict[str, Any]] = {
    "smoke": dict(datasets=["compas"], max_rows=600, n_boot=5, dm_seeds=1, dm_n_estimators=10,
                  dm_max_rows=200, ctgan_epochs=1, ctgan_max_rows=300, latent_restarts=1,
                  em_seeds=[0, 1]),
    "cpu": dict(datasets=["adult", "compas", "german"], max_rows=None, n_boot=200, dm_seeds=1,
                dm_n_estimators=50, dm_max_rows=3000, ctgan_epochs=30, ctgan_max_rows=4000,
                latent_restarts=1, em_seeds=list(range(8))),
    "paper": dict(datasets=["adult", "compas", "german"], max_rows=None, n_boot=1000,
                  dm_seeds=5, dm_n_estimators=100, dm_max_rows=None, ctgan_epochs=300,
                  ctgan_max_rows=None, latent_restarts=1, em_seeds=list(range(20))),
}
_NOT_PROTOCOL = ("datasets", "em_seeds")


def _grid(scale: str, seed: int) -> list[Cell]:
    cfg = PROTOCOL_CONFIG[scale]
    protocol = {k: v for k, v in cfg.items() if k not in _NOT_PROTOCOL}
    return [Cell("fairtest_protocol", {"dataset": d, "protocol": protocol}, seed, label=d)
            for d in cfg["datasets"]]


@contextlib.contextmanager
def _one_thread_without_gpu() -> Iterator[None]:
    """One torch thread when there is no GPU (the notebook's setting: small CTGAN networks run
    faster on one thread on a CPU), restored afterwards."""
    import torch

    if torch.cuda.is_available():
        yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _compute(cell: Cell) -> Shard:
    from fusionlib.fairtest.protocol import ProtocolConfig, run_dataset

    protocol = ProtocolConfig(**cell.config["protocol"])
    with _one_thread_without_gpu():
        res = run_dataset(cell.config["dataset"], protocol, seed=cell.seed)
    prep = res.prepared
    figures = {
        "status": res.status, "reason": res.reason,
        "train_rows": None if prep is None else len(prep.train),
        "test_rows": None if prep is None else len(prep.test),
        "table9": frame_to_json(res.table9),
        "boots": frame_to_json(res.boots),
    }
    return Shard(res.fidelity, figures, provisional=res.status != "run")


PROTOCOL = register(Experiment(
    "fairtest_protocol", _grid, _compute, (__name__,),
    description="fairness testing (seed 002): the whole protocol of one dataset per cell"))


def protocol_tables(scale: str, seed: int = 0, *, root: str | os.PathLike[str] | None = None,
                    progress: bool = True) -> dict[str, pd.DataFrame]:
    """``fidelity``, ``table9``, ``boots`` and ``status`` (one row per dataset) over every
    dataset of ``scale``, computing missing cells in-process."""
    rows, figures = results("fairtest_protocol", scale, seed=seed, root=root,
                            progress=progress)
    cells = PROTOCOL.cells(scale, seed)
    fig = [figures[c.cell_id] for c in cells]
    concat = [frame_from_json(f["table9"]) for f in fig]
    boots = [frame_from_json(f["boots"]) for f in fig]
    return {
        "fidelity": rows.drop(columns="cell_id"),
        "table9": pd.concat([t for t in concat if len(t)] or concat, ignore_index=True),
        "boots": pd.concat([b for b in boots if len(b)] or boots, ignore_index=True),
        "status": pd.DataFrame([
            dict(dataset=c.config["dataset"], status=f["status"], reason=f["reason"],
                 train_rows=f["train_rows"], test_rows=f["test_rows"])
            for c, f in zip(cells, fig, strict=True)]),
    }
