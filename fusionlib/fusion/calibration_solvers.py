"""Solvers of the calibration (:mod:`fusionlib.fusion.calibration`): raking by cyclic
Bregman projections, the linear (GREG) closed form, and the optional ``ipfn`` backend."""

from __future__ import annotations

import contextlib
import io
import math

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from fusionlib.errors import InvalidInputError
from fusionlib.fusion.calibration_targets import Target, target_errors

__all__ = ["MAX_STEP", "rake", "linear", "rake_ipfn"]

MAX_STEP = 700.0  # |delta * max|y|| of one projection: beyond, exp() overflows


def _project_total(t: Target, w: np.ndarray) -> None:
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
    if not math.isfinite(delta) or abs(delta) > MAX_STEP:
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
        if abs(step) <= 1e-15 * max(1.0, abs(delta)) or abs(delta) > MAX_STEP:
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
    while f(lo) > 0 and lo > -MAX_STEP:
        lo *= 2
    while f(hi) < 0 and hi < MAX_STEP:
        hi *= 2
    if f(lo) > 0 or f(hi) < 0:
        return math.inf
    return brentq(f, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200)


def rake(targets: list[Target], d: np.ndarray, max_iter: int, tol: float
          ) -> tuple[np.ndarray, int]:
    w = d.copy()
    for sweep in range(1, max_iter + 1):
        for t in targets:
            if t.kind == "count":
                w[t.mask] *= t.value / w[t.mask].sum()
            else:
                _project_total(t, w)
        if np.abs(target_errors(targets, w)).max() <= tol:
            return w, sweep
    return w, max_iter


def linear(targets: list[Target], d: np.ndarray, tol: float) -> tuple[np.ndarray, int]:
    x = np.stack([t.x for t in targets], axis=1)
    scale = np.abs(x).max(axis=0)
    x = x / scale  # column scaling: counts and dollar totals on one footing
    want = np.array([t.value for t in targets]) / scale
    w = d.copy()
    for solve in (1, 2):  # one solve, then one refinement of its rounding error
        lam = np.linalg.lstsq(x.T @ (d[:, None] * x), want - x.T @ w, rcond=None)[0]
        w = w + d * (x @ lam)
        if np.abs(target_errors(targets, w)).max() <= tol:
            return w, solve
    return w, 2


def rake_ipfn(records: pd.DataFrame, targets: list[Target], d: np.ndarray, max_iter: int,
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

