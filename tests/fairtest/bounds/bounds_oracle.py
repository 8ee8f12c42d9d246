"""An independent oracle for the fairness bounds: exhaustive search over couplings.

Shares no code with :mod:`fusionlib.fairtest.bounds.sharp` or its solvers. It uses only convex
geometry: (1) the couplings of one overlap value form a polytope in ``pi[o] (2, 2, 2)``; its
vertices are found by trying every basis of its equality constraints (8 variables, rank 5:
56 bases); (2) the couplings of several values are the product of those polytopes, so the
vertices of the set of ``X = P(A=u, Y, Yhat)`` are among the sums of per-value vertices (pruned
to their convex hull with Qhull after each value; all kept where the hull is flat); (3) a metric
that is linear once ``P(Y=+, A=u)`` is fixed, or linear-fractional, takes its extremes on the
edges of that set, so every segment between two vertices is searched: 129 sample points plus
two next to each end, then a golden-section search between the neighbours of the best samples.
The metric itself comes from :func:`fusionlib.metrics.fairness.metrics_from_counts` (DP from
the selection rates here).
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.spatial import ConvexHull, QhullError

from fusionlib.metrics.fairness import metrics_from_counts

_LAM = np.concatenate([[0.0, 1e-9], np.linspace(0, 1, 129)[1:-1], [1 - 1e-9, 1.0]])


def _level_vertices(q: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Vertices of {pi >= 0: sum_g pi[g] = q (2, 2), sum_(y,yhat) pi[g] = r (2,)} as pi[0]."""
    rows, rhs = [], []
    for c in range(4):  # pi[0, c] + pi[1, c] = q[c]
        row = np.zeros(8)
        row[c] = row[4 + c] = 1
        rows.append(row)
        rhs.append(q.ravel()[c])
    rows.append(np.r_[np.ones(4), np.zeros(4)])
    rhs.append(r[0])
    a, b = np.array(rows), np.array(rhs)
    out = []
    for basis in itertools.combinations(range(8), 5):
        sub = a[:, basis]
        if abs(np.linalg.det(sub)) < 1e-12:
            continue
        x = np.zeros(8)
        x[list(basis)] = np.linalg.solve(sub, b)
        if x.min() >= -1e-13:
            out.append(np.clip(x[:4], 0, None))
    return np.unique(np.round(np.array(out), 14), axis=0)


def x_vertices(q: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Candidate vertices of the set of X over all couplings of q (n, 2, 2), r (n, 2)."""
    pts = np.zeros((1, 4))
    for o in range(len(q)):
        v = _level_vertices(q[o], r[o])
        pts = np.unique(np.round((pts[:, None] + v[None]).reshape(-1, 4), 14), axis=0)
        if o >= 1 and len(pts) > 8:
            try:
                pts = pts[ConvexHull(pts[:, 1:]).vertices]
            except QhullError:  # flat: keep every point (a superset of the vertices)
                pass
    return pts


def metric_values(metric: str, x: np.ndarray, qa: np.ndarray) -> np.ndarray:
    """The metric at points ``x (..., 4)`` (unprivileged cells), privileged ``qa - x``."""
    p = np.stack([x, qa - x], axis=-2).reshape(*x.shape[:-1], 2, 2, 2)
    p = np.where(p < 1e-13, 0.0, p)  # rounding: a cell of 1e-16 is an empty cell
    if metric == "DP":
        n, fav = p.sum((-1, -2)), p[..., :, 1].sum(-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            sel = np.where(n > 0, fav / np.where(n > 0, n, 1), np.nan)
        return sel[..., 0] - sel[..., 1]
    return np.asarray(metrics_from_counts(p, [metric])[metric], float)


def _golden(metric, va, vb, lo, hi, qa, sign, iters: int = 90) -> np.ndarray:
    """Golden-section search for the maximum of ``sign * metric`` on each segment piece
    ``[lo, hi]`` (vectorised over pieces); returns the best value seen per piece."""
    phi = (np.sqrt(5) - 1) / 2

    def f(lam):
        v = sign * metric_values(metric, va + lam[:, None] * (vb - va), qa)
        return np.where(np.isnan(v), -np.inf, v)

    c, d = hi - phi * (hi - lo), lo + phi * (hi - lo)
    fc, fd = f(c), f(d)
    best = np.maximum(fc, fd)
    for _ in range(iters):
        left = fc >= fd  # the maximum lies in [lo, d]
        hi, lo = np.where(left, d, hi), np.where(left, lo, c)
        c, d = np.where(left, hi - phi * (hi - lo), d), np.where(left, c, lo + phi * (hi - lo))
        new = f(np.where(left, c, d))
        fc, fd = np.where(left, new, fd), np.where(left, fc, new)
        best = np.maximum(best, new)
    return best


def oracle_bounds(metric: str, q: np.ndarray, r: np.ndarray, *, top: int = 16):
    """``(lowest, highest)`` value of ``metric`` over every coupling (nan: never defined)."""
    q, r = np.asarray(q, float), np.asarray(r, float)
    qa = q.reshape(len(q), 4).sum(0)
    pts = x_vertices(q, r)
    pairs = np.array(list(itertools.combinations(range(len(pts)), 2)) or [(0, 0)])
    va, vb = pts[pairs[:, 0]], pts[pairs[:, 1]]
    seg = va[:, None] + _LAM[None, :, None] * (vb - va)[:, None]
    vals = metric_values(metric, seg, qa)
    if np.isnan(vals).all():
        return np.nan, np.nan
    out = []
    for sign in (-1.0, 1.0):
        v = np.where(np.isnan(vals), -np.inf, sign * vals)
        i, j = np.unravel_index(np.argsort(v, axis=None)[::-1][:top], v.shape)
        lo, hi = _LAM[np.maximum(j - 1, 0)], _LAM[np.minimum(j + 1, len(_LAM) - 1)]
        refined = _golden(metric, va[i], vb[i], lo, hi, qa, sign)
        out.append(sign * max(float(v.max()), float(refined.max())))
    return out[0], out[1]
