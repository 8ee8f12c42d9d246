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

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fusionlib.checks import check_choice, check_frame, check_positive, check_positive_int
from fusionlib.errors import InvalidInputError
from fusionlib.fusion.calibration_solvers import linear, rake, rake_ipfn
from fusionlib.fusion.calibration_targets import check_margins, parse_targets, residual_table

__all__ = ["CalibrationResult", "calibrate", "achieved_totals", "METHODS", "BACKENDS"]

METHODS = ("raking", "linear")
BACKENDS = ("numpy", "ipfn")


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
    parsed = parse_targets(records, targets, method)
    size = check_margins(records, parsed, max(tol, 1e-9))
    n = len(records)
    if weights is None:
        d = np.full(n, (size or n) / n, dtype=np.float64)
    else:
        d = _weights(weights)
        if d.shape != (n,) or not np.isfinite(d).all() or (d <= 0).any():
            raise InvalidInputError(f"weights must be {n} finite numbers > 0, one per record")
    if backend == "ipfn":
        if method != "raking":
            raise InvalidInputError("backend='ipfn' supports method='raking' only")
        w, n_iter = rake_ipfn(records, parsed, d, max_iter, tol)
    elif method == "raking":
        w, n_iter = rake(parsed, d, max_iter, tol)
    else:
        w, n_iter = linear(parsed, d, tol)
    residuals = residual_table(parsed, w)
    converged = bool(residuals["rel_error"].abs().max() <= tol)
    return CalibrationResult(w, residuals, converged, n_iter, method)


def _weights(weights: object) -> np.ndarray:
    try:
        return np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError(
            f"weights must be numbers, one per record, got {type(weights).__name__} that does "
            "not convert to float; pass a list or array of numbers (or None: uniform)") from None


def achieved_totals(records: pd.DataFrame, targets: Mapping, weights: object = None
                    ) -> pd.DataFrame:
    """The residual table of ``targets`` under given ``weights`` (None: uniform, as above).

    Shows how far uncalibrated synthetic records are from the published aggregates.
    """
    check_frame("records", records)
    parsed = parse_targets(records, targets, "linear")
    n = len(records)
    w = (np.full(n, (check_margins(records, parsed, 1e-9) or n) / n) if weights is None
         else _weights(weights))
    if w.shape != (n,) or not np.isfinite(w).all():
        raise InvalidInputError(f"weights must be {n} finite numbers, one per record")
    return residual_table(parsed, w)
