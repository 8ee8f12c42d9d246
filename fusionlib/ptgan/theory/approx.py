"""The approximation results of PTGAN (SM B.6): Lemmas 6, 7 and 8 and Proposition 4.

Everything here is an explicit ReLU construction evaluated exactly on a grid, so each statement
about a sup-norm error is checked on its instance without sampling noise.

* Lemma 6 (Yarotsky 2017): ``f_m(x) = x - sum_{s<=m} g_s(x) / 4^s`` with the tooth function
  ``g(x) = 2 relu(x) - 4 relu(x - 1/2) + 2 relu(x - 1)`` and ``g_s`` its s-fold composition
  approximates ``x^2`` on [0, 1] with error at most ``4^-(m+1)`` by a network of depth
  ``L = m + 1`` (:func:`square_network` builds it as weight matrices of width 4).
* Lemma 7: ``xy = 2 M^2 (eta(|x+y|/2M) - eta(|x|/2M) - eta(|y|/2M))`` with ``eta`` of Lemma 6.
* Lemma 8: ``G^dagger(v1, v2, alpha) = v2 + prod(alpha, v1 - v2)`` realises the interpolation
  ``alpha v1 + (1 - alpha) v2`` with the product network of Lemma 7 in every coordinate.
* Proposition 4: a one-hidden-layer ReLU sub-generator of width ``k`` (a piecewise-linear map of
  uniform noise with ``k`` pieces) approximates a two-mode target in W1; :func:`prop4_errors`
  gives the error for growing ``k`` (the proposition's rate, ``(ceil(V_W/2)^2 V_D)^(-1/d_X)``,
  is ``k^-2`` for ``d_X = 1`` at fixed depth).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from fusionlib.checks import check_positive_int
from fusionlib.errors import InvalidInputError

__all__ = ["tooth", "square_approx", "square_network", "network_eval", "product_approx",
           "eta_depth_for", "interpolation_error", "mixture_quantile", "adaptive_interpolant",
           "prop4_errors", "fit_exponent"]


def tooth(x: np.ndarray) -> np.ndarray:
    """Yarotsky's tooth ``g(x) = 2 relu(x) - 4 relu(x - 1/2) + 2 relu(x - 1)``."""
    r = np.maximum
    return 2 * r(x, 0) - 4 * r(x - 0.5, 0) + 2 * r(x - 1.0, 0)


def square_approx(x: np.ndarray, m: int) -> np.ndarray:
    """``f_m(x) = x - sum_{s=1}^m g_s(x) / 2^(2s)`` (Lemma 6's approximation of x^2 on [0, 1])."""
    check_positive_int("m", m)
    x = np.asarray(x, dtype=np.float64)
    out, g = x.copy(), x.copy()
    for s in range(1, m + 1):
        g = tooth(g)
        out = out - g / 4.0**s
    return out


