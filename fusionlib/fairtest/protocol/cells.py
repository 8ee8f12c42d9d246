"""The protocol of seed 002 as cells of the compendium's grid.

Importing this module registers the experiment ``fairtest_protocol`` in
:data:`fusionlib.compendium.cells.EXPERIMENTS`, with the chapter's settings per scale
(:data:`PROTOCOL_CONFIG`, read by ``notebooks/fairness_testing.md`` too) and four kinds of
cell, each a pure function of its configuration and the root seed:

- ``protocol`` (one per dataset): :func:`fusionlib.fairtest.protocol.runs.run_dataset` with every
  method but CTGAN, then :func:`fusionlib.fairtest.protocol.report.summarize`, and the repeated
  single-start Latent fits (:func:`~fusionlib.fairtest.repeated_fits.latent_fits`). Rows: the
  fidelity table (Tables 3, 7, 8); figure data: the rest of the
  :class:`~fusionlib.fairtest.protocol.records.DatasetSummary` (Table 9 rows, the bootstraps behind
  Figure 4, the audited trees' accuracy, the KL noise floors, the mutual information of each
  protected attribute with the label, Figure 5's matrices, the Latent fits). The prepared rows
  and synthetic tables stay in the cell: nothing downstream needs them.
- ``ctgan`` (one per dataset and training run): the CTGAN baseline with the settings of
  :data:`PROTOCOL_CONFIG`'s ``ctgan`` entry for that dataset (epochs, row cap, runs), scored
  like every other set (:func:`~fusionlib.fairtest.repeated_fits.ctgan_run`), with its wall
  and CPU time. CTGAN is the longest part of the protocol, so each run is a cell of its own
  that the workflow runs in parallel with the rest; run 0 has the protocol's seeds and is
  merged into the dataset's summary exactly where
  :func:`~fusionlib.fairtest.protocol.runs.run_dataset` would have put it.
- ``disjoint`` (one per dataset): Table 9 under the variant with disjoint rows
  (:func:`~fusionlib.fairtest.protocol.runs.disjoint_rows_table9`).
- ``em_starts`` (one): the Latent model refitted from single EM starts
  (:func:`~fusionlib.fairtest.protocol.report.latent_sensitivity`) on the first dataset run of
  Adult and the scale's datasets, in that order.

A dataset whose files are missing gives "not run" results in a *provisional* shard: written,
but recomputed on the next request, so a later ``make data`` is picked up.
:func:`protocol_results` is what the chapter calls.
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

__all__ = ["PROTOCOL_CONFIG", "PROTOCOL", "ALL_DATASETS", "ctgan_protocol", "protocol_results"]

#: the chapter's settings per scale (notebooks/fairness_testing.md); ``datasets``,
#: ``em_seeds`` and ``ctgan`` are the notebook's, the rest are ProtocolConfig fields. At
#: ``cpu`` every setting is the paper's protocol (1,000 bootstraps, DM from five forests of 100
#: trees on every test row, CTGAN's published 300 epochs on every training row) except where
#: ``ctgan`` says otherwise: Adult's CTGAN does not fit the CPU budget (300 epochs of 63 steps
#: on one core: about 15 minutes) and trains 30 epochs, as many steps as COMPAS's 300, once
#: (its rows are not comparable with the paper's); COMPAS and German train three times.
#: ``ctgan``: per dataset, ``epochs``, ``max_rows`` (None: every training row) and ``runs``
#: (training runs, whose spread is the CTGAN rows' uncertainty).
PROTOCOL_CONFIG: dict[str, dict[str, Any]] = {
    "smoke": dict(datasets=["compas"], max_rows=600, n_boot=5, dm_seeds=1, dm_n_estimators=10,
                  dm_max_rows=200, ctgan_epochs=1, ctgan_max_rows=300, latent_restarts=1,
                  fidelity_boot=10, latent_fits=2, em_seeds=[0, 1],
                  ctgan={"compas": dict(epochs=1, max_rows=300, runs=1)}),
    "cpu": dict(datasets=["adult", "compas", "german"], max_rows=None, n_boot=1000, dm_seeds=5,
                dm_n_estimators=100, dm_max_rows=None, ctgan_epochs=300, ctgan_max_rows=None,
                latent_restarts=1, fidelity_boot=200, latent_fits=5, em_seeds=list(range(8)),
                ctgan={"adult": dict(epochs=30, max_rows=None, runs=1),
                       "compas": dict(epochs=300, max_rows=None, runs=3),
                       "german": dict(epochs=300, max_rows=None, runs=3)}),
    "paper": dict(datasets=["adult", "compas", "german"], max_rows=None, n_boot=1000,
                  dm_seeds=5, dm_n_estimators=100, dm_max_rows=None, ctgan_epochs=300,
                  ctgan_max_rows=None, latent_restarts=1, fidelity_boot=200, latent_fits=5,
                  em_seeds=list(range(20)),
                  ctgan={d: dict(epochs=300, max_rows=None, runs=3)
                         for d in ("adult", "compas", "german")}),
}
_NOT_PROTOCOL = ("datasets", "em_seeds", "ctgan")
#: the datasets of seed 002 (every table has rows for each, "not run" where a scale skips it)
ALL_DATASETS: tuple[str, ...] = ("adult", "compas", "german")
NAME = "fairtest_protocol"


def _one_thread_without_gpu() -> contextlib.AbstractContextManager[None]:
    """One torch thread when there is no GPU (the notebook's setting: small CTGAN networks run
    faster on one thread on a CPU), restored afterwards."""
    from fusionlib.gan.trainer import torch_threads

    return torch_threads(1, cpu_only=True)


def _protocol(scale: str) -> dict[str, Any]:
    """ProtocolConfig fields of the scale (CTGAN included: the disjoint and EM cells)."""
    return {k: v for k, v in PROTOCOL_CONFIG[scale].items() if k not in _NOT_PROTOCOL}


def ctgan_protocol(scale: str, dataset: str) -> dict[str, Any]:
    """ProtocolConfig fields of ``dataset``'s CTGAN runs at ``scale``."""
    c = PROTOCOL_CONFIG[scale]["ctgan"][dataset]
    return {**_protocol(scale), "ctgan_epochs": c["epochs"], "ctgan_max_rows": c["max_rows"]}


