"""Calibration of synthetic records to external aggregate targets (seed 000, Appendix I).

Given synthetic records and published aggregates (e.g. IRS SOI totals of income by bracket, or
counts of returns by filing status), find record weights ``w`` close to initial weights ``d``
(uniform) such that the weighted aggregates of the records equal the targets. Every target is
linear in the weights, ``sum_i w_i x_ij = T_j``, with

* a **count** of category c of column g: ``x_ij = 1[g_i = c]``;
* a **total** of numeric column y over a group G: ``x_ij = y_i 1[i in G]``.

Two distances (Deville & Sarndal 1992) are offered:

``method="raking"``
    w_i = d_i exp(x_i' lambda) (minimum Kullback-Leibler distance; weights stay positive),
    found by cyclic Bregman projections onto one target at a time (Bregman 1967; Csiszar 1975):
    for a count margin this is exactly iterative proportional fitting (IPF: every category is
    scaled to its target in turn); for a total it is a one-dimensional root ``sum_G w_i y_i
    exp(delta y_i) = T``. One *iteration* is one sweep over the targets (count margins in the
    order given, then totals); it stops when every relative error is at most ``tol``.
``method="linear"``
    w_i = d_i (1 + x_i' lambda) (chi-square distance: the GREG estimator), closed form
    ``(X' D X) lambda = T - X' d`` solved by least squares; exact whenever the targets are
    consistent, but weights may turn negative (``CalibrationResult.n_negative``).

Targets are a mapping with keys ``"counts"`` and/or ``"totals"``::

    {"counts": {"filing": {"single": 900, "joint": 1100}},
     "totals": {"income": {"bracket=1": 2.0e7, "bracket=2&filing=joint": 6.5e7, "all": 1.1e8}}}

A group is ``"all"`` or conditions ``"column=value"`` joined by ``&``. Values are matched
numerically for numeric columns (``"bracket=1"`` matches 1 and 1.0) and as text otherwise.
The relative error of a target is ``(achieved - target) / |target|`` (the absolute error when
the target is 0). The optional library backend ``backend="ipfn"`` runs the ``ipfn`` package
(pin ``ipfn==1.4.4``) on the cross-table of the count margins.
"""

from __future__ import annotations

import contextlib
import io
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from fusionlib.checks import check_choice, check_frame, check_positive, check_positive_int
from fusionlib.errors import InvalidInputError

__all__ = ["CalibrationResult", "calibrate", "achieved_totals", "METHODS", "BACKENDS"]

METHODS = ("raking", "linear")
BACKENDS = ("numpy", "ipfn")
_MAX_STEP = 700.0  # |delta * max|y|| of one projection: beyond, exp() overflows


@dataclass(frozen=True)
class CalibrationResult:
    """Calibrated weights and how well they meet the targets.

    Attributes
    ----------
    weights: float64 array (n,), one weight per record, in the order of the records.
    residuals: DataFrame, one row per target: kind, column, group, target, achieved, rel_error.
    converged: every ``|rel_error| <= tol``.
    n_iter: sweeps (raking) or solves (linear) used.
    method: ``"raking"`` or ``"linear"``.
    """

    weights: np.ndarray
    residuals: pd.DataFrame
    converged: bool
    n_iter: int
    method: str

    @property
    def max_rel_error(self) -> float:
        return float(self.residuals["rel_error"].abs().max())

    @property
    def n_negative(self) -> int:
        return int((self.weights < 0).sum())


@dataclass(frozen=True)
class _Target:
    kind: str  # "count" or "total"
    column: str
    group: str
    value: float
    x: np.ndarray  # (n,) the record's contribution x_ij
    mask: np.ndarray  # (n,) bool: records the target constrains


def _match(records: pd.DataFrame, column: str, value: object) -> np.ndarray:
    col = records[column]
    if pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col.dtype):
        try:
            return (col.to_numpy(dtype=np.float64) == float(value)).astype(bool)
        except (TypeError, ValueError):
            return np.zeros(len(col), dtype=bool)
    return (col.astype(str) == str(value)).to_numpy()


def _column(records: pd.DataFrame, column: object, numeric: bool) -> pd.Series:
    if column not in records.columns:
        raise InvalidInputError(f"target column {column!r} is not a column of the records; "
                                f"columns: {list(records.columns)}")
    col = records[column]
    if numeric and (not pd.api.types.is_numeric_dtype(col.dtype)
                    or pd.api.types.is_bool_dtype(col.dtype)):
        raise InvalidInputError(f"totals need a numeric column; {column!r} has dtype {col.dtype}")
    if col.isna().any():
        raise InvalidInputError(f"column {column!r} has {int(col.isna().sum())} missing "
                                "value(s); drop or impute those records before calibrating")
    if numeric and not np.isfinite(col.to_numpy(dtype=np.float64)).all():
        raise InvalidInputError(f"column {column!r} has infinite values")
    return col


