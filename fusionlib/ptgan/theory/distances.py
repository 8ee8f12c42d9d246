"""Exact distances for the PTGAN theory checks: W1 between samples and between laws, and a
certified upper value of a critic class's supremum.

* :func:`exact_w1` -- W1 between two empirical measures. One-dimensional data (or data whose
  other columns are one shared constant, such as ``[x, t(1) = 0]``) use SciPy's
  :func:`scipy.stats.wasserstein_distance` (sorting, O(n log n)); other data POT's network
  simplex (:func:`fusionlib.metrics.distances.wasserstein1`), thousands of times slower.
* :func:`w1_laws` -- W1 between two one-dimensional *laws* given by their quantile functions,
  ``int_0^1 |F1^-1(u) - F2^-1(u)| du`` by adaptive quadrature (no sample, no typed-in value).
* :func:`lipschitz_sup` -- ``sup { sum_i c_i f(u_i) : f 1-Lipschitz, f(0) = 0 }``, an optimal
  transport cost. Every bias-free network of (A1)-(A2) with ``prod M_w prod K = 1`` is such an
  ``f`` (1-Lipschitz and ``D(0) = 0``), so this is a *certified upper* value of the class's
  supremum of ``sum_i c_i D(u_i)`` (what gradient ascent can only bound from below).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import integrate, stats

from fusionlib.errors import InvalidInputError
from fusionlib.metrics.distances import wasserstein1

__all__ = ["exact_w1", "one_dimensional", "w1_laws", "w1_normals", "lipschitz_sup"]


def _two_d(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x[:, None] if x.ndim == 1 else x


def one_dimensional(a: np.ndarray, b: np.ndarray) -> int | None:
    """The one varying column when every other column of both samples is one shared constant
    (``None`` when two or more columns vary)."""
    a, b = _two_d(a), _two_d(b)
    if a.shape[1] != b.shape[1]:
        raise InvalidInputError(f"samples of different dimension: {a.shape}, {b.shape}")
    both = np.vstack([a, b])
    varying = [j for j in range(both.shape[1]) if not np.all(both[:, j] == both[0, j])]
    if len(varying) > 1:
        return None
    return varying[0] if varying else 0


def exact_w1(a: np.ndarray, b: np.ndarray) -> float:
    """Exact W1 between the empirical measures of two samples (equal weights per sample):
    SciPy's sorting solution when the data are one-dimensional, POT otherwise."""
    a, b = _two_d(a), _two_d(b)
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return float("inf")
    col = one_dimensional(a, b)
    if col is not None:
        return float(stats.wasserstein_distance(a[:, col], b[:, col]))
    return wasserstein1(a, b)


def w1_laws(ppf1: Callable[[float], float], ppf2: Callable[[float], float]) -> float:
    """``int_0^1 |ppf1(u) - ppf2(u)| du``: W1 between two one-dimensional laws."""
    value, _ = integrate.quad(lambda u: abs(ppf1(u) - ppf2(u)), 0.0, 1.0, limit=400,
                              epsabs=1e-12, epsrel=1e-10)
    return float(value)


def w1_normals(mu1: float, sd1: float, mu2: float, sd2: float) -> float:
    """W1 between ``N(mu1, sd1^2)`` and ``N(mu2, sd2^2)`` by the quantile integral (the quantile
    functions cross when the sds differ, and W1 then exceeds ``|mu1 - mu2|``)."""
    if sd1 < 0 or sd2 < 0:
        raise InvalidInputError(f"standard deviations must be >= 0, got {sd1}, {sd2}")
    z = stats.norm.ppf
    return w1_laws(lambda u: mu1 + sd1 * z(u), lambda u: mu2 + sd2 * z(u))


def lipschitz_sup(points: np.ndarray, coef: np.ndarray) -> float:
    """``sup_f sum_i coef_i f(points_i)`` over 1-Lipschitz ``f`` with ``f(0) = 0``.

    The positive and negative parts of ``coef`` are two measures; the imbalance ``sum coef`` is
    put at the origin (where every ``f`` vanishes), and by Kantorovich-Rubinstein duality the
    supremum is the optimal transport cost between the two (exact, POT's network simplex).
    """
    import ot

    u = _two_d(points)
    c = np.asarray(coef, dtype=np.float64).ravel()
    if c.shape != (len(u),):
        raise InvalidInputError(f"coef must have one entry per point, got {c.shape} for "
                                f"{len(u)} points")
    pos, neg = np.clip(c, 0, None), np.clip(-c, 0, None)
    s = float(c.sum())
    pts = np.vstack([u, np.zeros((1, u.shape[1]))])
    a, b = np.append(pos, max(-s, 0.0)), np.append(neg, max(s, 0.0))
    total = float(a.sum())
    if total <= 0:
        return 0.0
    ia, ib = a > 0, b > 0
    col = one_dimensional(pts[ia], pts[ib])
    if col is not None:  # on the line: SciPy's sorting solution with weights
        return total * float(stats.wasserstein_distance(pts[ia, col], pts[ib, col], a[ia],
                                                        b[ib]))
    cost = ot.dist(pts[ia], pts[ib], metric="euclidean")
    return total * float(ot.emd2(a[ia] / total, b[ib] / b[ib].sum(), cost,
                                 numItermax=10_000_000))