def square_network(m: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Lemma 6's ``eta`` as a standard feed-forward ReLU network: ``m`` hidden layers of width 4
    (three tooth units and one accumulator) and a linear output, depth ``L = m + 1``.

    Returns ``[(W_1, b_1), ..., (W_L, b_L)]``; hidden layers apply ReLU, the last is linear.
    Valid on [0, 1] (every hidden unit it needs is non-negative there).
    """
    check_positive_int("m", m)
    tooth_in = np.array([[1.0], [1.0], [1.0]]), np.array([0.0, -0.5, -1.0])
    g_row = np.array([2.0, -4.0, 2.0])  # g = 2 t1 - 4 t2 + 2 t3 from the three tooth units
    layers = [(np.vstack([tooth_in[0], [[1.0]]]), np.append(tooth_in[1], 0.0))]  # acc_0 = x
    for s in range(1, m + 1):
        # from units (t1, t2, t3, acc_{s-1}): g_s = g_row . t, acc_s = acc_{s-1} - g_s / 4^s
        acc = np.append(-g_row / 4.0**s, 1.0)
        if s == m:
            layers.append((acc[None, :], np.zeros(1)))
        else:
            w = np.vstack([np.outer(np.ones(3), np.append(g_row, 0.0)), acc])
            layers.append((w, np.append(tooth_in[1], 0.0)))
    return layers


def network_eval(layers: list[tuple[np.ndarray, np.ndarray]], x: np.ndarray) -> np.ndarray:
    """Evaluate a ReLU network given as ``[(W, b), ...]`` on inputs (n,) or (n, d)."""
    a = np.asarray(x, dtype=np.float64)
    a = a[:, None] if a.ndim == 1 else a
    for i, (w, b) in enumerate(layers):
        a = a @ w.T + b
        if i < len(layers) - 1:
            a = np.maximum(a, 0.0)
    return a[:, 0] if a.shape[1] == 1 else a


def product_approx(x: np.ndarray, y: np.ndarray, m: int, bound: float, *,
                   strict: bool = True) -> np.ndarray:
    """Lemma 7's network value ``2 M^2 (eta(|x+y|/2M) - eta(|x|/2M) - eta(|y|/2M))`` with
    ``eta = f_m`` (depth ``m + 1``) and ``M = bound`` (needs ``|x|, |y| <= M``; ``strict=False``
    evaluates it outside, a planted fault: ``eta`` is only accurate on [0, 1])."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if bound <= 0 or (strict and (np.abs(x).max() > bound or np.abs(y).max() > bound)):
        raise InvalidInputError(f"Lemma 7 needs |x|, |y| <= M = {bound}")
    two_m = 2.0 * bound
    return 2.0 * bound**2 * (square_approx(np.abs(x + y) / two_m, m)
                             - square_approx(np.abs(x) / two_m, m)
                             - square_approx(np.abs(y) / two_m, m))


def eta_depth_for(L: int, bound: float) -> int:
    """Depth of ``eta`` that gives Lemma 7's error ``4^-L``: the proof needs
    ``delta = 4^-L / (6 M^2)``, i.e. ``L + ceil(log_4(6 M^2))`` layers (not ``L``)."""
    return L + max(0, math.ceil(math.log(6.0 * bound**2, 4)))


def interpolation_error(L: int, d_x: int = 1, *, n_grid: int = 401,
                        outputs: float = 1.0) -> float:
    """Lemma 8: sup over a grid of ``||G^dagger(v1, v2, alpha) - (alpha v1 + (1-alpha) v2)||``
    for outputs ``v1, v2`` in [0, 1]^{d_x}, with product networks whose ``eta`` has the depth
    :func:`eta_depth_for` gives for ``M = 1``. The worst coordinate is repeated ``d_x`` times
    (the Euclidean norm of equal coordinate errors is ``sqrt(d_x)`` times one). ``outputs``
    (a planted fault when above 1) lets the sub-generators' outputs range over
    ``[0, outputs]^{d_x}`` with the same ``M = 1`` networks."""
    check_positive_int("d_x", d_x)
    a, dv = np.meshgrid(np.linspace(0, 1, n_grid), np.linspace(-outputs, outputs, n_grid))
    m = eta_depth_for(L, 1.0) - 1
    err = np.abs(product_approx(a.ravel(), dv.ravel(), m, 1.0, strict=outputs <= 1.0)
                 - a.ravel() * dv.ravel()).max()
    return float(np.sqrt(d_x) * err)


def mixture_quantile(u: np.ndarray, means=(0.25, 0.75), sd: float = 0.03, *,
                     n_x: int = 400_001) -> np.ndarray:
    """Quantile function of the equal mixture of N(mean_k, sd^2) (a two-mode target inside
    [0, 1], as Proposition 4 assumes), by inverting the CDF on a fine grid."""
    lo, hi = min(means) - 9 * sd, max(means) + 9 * sd
    x = np.linspace(lo, hi, n_x)
    cdf = np.mean([stats.norm.cdf(x, m, sd) for m in means], axis=0)
    return np.interp(u, cdf, x)


def adaptive_interpolant(q: np.ndarray, u: np.ndarray, pieces: int) -> tuple[np.ndarray, float]:
    """Piecewise-linear interpolant of ``q`` (values on the grid ``u``) with ``pieces`` pieces,
    knots added by bisecting the piece with the largest L1 error. Returns the knot indices and
    the L1 error ``mean |q - interpolant|`` on the grid (the W1 error of the map u -> q(u) of
    uniform noise, both maps being non-decreasing)."""
    check_positive_int("pieces", pieces)
    knots = [0, len(u) - 1]
    while len(knots) - 1 < pieces:
        errs = []
        for a, b in zip(knots[:-1], knots[1:], strict=True):
            seg = np.interp(u[a:b + 1], [u[a], u[b]], [q[a], q[b]])
            errs.append(np.abs(q[a:b + 1] - seg).sum() if b - a > 1 else 0.0)
        i = int(np.argmax(errs))
        a, b = knots[i], knots[i + 1]
        if b - a < 2:
            break
        knots.insert(i + 1, (a + b) // 2)
    approx = np.interp(u, u[knots], q[knots])
    return np.asarray(knots), float(np.abs(q - approx).mean())


def prop4_errors(widths, *, sd: float = 0.03, n_u: int = 200_000) -> pd.DataFrame:
    """W1 error of the best-found width-``k`` one-hidden-layer sub-generator (``k`` pieces,
    adaptive knots) for the two-mode target, for every ``k`` in ``widths``."""
    u = (np.arange(n_u) + 0.5) / n_u
    q = mixture_quantile(u, sd=sd)
    rows = [{"width": int(k), "units_term": math.ceil(k / 2) ** 2 * 2,
             "w1_error": adaptive_interpolant(q, u, int(k))[1]} for k in widths]
    return pd.DataFrame(rows)


def fit_exponent(x, y) -> tuple[float, float]:
    """Least-squares slope of ``log y`` on ``log x`` and its standard error."""
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    if len(lx) < 3 or not np.isfinite(ly).all():
        raise InvalidInputError("fit_exponent needs at least 3 positive finite points")
    res = stats.linregress(lx, ly)
    return float(res.slope), float(res.stderr)
