"""Sharp bounds on DI, DP, AOD and EOD from two tables (seed 002, Section 6, "future work").

Seed 002 audits a classifier ``Yhat = f(internal features)`` trained on the *internal* table
(overlap ``O``, features, label ``Y``) for fairness with respect to a protected attribute ``A``
held only by the *external* table (``O`` and ``A``). Its estimators pick one joint distribution
by a structural assumption; this module instead returns the lowest and highest value of each
metric over **every** joint distribution consistent with both tables. This is our extension
(the paper names it as future work and computes no bounds).

Reduction (why the problem is small). Every metric depends on the joint only through
``p(g, y, yhat)`` (``g`` = privileged indicator of ``A``). Let ``q(o, y, yhat)`` be the internal
table's distribution (``yhat`` is computable there: the classifier sees internal columns only)
and ``r(o, g)`` the external one's. The joints consistent with both tables, projected onto
``(o, g, y, yhat)``, are exactly the couplings ``pi(o, g, y, yhat) >= 0`` with
``sum_g pi = q`` and ``sum_{y, yhat} pi = r``: any such ``pi`` lifts to a full joint by drawing the
remaining internal columns given ``(o, y, yhat)`` and the external ones given ``(o, g)``. So the
bounds below are *sharp*: every value between them is the metric of some joint.

Metrics: DI, AOD and EOD as in seed 002 (Eqs. 1, 6, 7, via
:func:`fusionlib.metrics.fairness.metrics_from_counts`) and the demographic-parity difference
``DP = P(Yhat=+ | A=u) - P(Yhat=+ | A=p)`` (the difference form of DI).

Solvers:

- **EOD, AOD: exact, certified** (:mod:`fusionlib.fairtest.bounds.exact`). The set of
  ``P(A=u, Y, Yhat)`` over all couplings is a polymatroid base polytope with at most 24 vertices
  (greedy vectors); the extremum lies on the segments between them, each searched by branch and
  bound with certified upper bounds. Each bound comes with its *certified gap*: the sharp bound
  lies between the reported value (attained by the returned witness coupling) and that value
  widened by the gap.
- **DI** by the **Charnes-Cooper transformation** (one LP per bound; ``inf`` when the privileged
  favourable rate can be 0) and **DP** by one LP per bound (it is linear in ``pi``: the group
  sizes are fixed by the external table). Their gap is the distance from the LP value to the
  certified interval of the same vertex search (an independent route; ~1e-12).
- :func:`fusionlib.fairtest.bounds.lp.profile_grid_bound`, the earlier search (a grid of LPs
  over ``t = P(Y=+, A=u)`` plus a local refinement), is kept as a cross-check (``n_grid``): its
  values are attained, so never beyond the exact bounds, and it shows what a grid misses.

Bad input: margins that are not probabilities (negative, NaN, not summing to 1 within
``atol``) are refused; tables whose overlap margins differ by more than ``atol`` admit no joint
(:class:`InconsistentMarginsError`, naming the overlap value); within ``atol`` each external row
is rescaled to the internal overlap probability before bounding. A bound is ``nan`` where the
metric is undefined for every coupling (e.g. every external row privileged, or no favourable
label for EOD/AOD).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fusionlib.checks import check_choice, check_positive, check_positive_int
from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.bounds.exact import certified_extremum, polytope_vertices
from fusionlib.fairtest.bounds.lp import (
    InconsistentMarginsError,
    LinearProgram,
    profile_grid_bound,
    selection_bounds,
)
from fusionlib.metrics.fairness import metrics_from_counts

__all__ = ["BOUND_METRICS", "PAPER_METRICS", "MARGIN_ATOL", "InconsistentMarginsError",
           "CouplingMargins", "MetricBounds", "check_consistent", "coupling_margins",
           "metric_bounds", "fairness_bounds", "coupling_metrics", "metrics_of_counts"]

#: the metrics bounded here: Table 9's order, then DP
BOUND_METRICS: tuple[str, ...] = ("AOD", "DI", "EOD", "DP")
#: the metrics seed 002 reports (Table 9)
PAPER_METRICS: tuple[str, ...] = ("AOD", "DI", "EOD")
#: default largest allowed gap between the two tables' overlap probabilities (and |sum - 1|)
MARGIN_ATOL = 1e-9


@dataclass(frozen=True)
class CouplingMargins:
    """The two tables reduced to what the metrics need.

    Attributes
    ----------
    levels : tuple
        Overlap values, in the order of the first axis below.
    internal : ndarray, shape (n_levels, 2, 2)
        ``q[o, y, yhat]``: probabilities from the internal table (sum 1).
    external : ndarray, shape (n_levels, 2)
        ``r[o, g]``: probabilities from the external table (sum 1); ``g = 1`` privileged.
    atol : float
        Largest allowed difference between the tables' overlap probabilities (and between
        each table's total and 1); :func:`metric_bounds` uses it.
    """

    levels: tuple
    internal: np.ndarray
    external: np.ndarray
    atol: float = MARGIN_ATOL


@dataclass(frozen=True)
class MetricBounds:
    """Sharp interval of one metric, its certified gaps and the couplings
    ``pi[o, g, y, yhat]`` attaining it.

    The sharp lower bound lies in ``[lower - lower_gap, lower]`` and the sharp upper bound in
    ``[upper, upper + upper_gap]`` (up to floating-point rounding).
    """

    metric: str
    lower: float
    upper: float
    method: str
    lower_gap: float = np.nan
    upper_gap: float = np.nan
    witnesses: dict[str, np.ndarray | None] = field(default_factory=dict, repr=False)


def _binary(name: str, x: object, n: int) -> np.ndarray:
    arr = np.asarray(x)
    if arr.shape != (n,):
        raise InvalidInputError(f"{name} must be one-dimensional of length {n}, got {arr.shape}")
    if arr.dtype != bool:
        if pd.isna(arr).any():
            raise InvalidInputError(f"{name} has missing values (NaN); drop those rows first")
        if not np.isin(arr, [0, 1]).all():
            raise InvalidInputError(f"{name} must be binary (bool or 0/1)")
    return arr.astype(bool)


def _overlap(name: str, x: object) -> pd.Series:
    s = pd.Series(np.asarray(x, dtype=object))
    if len(s) == 0:
        raise InvalidInputError(f"{name} is empty; both tables need rows")
    if s.isna().any():
        raise InvalidInputError(f"{name} has {int(s.isna().sum())} missing values (NaN); drop "
                                "or impute those rows before bounding")
    return s.astype(str)


def coupling_margins(overlap_internal: object, y: object, yhat: object,
                     overlap_external: object, privileged: object, *,
                     atol: float = MARGIN_ATOL) -> CouplingMargins:
    """Reduce an internal and an external table to ``q[o, y, yhat]`` and ``r[o, g]``.

    Parameters
    ----------
    overlap_internal, y, yhat : array-like, length n_internal
        Overlap value, true label (1 = favourable) and prediction (1 = favourable) per internal row.
    overlap_external, privileged : array-like, length n_external
        Overlap value and privileged indicator per external row.
    atol : float
        Largest allowed difference between the two tables' overlap probabilities; stored in
        the result, so :func:`metric_bounds` applies the same tolerance.

    Raises
    ------
    InconsistentMarginsError
        An overlap value occurs in one table only, or its probability differs between the tables
        by more than ``atol``: no joint distribution has both tables as margins.
    """
    o_int, o_ext = _overlap("overlap_internal", overlap_internal), _overlap(
        "overlap_external", overlap_external)
    y, yhat = _binary("y", y, len(o_int)), _binary("yhat", yhat, len(o_int))
    g = _binary("privileged", privileged, len(o_ext))
    only = sorted(set(o_int) ^ set(o_ext))
    if only:
        raise InconsistentMarginsError(
            f"overlap values {only} occur in one table only: the constraint sum_u pi(o, u, g) = "
            "r(o, g) (or its internal twin) cannot hold for them; use tables with the same "
            "overlap categories (merge or drop the rare ones in both)")
    levels = tuple(sorted(set(o_int)))
    code_i = pd.Categorical(o_int, categories=levels).codes
    code_e = pd.Categorical(o_ext, categories=levels).codes
    q = np.bincount(code_i * 4 + y * 2 + yhat, minlength=4 * len(levels)).reshape(-1, 2, 2)
    r = np.bincount(code_e * 2 + g, minlength=2 * len(levels)).reshape(-1, 2)
    margins = CouplingMargins(levels, q / len(o_int), r / len(o_ext),
                              check_positive("atol", atol, allow_zero=True))
    check_consistent(margins)
    return margins


def check_consistent(margins: CouplingMargins, *, atol: float | None = None) -> None:
    """Raise :class:`InconsistentMarginsError` naming the first overlap value whose
    internal and external probabilities differ by more than ``atol`` (default: the margins'
    own ``atol``)."""
    atol = margins.atol if atol is None else atol
    p_int = margins.internal.sum((1, 2))
    p_ext = margins.external.sum(1)
    gap = np.abs(p_int - p_ext)
    if (gap > atol).any():
        i = int(np.argmax(gap))
        raise InconsistentMarginsError(
            f"the tables disagree on the overlap margin: P(O={margins.levels[i]!r}) is "
            f"{p_int[i]:.6g} in the internal table and {p_ext[i]:.6g} in the external one; the "
            f"constraints sum_(g) pi = q(o={margins.levels[i]!r}, .) and sum_(y,yhat) pi = "
            f"r(o={margins.levels[i]!r}, .) are infeasible together (max gap {gap.max():.3g}, "
            f"atol {atol:g}). Bounds need tables drawn from one population with equal overlap "
            "margins")


def _validated(margins: CouplingMargins) -> CouplingMargins:
    """Probabilities checked (shape, sign, total 1 within ``atol``, equal overlap margins);
    each external row rescaled to the internal overlap probability (a change <= ``atol``)."""
    lp = LinearProgram(margins)  # shapes, NaN, negative values
    atol = check_positive("atol", margins.atol, allow_zero=True)
    for name, arr in (("internal", lp.q), ("external", lp.r)):
        if abs(arr.sum() - 1.0) > atol:
            raise InvalidInputError(
                f"the {name} margins sum to {arr.sum():.12g}, not 1 (atol {atol:g}): pass "
                "probabilities, e.g. counts / counts.sum(), or coupling_margins(...) on the rows")
    check_consistent(margins)
    mass_q, mass_r = lp.q.sum((1, 2)), lp.r.sum(1)
    share = lp.r.sum(0) / lp.r.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(mass_r[:, None] > 0, lp.r * (mass_q / mass_r)[:, None],
                     mass_q[:, None] * share)
    return dataclasses.replace(margins, internal=lp.q, external=r)


def metrics_of_counts(p: np.ndarray) -> dict[str, np.ndarray]:
    """:data:`BOUND_METRICS` of counts or probabilities ``p[..., g, y, yhat]`` (``nan`` where
    undefined; DP needs both groups non-empty)."""
    p = np.asarray(p, float)
    out = dict(metrics_from_counts(p, PAPER_METRICS))
    n, fav = p.sum((-1, -2)), p[..., :, 1].sum(-1)
    sel = np.full(n.shape, np.nan)
    np.divide(fav, n, out=sel, where=n > 0)
    out["DP"] = sel[..., 0] - sel[..., 1]
    return out


def coupling_metrics(pi: np.ndarray) -> dict[str, float]:
    """DI, AOD, EOD, DP of a coupling ``pi[o, g, y, yhat]`` (or of ``p[g, y, yhat]``)."""
    pi = np.asarray(pi, float)
    p = pi.sum(0) if pi.ndim == 4 else pi
    return {k: float(v) for k, v in metrics_of_counts(p).items()}


def _gap(value: float, inner: float, gap: float, sign: float) -> float:
    """Largest distance from ``value`` to the certified interval [inner, inner + sign*gap]."""
    if np.isnan(value) or np.isnan(inner):
        return 0.0 if np.isnan(value) and np.isnan(inner) else np.inf
    if np.isinf(value) or np.isinf(inner):
        return 0.0 if value == inner else np.inf
    return float(max(abs(value - inner), abs(value - inner - sign * gap)))


def _witness(q: np.ndarray, parts: np.ndarray | None) -> np.ndarray | None:
    if parts is None:
        return None
    x = parts.reshape(q.shape)
    return np.stack([x, q - x], axis=1)  # pi[o, g, y, yhat]


def metric_bounds(margins: CouplingMargins, metric: str, *, tol: float = 1e-10) -> MetricBounds:
    """Sharp lower and upper value of ``metric`` over every coupling of ``margins``.

    ``tol``: the certified gap the search of EOD and AOD stops at (absolute). A bound is ``nan``
    when the metric is undefined for every coupling (e.g. every external row privileged, or no
    favourable label) and ``inf`` when it is unbounded (DI with a possibly empty privileged
    favourable rate). Raises :class:`~fusionlib.errors.InvalidInputError` for margins that
    are not probabilities and :class:`InconsistentMarginsError` for tables that disagree.
    """
    check_choice("metric", metric, BOUND_METRICS)
    tol = check_positive("tol", tol)
    m = _validated(margins)
    lp = LinearProgram(m)
    q, pu, pp = m.internal, *lp.p_group
    if pu <= 0 or pp <= 0:  # a group is empty: no metric is defined
        return MetricBounds(metric, np.nan, np.nan, "undefined: an empty group", np.nan,
                            np.nan, {"lower": None, "upper": None})
    vertices = polytope_vertices(q.reshape(-1, 4), m.external[:, 0])
    cert = [certified_extremum(vertices, metric, q.reshape(-1, 4).sum(0), pu, pp, sense=s,
                               tol=tol) for s in ("min", "max")]
    if metric in ("DI", "DP"):
        values, wit = selection_bounds(lp, metric)
        gaps = [_gap(v, c[0], c[1], sg) for v, c, sg in zip(values, cert, (-1, 1), strict=True)]
        method = ("Charnes-Cooper LP" if metric == "DI" else "LP") + "; gap from the vertex search"
    else:
        values, gaps = [c[0] for c in cert], [c[1] for c in cert]
        wit = [_witness(q, c[2]) for c in cert]
        method = "exact: polytope vertices + certified search on the segments between them"
    return MetricBounds(metric, float(values[0]), float(values[1]), method, float(gaps[0]),
                        float(gaps[1]), {"lower": wit[0], "upper": wit[1]})


def fairness_bounds(margins: CouplingMargins, metrics: tuple[str, ...] = BOUND_METRICS, *,
                    tol: float = 1e-10, n_grid: int | None = None) -> pd.DataFrame:
    """One row per metric: ``metric, lower, upper, lower_gap, upper_gap, method``.

    With ``n_grid``, also ``grid_lower, grid_upper``: the EOD/AOD bounds of the
    ``n_grid``-point LP grid search with refinement
    (:func:`~fusionlib.fairtest.bounds.lp.profile_grid_bound`; ``nan`` for DI, DP), a
    cross-check that cannot lie beyond the exact interval.
    """
    rows = []
    for m in metrics:
        b = metric_bounds(margins, m, tol=tol)
        row = {"metric": m, "lower": b.lower, "upper": b.upper, "lower_gap": b.lower_gap,
               "upper_gap": b.upper_gap, "method": b.method}
        if n_grid is not None:
            row.update(_grid_row(margins, m, check_positive_int("n_grid", n_grid)))
        rows.append(row)
    return pd.DataFrame(rows)


def _grid_row(margins: CouplingMargins, metric: str, n_grid: int) -> dict[str, float]:
    lp = LinearProgram(_validated(margins))
    if metric not in ("EOD", "AOD") or min(lp.p_group) <= 0:
        return {"grid_lower": np.nan, "grid_upper": np.nan}
    return {f"grid_{side}": profile_grid_bound(lp, metric, sense, n_grid)[0]
            for side, sense in (("lower", "min"), ("upper", "max"))}
