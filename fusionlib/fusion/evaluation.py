"""Scoring a fused synthetic table against real records with the shared metrics.

:func:`score` puts the numbers of sections E and F (coverage, MMD) beside precision / recall /
density / coverage (Naeem et al. 2020) and the distance to the closest training record
(memorisation, limitation 3 of section I), on standardised columns so that no column dominates
the Euclidean distances by its units.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fusionlib.errors import InvalidInputError
from fusionlib.metrics.coverage import coverage
from fusionlib.metrics.mmd import mmd
from fusionlib.metrics.prdc import prdc
from fusionlib.metrics.privacy import dcr

__all__ = ["standardise_like", "score", "cross_correlations", "correlation_ratio",
           "group_mmd"]


def standardise_like(reference: pd.DataFrame, *frames: pd.DataFrame) -> list[np.ndarray]:
    """``frames`` as arrays standardised with ``reference``'s column means and sds."""
    cols = list(reference.columns)
    missing = [c for f in frames for c in cols if c not in f.columns]
    if missing:
        raise InvalidInputError(f"columns {sorted(set(missing))} are missing from a table")
    mu = reference[cols].mean().to_numpy()
    sd = reference[cols].std(ddof=0).replace(0, 1).to_numpy()
    return [(f[cols].to_numpy(dtype=float) - mu) / sd for f in frames]


def score(real: pd.DataFrame, synthetic: pd.DataFrame, *, train: pd.DataFrame | None = None,
          k: int = 5, seed: object = 0) -> dict[str, float]:
    """Coverage (section E, k = 1), MMD (section F), PRDC (k = ``k``) and, with ``train``, the
    share of synthetic records closer to a training record than to any ``real`` (held-out) one.

    ``real`` are held-out real records (never seen in training); all tables are standardised
    with ``real``'s column statistics.
    """
    r, s = standardise_like(real, real, synthetic)
    m = mmd(r, s, seed=seed)
    out = {"coverage": coverage(r, s), "mmd": m.mmd, "mmd2": m.mmd2}
    p = prdc(r, s, k=k)
    out.update(precision=p.precision, recall=p.recall, density=p.density,
               prdc_coverage=p.coverage)
    if train is not None:
        (t,) = standardise_like(real, train)
        d = dcr(t, s, holdout=r)
        out.update(dcr_median=d.median, closer_to_train=d.closer_to_train_share,
                   closer_to_train_expected=d.closer_to_train_expected)
    return out


def cross_correlations(table: pd.DataFrame, pairs: list[tuple[str, str]]) -> dict[str, float]:
    """Pearson correlation of each ``(a, b)`` pair of columns, keyed ``"a~b"``."""
    return {f"{a}~{b}": float(table[a].corr(table[b])) for a, b in pairs}


def correlation_ratio(table: pd.DataFrame, group: str, column: str) -> float:
    """eta^2 of ``column`` on the categorical ``group``: the share of its variance between the
    groups' means (0: no association, 1: the group determines the column)."""
    y = table[column].astype(float)
    total = float(((y - y.mean()) ** 2).sum())
    if total == 0:
        return 0.0
    means = y.groupby(table[group]).transform("mean")
    return float(((means - y.mean()) ** 2).sum() / total)


def group_mmd(truth: pd.DataFrame, synthetic: pd.DataFrame, columns: list[str], *,
              reference: pd.DataFrame | None = None, seed: object = 0,
              min_rows: int = 10) -> float:
    """MMD (section F) between the ``columns`` of two tables (e.g. one group's rows of each),
    standardised with ``reference``'s column statistics (default ``truth``); NaN when either
    has fewer than ``min_rows`` rows."""
    if min(len(truth), len(synthetic)) < min_rows:
        return float("nan")
    ref = truth if reference is None else reference
    r, s = standardise_like(ref[columns], truth, synthetic)
    return mmd(r, s, seed=seed).mmd
