"""The protocol of seed 002 as cells of the compendium's grid.

Importing this module registers the experiment ``fairtest_protocol`` in
:data:`fusionlib.compendium.cells.EXPERIMENTS`, with the chapter's settings per scale
(:data:`PROTOCOL_CONFIG`, read by ``notebooks/fairness_testing.md`` too) and three kinds of
cell, each a pure function of its configuration and the root seed:

- ``protocol`` (one per dataset): :func:`fusionlib.fairtest.protocol.run_dataset`, then
  :func:`fusionlib.fairtest.reporting.summarize`. Rows: the fidelity table (Tables 3, 7, 8);
  figure data: the rest of the :class:`~fusionlib.fairtest.records.DatasetSummary` (Table 9
  rows, the bootstraps behind Figure 4, the audited trees' accuracy, the KL noise floors, the
  mutual information of each protected attribute with the label, Figure 5's matrices). The
  prepared rows and synthetic tables stay in the cell: nothing downstream needs them.
- ``disjoint`` (one per dataset): Table 9 under the variant with disjoint rows
  (:func:`~fusionlib.fairtest.protocol.disjoint_rows_table9`).
- ``em_starts`` (one): the Latent model refitted from single EM starts
  (:func:`~fusionlib.fairtest.reporting.latent_sensitivity`) on the first dataset run of
  Adult and the scale's datasets, in that order.

A dataset whose files are missing gives "not run" results in a *provisional* shard: written,
but recomputed on the next request, so a later ``make data`` is picked up. The cells are
independent, so the workflow runs them in parallel; the CTGAN baseline (inside ``protocol``)
is the longest part at paper scale. :func:`protocol_results` is what the chapter calls.
"""

from __future__ import annotations

import contextlib
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

__all__ = ["PROTOCOL_CONFIG", "PROTOCOL", "ALL_DATASETS", "protocol_results"]

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
#: the datasets of seed 002 (every table has rows for each, "not run" where a scale skips it)
ALL_DATASETS: tuple[str, ...] = ("adult", "compas", "german")
NAME = "fairtest_protocol"


def _one_thread_without_gpu() -> contextlib.AbstractContextManager[None]:
    """One torch thread when there is no GPU (the notebook's setting: small CTGAN networks run
    faster on one thread on a CPU), restored afterwards."""
    from fusionlib.gan.trainer import torch_threads

    return torch_threads(1, cpu_only=True)


def _protocol(scale: str) -> dict[str, Any]:
    return {k: v for k, v in PROTOCOL_CONFIG[scale].items() if k not in _NOT_PROTOCOL}


def _em_candidates(datasets: list[str]) -> list[str]:
    """Adult first when the scale runs it, then the scale's datasets (the chapter's order)."""
    return list(dict.fromkeys(d for d in ("adult", *datasets) if d in datasets))


def _grid(scale: str, seed: int) -> list[Cell]:
    cfg, protocol = PROTOCOL_CONFIG[scale], _protocol(scale)
    cells = [Cell(NAME, {"part": "protocol", "dataset": d, "protocol": protocol}, seed, label=d)
             for d in cfg["datasets"]]
    cells += [Cell(NAME, {"part": "disjoint", "dataset": d, "protocol": protocol}, seed,
                   label=f"{d} disjoint rows") for d in cfg["datasets"]]
    cells.append(Cell(NAME, {"part": "em_starts", "candidates": _em_candidates(cfg["datasets"]),
                             "em_seeds": cfg["em_seeds"], "protocol": protocol}, seed,
                      label="latent em starts"))
    return cells


def _summary_figures(summary: Any) -> dict[str, Any]:
    acc = summary.accuracy
    return {
        "frame": frame_to_json(summary.fidelity),
        "status": summary.status, "reason": summary.reason, "train_rows": summary.train_rows,
        "test_rows": summary.test_rows, "protected": list(summary.protected),
        "label": summary.label, "overlaps": list(summary.overlaps),
        "table9": frame_to_json(summary.table9), "boots": frame_to_json(summary.boots),
        "kl_floors": frame_to_json(summary.kl_floors),
        "accuracy": None if acc is None else {
            "frame": frame_to_json(acc.reset_index()), "index": acc.index.name,
            "columns": acc.columns.name},
        # lists, not dicts, where the order matters: shard files are written with sorted keys
        "mutual_information": [[a, v] for a, v in summary.mutual_information.items()],
        "unique_internal": summary.unique_internal,
        "dcc": [{"label": k, "overlap": summary.set_overlaps[k],
                 "names": [str(c) for c in m.columns], "values": m.to_numpy().tolist()}
                for k, m in summary.dcc.items()],
    }


