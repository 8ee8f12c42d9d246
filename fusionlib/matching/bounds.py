"""What two tables identify: Fréchet bounds for cells and bounds for cross-source correlations.

Source A observes (X, Y), source B observes (X, Z); (Y, Z) are never observed together. Every
joint law with the observed margins p(X, Y) and p(X, Z) is consistent with the data, so a
cross-source quantity is identified only up to the set of its values over those laws:

Cells (categorical X, Y, Z)
    For each cell ``(y, z)``, conditional on ``X = x`` the Fréchet-Hoeffding bounds give
    ``max(0, p(y|x) + p(z|x) - 1) <= p(y, z | x) <= min(p(y|x), p(z|x))``; summing over ``x``
    with weights ``p(x)`` gives sharp bounds for ``p(y, z)`` (each cell separately; the
    conditional tables can be chosen independently for each x). The CIA picks
    ``sum_x p(x) p(y|x) p(z|x)``, a point inside.
Correlations (Gaussian, or any law through its correlation matrix)
    The correlation matrix must stay positive semi-definite. With scalar X, Y, Z:
    ``rho_XY rho_XZ +/- sqrt((1 - rho_XY^2)(1 - rho_XZ^2))``. With blocks, every completion is
    ``R_YZ = R_YX R_XX^-1 R_XZ + A^(1/2) C B^(1/2)`` with ``A``, ``B`` the partial (Schur
    complement) covariances of Y and Z given X and ``C`` any contraction (spectral norm <= 1),
    so entry (i, j) ranges over ``centre_ij +/- sqrt(A_ii B_jj)``. :func:`completion_bounds`
    gives the range of one missing entry when every other entry is known.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from fusionlib.checks import check_array, is_int
from fusionlib.errors import InvalidInputError
from fusionlib.matching.validation import check_pair, check_shared_categories

__all__ = ["frechet_cell_bounds", "frechet_bounds_from_sources", "correlation_bounds",
           "cross_correlation_bounds", "completion_bounds", "is_psd"]

_TOL = 1e-9


def _check_conditional(name: str, p: np.ndarray, n_x: int) -> np.ndarray:
    arr = check_array(name, p, ndim=2)
    if arr.shape[0] != n_x:
        raise InvalidInputError(
            f"{name} has {arr.shape[0]} rows but p_x has {n_x} categories; give one row per "
            "category of the overlap X")
    if (arr < -_TOL).any() or not np.allclose(arr.sum(axis=1), 1.0, atol=1e-6):
        raise InvalidInputError(
            f"{name} must hold conditional distributions (rows >= 0 summing to 1), row sums "
            f"are {np.round(arr.sum(axis=1), 6).tolist()}; normalise each row")
    return np.clip(arr, 0.0, None)


def frechet_cell_bounds(p_x: np.ndarray, p_y_given_x: np.ndarray, p_z_given_x: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sharp lower and upper bounds, and the CIA value, of every cell ``p(y, z)``.

    Parameters
    ----------
    p_x:
        Shape (I,): the law of the overlap X (its cells flattened), summing to 1.
    p_y_given_x, p_z_given_x:
        Shapes (I, J) and (I, K): rows are the conditional laws of Y and of Z given each x.

    Returns
    -------
    (lower, cia, upper):
        Arrays of shape (J, K).
    """
    px = check_array("p_x", p_x, ndim=1)
    if (px < -_TOL).any() or abs(px.sum() - 1.0) > 1e-6:
        raise InvalidInputError(f"p_x must be >= 0 and sum to 1, sums to {px.sum():.6g}")
    py = _check_conditional("p_y_given_x", p_y_given_x, len(px))
    pz = _check_conditional("p_z_given_x", p_z_given_x, len(px))
    a, b = py[:, :, None], pz[:, None, :]
    w = px[:, None, None]
    lower = (w * np.maximum(0.0, a + b - 1.0)).sum(axis=0)
    upper = (w * np.minimum(a, b)).sum(axis=0)
    cia = (w * a * b).sum(axis=0)
    return lower, cia, upper


