"""Helpers of the identification chapter (``notebooks/identification.md``).

Read by the notebook only (no cell imports this module, so it is part of no cell's code key):
the brute-force linear program that checks the Fréchet cell bounds, the per-(design, method)
means and estimates of the study's rows, and the sentence placing FusionGAN's correlation in
the identified interval.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.optimize import linprog

from fusionlib.compendium.verdicts import Estimate
from fusionlib.errors import InvalidInputError

__all__ = ["lp_range", "mean_of", "estimate", "where_in"]


def lp_range(px, py, pz, cell: Sequence[int]) -> list[float]:
    """[min, max] of ``p(y, z)`` at ``cell = (y, z)`` over every joint table ``p(x, y, z) >= 0``
    whose margins are ``p(x, y) = px[x] py[x, y]`` and ``p(x, z) = px[x] pz[x, z]``.

    Parameters
    ----------
    px : array (i,)
        Law of ``x``.
    py, pz : arrays (i, j) and (i, k)
        Conditional laws ``p(y | x)`` and ``p(z | x)`` (rows sum to 1).
    cell : (int, int)
        The ``(y, z)`` cell.

    Returns
    -------
    list of float
        The minimum and the maximum (SciPy HiGHS).
    """
    px, py, pz = (np.asarray(a, dtype=float) for a in (px, py, pz))
    if py.ndim != 2 or pz.ndim != 2 or len(py) != len(px) or len(pz) != len(px):
        raise InvalidInputError(f"py {py.shape} and pz {pz.shape} must have one row per x "
                                f"({len(px)})")
    i, j, k = len(px), py.shape[1], pz.shape[1]
    if not (0 <= cell[0] < j and 0 <= cell[1] < k):
        raise InvalidInputError(f"cell {tuple(cell)} outside the {j} x {k} table of (y, z)")
    rows, rhs = [], []
    for x, y in itertools.product(range(i), range(j)):
        a = np.zeros((i, j, k))
        a[x, y, :] = 1
        rows.append(a.ravel())
        rhs.append(px[x] * py[x, y])
    for x, z in itertools.product(range(i), range(k)):
        a = np.zeros((i, j, k))
        a[x, :, z] = 1
        rows.append(a.ravel())
        rhs.append(px[x] * pz[x, z])
    c = np.zeros((i, j, k))
    c[:, cell[0], cell[1]] = 1
    return [s * linprog(s * c.ravel(), A_eq=np.array(rows), b_eq=rhs, method="highs").fun
            for s in (1, -1)]


def mean_of(summary: pd.DataFrame, design: str, method: str, q: str) -> float:
    """The value of column ``q`` in the row of (``design``, ``method``) of ``summary``."""
    return float(summary.set_index(["design", "method"]).loc[(design, method), q])


def estimate(rows: pd.DataFrame, design: str, method: str, q: str) -> Estimate | None:
    """Mean and standard error of column ``q`` over the seeds of (``design``, ``method``) in
    ``rows`` (FusionGAN: over its seeds that learned); ``None`` when there are none, an unknown
    spread with one seed."""
    g = rows[(rows["design"] == design) & (rows["method"] == method)]
    if method == "fusiongan":
        g = g[g["learned"].astype(bool)]
    return Estimate.from_sample(g[q].to_numpy()) if len(g) else None


def where_in(label: str, truth: pd.Series, est: Estimate) -> str:
    """Where an estimate of ``corr(y, z)`` lies: its position in the identified interval
    (0 = lower end, 1 = upper end) and its distances to the truth and to the CIA value.

    ``truth`` is a design's row of the population table (``rho_lower``, ``rho_upper``,
    ``rho_truth``, ``rho_cia``); ``label`` names the design.
    """
    t, v = truth, est.value
    pos = (v - t["rho_lower"]) / (t["rho_upper"] - t["rho_lower"])
    return (f"{label}: {est.text(3)}, at {pos:.2f} of the identified "
            f"interval [{t['rho_lower']:.2f}, {t['rho_upper']:.2f}], {abs(v - t['rho_truth']):.2f}"
            f" from the truth {t['rho_truth']:.2f}, {abs(v - t['rho_cia']):.2f} from the CIA "
            f"value {t['rho_cia']:.2f}")