def _summary_from(fig: dict[str, Any]) -> Any:
    from fusionlib.fairtest.records import DatasetSummary

    acc = fig["accuracy"]
    if acc is not None:
        frame = frame_from_json(acc["frame"]).set_index(acc["index"])
        frame.columns.name = acc["columns"]
        acc = frame
    dcc = {m["label"]: pd.DataFrame(m["values"], index=m["names"], columns=m["names"],
                                    dtype=float) for m in fig["dcc"]}
    rows = frame_from_json(fig["frame"])
    return DatasetSummary(
        rows["dataset"].iloc[0] if len(rows) else "", fig["status"], fig["reason"], rows,
        frame_from_json(fig["boots"]), frame_from_json(fig["table9"]), fig["train_rows"],
        fig["test_rows"], tuple(fig["protected"]), fig["label"], tuple(fig["overlaps"]), acc,
        frame_from_json(fig["kl_floors"]), dict(fig["mutual_information"]),
        fig["unique_internal"], dcc, {m["label"]: m["overlap"] for m in fig["dcc"]})


def _prepared(dataset: str, protocol: Any, seed: int) -> Any:
    """The dataset's prepared rows as :func:`~fusionlib.fairtest.protocol.run_dataset` makes
    them, or None when its files are missing."""
    from fusionlib.errors import DataUnavailableError
    from fusionlib.fairtest.protocol import prepare

    try:
        return prepare(dataset, test_size=protocol.test_size, seed=seed,
                       max_rows=protocol.max_rows)
    except DataUnavailableError:
        return None


def _compute(cell: Cell) -> Shard:
    from fusionlib.fairtest.protocol import ProtocolConfig, disjoint_rows_table9, run_dataset
    from fusionlib.fairtest.reporting import latent_sensitivity, summarize
    from fusionlib.rng import child

    cfg, seed = cell.config, cell.seed
    protocol = ProtocolConfig(**cfg["protocol"])
    with _one_thread_without_gpu():
        if cfg["part"] == "protocol":
            summary = summarize(run_dataset(cfg["dataset"], protocol, seed=seed), seed=seed)
            return Shard(summary.fidelity, _summary_figures(summary),
                         provisional=summary.status != "run")
        if cfg["part"] == "disjoint":
            prep = _prepared(cfg["dataset"], protocol, seed)
            if prep is None:
                return Shard(pd.DataFrame(), {"status": "not run"}, provisional=True)
            table = disjoint_rows_table9(prep, protocol, seed=child(seed, "disjoint",
                                                                     cfg["dataset"]))
            return Shard(table, {"status": "run", "frame": frame_to_json(table)})
        for d in cfg["candidates"]:
            prep = _prepared(d, protocol, seed)
            if prep is not None:
                overlap = prep.spec.overlaps[0]
                sens = latent_sensitivity(prep, overlap, cfg["em_seeds"], seed=seed)
                return Shard(sens, {"status": "run", "dataset": d, "overlap": overlap,
                                    "protected": list(prep.spec.protected),
                                    "frame": frame_to_json(sens)})
        return Shard(pd.DataFrame(), {"status": "not run"}, provisional=True)


PROTOCOL = register(Experiment(
    NAME, _grid, _compute, (__name__,),
    description="fairness testing (seed 002): per dataset the protocol and the disjoint-rows "
                "variant, and the EM-start check"))


def protocol_results(scale: str, seed: int = 0, *, root: str | os.PathLike[str] | None = None,
                     progress: bool = True) -> dict[str, Any]:
    """Everything the chapter shows, from the cells of ``scale`` (missing ones computed
    in-process).

    Returns ``{"datasets": {d: DatasetSummary} for every dataset of seed 002 (a "not run"
    summary for those the scale skips), "disjoint": {d: Table 9 rows} for the datasets run,
    "em_starts": None or {"dataset", "overlap", "protected", "sensitivity"}}``.
    """
    from fusionlib.fairtest.protocol import ProtocolConfig, not_run_result
    from fusionlib.fairtest.reporting import summarize

    # each cell's frames are read from its figure data, as written: the aggregated rows are
    # the union of differently shaped tables (fidelity, Table 9, EM starts)
    _, figures = results(NAME, scale, seed=seed, root=root, progress=progress)
    cells = PROTOCOL.cells(scale, seed)
    part = {c.cell_id: c.config["part"] for c in cells}
    datasets, disjoint, em = {}, {}, None
    for c in cells:
        fig = figures[c.cell_id]
        frame = frame_from_json(fig["frame"]) if "frame" in fig else pd.DataFrame()
        if part[c.cell_id] == "protocol":
            datasets[c.config["dataset"]] = _summary_from(fig)
        elif fig["status"] == "run" and part[c.cell_id] == "disjoint":
            disjoint[c.config["dataset"]] = frame
        elif fig["status"] == "run":
            em = {**{k: fig[k] for k in ("dataset", "overlap", "protected")},
                  "sensitivity": frame}
    protocol = ProtocolConfig(**_protocol(scale))
    runs = ", ".join(PROTOCOL_CONFIG[scale]["datasets"])
    for d in ALL_DATASETS:
        if d not in datasets:
            datasets[d] = summarize(not_run_result(d, protocol, f"scale {scale} runs only {runs}"))
    return {"datasets": {d: datasets[d] for d in ALL_DATASETS}, "disjoint": disjoint,
            "em_starts": em}
