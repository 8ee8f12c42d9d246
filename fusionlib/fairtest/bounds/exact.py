"""Exact, certified bounds of a fairness metric over every coupling of two tables.

Used by :mod:`fusionlib.fairtest.bounds.sharp`; the notation is theirs (``q[o, y, yhat]`` internal,
``r[o, g]`` external, ``g = 0`` unprivileged).

**The feasible set is a polymatroid base polytope.** Every metric depends on a coupling only
through ``X[y, yhat] = P(A=u, Y=y, Yhat=yhat)`` (the privileged cells are ``Q - X`` with
``Q = sum_o q[o]``). Per overlap value the unprivileged part ``x[o]`` of a coupling ranges over
``{0 <= x[o] <= q[o], sum x[o] = r[o, 0]}``: the base polytope of the submodular function
``f_o(S) = min(q_o(S), r[o, 0])`` on the four cells ``S``. So ``X = sum_o x[o]`` ranges over the
Minkowski sum, the base polytope of ``f = sum_o f_o`` (Fujishige, *Submodular Functions and
Optimization*, 2005, Thm. 3.22 and Sect. 3.3). Its vertices are the greedy vectors of the
``4! = 24`` orderings of the cells (Edmonds' greedy theorem); the greedy vector of ``f`` is the
sum of the per-level greedy vectors of the same ordering, which gives each vertex's coupling.

**The extremum lies on segments between vertices.** EOD and AOD are linear in ``X`` once
``t = P(Y=+, A=u)`` is fixed (``t`` fixes every denominator). The maximum over the slice
``{t(X) = t}`` sits at a vertex of the slice, which lies on an edge of the polytope; DI is
linear-fractional and DP linear, so theirs sit at vertices. Edges and vertices are covered by
the segments between all pairs of vertices (which lie in the polytope: it is convex), so
``sup F = max over segments of sup F``, exactly.

**Certified search on each segment.** Along a segment every metric is a constant plus a sum
of linear-fractional terms ``c (alpha + beta l) / (gamma + delta l)``, each monotone. On a
sub-interval ``[a, b]`` two upper bounds hold: the sum of each term's larger end value, and the
quadratic ``F(m) + F'(m) d + M d^2 / 2`` with ``M`` the largest second derivative (each term's
is monotone, so at an end). Sub-intervals whose bound exceeds the best value found (at a
midpoint: attained by a coupling) by more than ``tol`` are halved until none is left. The
*certified gap* is the largest bound left minus that attained value: the sharp bound lies
between the reported value and the reported value widened by the gap (up to floating-point
rounding, ~1e-13). A denominator that vanishes at a segment end makes the metric undefined there;
the supremum may then be a limit (approached, not attained), which the search approaches to
within the gap.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

__all__ = ["PolytopeVertices", "polytope_vertices", "metric_terms", "certified_extremum",
           "ZERO"]

#: a probability at most this small counts as 0 (a denominator that vanishes)
ZERO = 1e-12
_ORDERS = np.array(list(itertools.permutations(range(4))))
_N_START = 16  # sub-intervals per segment at the start of the search
_MAX_ROUNDS = 200
_MAX_INTERVALS = 400_000


@dataclass(frozen=True)
class PolytopeVertices:
    """Distinct vertices ``X[k] (4,)`` with their per-level couplings ``parts[k] (n_levels, 4)``
    (cells ordered ``y * 2 + yhat``)."""

    points: np.ndarray
    parts: np.ndarray


def _greedy(q: np.ndarray, r0: np.ndarray) -> np.ndarray:
    """Per-level greedy vectors for every ordering: shape (24, n_levels, 4). In an ordering
    the unprivileged mass ``r0[o]`` fills the cells in turn up to their capacity ``q[o]``."""
    out = np.zeros((len(_ORDERS), *q.shape))
    for k, order in enumerate(_ORDERS):
        filled = np.zeros(len(r0))
        for cell in order:
            take = np.clip(np.minimum(q[:, cell], r0 - filled), 0.0, None)
            out[k, :, cell] = take
            filled = filled + take
    return out


def polytope_vertices(q: np.ndarray, r0: np.ndarray) -> PolytopeVertices:
    """Vertices of the set of ``X`` over all couplings of ``q (n, 4)`` and ``r0 (n,)``."""
    parts = _greedy(np.asarray(q, float), np.asarray(r0, float))
    points = parts.sum(1)
    _, first = np.unique(np.round(points / ZERO).astype(np.int64), axis=0, return_index=True)
    first = np.sort(first)
    return PolytopeVertices(points[first], parts[first])


def metric_terms(metric: str, qa: np.ndarray, pu: float,
                 pp: float) -> tuple[float, list[tuple]]:
    """``F(X) = const + sum_k coef_k (n_k @ X + n0_k) / (d_k @ X + d0_k)`` for ``metric``.

    ``qa (4,)``: the internal cells ``Q[y, yhat]`` (flattened ``y * 2 + yhat``); ``pu``, ``pp``:
    the group sizes ``P(A=u)``, ``P(A=p)`` (positive). Returns ``(const, terms)``, each term
    ``(coef, n, n0, d, d0)``.
    """
    e = np.eye(4)
    neg, pos, fav = e[0] + e[1], e[2] + e[3], e[1] + e[3]  # Y = -, Y = +, Yhat = +
    tpr_u = (e[3], 0.0, pos, 0.0)
    tpr_p = (-e[3], qa[3], -pos, qa[2] + qa[3])
    fpr_u = (e[1], 0.0, neg, 0.0)
    fpr_p = (-e[1], qa[1], -neg, qa[0] + qa[1])
    if metric == "EOD":
        return 0.0, [(1.0, *tpr_u), (-1.0, *tpr_p)]
    if metric == "AOD":
        return 0.0, [(0.5, *tpr_u), (-0.5, *tpr_p), (0.5, *fpr_u), (-0.5, *fpr_p)]
    k = qa[1] + qa[3]  # P(Yhat=+); s = fav @ X = P(Yhat=+, A=u)
    if metric == "DP":  # s / pu - (k - s) / pp: linear
        return -k / pp, [(1.0 / pu + 1.0 / pp, fav, 0.0, np.zeros(4), 1.0)]
    if metric == "DI":  # (s / pu) / ((k - s) / pp) = (pp s) / (pu (k - s))
        return 0.0, [(1.0, pp * fav, 0.0, -pu * fav, pu * k)]
    raise ValueError(f"no terms for metric {metric!r}")


def _coefficients(vertices: PolytopeVertices, terms: list[tuple], pairs: np.ndarray):
    """Per segment and term: ``coef, alpha, beta, gamma, delta`` (shape (n_seg, n_terms))."""
    va, vb = vertices.points[pairs[:, 0]], vertices.points[pairs[:, 1]]
    cols = []
    for coef, n, n0, d, d0 in terms:
        cols.append((np.full(len(pairs), coef), va @ n + n0, (vb - va) @ n,
                     va @ d + d0, (vb - va) @ d))
    return [np.stack(c, axis=1) for c in zip(*cols, strict=True)]


class _Segments:
    """The metric (sign-adjusted to a maximisation) along every segment."""

    def __init__(self, coef, alpha, beta, gamma, delta, const):
        self.c, self.al, self.be, self.ga, self.de, self.const = (coef, alpha, beta, gamma,
                                                                  delta, const)

    def den(self, seg, lam):
        return self.ga[seg] + self.de[seg] * lam[:, None]

    def terms(self, seg, lam):
        """Term values at ``lam``, limits where a denominator vanishes (0/0: slope ratio)."""
        num = self.al[seg] + self.be[seg] * lam[:, None]
        den = self.den(seg, lam)
        with np.errstate(divide="ignore", invalid="ignore"):
            val = self.c[seg] * num / den
            slope = self.c[seg] * self.be[seg] / self.de[seg]
            blow = np.sign(self.c[seg] * num) * np.inf
        zero = den <= ZERO
        return np.where(zero, np.where(np.abs(num) <= ZERO, slope, blow), val)

    def derivatives(self, seg, lam):
        """``F'`` and each term's ``F''`` at ``lam`` (denominators positive)."""
        den = self.den(seg, lam)
        k = self.c[seg] * (self.be[seg] * self.ga[seg] - self.al[seg] * self.de[seg])
        return (k / den**2).sum(1), -2.0 * self.de[seg] * k / den**3


def _upper_bounds(s: _Segments, seg, a, b, ta, tb, fm, m):
    """Certified upper bound of ``F`` on each ``[a, b]`` (see the module docstring)."""
    ub = s.const + np.maximum(ta, tb).sum(1)
    closed = (s.den(seg, a) > ZERO).all(1) & (s.den(seg, b) > ZERO).all(1)
    if closed.any():
        i = np.flatnonzero(closed)
        d1, _ = s.derivatives(seg[i], m[i])
        _, dda = s.derivatives(seg[i], a[i])
        _, ddb = s.derivatives(seg[i], b[i])
        big_m = np.maximum(dda, ddb).sum(1)
        h = (b[i] - a[i]) / 2
        cand = [fm[i] + np.abs(d1) * h + 0.5 * big_m * h**2]
        with np.errstate(divide="ignore", invalid="ignore"):
            d_star = np.clip(np.where(big_m < 0, -d1 / big_m, h), -h, h)
        cand.append(fm[i] + d1 * d_star + 0.5 * big_m * d_star**2)
        ub[i] = np.minimum(ub[i], np.maximum(*cand))
    return ub


@dataclass(frozen=True)
class Extremum:
    """``value`` attained at ``lam`` on segment ``pair``; the supremum is at most
    ``value + gap`` (in the sign-adjusted maximisation)."""

    value: float
    gap: float
    pair: tuple[int, int] | None
    lam: float


def _search(s: _Segments, n_seg: int, tol: float) -> Extremum:
    seg = np.repeat(np.arange(n_seg), _N_START)
    grid = np.linspace(0.0, 1.0, _N_START + 1)
    a, b = np.tile(grid[:-1], n_seg), np.tile(grid[1:], n_seg)
    ta, tb = s.terms(seg, a), s.terms(seg, b)
    if np.isposinf(ta).any() or np.isposinf(tb).any():
        return Extremum(np.inf, 0.0, None, np.nan)
    best, where, outer = -np.inf, (None, np.nan), -np.inf
    ends = [(ta, a), (tb, b)]
    for t_end, lam in ends:  # closed segment ends (vertices) are attained points too
        ok = (s.den(seg, lam) > ZERO).all(1)
        if ok.any():
            f = s.const + t_end[ok].sum(1)
            j = int(np.argmax(f))
            if f[j] > best:
                best, where = float(f[j]), (int(seg[ok][j]), float(lam[ok][j]))
    for _ in range(_MAX_ROUNDS):
        m = (a + b) / 2
        tm = s.terms(seg, m)
        fm = s.const + tm.sum(1)
        j = int(np.argmax(fm))
        if fm[j] > best:
            best, where = float(fm[j]), (int(seg[j]), float(m[j]))
        ub = _upper_bounds(s, seg, a, b, ta, tb, fm, m)
        keep = ub > best + tol
        if (~keep).any():
            outer = max(outer, float(ub[~keep].max()))
        if not keep.any() or keep.sum() * 2 > _MAX_INTERVALS:
            break
        seg, a, b, ta, tb, m, tm = (x[keep] for x in (seg, a, b, ta, tb, m, tm))
        seg = np.concatenate([seg, seg])
        a, b = np.concatenate([a, m]), np.concatenate([m, b])
        ta, tb = np.concatenate([ta, tm]), np.concatenate([tm, tb])
    if keep.any():
        outer = max(outer, float(ub[keep].max()))
    return Extremum(best, max(outer - best, 0.0), where[0], where[1])


def certified_extremum(vertices: PolytopeVertices, metric: str, qa: np.ndarray, pu: float,
                       pp: float, *, sense: str, tol: float):
    """``(value, gap, X-witness parts)`` of the maximum (``sense="max"``) or minimum of
    ``metric`` over the polytope; ``nan`` where the metric is undefined on all of it."""
    if pu <= ZERO or pp <= ZERO:
        return np.nan, np.nan, None
    const, terms = metric_terms(metric, qa, pu, pp)
    k = len(vertices.points)
    pairs = (np.array(list(itertools.combinations(range(k), 2))) if k > 1
             else np.zeros((1, 2), int))
    coef, al, be, ga, de = _coefficients(vertices, terms, pairs)
    sign = 1.0 if sense == "max" else -1.0
    undefined = ((ga <= ZERO) & (ga + de <= ZERO)).any(1)  # a denominator 0 on all of it
    if undefined.all():
        return np.nan, np.nan, None
    keep = ~undefined
    s = _Segments(sign * coef[keep], al[keep], be[keep], ga[keep], de[keep], sign * const)
    ext = _search(s, int(keep.sum()), tol)
    if not np.isfinite(ext.value):
        return sign * ext.value, 0.0, None
    i, j = pairs[keep][ext.pair]
    parts = (1 - ext.lam) * vertices.parts[i] + ext.lam * vertices.parts[j]
    return sign * ext.value, ext.gap, parts
