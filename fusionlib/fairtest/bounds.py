"""Sharp bounds on DI, AOD and EOD from two tables (seed 002, Section 6, "future work").

Seed 002 audits a classifier ``Yhat = f(internal features)`` trained on the *internal* table
(overlap ``O``, features, label ``Y``) for fairness with respect to a protected attribute ``A``
held only by the *external* table (``O`` and ``A``). Its estimators pick one joint distribution
by a structural assumption; this module instead returns the lowest and highest value of each
metric over **every** joint distribution consistent with both tables.

Reduction (why the problem is small). Every metric depends on the joint only through
``p(g, y, yhat)`` (``g`` = privileged indicator of ``A``). Let ``q(o, y, yhat)`` be the internal
table's distribution (``yhat`` is computable there: the classifier sees internal columns only)
and ``r(o, g)`` the external one's. The joints consistent with both tables, projected onto
``(o, g, y, yhat)``, are exactly the couplings ``pi(o, g, y, yhat) >= 0`` with
``sum_g pi = q`` and ``sum_{y, yhat} pi = r``: any such ``pi`` lifts to a full joint by drawing the
remaining internal columns given ``(o, y, yhat)`` and the external ones given ``(o, g)``. So the
bounds below are *sharp*: every value between them (they are attained by the returned witness
couplings, and the feasible set is convex and connected) is the metric of some joint.

Solvers (all linear programs with ``scipy.optimize.linprog(method="highs")``):

- **DI** is a ratio of two linear functions of ``pi`` (``P(Yhat=+, A=u) / P(A=u)`` over
  ``P(Yhat=+, A=p) / P(A=p)``): we use the **Charnes-Cooper transformation**, which turns the
  linear-fractional program into one LP per bound, exact to solver precision. A bisection over
  LPs would need ~30 LPs per bound for 1e-9 and only brackets the value; Charnes-Cooper needs
  one. When the privileged favourable rate can be 0 the upper bound is ``inf`` (the LP is
  unbounded) and reported as such.
- **EOD** and **AOD** are differences of rates whose *denominators* ``P(Y=+, A=g)`` and
  ``P(Y=-, A=g)`` also move with ``pi``: they are sums of linear-fractional terms, not one ratio.
  Fixing ``t = P(Y=+, A=u)`` fixes all four denominators (the others are ``P(Y=+) - t``,
  ``P(A=u) - t`` and ``P(Y=-) - P(A=u) + t``, all known), and the metric becomes linear: one LP
  per ``t``. The sharp bound is the extremum of that *profile* over ``t`` in its feasible range
  (itself two LPs): a grid of LPs followed by a bounded scalar refinement around the best grid
  point. The value is attained by its witness coupling (so it is never beyond the sharp bound)
  and the tests check against brute-force enumeration that nothing lies beyond it.

Inconsistent tables (the overlap margins ``sum q`` and ``sum r`` differ) make the LP infeasible:
:func:`coupling_margins` checks this first and raises :class:`InconsistentMarginsError` naming the
overlap value whose constraint fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fusionlib.checks import check_choice, check_positive_int
from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.bounds_lp import InconsistentMarginsError, LinearProgram
from fusionlib.metrics.fairness import metrics_from_counts

__all__ = ["BOUND_METRICS", "InconsistentMarginsError", "CouplingMargins", "MetricBounds",
           "check_consistent", "coupling_margins", "metric_bounds", "fairness_bounds",
           "coupling_metrics"]

#: the metrics bounded here, in Table 9's order
BOUND_METRICS: tuple[str, ...] = ("AOD", "DI", "EOD")


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
    """

    levels: tuple
    internal: np.ndarray
    external: np.ndarray


