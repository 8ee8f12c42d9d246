"""Helpers of the two-table bounds chapter (``notebooks/fairness_bounds.md``).

Read by the notebook only (no cell imports this module, so it is part of no cell's code key):
the reach of an interval around a real value, and a count used in the grid cross-check table.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from fusionlib.errors import InvalidInputError

__all__ = ["KEYS", "reach_of", "count_above"]

#: the columns that identify one (dataset, overlap, attribute, metric) interval
KEYS = ("dataset", "overlap", "attribute", "metric")


def reach_of(real: pd.DataFrame, intervals: pd.DataFrame,
             keys: Sequence[str] = KEYS) -> pd.DataFrame:
    """The rows of ``real`` (with a ``value`` column) joined to their interval (``lower``,
    ``upper``) on ``keys``, with ``reach = max(value - lower, upper - value)``: the largest
    ``|synthetic - real|`` an estimate consistent with the interval can show.

    Raises :class:`~fusionlib.errors.InvalidInputError` when a needed column is missing.
    """
    keys = list(keys)
    for name, frame, need in (("real", real, [*keys, "value"]),
                              ("intervals", intervals, [*keys, "lower", "upper"])):
        missing = [c for c in need if c not in frame.columns]
        if missing:
            raise InvalidInputError(f"{name} lacks the column(s) {missing}")
    r = real.merge(intervals, on=keys)
    return r.assign(reach=np.maximum(r.value - r.lower, r.upper - r.value))


def count_above(values: pd.Series, threshold: float = 1e-6) -> int:
    """How many of ``values`` exceed ``threshold`` (NaN never does)."""
    return int((values > threshold).sum())