def _key(df: pd.DataFrame, x: list[str]) -> pd.Series:
    return df[x].astype(str).agg("\x1f".join, axis=1)


def _conditional(df: pd.DataFrame, x: list[str], col: str, x_levels: pd.Index,
                 levels: list) -> np.ndarray:
    tab = pd.crosstab(_key(df, x), df[col]).reindex(index=x_levels, columns=levels,
                                                      fill_value=0).to_numpy(dtype=float)
    return tab / tab.sum(axis=1, keepdims=True)


def frechet_bounds_from_sources(sources: object, y: str, z: str,
                                overlap: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Estimated Fréchet bounds of ``p(y, z)`` from two categorical tables.

    ``p(x)`` is estimated from both tables pooled; ``p(y | x)`` from the table holding ``y`` and
    ``p(z | x)`` from the table holding ``z``. Every overlap category must occur in both tables.

    Returns
    -------
    DataFrame with columns ``y``, ``z`` (the categories), ``lower``, ``cia``, ``upper``.
    """
    src = check_pair(sources)
    a, b = src.names
    ta = src[a] if y in src[a].columns else src[b]
    tb = src[b] if ta is src[a] else src[a]
    if y not in ta.columns or z not in tb.columns or z in ta.columns or y in tb.columns:
        raise InvalidInputError(
            f"y={y!r} must be a column of one source only and z={z!r} of the other only; "
            f"the sources hold {[list(src[n].columns) for n in src.names]}")
    if isinstance(overlap, str):
        raise InvalidInputError(f"overlap must be a tuple of column names, got the string "
                                f"{overlap!r}; write overlap=({overlap!r},)")
    x = list(overlap if overlap is not None else src.overlap(a, b))
    missing = [c for c in x if c not in ta.columns or c not in tb.columns]
    if missing:
        raise InvalidInputError(
            f"overlap column(s) {missing} must be in both sources (they hold "
            f"{list(ta.columns)} and {list(tb.columns)}); name columns that both tables hold")
    check_shared_categories(ta, tb, x, (a, b))
    px = pd.concat([_key(ta, x), _key(tb, x)], ignore_index=True).value_counts(
        normalize=True).sort_index()
    ylev, zlev = sorted(ta[y].unique()), sorted(tb[z].unique())
    py = _conditional(ta, x, y, px.index, ylev)
    pz = _conditional(tb, x, z, px.index, zlev)
    lower, cia, upper = frechet_cell_bounds(px.to_numpy(), py, pz)
    grid = pd.MultiIndex.from_product([ylev, zlev], names=[y, z]).to_frame(index=False)
    return grid.assign(lower=lower.ravel(), cia=cia.ravel(), upper=upper.ravel())


def _check_rho(name: str, rho: float) -> float:
    try:  # a number (or a 0-d array); text, None, bools and sequences are refused
        scalar = not isinstance(rho, str | bytes | bool | np.bool_) and np.ndim(rho) == 0
        r = float(rho) if scalar else math.nan
    except (TypeError, ValueError):
        r = math.nan
    if not np.isfinite(r) or abs(r) > 1:
        raise InvalidInputError(f"{name} must be a correlation in [-1, 1], got {rho!r}")
    return r


def correlation_bounds(rho_xy: float, rho_xz: float) -> tuple[float, float, float]:
    """(lower, CIA value, upper) of ``rho_YZ`` given ``rho_XY`` and ``rho_XZ`` (scalar X)."""
    a, b = _check_rho("rho_xy", rho_xy), _check_rho("rho_xz", rho_xz)
    half = float(np.sqrt(max(0.0, (1 - a * a) * (1 - b * b))))
    return a * b - half, a * b, a * b + half


def is_psd(matrix: np.ndarray, tol: float = 1e-9) -> bool:
    """True if the symmetric ``matrix`` has no eigenvalue below ``-tol``."""
    m = check_array("matrix", matrix, ndim=2)
    return bool(np.linalg.eigvalsh((m + m.T) / 2).min() >= -tol)


def _corr_block(name: str, m: object, shape: tuple[int, int]) -> np.ndarray:
    arr = check_array(name, np.atleast_2d(np.asarray(m, dtype=float)), ndim=2)
    if arr.shape != shape:
        raise InvalidInputError(f"{name} must have shape {shape}, got {arr.shape}")
    return arr


def cross_correlation_bounds(corr_xx: np.ndarray, corr_xy: np.ndarray, corr_xz: np.ndarray,
                             corr_yy: np.ndarray, corr_zz: np.ndarray
                             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Entrywise (lower, CIA centre, upper) of the unobserved block ``R_YZ``.

    The centre ``R_YX R_XX^-1 R_XZ`` is the CIA value (the Gaussian statistical-matching
    answer); the half-widths are ``sqrt(A_ii B_jj)`` with ``A = R_YY - R_YX R_XX^-1 R_XY`` and
    ``B = R_ZZ - R_ZX R_XX^-1 R_XZ``. Shapes: (p, p), (p, q), (p, r), (q, q), (r, r).
    """
    xx = np.atleast_2d(check_array("corr_xx", np.atleast_2d(corr_xx), ndim=2))
    p = xx.shape[0]
    xy = _corr_block("corr_xy", corr_xy, (p, np.atleast_2d(corr_xy).shape[1]))
    xz = _corr_block("corr_xz", corr_xz, (p, np.atleast_2d(corr_xz).shape[1]))
    yy = _corr_block("corr_yy", corr_yy, (xy.shape[1], xy.shape[1]))
    zz = _corr_block("corr_zz", corr_zz, (xz.shape[1], xz.shape[1]))
    observed_a = np.block([[xx, xy], [xy.T, yy]])
    observed_b = np.block([[xx, xz], [xz.T, zz]])
    for name, m in (("(X, Y)", observed_a), ("(X, Z)", observed_b)):
        if not is_psd(m, 1e-8):
            raise InvalidInputError(
                f"the correlation matrix of {name} is not positive semi-definite, so no joint "
                "law has it; estimate it from one table (pairwise estimates can be inconsistent)")
    solve = np.linalg.pinv(xx)
    centre = xy.T @ solve @ xz
    a = yy - xy.T @ solve @ xy
    b = zz - xz.T @ solve @ xz
    half = np.sqrt(np.clip(np.outer(np.diag(a), np.diag(b)), 0.0, None))
    return centre - half, centre, centre + half


def completion_bounds(corr: np.ndarray, i: int, j: int) -> tuple[float, float, float]:
    """Range of the entry (i, j) of a correlation matrix given every other entry.

    With S the other indices, ``r_ij`` keeps the matrix positive semi-definite iff it lies in
    ``c +/- sqrt(s_ii s_jj)``, where ``c = R_iS R_SS^-1 R_Sj`` and ``s`` is the Schur
    complement ``R_{ij,ij} - R_{ij,S} R_SS^-1 R_{S,ij}``. The value of ``corr[i, j]`` is ignored.
    Returns (lower, centre, upper).
    """
    r = check_array("corr", corr, ndim=2)
    d = r.shape[0]
    if r.shape != (d, d) or not (is_int(i) and is_int(j)) or not (0 <= i < d and 0 <= j < d) \
            or i == j:
        raise InvalidInputError(
            f"corr must be square and (i, j) two different indices below {d}; got shape "
            f"{r.shape}, i={i}, j={j}")
    rest = [k for k in range(d) if k not in (i, j)]
    rs = r[np.ix_(rest, rest)]
    lo, ce, hi = cross_correlation_bounds(rs, r[np.ix_(rest, [i])], r[np.ix_(rest, [j])],
                                          [[r[i, i]]], [[r[j, j]]])
    return float(lo[0, 0]), float(ce[0, 0]), float(hi[0, 0])
