"""Precision, recall, density and coverage (Naeem et al. 2020, "Reliable fidelity and diversity
metrics for generative models"), Euclidean, ``k = 5`` by default.

With real records ``X_1..X_N``, fake records ``Y_1..Y_M`` and ``NND_k(X_i)`` the distance from
``X_i`` to its ``k``-th nearest *other* real record (``NND_k(Y_j)`` likewise among fakes), and
the ball ``B(c, r) = {p : |p - c| < r}``:

- precision = ``(1/M) sum_j 1[Y_j in some B(X_i, NND_k(X_i))]`` (fakes inside the real manifold);
- recall = ``(1/N) sum_i 1[X_i in some B(Y_j, NND_k(Y_j))]`` (reals inside the fake manifold);
- density = ``(1/(k M)) sum_j sum_i 1[Y_j in B(X_i, NND_k(X_i))]`` (may exceed 1);
- coverage = ``(1/N) sum_i 1[some Y_j in B(X_i, NND_k(X_i))]``.

The ball is **open** (``<``), as in the authors' reference code (the ``prdc`` package compares
``distance < radius``); the paper does not say. With it, comparing a set with itself (no
duplicate records) gives precision = recall = coverage = density = 1 exactly: ``X_i``'s ball
holds ``X_i`` and its ``k - 1`` nearer neighbours, but not the ``k``-th on its boundary. (A closed
ball would give density ``(k + 1) / k``.)

Computation: radii come from :func:`~fusionlib.metrics.coverage.knn_distances` (exact
distances). Ball membership is found over ``chunk x chunk`` tiles of squared distances from the
BLAS identity ``|a|^2 + |b|^2 - 2 a.b``; every pair within a rounding margin of a radius is then
re-measured exactly with :func:`~fusionlib.metrics.coverage.row_distances` (the same formula
as the radii), so boundary cases are decided exactly and memory stays ``O(chunk^2)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fusionlib.checks import check_positive_int
from fusionlib.metrics.coverage import (
    check_k,
    check_pair,
    knn_distances,
    row_distances,
    single_thread_blas,
)

__all__ = ["PRDC", "DEFAULT_K", "knn_radii", "prdc"]

DEFAULT_K = 5
_CHUNK = 2048
_MARGIN = 1e-9  # relative rounding margin of the BLAS squared distances (see _ball_hits)
_CANDIDATES = 1 << 16  # candidate pairs re-measured at once


@dataclass(frozen=True)
class PRDC:
    """Precision, recall, density and coverage of :func:`prdc` (all in [0, 1] but density)."""

    precision: float
    recall: float
    density: float
    coverage: float


def knn_radii(x: np.ndarray, k: int) -> np.ndarray:
    """Distance from each row of ``x`` (shape ``(n, d)``) to its ``k``-th nearest other row.

    Returns an array of shape ``(n,)``. The ``k + 1`` nearest rows of ``x`` in ``x`` include
    ``x_i`` itself at distance 0 (or a duplicate, at the same distance), so the ``(k + 1)``-th
    distance is the ``k``-th to another record.
    """
    return knn_distances(x, x, k + 1)[0][:, k]


def _ball_hits(centres: np.ndarray, radii: np.ndarray, points: np.ndarray,
               chunk: int = _CHUNK) -> tuple[np.ndarray, np.ndarray]:
    """Open-ball membership counts of ``points`` in the balls ``B(centres_i, radii_i)``.

    Returns
    -------
    counts : ndarray of int, shape (n_centres,)
        Points strictly inside each ball.
    inside : ndarray of bool, shape (n_points,)
        Whether each point lies strictly inside at least one ball.
    """
    c_sq = np.einsum("ij,ij->i", centres, centres)
    p_sq = np.einsum("ij,ij->i", points, points)
    # The BLAS identity errs by a few ulps of |a|^2 + |b|^2; pairs within this margin of the
    # radius are candidates and get re-measured exactly.
    margin = _MARGIN * (c_sq.max() + p_sq.max()) + np.finfo(float).tiny
    counts = np.zeros(len(centres), dtype=np.int64)
    inside = np.zeros(len(points), dtype=bool)
    minus_2c = -2.0 * centres
    for i in range(0, len(centres), chunk):
        r_sq = radii[None, i:i + chunk] ** 2 + margin
        for j in range(0, len(points), chunk):
            d_sq = points[j:j + chunk] @ minus_2c[i:i + chunk].T  # (points, centres) tile
            d_sq += p_sq[j:j + chunk, None]
            d_sq += c_sq[None, i:i + chunk]
            jj, ii = np.nonzero(d_sq <= r_sq)
            for s in range(0, len(ii), _CANDIDATES):  # bounds the (candidates, d) temporaries
                ci, pj = ii[s:s + _CANDIDATES] + i, jj[s:s + _CANDIDATES] + j
                hit = row_distances(centres[ci], points[pj]) < radii[ci]
                counts += np.bincount(ci[hit], minlength=len(centres))
                inside[pj[hit]] = True
    return counts, inside


def prdc(real: object, fake: object, k: int = DEFAULT_K, *, chunk: int = _CHUNK) -> PRDC:
    """Precision, recall, density and coverage of ``fake`` against ``real`` (Naeem et al. 2020).

    Parameters
    ----------
    real : array_like, shape (N, d)
        Real records (numeric, finite), ``N >= k + 1``.
    fake : array_like, shape (M, d)
        Synthetic records, same ``d`` columns, ``M >= k + 1``.
    k : int, default 5
        Neighbourhood size of the radii ``NND_k``.
    chunk : int, default 2048
        Tile side of the ball queries (memory ``O(chunk^2)``; the result does not depend on it).

    Returns
    -------
    PRDC
        ``precision``, ``recall``, ``coverage`` in [0, 1] (1 is best); ``density`` >= 0, about 1
        when ``fake`` follows the real distribution.
    """
    x, y = check_pair("real", real, "fake", fake)
    k = check_k(k, len(x), "real", others=True)
    check_k(k, len(y), "fake", others=True)
    chunk = check_positive_int("chunk", chunk)
    centre = x.mean(axis=0)  # distances are unchanged; smaller norms, smaller BLAS rounding
    x, y = x - centre, y - centre
    real_radii, fake_radii = knn_radii(x, k), knn_radii(y, k)
    with single_thread_blas():
        counts, fake_inside = _ball_hits(x, real_radii, y, chunk)
        _, real_inside = _ball_hits(y, fake_radii, x, chunk)
    return PRDC(precision=float(fake_inside.mean()), recall=float(real_inside.mean()),
                density=float(counts.sum() / (k * len(y))), coverage=float((counts > 0).mean()))
