"""The toys chapter's runs read without computing them: a page built at cpu scale reads the
paper scale's ring, Mixup and Figure 11 cells this way.

Kept apart from :mod:`fusionlib.ptgan.toys.cells` on purpose: that module's source is part of
its cells' code key, so what only reads shards lives here and leaves the key (and every
computed shard) as it is.
"""

from __future__ import annotations

import os

import pandas as pd

from fusionlib.compendium.cells import present_results
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.toys.cells import _ring_run  # the shard -> RingRun of ring_runs
from fusionlib.ptgan.toys.runs import RingRun

__all__ = ["present_ring_runs"]

EXPERIMENTS = ("ptgan_ring", "ptgan_mixup", "ptgan_fig11")


def present_ring_runs(experiment: str, scale: str, seed: int = 0, *,
                      root: str | os.PathLike[str] | None = None
                      ) -> dict[tuple, RingRun] | None:
    """The runs of ``experiment`` at ``scale`` as :func:`~fusionlib.ptgan.toys.cells.ring_runs`
    gives them, when every cell has a current shard (computed here, elsewhere or installed from
    a bundle); None when any is missing. Nothing is computed."""
    if experiment not in EXPERIMENTS:
        raise InvalidInputError(f"present_ring_runs: experiment {experiment!r} is not one of "
                                f"{list(EXPERIMENTS)}")
    found = present_results(experiment, scale, seed=seed, root=root)
    if found is None:
        return None
    rows, figures = found
    # keyed as ring_runs keys them (its body, which cannot take compute_missing without
    # changing the cells module and with it the key of every computed shard)
    out: dict[tuple, RingRun] = {}
    for _, row in rows.iterrows():
        run = _ring_run(row, figures[row["cell_id"]])
        if "mixup_a" in row and pd.notna(row["mixup_a"]):
            key: tuple = (float(row["mixup_a"]), float(row["mixup_b"]), run.seed)
        elif "width" in row and pd.notna(row["width"]):
            key = (int(row["width"]), bool(row["interpolated"]), run.seed)
        else:
            key = (run.method, run.seed)
        out[key] = run
    return out
