"""The fairness protocol's CTGAN runs read from another scale's cells, without computing them.

At scale ``cpu`` the protocol of seed 002 is the paper's in every setting but one: CTGAN on
Adult trains 30 of its published 300 epochs, once
(:data:`~fusionlib.fairtest.protocol.cells.PROTOCOL_CONFIG`), so Adult's CTGAN rows are not
comparable with the paper's. The paper scale's
cells train it 300 epochs, three times; every other cell of the two scales is the same
computation (same cell id and configuration). Where all of a dataset's paper-scale CTGAN cells
are present (computed here, on another machine, or installed from a bundle), a chapter built at
``cpu`` puts those runs in place of its own (:func:`with_source_ctgan`), and its claims on that
dataset's CTGAN then read the paper's protocol.

Kept apart from :mod:`fusionlib.fairtest.protocol.cells` on purpose: that module's source is
part of its cells' code key, so what only reads shards lives here and leaves the key (and every
computed shard) as it is.
"""

from __future__ import annotations

import os
from typing import Any

from fusionlib.compendium.cells import present_cells
from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.protocol.cells import PROTOCOL, PROTOCOL_CONFIG
from fusionlib.fairtest.protocol.summary_io import ctgan_from, summary_from, with_ctgan

__all__ = ["source_ctgan_runs", "with_source_ctgan"]


def _ids(scale: str, seed: int, dataset: str, part: str) -> list[str]:
    return [c.cell_id for c in PROTOCOL.cells(scale, seed)
            if c.config["part"] == part and c.config.get("dataset") == dataset]


def source_ctgan_runs(dataset: str, source: str = "paper", seed: int = 0, *,
                      root: str | os.PathLike[str] | None = None) -> list[dict[str, Any]] | None:
    """The CTGAN runs of ``dataset`` at scale ``source``, read from their shards (run 0
    first), when every one of them is present and was run; None otherwise. Nothing is
    computed."""
    ids = _ids(source, seed, dataset, "ctgan")
    if not ids:
        return None
    found = present_cells(PROTOCOL, source, ids, seed=seed, root=root)
    if found is None or any(found[i].figures.get("status") != "run" for i in ids):
        return None
    return [ctgan_from(found[i].figures) for i in ids]


def with_source_ctgan(protocol: dict[str, Any], scale: str, seed: int = 0, *,
                      source: str = "paper", root: str | os.PathLike[str] | None = None
                      ) -> tuple[dict[str, Any], dict[str, str]]:
    """``protocol`` (:func:`~fusionlib.fairtest.protocol.cells.protocol_results` at ``scale``)
    with, for each dataset whose CTGAN settings at ``scale`` differ from those at ``source``
    and whose ``source`` CTGAN cells are all present, those runs in place of its own.

    Returns the protocol (a new dict; the input is not changed) and ``{dataset: source}`` for
    the datasets replaced. Only the CTGAN runs change: the dataset's other sets come from the
    ``scale`` cell of its protocol, which must be the same computation at both scales (checked:
    same cell id, hence same configuration and seed), so the result is the ``source`` scale's
    protocol for that dataset. Nothing is computed; at ``scale == source`` nothing changes.
    """
    if scale not in PROTOCOL_CONFIG or source not in PROTOCOL_CONFIG:
        raise InvalidInputError(f"with_source_ctgan: scales must be among "
                                f"{sorted(PROTOCOL_CONFIG)}; got {scale!r} and {source!r}")
    out = {**protocol, "datasets": dict(protocol["datasets"])}
    replaced: dict[str, str] = {}
    if scale == source:
        return out, replaced
    mine, theirs = PROTOCOL_CONFIG[scale]["ctgan"], PROTOCOL_CONFIG[source]["ctgan"]
    for d, summary in protocol["datasets"].items():
        if summary.status != "run" or d not in theirs or mine.get(d) == theirs[d]:
            continue
        cell = _ids(scale, seed, d, "protocol")
        if cell != _ids(source, seed, d, "protocol"):
            continue  # the rest of the protocol differs between the scales: not mixed
        runs = source_ctgan_runs(d, source, seed, root=root)
        base = present_cells(PROTOCOL, scale, cell, seed=seed, root=root) if runs else None
        if base is None:
            continue
        out["datasets"][d] = with_ctgan(summary_from(base[cell[0]].figures), runs)
        replaced[d] = source
    return out, replaced