def _config(fields: dict[str, Any]) -> Any:
    from fusionlib.fairtest.protocol.runs import ProtocolConfig

    return ProtocolConfig(**{**fields, "baselines": tuple(fields.get("baselines", ("CTGAN",
                                                                                   "Indep")))})


def _em_candidates(datasets: list[str]) -> list[str]:
    """Adult first when the scale runs it, then the scale's datasets (the chapter's order)."""
    return list(dict.fromkeys(d for d in ("adult", *datasets) if d in datasets))


def _grid(scale: str, seed: int) -> list[Cell]:
    cfg, protocol = PROTOCOL_CONFIG[scale], _protocol(scale)
    without_ctgan = {**protocol, "baselines": ["Indep"]}
    cells = [Cell(NAME, {"part": "protocol", "dataset": d, "protocol": without_ctgan}, seed,
                  label=d) for d in cfg["datasets"]]
    cells += [Cell(NAME, {"part": "ctgan", "dataset": d, "run": r,
                          "protocol": ctgan_protocol(scale, d)}, seed, label=f"{d} ctgan run {r}")
              for d in cfg["datasets"] for r in range(cfg["ctgan"][d]["runs"])]
    cells += [Cell(NAME, {"part": "disjoint", "dataset": d, "protocol": protocol}, seed,
                   label=f"{d} disjoint rows") for d in cfg["datasets"]]
    cells.append(Cell(NAME, {"part": "em_starts", "candidates": _em_candidates(cfg["datasets"]),
                             "em_seeds": cfg["em_seeds"], "protocol": protocol}, seed,
                      label="latent em starts"))
    return cells


def _prepared(dataset: str, protocol: Any, seed: int) -> Any:
    """The dataset's prepared rows as :func:`~fusionlib.fairtest.protocol.runs.run_dataset` makes
    them, or None when its files are missing."""
    from fusionlib.errors import DataUnavailableError
    from fusionlib.fairtest.protocol.runs import prepare

    try:
        return prepare(dataset, test_size=protocol.test_size, seed=seed,
                       max_rows=protocol.max_rows)
    except DataUnavailableError:
        return None


