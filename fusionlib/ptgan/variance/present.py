"""The variance chapter's cells read without computing them: a page built at cpu scale reads
the paper scale's cells this way.

Kept apart from :mod:`fusionlib.ptgan.variance.cells` on purpose: that module's source is part
of its cells' code key, so what only reads shards lives here and leaves the key (and every
computed shard) as it is.
"""

from __future__ import annotations

import os

import pandas as pd

from fusionlib.compendium.cells import present_results
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.variance.cells import COLLAPSE, NOISE, TRAINING

__all__ = ["present_traces"]


def present_traces(kind: str, scale: str, seed: int = 0, *,
                   root: str | os.PathLike[str] | None = None) -> pd.DataFrame | None:
    """The traces of every ``kind`` (``collapse``, ``training`` or ``noise``) cell at ``scale``
    when each has a current shard (computed here, elsewhere or installed from a bundle), in the
    chapter's order, as :func:`~fusionlib.ptgan.variance.cells.variance_traces` gives them;
    None when any is missing. Nothing is computed."""
    exps = {"collapse": COLLAPSE, "training": TRAINING, "noise": NOISE}
    if kind not in exps:
        raise InvalidInputError(f"present_traces: kind {kind!r} is not one of {sorted(exps)}")
    found = present_results(exps[kind], scale, seed=seed, root=root)
    if found is None:
        return None
    rows, _ = found
    return rows.drop(columns="cell_id").reset_index(drop=True)
