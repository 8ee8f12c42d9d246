"""What sections E and F of the FusionGAN appendix say their metrics do, computed.

Section E: "Coverage = 0: perfect coverage (synthetic exactly matches real); Coverage > 0:
average distance from real points to nearest synthetic; lower is better", so coverage grows as
the synthetic records move away from the real ones. Section F: the median heuristic for the RBF
bandwidth "automatically adapts to the scale of the data", so MMD with it is the same number
whatever unit the data are measured in.

Both are exact computations on given records (no training, no sampling beyond the records
passed in): :func:`coverage_by_distance` shifts a synthetic table by growing distances along one
direction, :func:`mmd_by_scale` multiplies both tables by constant factors, and
:func:`strictly_increasing` reads the first (for the chapter's claims).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fusionlib.checks import check_positive
from fusionlib.errors import InvalidInputError
from fusionlib.metrics.coverage import check_pair, coverage
from fusionlib.metrics.mmd import mmd

__all__ = ["coverage_by_distance", "mmd_by_scale", "strictly_increasing"]


def _direction(d: int, direction: object) -> np.ndarray:
    u = np.ones(d) if direction is None else np.asarray(direction, dtype=float).ravel()
    if u.shape != (d,) or not np.isfinite(u).all() or not np.linalg.norm(u) > 0:
        raise InvalidInputError(
            f"direction must be {d} finite numbers, not all zero; got {direction!r}")
    return u / np.linalg.norm(u)


def coverage_by_distance(real: object, synthetic: object, distances: Sequence[float], *,
                         direction: object = None, k: int = 1) -> list[float]:
    """Section E's coverage of ``real`` by ``synthetic + t u`` for each ``t`` in
    ``distances``.

    Parameters
    ----------
    real, synthetic : array_like, shape (n, d) and (m, d)
    distances : sequence of float
        How far (Euclidean, in the data's units) the synthetic records are moved; each >= 0.
    direction : array_like, shape (d,), optional
        The direction ``u`` of the move (normalised here); default the diagonal
        ``(1, ..., 1) / sqrt(d)``.
    k : int
        Coverage's ``k`` (as written, every ``k`` gives the nearest-neighbour distance).

    Returns
    -------
    list of float
        The coverage at each distance, in the order given.
    """
    r, s = check_pair("real", real, "synthetic", synthetic)
    t = np.asarray(list(distances), dtype=float)
    if t.ndim != 1 or not len(t) or not np.isfinite(t).all() or (t < 0).any():
        raise InvalidInputError(f"distances must be finite numbers >= 0, got {distances!r}")
    u = _direction(r.shape[1], direction)
    return [float(coverage(r, s + ti * u, k)) for ti in t]


def mmd_by_scale(real: object, synthetic: object, factors: Sequence[float], *,
                 unbiased: bool = True, seed: object = 0) -> dict[float, float]:
    """Section F's MMD^2 with the median heuristic of ``(a real, a synthetic)`` for each factor
    ``a`` of ``factors`` (each > 0; include 1 for the data as given).

    The median of the pooled distances scales with ``a``, so ``gamma |x - y|^2`` and every
    kernel value are unchanged: the values agree up to rounding (and, beyond
    ``fusionlib.metrics.mmd.DEFAULT_MAX_PAIRS`` pairs, the same subsample of pairs, drawn
    from ``seed``, is used at every factor).

    Returns
    -------
    dict
        factor -> MMD^2.
    """
    r, s = check_pair("real", real, "synthetic", synthetic)
    out = {}
    for a in factors:
        a = float(check_positive("factor", a))
        out[a] = float(mmd(a * r, a * s, unbiased=unbiased, seed=seed).mmd2)
    return out


def strictly_increasing(values: Sequence[float]) -> bool:
    """True when every value is larger than the one before it (and there are at least two)."""
    v = np.asarray(list(values), dtype=float)
    return bool(len(v) >= 2 and np.isfinite(v).all() and np.all(np.diff(v) > 0))