def _protocol_shard(dataset: str, protocol: Any, seed: int) -> Shard:
    from fusionlib.fairtest.protocol.report import summarize
    from fusionlib.fairtest.protocol.runs import run_dataset
    from fusionlib.fairtest.protocol.summary_io import summary_figures
    from fusionlib.fairtest.repeated_fits import latent_fits

    result = run_dataset(dataset, protocol, seed=seed)
    summary = summarize(result, seed=seed)
    if result.prepared is not None:
        summary.latent_fit_scores, summary.latent_fit_diffs = latent_fits(
            result.prepared, protocol, seed=seed)
    return Shard(summary.fidelity, summary_figures(summary), provisional=summary.status != "run")


def _ctgan_shard(dataset: str, protocol: Any, seed: int, run: int) -> Shard:
    from fusionlib.fairtest.protocol.summary_io import ctgan_figures
    from fusionlib.fairtest.repeated_fits import ctgan_run

    prep = _prepared(dataset, protocol, seed)
    if prep is None:
        return Shard(pd.DataFrame(), {"status": "not run"}, provisional=True)
    out = ctgan_run(prep, protocol, seed=seed, run=run)
    return Shard(out["fidelity"], ctgan_figures(out))


def _compute(cell: Cell) -> Shard:
    from fusionlib.fairtest.protocol.report import latent_sensitivity
    from fusionlib.fairtest.protocol.runs import disjoint_rows_table9
    from fusionlib.rng import child

    cfg, seed = cell.config, cell.seed
    protocol = _config(cfg["protocol"])
    with _one_thread_without_gpu():
        if cfg["part"] == "protocol":
            return _protocol_shard(cfg["dataset"], protocol, seed)
        if cfg["part"] == "ctgan":
            return _ctgan_shard(cfg["dataset"], protocol, seed, cfg["run"])
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
    description="fairness testing (seed 002): per dataset the protocol, each CTGAN training run "
                "and the disjoint-rows variant, and the EM-start check"))


def protocol_results(scale: str, seed: int = 0, *, root: str | os.PathLike[str] | None = None,
                     progress: bool = True) -> dict[str, Any]:
    """Everything the chapter shows, from the cells of ``scale`` (missing ones computed
    in-process).

    Returns ``{"datasets": {d: DatasetSummary} for every dataset of seed 002 (a "not run"
    summary for those the scale skips), "disjoint": {d: Table 9 rows} for the datasets run,
    "em_starts": None or {"dataset", "overlap", "protected", "sensitivity"}}``.
    """
    from fusionlib.fairtest.protocol.report import summarize
    from fusionlib.fairtest.protocol.runs import not_run_result
    from fusionlib.fairtest.protocol.summary_io import ctgan_from, summary_from, with_ctgan

    # each cell's frames are read from its figure data, as written: the aggregated rows are
    # the union of differently shaped tables (fidelity, Table 9, EM starts)
    _, figures = results(NAME, scale, seed=seed, root=root, progress=progress)
    datasets, ctgan, disjoint, em = {}, {}, {}, None
    for c in PROTOCOL.cells(scale, seed):
        fig, part = figures[c.cell_id], c.config["part"]
        frame = frame_from_json(fig["frame"]) if "frame" in fig else pd.DataFrame()
        if part == "protocol":
            datasets[c.config["dataset"]] = summary_from(fig)
        elif part == "ctgan" and fig["status"] == "run":
            ctgan.setdefault(c.config["dataset"], []).append(ctgan_from(fig))
        elif fig["status"] == "run" and part == "disjoint":
            disjoint[c.config["dataset"]] = frame
        elif fig["status"] == "run" and part == "em_starts":
            em = {**{k: fig[k] for k in ("dataset", "overlap", "protected")},
                  "sensitivity": frame}
    datasets = {d: with_ctgan(s, ctgan.get(d, [])) for d, s in datasets.items()}
    protocol = _config(_protocol(scale))
    runs = ", ".join(PROTOCOL_CONFIG[scale]["datasets"])
    for d in ALL_DATASETS:
        if d not in datasets:
            datasets[d] = summarize(not_run_result(d, protocol, f"scale {scale} runs only {runs}"))
    return {"datasets": {d: datasets[d] for d in ALL_DATASETS}, "disjoint": disjoint,
            "em_starts": em}