def _group_mask(records: pd.DataFrame, group: object) -> np.ndarray:
    if not isinstance(group, str) or not group.strip():
        raise InvalidInputError(f"a group must be 'all' or 'column=value[&column=value]', "
                                f"got {group!r}")
    mask = np.ones(len(records), dtype=bool)
    if group.strip() == "all":
        return mask
    for cond in group.split("&"):
        column, sep, value = (s.strip() for s in cond.partition("="))
        if not sep or not column:
            raise InvalidInputError(f"group {group!r}: condition {cond!r} is not 'column=value'")
        _column(records, column, numeric=False)
        mask &= _match(records, column, value)
    return mask


def _number(what: str, value: object) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{what} must be a number, got {value!r}") from None
    if not math.isfinite(v):
        raise InvalidInputError(f"{what} must be finite, got {value!r}")
    return v


def _parse(records: pd.DataFrame, targets: object, method: str) -> list[_Target]:
    if not isinstance(targets, Mapping) or not targets or set(targets) - {"counts", "totals"}:
        raise InvalidInputError(
            "targets must be a mapping with keys 'counts' and/or 'totals', e.g. {'counts': "
            "{'sex': {'F': 510, 'M': 490}}, 'totals': {'income': {'sex=F': 2e7, 'all': 5e7}}}; "
            f"got {targets!r:.200}")
    out: list[_Target] = []
    for column, cats in (targets.get("counts") or {}).items():
        col = _column(records, column, numeric=False)
        if not isinstance(cats, Mapping) or not cats:
            raise InvalidInputError(f"counts[{column!r}] must map categories to counts")
        seen = np.zeros(len(records), dtype=bool)
        for cat, value in cats.items():
            v = _number(f"the count of {column}={cat!r}", value)
            mask = _match(records, column, cat)
            if (mask & seen).any():
                raise InvalidInputError(f"category {cat!r} of {column!r} is given twice (e.g. "
                                        "as 1 and '1'); give each category once")
            seen |= mask
            if v < 0 or (v == 0 and method == "raking"):
                raise InvalidInputError(
                    f"the count of {column}={cat!r} is {v:g}; counts must be > 0 for raking "
                    "(positive weights cannot sum to 0) and >= 0 for linear calibration")
            if not mask.any():
                raise InvalidInputError(
                    f"infeasible target: no record has {column}={cat!r} (values present: "
                    f"{sorted(map(str, col.unique()))[:20]}), so no weights reach its count "
                    f"{v:g}; drop that target or generate records of that category")
            out.append(_Target("count", str(column), f"{column}={cat}", v, mask * 1.0, mask))
    for column, groups in (targets.get("totals") or {}).items():
        y = _column(records, column, numeric=True).to_numpy(dtype=np.float64)
        if not isinstance(groups, Mapping) or not groups:
            raise InvalidInputError(f"totals[{column!r}] must map groups to totals")
        for group, value in groups.items():
            v = _number(f"the total of {column} over {group!r}", value)
            mask = _group_mask(records, group)
            if not mask.any():
                raise InvalidInputError(f"infeasible target: no record is in group {group!r} "
                                        f"(total of {column!r}); drop that target")
            yg = y[mask]
            pos, neg = bool((yg > 0).any()), bool((yg < 0).any())
            if method == "raking" and not (v > 0 and pos or v < 0 and neg or v == 0 and pos == neg):
                raise InvalidInputError(
                    f"infeasible target: the total of {column!r} over {group!r} is {v:g} but "
                    f"the records there have values in [{yg.min():g}, {yg.max():g}]; positive "
                    "weights cannot reach it (use method='linear' or check the target's sign)")
            out.append(_Target("total", str(column), str(group), v, np.where(mask, y, 0.0), mask))
    if not out:
        raise InvalidInputError("targets contain no count and no total")
    return out


def _check_margins(records: pd.DataFrame, targets: list[_Target], tol: float) -> float | None:
    """Population size N implied by complete count margins; they must agree."""
    sizes: dict[str, float] = {}
    for column in dict.fromkeys(t.column for t in targets if t.kind == "count"):
        ts = [t for t in targets if t.kind == "count" and t.column == column]
        if np.logical_or.reduce([t.mask for t in ts]).all():
            sizes[column] = sum(t.value for t in ts)
    if sizes and max(sizes.values()) - min(sizes.values()) > tol * max(sizes.values()):
        raise InvalidInputError(f"the complete count margins imply different population sizes "
                                f"{sizes}; make them sum to the same total")
    return next(iter(sizes.values()), None)


