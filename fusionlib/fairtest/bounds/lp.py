"""The coupling linear program behind :mod:`fusionlib.fairtest.bounds.sharp`.

Also the profile of EOD/AOD over ``t = P(Y=+, A=u)`` (one LP per fixed ``t``) and the grid
search over it (:func:`profile_grid_bound`), kept as a cross-check of the exact bounds.

Variables ``pi[o, g, y, yhat] >= 0`` (flattened, index ``o*8 + g*4 + y*2 + yhat``); equality
constraints ``sum_g pi[o, g, y, yhat] = q[o, y, yhat]`` (the internal table) and
``sum_{y, yhat} pi[o, g, y, yhat] = r[o, g]`` (the external table). Every LP is solved with
``scipy.optimize.linprog(method="highs")``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fusionlib.errors import FusionlibError, InvalidInputError

__all__ = ["InconsistentMarginsError", "LinearProgram", "SolverError", "selection_bounds",
           "profile_value", "profile_grid_bound"]

#: tighter than HiGHS's defaults (1e-7) so that witness couplings are feasible to ~1e-10
_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


class SolverError(FusionlibError, RuntimeError):
    """HiGHS stopped without an optimum for a reason other than infeasibility/unboundedness."""


class InconsistentMarginsError(InvalidInputError):
    """The two tables admit no common joint distribution (the coupling LP is infeasible)."""


def _infeasible(what: str) -> InvalidInputError:
    return InconsistentMarginsError(
        f"the coupling LP is infeasible ({what}): the internal constraints sum_g pi = q and "
        "the external constraints sum_(y,yhat) pi = r admit no common non-negative solution; "
        "check that both tables come from one population (equal overlap margins)")


class LinearProgram:
    """The feasible set of couplings of one
    :class:`~fusionlib.fairtest.bounds.sharp.CouplingMargins`."""

    def __init__(self, margins: Any) -> None:
        q = np.asarray(margins.internal, float)
        r = np.asarray(margins.external, float)
        if q.ndim != 3 or q.shape[1:] != (2, 2) or r.shape != (q.shape[0], 2):
            raise InvalidInputError(
                f"margins need internal of shape (n, 2, 2) and external of shape (n, 2); got "
                f"{q.shape} and {r.shape}")
        if not (np.isfinite(q).all() and np.isfinite(r).all()):
            raise InvalidInputError("margins hold NaN or infinite values; pass probabilities")
        if (q < 0).any() or (r < 0).any():
            raise InvalidInputError("margins hold negative probabilities")
        self.q, self.r = q, r
        self.n_levels = q.shape[0]
        self.n_vars = 8 * self.n_levels
        rows, rhs = [], []
        for o in range(self.n_levels):
            for y in (0, 1):
                for yh in (0, 1):
                    rows.append(self.marginal_vector(o=o, y=y, yhat=yh))
                    rhs.append(q[o, y, yh])
            for g in (0, 1):
                rows.append(self.marginal_vector(o=o, g=g))
                rhs.append(r[o, g])
        self.a_eq, self.b_eq = np.array(rows), np.array(rhs)

    @property
    def p_group(self) -> tuple[float, float]:
        """``(P(A=u), P(A=p))`` from the external table."""
        return float(self.r[:, 0].sum()), float(self.r[:, 1].sum())

    @property
    def p_label(self) -> float:
        """``P(Y=+)`` from the internal table."""
        return float(self.q[:, 1, :].sum())

    def internal_total(self, *, y: int | None = None, yhat: int | None = None) -> float:
        """``P(Y=y, Yhat=yhat)`` from the internal table (``None`` sums the axis out)."""
        q = self.q
        q = q[:, [y], :] if y is not None else q
        q = q[:, :, [yhat]] if yhat is not None else q
        return float(q.sum())

    def marginal_vector(self, *, o: int | None = None, g: int | None = None,
                        y: int | None = None, yhat: int | None = None) -> np.ndarray:
        """Coefficients ``c`` with ``c @ pi = P(O=o, A=g, Y=y, Yhat=yhat)`` (None: any)."""
        mask = np.ones((self.n_levels, 2, 2, 2), bool)
        for axis, v in enumerate((o, g, y, yhat)):
            if v is not None:
                keep = np.zeros(mask.shape[axis], bool)
                keep[v] = True
                shape = [1, 1, 1, 1]
                shape[axis] = -1
                mask &= keep.reshape(shape)
        return mask.ravel().astype(float)

    def optimise(self, c: np.ndarray, *, sense: str,
                 fix: tuple[np.ndarray, float] | None = None) -> tuple[float, np.ndarray | None]:
        """Optimum of ``c @ pi`` (``sense`` "min"/"max") and its coupling ``pi[o, g, y, yhat]``;
        ``fix=(a, t)`` adds the constraint ``a @ pi = t``."""
        from scipy.optimize import linprog

        a_eq, b_eq = self.a_eq, self.b_eq
        if fix is not None:
            a_eq, b_eq = np.vstack([a_eq, fix[0]]), np.append(b_eq, fix[1])
        sign = 1.0 if sense == "min" else -1.0
        res = linprog(sign * np.asarray(c, float), A_eq=a_eq, b_eq=b_eq, bounds=(0, None),
                      method="highs", options=_OPTIONS)
        if res.status == 2:
            raise _infeasible("no coupling satisfies the margins" if fix is None
                              else f"with the extra constraint fixed at {fix[1]:.6g}")
        if res.status != 0:
            raise SolverError(f"HiGHS stopped with status {res.status}: {res.message}")
        return float(sign * res.fun), res.x.reshape(self.n_levels, 2, 2, 2)

    def fractional(self, num: np.ndarray, den: np.ndarray, *,
                   sense: str) -> tuple[float, np.ndarray | None]:
        """Optimum of ``(num @ pi) / (den @ pi)`` by the Charnes-Cooper transformation.

        With ``z = s * pi`` and ``s = 1 / (den @ pi)``: optimise ``num @ z`` subject to
        ``A z - b s = 0``, ``den @ z = 1``, ``z, s >= 0`` (one LP; exact). Returns ``inf`` when
        the maximum is unbounded (``den @ pi`` can reach 0 with ``num @ pi > 0``) and ``nan``
        when ``den @ pi`` is 0 for every coupling (the ratio is never defined).
        """
        from scipy.optimize import linprog

        den_max, _ = self.optimise(den, sense="max")
        if den_max <= 1e-15:
            return np.nan, None
        a_eq = np.vstack([np.hstack([self.a_eq, -self.b_eq[:, None]]),
                          np.append(den, 0.0)[None, :]])
        b_eq = np.append(np.zeros(len(self.b_eq)), 1.0)
        sign = 1.0 if sense == "min" else -1.0
        res = linprog(sign * np.append(num, 0.0), A_eq=a_eq, b_eq=b_eq, bounds=(0, None),
                      method="highs", options=_OPTIONS)
        if res.status == 3:
            return sign * -np.inf, None
        if res.status == 2:
            raise _infeasible("Charnes-Cooper form")
        if res.status != 0:
            raise SolverError(f"HiGHS stopped with status {res.status}: {res.message}")
        z, s = res.x[:-1], res.x[-1]
        return float(sign * res.fun), (z / s).reshape(self.n_levels, 2, 2, 2)


def selection_bounds(lp: LinearProgram, metric: str) -> tuple[list[float], list]:
    """``([min, max], [witness, witness])`` of DI (Charnes-Cooper, one LP per bound) or DP
    (``P(Yhat=+ | A=u) - P(Yhat=+ | A=p)``: linear in ``pi``, one LP per bound); both group
    sizes must be positive."""
    pu, pp = lp.p_group
    s_u, s_p = lp.marginal_vector(g=0, yhat=1) / pu, lp.marginal_vector(g=1, yhat=1) / pp
    values, witnesses = [], []
    for sense in ("min", "max"):
        if metric == "DI":
            v, w = lp.fractional(s_u, s_p, sense=sense)
        else:
            v, w = lp.optimise(s_u - s_p, sense=sense)
        values.append(v)
        witnesses.append(w)
    return values, witnesses


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


def profile_value(lp: LinearProgram, metric: str, t: float,
                  sense: str) -> tuple[float, np.ndarray | None]:
    """Extremum of EOD or AOD over the couplings with ``P(Y=+, A=u) = t`` (one LP)."""
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


def profile_grid_bound(lp: LinearProgram, metric: str, sense: str,
                       n_grid: int) -> tuple[float, np.ndarray | None]:
    """EOD/AOD bound from ``n_grid`` LPs over the range of ``t`` and a bounded scalar refinement
    around the best grid point; the refined value is kept when it is better for ``sense`` (for
    lower bounds too). Attained by its coupling, so never beyond the sharp bound, but not
    global: the profile over ``t`` can have several local optima and kinks."""
    from scipy.optimize import minimize_scalar

    lo, hi = _t_range(lp, metric)
    if np.isnan(lo):
        return np.nan, None
    sign = 1.0 if sense == "max" else -1.0
    grid = np.linspace(lo, hi, n_grid) if hi > lo else np.array([lo])
    vals = [profile_value(lp, metric, t, sense) for t in grid]
    best = int(np.argmax([sign * v for v, _ in vals]))
    value, pi = vals[best]
    if len(grid) > 2:
        a, b = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
        res = minimize_scalar(lambda t: -sign * profile_value(lp, metric, t, sense)[0],
                              bounds=(a, b), method="bounded",
                              options={"xatol": 1e-10 * max(hi - lo, 1e-12)})
        refined, pi_refined = profile_value(lp, metric, float(res.x), sense)
        if sign * refined > sign * value:
            value, pi = refined, pi_refined
    return float(value), pi
