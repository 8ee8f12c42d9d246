"""Seed 002's Appendix A.1 checked on the data: the shared variable's best marginal is the average.

Independence given Overlap needs ``p(x3)``, the distribution of the overlap attribute, which
both tables estimate. Appendix A.1 minimises the total KL divergence of eq. (8),
``KL(p1_hat(x1, x2, x3) || p(x1, x2, x3)) + KL(p2_hat(x3, x4) || p(x3, x4))``, which depends on
``p(x3)`` only through ``-sum_x3 (p1_hat(x3) + p2_hat(x3)) log p(x3)`` (eq. 10), and finds the
average of the two empirical marginals (eq. 12). Two checks, on two disjoint samples of each
dataset's rows (the protocol's tables hold the same rows, where the two marginals coincide):

- :func:`numerical_minimiser`: minimise eq. (10) over the simplex numerically (no closed form
  used) and compare the minimiser with the average; the average's objective is also below each
  marginal's.
- :func:`split_study`: over many random splits into a population-sized truth and two disjoint
  samples, the expected error of the average is below that of either marginal. The error is
  ``KL(p_true || p_hat)``, the held-out version of the paper's criterion, with ``p_true`` the
  marginal over all of the dataset's rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import minimize

from fusionlib.compendium.verdicts import Estimate
from fusionlib.errors import InvalidInputError
from fusionlib.rng import Seed, numpy_rng

__all__ = ["objective", "numerical_minimiser", "split_study", "average_advantage"]


def objective(p: np.ndarray, p1: np.ndarray, p2: np.ndarray) -> float:
    """Eq. (10): ``-sum (p1 + p2) log p`` (eq. 8 up to terms free of ``p(x3)``)."""
    p = np.asarray(p, dtype=float)
    w = np.asarray(p1, dtype=float) + np.asarray(p2, dtype=float)
    mask = w > 0
    with np.errstate(divide="ignore"):
        return float(-(w[mask] * np.log(p[mask])).sum())


def _marginals(codes: np.ndarray, k: int, rows_a: np.ndarray, rows_b: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    return (np.bincount(codes[rows_a], minlength=k) / len(rows_a),
            np.bincount(codes[rows_b], minlength=k) / len(rows_b))


def _codes(column: pd.Series) -> tuple[np.ndarray, int]:
    if column.isna().any():
        raise InvalidInputError(f"column {column.name!r} has missing values; drop those rows")
    codes, uniques = pd.factorize(column.astype(str), sort=True)
    return codes, len(uniques)


def _halves(n: int, fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if not 0.0 < fraction <= 0.5:
        raise InvalidInputError(f"fraction must lie in (0, 0.5], got {fraction!r}")
    order = rng.permutation(n)
    m = int(round(fraction * n))
    if m < 1:
        raise InvalidInputError(f"{n} rows are too few for samples of {fraction:.0%}")
    return order[:m], order[m:2 * m]


def numerical_minimiser(column: pd.Series, *, fraction: float = 0.35, seed: Seed = 0,
                        weight: float = 0.5) -> dict[str, float]:
    """Minimise eq. (10) numerically for the marginals of two disjoint random samples.

    Returns ``max_abs_diff`` (minimiser vs the combination ``weight p1 + (1 - weight) p2``;
    eq. 12's average at the default 1/2, another weight is a planted fault), the objective at
    the minimiser, at the average and at each marginal, and the largest gap between the two
    marginals.
    """
    if not 0.0 <= weight <= 1.0:
        raise InvalidInputError(f"weight must lie in [0, 1], got {weight!r}")
    codes, k = _codes(column)
    a, b = _halves(len(codes), fraction, numpy_rng(seed, "a1-minimiser"))
    p1, p2 = _marginals(codes, k, a, b)

    def f(z: np.ndarray) -> float:  # softmax parametrisation: any z is a distribution
        e = np.exp(z - z.max())
        return objective(e / e.sum(), p1, p2)

    res = minimize(f, np.zeros(k), method="BFGS", options={"gtol": 1e-12, "maxiter": 10_000})
    e = np.exp(res.x - res.x.max())
    p_opt, avg = e / e.sum(), (p1 + p2) / 2
    combination = weight * p1 + (1.0 - weight) * p2
    return {"max_abs_diff": float(np.abs(p_opt - combination).max()),
            "objective_minimiser": res.fun,
            "objective_average": objective(avg, p1, p2),
            "objective_first": objective(p1, p1, p2), "objective_second": objective(p2, p1, p2),
            "marginal_gap": float(np.abs(p1 - p2).max()), "categories": k}


def _kl(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """KL(p || q) per row of ``q`` (inf where q has a zero p does not)."""
    mask = p > 0
    with np.errstate(divide="ignore"):
        return (p[mask] * (np.log(p[mask]) - np.log(q[:, mask]))).sum(axis=1)


def _biased(codes: np.ndarray, fraction: float, bias: float, rng: np.random.Generator
            ) -> tuple[np.ndarray, np.ndarray]:
    """Two disjoint samples; the second draws a row of the first category ``bias`` times as
    likely as any other row (a second table that over-represents it)."""
    a, _ = _halves(len(codes), fraction, rng)
    rest = np.setdiff1d(np.arange(len(codes)), a)
    w = np.where(codes[rest] == 0, bias, 1.0)
    return a, rng.choice(rest, size=len(a), replace=False, p=w / w.sum())


def split_study(column: pd.Series, *, n_splits: int = 200, fraction: float = 0.35,
                seed: Seed = 0, bias: float = 1.0) -> pd.DataFrame:
    """Errors ``KL(p_true || p_hat)`` of the two marginals and their average over random splits.

    Each split draws two disjoint samples of ``fraction`` of the rows (the protocol's tables
    are 35 % each when the 70 % training rows are halved); ``p_true`` is the marginal of all
    rows. ``bias`` (default 1: both samples from the same rows, Appendix A.1's hypothesis; any
    other value is a planted fault) makes the second sample draw a row of the first category
    ``bias`` times as likely as any other. Columns: ``split``, ``p1`` and ``p2`` (each
    sample's marginal), ``average``.
    """
    if not (isinstance(n_splits, int) and n_splits >= 2):
        raise InvalidInputError(f"n_splits must be an int >= 2, got {n_splits!r}")
    if not (isinstance(bias, (int, float)) and bias > 0):
        raise InvalidInputError(f"bias must be a number > 0, got {bias!r}")
    codes, k = _codes(column)
    truth = np.bincount(codes, minlength=k) / len(codes)
    rng = numpy_rng(seed, "a1-splits")
    est = np.empty((n_splits, 3, k))
    for s in range(n_splits):
        rows = (_halves(len(codes), fraction, rng) if bias == 1.0
                else _biased(codes, fraction, float(bias), rng))
        p1, p2 = _marginals(codes, k, *rows)
        est[s] = (p1, p2, (p1 + p2) / 2)
    errors = {name: _kl(truth, est[:, i]) for i, name in enumerate(("p1", "p2",
                                                                   "average"))}
    return pd.DataFrame({"split": np.arange(n_splits), **errors})


def average_advantage(study: pd.DataFrame) -> tuple[Estimate, str]:
    """The mean over splits of ``KL(p_true || average)`` minus that of the single marginal with
    the smaller mean error (the harder comparison for the average), with its standard error
    over the splits, and that marginal's column name (``study``: rows of
    :func:`split_study`). Negative: the average beats both marginals."""
    best = max(("p1", "p2"), key=lambda c: (study["average"] - study[c]).mean())
    return Estimate.from_sample((study["average"] - study[best]).to_numpy()), best