def _errors(targets: list[_Target], w: np.ndarray) -> np.ndarray:
    got = np.array([t.x @ w for t in targets])
    want = np.array([t.value for t in targets])
    return (got - want) / np.where(want == 0, 1.0, np.abs(want))


def _table(targets: list[_Target], w: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({
        "kind": [t.kind for t in targets], "column": [t.column for t in targets],
        "group": [t.group for t in targets], "target": [t.value for t in targets],
        "achieved": [float(t.x @ w) for t in targets], "rel_error": _errors(targets, w)})


def _project_total(t: _Target, w: np.ndarray) -> None:
    """Bregman (KL) projection of w onto ``sum_G w y = T``: w_G *= exp(delta y_G)."""
    y, wg = t.x[t.mask], w[t.mask]
    scale = float(np.abs(y).max())
    if scale == 0.0:
        return  # all values 0 and target 0 (checked by _parse): nothing to do
    u, target = y / scale, t.value / scale
    if (u >= 0).all() or (u <= 0).all():
        sign = 1.0 if (u >= 0).all() else -1.0
        delta = sign * _newton_log(wg, sign * u, sign * target)
    else:
        delta = _bracketed(wg, u, target)
    if not math.isfinite(delta) or abs(delta) > _MAX_STEP:
        raise InvalidInputError(f"the total of {t.column!r} over {t.group!r} ({t.value:g}) "
                                "needs weights changed by more than exp(700); check its scale")
    w[t.mask] = wg * np.exp(delta * u)


def _newton_log(w: np.ndarray, u: np.ndarray, target: float) -> float:
    """Root of h(delta) = log sum w u e^{delta u} - log target, u in [0, 1], target > 0.

    h is convex and increasing, so Newton's iterates converge monotonically after one step.
    """
    keep = u > 0
    lw, u = np.log(w[keep] * u[keep]), u[keep]
    log_t, delta = math.log(target), 0.0
    for _ in range(200):
        a = lw + delta * u
        e = np.exp(a - a.max())
        h = float(a.max() + math.log(e.sum()) - log_t)
        step = h / float((u * e).sum() / e.sum())
        delta -= step
        if abs(step) <= 1e-15 * max(1.0, abs(delta)) or abs(delta) > _MAX_STEP:
            break
    return delta


def _lse(a: np.ndarray) -> float:
    if a.size == 0:
        return -math.inf
    m = float(a.max())
    if not math.isfinite(m):
        return m
    return m + math.log(float(np.exp(a - m).sum()))


def _bracketed(w: np.ndarray, u: np.ndarray, target: float) -> float:
    """Root of the increasing sum w u e^{delta u} - target (u of both signs) by Brent's method."""
    pos, neg = u > 0, u < 0
    lp, ln = np.log(w[pos] * u[pos]), np.log(-w[neg] * u[neg])
    log_t = math.log(abs(target)) if target else -np.inf

    def f(delta: float) -> float:  # divided by a positive scale: no overflow
        p, q = _lse(lp + delta * u[pos]), _lse(ln + delta * u[neg])
        m = max(p, q, log_t)
        if not math.isfinite(m):  # every term and the target are zero: already met
            return 0.0
        return math.exp(p - m) - math.exp(q - m) - math.copysign(math.exp(log_t - m), target)

    lo, hi = -1.0, 1.0
    while f(lo) > 0 and lo > -_MAX_STEP:
        lo *= 2
    while f(hi) < 0 and hi < _MAX_STEP:
        hi *= 2
    if f(lo) > 0 or f(hi) < 0:
        return math.inf
    return brentq(f, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200)


def _rake(targets: list[_Target], d: np.ndarray, max_iter: int, tol: float
          ) -> tuple[np.ndarray, int]:
    w = d.copy()
    for sweep in range(1, max_iter + 1):
        for t in targets:
            if t.kind == "count":
                w[t.mask] *= t.value / w[t.mask].sum()
            else:
                _project_total(t, w)
        if np.abs(_errors(targets, w)).max() <= tol:
            return w, sweep
    return w, max_iter


def _linear(targets: list[_Target], d: np.ndarray, tol: float) -> tuple[np.ndarray, int]:
    x = np.stack([t.x for t in targets], axis=1)
    scale = np.abs(x).max(axis=0)
    x = x / scale  # column scaling: counts and dollar totals on one footing
    want = np.array([t.value for t in targets]) / scale
    w = d.copy()
    for solve in (1, 2):  # one solve, then one refinement of its rounding error
        lam = np.linalg.lstsq(x.T @ (d[:, None] * x), want - x.T @ w, rcond=None)[0]
        w = w + d * (x @ lam)
        if np.abs(_errors(targets, w)).max() <= tol:
            return w, solve
    return w, 2


def _rake_ipfn(records: pd.DataFrame, targets: list[_Target], d: np.ndarray, max_iter: int,
               tol: float) -> tuple[np.ndarray, int]:
    try:
        from ipfn.ipfn import ipfn
    except ImportError:
        raise InvalidInputError("backend='ipfn' needs the ipfn package (pip install "
                                "ipfn==1.4.4); or use backend='numpy'") from None
    if any(t.kind != "count" for t in targets):
        raise InvalidInputError("backend='ipfn' rakes count margins only; use backend='numpy' "
                                "for totals")
    columns = list(dict.fromkeys(t.column for t in targets))
    codes, aggregates = [], []
    for column in columns:
        ts = [t for t in targets if t.column == column]
        code = np.full(len(d), -1)
        for j, t in enumerate(ts):
            code[t.mask] = j
        if (code < 0).any():
            raise InvalidInputError(f"backend='ipfn' needs complete margins: give a count for "
                                    f"every category of {column!r}, or use backend='numpy'")
        codes.append(code)
        aggregates.append(np.array([t.value for t in ts]))
    shape = tuple(len(a) for a in aggregates)
    table = np.zeros(shape)
    np.add.at(table, tuple(codes), d)
    with contextlib.redirect_stdout(io.StringIO()):  # ipfn prints its stopping reason
        fitted, _, log = ipfn(table.copy(), aggregates, [[i] for i in range(len(shape))],
                              convergence_rate=tol, max_iteration=max_iter, verbose=2,
                              rate_tolerance=0.0).iteration()
    ratio = np.divide(fitted, table, out=np.zeros(shape), where=table > 0)
    return d * ratio[tuple(codes)], len(log)


def calibrate(records: pd.DataFrame, targets: Mapping, *, method: str = "raking",
              weights: object = None, max_iter: int = 1000, tol: float = 1e-10,
              backend: str = "numpy") -> CalibrationResult:
    """Weights for ``records`` that reproduce the aggregate ``targets`` (see the module doc).

    Parameters
    ----------
    records: DataFrame of synthetic records (e.g. ``FusionGAN.sample(n)``).
    targets: ``{"counts": {column: {category: count}}, "totals": {column: {group: total}}}``.
    method: ``"raking"`` (positive weights, iterative) or ``"linear"`` (GREG, closed form).
    weights: initial weights d (n,), > 0; None: uniform, ``N / n`` when complete count margins
        give a population size N, else 1 (each record stands for one unit).
    max_iter, tol: raking sweeps at most, and the relative error that counts as matched.
    backend: ``"numpy"`` (this module) or ``"ipfn"`` (count margins only, raking).

    Returns
    -------
    CalibrationResult. Raking that does not reach ``tol`` in ``max_iter`` sweeps returns
    ``converged=False`` (targets that are jointly infeasible for positive weights); the
    residuals say which targets are missed.
    """
    check_frame("records", records)
    check_choice("method", method, METHODS)
    check_choice("backend", backend, BACKENDS)
    check_positive_int("max_iter", max_iter)
    tol = check_positive("tol", tol)
    parsed = _parse(records, targets, method)
    size = _check_margins(records, parsed, max(tol, 1e-9))
    n = len(records)
    if weights is None:
        d = np.full(n, (size or n) / n, dtype=np.float64)
    else:
        d = np.asarray(weights, dtype=np.float64)
        if d.shape != (n,) or not np.isfinite(d).all() or (d <= 0).any():
            raise InvalidInputError(f"weights must be {n} finite numbers > 0, one per record")
    if backend == "ipfn":
        if method != "raking":
            raise InvalidInputError("backend='ipfn' supports method='raking' only")
        w, n_iter = _rake_ipfn(records, parsed, d, max_iter, tol)
    elif method == "raking":
        w, n_iter = _rake(parsed, d, max_iter, tol)
    else:
        w, n_iter = _linear(parsed, d, tol)
    residuals = _table(parsed, w)
    converged = bool(residuals["rel_error"].abs().max() <= tol)
    return CalibrationResult(w, residuals, converged, n_iter, method)


def achieved_totals(records: pd.DataFrame, targets: Mapping, weights: object = None
                    ) -> pd.DataFrame:
    """The residual table of ``targets`` under given ``weights`` (None: uniform, as above).

    Shows how far uncalibrated synthetic records are from the published aggregates.
    """
    check_frame("records", records)
    parsed = _parse(records, targets, "linear")
    n = len(records)
    w = (np.full(n, (_check_margins(records, parsed, 1e-9) or n) / n) if weights is None
         else np.asarray(weights, dtype=np.float64))
    if w.shape != (n,) or not np.isfinite(w).all():
        raise InvalidInputError(f"weights must be {n} finite numbers, one per record")
    return _table(parsed, w)
