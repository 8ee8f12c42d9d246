"""The variance chapter's cells read without computing them: a page built at cpu scale reads
the paper scale's cells this way.

Kept apart from :mod:`fusionlib.ptgan.variance.cells` on purpose: that module's source is part
of its cells' code key, so what only reads shards lives here and leaves the key (and every
computed shard) as it is.
"""

from __future__ import annotations

import os
import warnings

import pandas as pd

from fusionlib.compendium.cells import CellsMissingError, StaleShardWarning, results
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
    # a stale shard warns that it is "recomputed"; here nothing is: say what happens instead
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", StaleShardWarning)
        try:
            rows, _ = results(exps[kind], scale, seed=seed, root=root, progress=False,
                              compute_missing=False)
        except CellsMissingError:
            rows = None
    stale = sum(issubclass(w.category, StaleShardWarning) for w in caught)
    for w in caught:
        if not issubclass(w.category, StaleShardWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if stale:
        warnings.warn(f"{stale} shard(s) of {exps[kind].name} at scale {scale} are stale (computed "
                      "by other code): not read, so the page falls back to its own runs",
                      StaleShardWarning, stacklevel=2)
    if rows is None:
        return None
    return rows.drop(columns="cell_id").reset_index(drop=True)