@dataclass(frozen=True)
class MetricBounds:
    """Sharp interval of one metric and the couplings ``pi[o, g, y, yhat]`` attaining it."""

    metric: str
    lower: float
    upper: float
    method: str
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
                     atol: float = 1e-9) -> CouplingMargins:
    """Reduce an internal and an external table to ``q[o, y, yhat]`` and ``r[o, g]``.

    Parameters
    ----------
    overlap_internal, y, yhat : array-like, length n_internal
        Overlap value, true label (1 = favourable) and prediction (1 = favourable) per internal row.
    overlap_external, privileged : array-like, length n_external
        Overlap value and privileged indicator per external row.
    atol : float
        Largest allowed difference between the two tables' overlap probabilities.

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
    margins = CouplingMargins(levels, q / len(o_int), r / len(o_ext))
    check_consistent(margins, atol=atol)
    return margins


def check_consistent(margins: CouplingMargins, *, atol: float = 1e-9) -> None:
    """Raise :class:`InconsistentMarginsError` naming the first overlap value whose
    internal and external probabilities differ by more than ``atol``."""
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


def coupling_metrics(pi: np.ndarray) -> dict[str, float]:
    """DI, AOD, EOD of a coupling ``pi[o, g, y, yhat]`` (or of ``p[g, y, yhat]``)."""
    pi = np.asarray(pi, float)
    p = pi.sum(0) if pi.ndim == 4 else pi
    return {k: float(v) for k, v in metrics_from_counts(p, BOUND_METRICS).items()}


def _di_bounds(lp: LinearProgram) -> MetricBounds:
    pu, pp = lp.p_group
    num = lp.marginal_vector(g=0, yhat=1) / pu
    den = lp.marginal_vector(g=1, yhat=1) / pp
    lo, w_lo = lp.fractional(num, den, sense="min")
    hi, w_hi = lp.fractional(num, den, sense="max")
    return MetricBounds("DI", lo, hi, "Charnes-Cooper LP", {"lower": w_lo, "upper": w_hi})


def _profile_objective(lp: LinearProgram, metric: str, t: float) -> np.ndarray:
    """The metric as a linear function of ``pi`` once ``t = P(Y=+, A=u)`` is fixed."""
    pu, _ = lp.p_group
    p1 = lp.p_label
    a1 = lp.marginal_vector(g=0, y=1, yhat=1)
    eod = a1 * (1 / t + 1 / (p1 - t))  # a1/t - (K1 - a1)/(P1 - t), constant dropped
    if metric == "EOD":
        return eod
    a0 = lp.marginal_vector(g=0, y=0, yhat=1)
    t0, t0p = pu - t, (1 - p1) - (pu - t)
    return 0.5 * (eod + a0 * (1 / t0 + 1 / t0p))


def _profile_constant(lp: LinearProgram, metric: str, t: float) -> float:
    pu, _ = lp.p_group
    p1 = lp.p_label
    const = -lp.internal_total(y=1, yhat=1) / (p1 - t)
    if metric == "EOD":
        return const
    return 0.5 * (const - lp.internal_total(y=0, yhat=1) / ((1 - p1) - (pu - t)))


def _profile_value(lp: LinearProgram, metric: str, t: float, sense: str):
    c = _profile_objective(lp, metric, t)
    value, pi = lp.optimise(c, sense=sense, fix=(lp.marginal_vector(g=0, y=1), t))
    return value + _profile_constant(lp, metric, t), pi


def _t_range(lp: LinearProgram, metric: str) -> tuple[float, float]:
    """Feasible ``t`` where every denominator of ``metric`` is positive (open ends nudged)."""
    tv = lp.marginal_vector(g=0, y=1)
    lo, _ = lp.optimise(tv, sense="min")
    hi, _ = lp.optimise(tv, sense="max")
    pu, p1 = lp.p_group[0], lp.p_label
    lo_ok, hi_ok = max(lo, 0.0), min(hi, p1)
    if metric == "AOD":
        lo_ok, hi_ok = max(lo_ok, pu - (1 - p1)), min(hi_ok, pu)
    eps = 1e-7 * max(hi - lo, 1e-12)
    lo_ok, hi_ok = lo_ok + eps, hi_ok - eps
    if hi_ok < lo_ok:
        return np.nan, np.nan
    return lo_ok, hi_ok


def _profile_bound(lp: LinearProgram, metric: str, sense: str, n_grid: int):
    from scipy.optimize import minimize_scalar

    lo, hi = _t_range(lp, metric)
    if np.isnan(lo):
        return np.nan, None
    sign = 1.0 if sense == "max" else -1.0
    grid = np.linspace(lo, hi, n_grid) if hi > lo else np.array([lo])
    vals = [_profile_value(lp, metric, t, sense) for t in grid]
    best = int(np.argmax([sign * v for v, _ in vals]))
    value, pi = vals[best]
    if len(grid) > 2:
        a, b = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
        res = minimize_scalar(lambda t: -sign * _profile_value(lp, metric, t, sense)[0],
                              bounds=(a, b), method="bounded",
                              options={"xatol": 1e-10 * max(hi - lo, 1e-12)})
        if -sign * res.fun > sign * value:
            value, pi = _profile_value(lp, metric, float(res.x), sense)
    return float(value), pi


def metric_bounds(margins: CouplingMargins, metric: str, *, n_grid: int = 41) -> MetricBounds:
    """Sharp lower and upper value of ``metric`` over every coupling of ``margins``.

    ``n_grid``: LPs on the grid of the profile search (EOD, AOD; unused for DI).
    A bound is ``nan`` when the metric is undefined for every coupling (e.g. no favourable
    label at all) and ``inf`` when it is unbounded (DI with a possibly empty privileged
    favourable rate).
    """
    check_choice("metric", metric, BOUND_METRICS)
    n_grid = check_positive_int("n_grid", n_grid)
    lp = LinearProgram(margins)  # validates shapes and values
    check_consistent(margins, atol=1e-9)
    if metric == "DI":
        return _di_bounds(lp)
    lo, w_lo = _profile_bound(lp, metric, "min", n_grid)
    hi, w_hi = _profile_bound(lp, metric, "max", n_grid)
    return MetricBounds(metric, lo, hi, f"profile over P(Y=+,A=u): {n_grid}-point LP grid + "
                        "bounded refinement", {"lower": w_lo, "upper": w_hi})


def fairness_bounds(margins: CouplingMargins, metrics: tuple[str, ...] = BOUND_METRICS, *,
                    n_grid: int = 41) -> pd.DataFrame:
    """One row per metric: ``metric, lower, upper, method``."""
    rows = []
    for m in metrics:
        b = metric_bounds(margins, m, n_grid=n_grid)
        rows.append({"metric": m, "lower": b.lower, "upper": b.upper, "method": b.method})
    return pd.DataFrame(rows)
