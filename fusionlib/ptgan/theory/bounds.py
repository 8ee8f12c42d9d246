"""Proposition 1, Lemma 4, Theorem 1 and Corollary 1 of PTGAN evaluated on a critic and data.

Every quantity is computed on the *empirical measures* of the two samples given (``real``,
``fake``: the critic's inputs, ``[x, t(alpha)]`` for a conditional critic). On them the
statements hold exactly as the paper states them for two distributions with bounded support,
so each check is a claim that can fail: a violated inequality is a counterexample.

* :func:`neural_distance_bracket` -- ``d_D`` of the class that contains the critic
  (``M_w(l) = ||W_l||_F``, (A1), biases free as the critic's) lies between the best value of a
  network of the class we can name (the critic itself, the single-path witnesses of Lemma 4's
  proof and the ridge witnesses of :func:`ridge_witness`) and Proposition 1's upper bound
  ``prod_l M_w(l) prod K W1``. The ridge witnesses make the check tight where a one-dimensional
  Lipschitz function carries W1 (two laws that are shifts of each other, the collapse toy):
  there a constant off by 2 is caught.
* :func:`lemma4_ratios` -- Lemma 4: ``|mean A_{l,r}(X) - mean A_{l,r}(G)| <= d_D /
  prod_{j>l} M_w(j)``, with ``d_D`` at its Proposition 1 upper bound.
* :func:`theorem1_ratios` -- Theorem 1 (and Corollary 1, on tempered inputs) for ReLU critics:
  ``|dL/dW_{l,r,c}| / C_w(l) <= C_k1(l) d_D + C_k2(l) d_TV + C_k3(l)`` with the constants of
  SM A.2; the ``O_p(1/sqrt(n_b))`` term is absent because ``L`` is the loss of the empirical
  measures themselves (no minibatch), and ``d_TV = 1`` between two samples of distinct points.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.theory.distances import exact_w1
from fusionlib.ptgan.theory.nets import (
    Layers,
    backward,
    forward,
    frobenius_norms,
    lipschitz_bounds,
)

__all__ = ["MAX_PATHS", "RIDGE_DIRECTIONS", "neural_distance_bracket", "lemma4_ratios",
           "theorem1_ratios", "empirical_w1", "ridge_witness"]

#: the largest number of paths through the network over which Theorem 1's constants take their
#: maximum (two hidden layers of 64 units have 64 paths per node of the first layer)
MAX_PATHS = 4096
#: random directions of the ridge witnesses (besides the axes and the mean-gap direction)
RIDGE_DIRECTIONS = 64


def empirical_w1(real: np.ndarray, fake: np.ndarray) -> float:
    """Exact W1 between the two empirical measures (equal weights per sample; SciPy's sorting
    solution for one-dimensional data, :func:`~fusionlib.ptgan.theory.distances.exact_w1`)."""
    return exact_w1(real, fake)


def _ridge_1d(p: np.ndarray, q: np.ndarray) -> float:
    """``max_b max(|E relu(p - b) - E relu(q - b)|, |E relu(b - p) - E relu(b - q)|)`` over
    every threshold ``b`` (the pooled values and below them: the mean gap)."""
    ps, qs = np.sort(p), np.sort(q)
    b = np.concatenate([ps, qs])
    cp = np.concatenate([[0.0], np.cumsum(ps[::-1])])[::-1]  # sum of ps[i:]
    cq = np.concatenate([[0.0], np.cumsum(qs[::-1])])[::-1]
    ip, iq = np.searchsorted(ps, b, side="right"), np.searchsorted(qs, b, side="right")
    up = (cp[ip] - b * (len(ps) - ip)) / len(ps)  # E relu(p - b)
    uq = (cq[iq] - b * (len(qs) - iq)) / len(qs)
    g = up - uq
    gap = float(p.mean() - q.mean())
    return float(max(np.abs(g).max(), np.abs(g - gap).max(), abs(gap)))


def ridge_witness(real: np.ndarray, fake: np.ndarray, *, directions: int = RIDGE_DIRECTIONS,
                  seed: int = 0) -> float:
    """The largest ``|E f(real) - E f(fake)|`` over the ridge functions
    ``f(x) = +-relu(+-(u . x) - b)`` (unit ``u``: the axes, the mean-gap direction and
    ``directions`` random ones; every threshold ``b``).

    Each ``f`` is 1-Lipschitz, so the value is at most W1 (it equals W1 for two laws that are
    shifts of each other along ``u``, and for the collapse toy). ``prod_l M_w(l) f`` is a network
    of the critic's class with free biases: first row ``M_w(1) u`` with bias ``-M_w(1) b``, then
    single weights ``M_w(l)`` (a ReLU passes the non-negative value unchanged); so
    ``prod M_w`` times this value is a lower value of ``d_D``.
    """
    x, y = (np.asarray(v, dtype=np.float64) for v in (real, fake))
    x, y = (v[:, None] if v.ndim == 1 else v for v in (x, y))
    k = x.shape[1]
    dirs = [np.eye(k)]
    gap = x.mean(0) - y.mean(0)
    if np.linalg.norm(gap) > 0:
        dirs.append((gap / np.linalg.norm(gap))[None])
    if k > 1 and directions > 0:
        r = np.random.default_rng(seed).normal(size=(directions, k))
        dirs.append(r / np.linalg.norm(r, axis=1, keepdims=True))
    u = np.vstack(dirs)
    return max(_ridge_1d(x @ v, y @ v) for v in u)


def _relu_only(layers: Layers) -> None:
    if layers.slope != 0.0:
        raise InvalidInputError(
            f"Theorem 1's constants are derived for ReLU (slope 0); this critic has slope "
            f"{layers.slope}")


def _node_gaps(layers: Layers, real: np.ndarray, fake: np.ndarray) -> list[np.ndarray]:
    """``mean A_l(real) - mean A_l(fake)`` for l = 1..d-1 and the score gap (layer d)."""
    pre_x, post_x = forward(layers, real)
    pre_g, post_g = forward(layers, fake)
    gaps = [px.mean(0) - pg.mean(0) for px, pg in zip(post_x[1:], post_g[1:], strict=True)]
    gaps.append(np.atleast_1d(pre_x[-1].mean() - pre_g[-1].mean()))
    return gaps


def neural_distance_bracket(layers: Layers, real: np.ndarray, fake: np.ndarray, *,
                            w1: float | None = None) -> dict[str, float]:
    """Lower and upper values for the neural distance of the critic's class.

    ``lower``: the largest ``|L|`` of a network of the class we can write down: the critic,
    for a ReLU critic the witnesses of Lemma 4's proof (node ``r`` of layer ``l`` read
    through single weights of size ``M_w(j)``, giving ``prod_{j>l} M_w(j) |gap_{l,r}|``;
    ``nodes``), and the ridge witnesses ``prod M_w relu(u . x - b)`` (``ridge``,
    :func:`ridge_witness`; a class with the critic's free biases). ``upper``: Proposition 1,
    ``prod M_w prod K W1``. Also returns ``w1``, ``critic`` (the critic's own ``L``),
    ``lipschitz_spectral`` (the spectral-norm bound times W1) and ``ratio = lower / upper`` (at
    most 1 if Proposition 1 holds; near 1 where a ridge witness carries W1).
    """
    w1 = empirical_w1(real, fake) if w1 is None else float(w1)
    m = frobenius_norms(layers)
    gaps = _node_gaps(layers, real, fake)
    critic = float(gaps[-1][0])
    nodes = 0.0
    if layers.slope == 0.0:
        for k, gap in enumerate(gaps[:-1], start=1):
            nodes = max(nodes, float(np.prod(m[k:]) * np.abs(gap).max()))
    bounds = lipschitz_bounds(layers)
    # the ridge construction passes a non-negative value through ReLUs (not leaky ones)
    ridge = bounds["frobenius"] * ridge_witness(real, fake) if layers.slope == 0.0 else 0.0
    lower = max(abs(critic), nodes, ridge)
    upper = bounds["frobenius"] * w1
    return {"w1": w1, "critic": critic, "nodes": nodes, "ridge": ridge, "lower": lower,
            "upper": upper, "lipschitz_spectral": bounds["spectral"] * w1,
            "ratio": lower / upper if upper > 0 else (0.0 if lower == 0 else np.inf)}


def lemma4_ratios(layers: Layers, real: np.ndarray, fake: np.ndarray, *, d_upper: float
                  ) -> pd.DataFrame:
    """Per hidden layer l: the largest ``|gap_{l,r}| prod_{j>l} M_w(j) / d_upper`` over nodes
    (at most 1 if Lemma 4 holds with ``d_D <= d_upper``)."""
    m = frobenius_norms(layers)
    rows = []
    for k, gap in enumerate(_node_gaps(layers, real, fake)[:-1], start=1):
        lhs = np.abs(gap) * np.prod(m[k:])
        rows.append({"layer": k, "nodes": len(gap), "max_ratio": float(lhs.max() / d_upper),
                     "violations": int((lhs > d_upper * (1 + 1e-9)).sum())})
    return pd.DataFrame(rows)


def _c_w(layers: Layers, k: int) -> np.ndarray:
    """``C_w(l)`` for every row r of ``W_l`` (SM A.2), l = 1..d."""
    d, w = layers.depth, layers.weights
    if k == d:
        return np.ones(1)
    if k == d - 1:
        return np.abs(w[d - 1][0])
    return np.linalg.norm(w[k], axis=0) * np.prod([np.linalg.norm(x) for x in w[k + 1:]])


def _paths(layers: Layers, pre: list[np.ndarray], k: int) -> np.ndarray:
    """Indicator products ``prod_{j=l+1}^{d-1} 1{B_{j,k_j} > 0}`` over every path k, (n, K)."""
    d = layers.depth
    ind = [(pre[j - 1] > 0).astype(np.float64) for j in range(k + 1, d)]
    if not ind:
        return np.ones((pre[0].shape[0], 1))
    count = int(np.prod([x.shape[1] for x in ind]))
    if count > MAX_PATHS:
        raise InvalidInputError(f"{count} paths after layer {k} exceed MAX_PATHS={MAX_PATHS}; "
                                "check Theorem 1 on a smaller critic (two hidden layers)")
    out = ind[0]
    for x in ind[1:]:
        out = (out[:, :, None] * x[:, None, :]).reshape(len(out), -1)
    return out


def _cov(p: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Empirical covariances ``Cov(p_k, a_c)`` for every column pair, (K, C)."""
    return (p - p.mean(0)).T @ (a - a.mean(0)) / len(p)


def _layer_ratios(layers: Layers, fx, fg, k: int, d_values: dict[str, float], tv: float,
                  rhs_factor: float = 1.0):
    (pre_x, post_x), (pre_g, post_g) = fx, fg
    dx, dg = backward(layers, pre_x), backward(layers, pre_g)
    grad = dx[k - 1].T @ post_x[k - 1] / len(post_x[0]) - dg[k - 1].T @ post_g[k - 1] / len(
        post_g[0])
    m = frobenius_norms(layers)
    cw = _c_w(layers, k)
    out = {}
    if k == layers.depth:
        rhs_parts = {name: np.full_like(grad, rhs_factor * v / m[-1])
                     for name, v in d_values.items()}
    else:
        px, pg = _paths(layers, pre_x, k), _paths(layers, pre_g, k)
        sx, sg = (pre_x[k - 1] > 0).astype(np.float64), (pre_g[k - 1] > 0).astype(np.float64)
        ax, ag = post_x[k - 1], post_g[k - 1]
        c2 = np.abs(ax.mean(0) + ag.mean(0)) / 2.0
        c1 = np.empty(len(cw))
        c3 = np.empty((len(cw), ax.shape[1]))
        for r in range(len(cw)):
            prx, prg = sx[:, [r]] * px, sg[:, [r]] * pg
            c1[r] = np.abs(prx.mean(0) + prg.mean(0)).max() / 2.0 / np.prod(m[k - 1:])
            c3[r] = np.abs(_cov(prx, ax) - _cov(prg, ag)).max(axis=0)
        rhs_parts = {name: rhs_factor * (c1[:, None] * v + c2[None, :] * tv + c3)
                     for name, v in d_values.items()}
    lhs = np.abs(grad)
    for key, rhs in rhs_parts.items():
        scaled = np.where(cw[:, None] > 0, lhs / np.where(cw[:, None] > 0, cw[:, None], 1.0),
                          np.where(lhs > 0, np.inf, 0.0))
        ratio = np.where(rhs > 0, scaled / np.where(rhs > 0, rhs, 1.0),
                         np.where(scaled > 0, np.inf, 0.0))
        out[key] = ratio
    return out


def theorem1_ratios(layers: Layers, real: np.ndarray, fake: np.ndarray, *, d_upper: float,
                    d_lower: float | None = None, tv: float = 1.0,
                    rhs_factor: float = 1.0) -> pd.DataFrame:
    """Theorem 1 entry by entry: ``ratio = (|dL/dW_{l,r,c}| / C_w(l)) / RHS`` per layer.

    Parameters
    ----------
    d_upper:
        Proposition 1's upper bound on ``d_D`` (the check that can refute the theorem).
    d_lower:
        A value of a network of the class (:func:`neural_distance_bracket`'s ``lower``), at
        most the true ``d_D``: the bound with it is at most the theorem's, so ratios at most 1
        there *certify* the theorem on the instance (a ratio above 1 there refutes nothing).
    tv:
        ``d_TV`` between the two measures (1 for two samples of distinct points).
    rhs_factor:
        Multiplies the whole right side (a planted fault: 0.1, the constants 10 times too
        small).

    Returns
    -------
    pandas.DataFrame
        One row per layer: ``entries``, ``max_ratio`` and ``violations`` (ratios above 1)
        with ``d_D = d_upper``, and ``max_ratio_lower`` / ``violations_lower`` with
        ``d_lower``.
    """
    _relu_only(layers)
    fx, fg = forward(layers, real), forward(layers, fake)
    d_values = {"upper": float(d_upper)}
    if d_lower is not None:
        d_values["lower"] = float(d_lower)
    rows = []
    for k in range(1, layers.depth + 1):
        ratios = _layer_ratios(layers, fx, fg, k, d_values, tv, rhs_factor)
        row = {"layer": k, "entries": int(ratios["upper"].size),
               "max_ratio": float(ratios["upper"].max()),
               "violations": int((ratios["upper"] > 1 + 1e-9).sum())}
        if "lower" in ratios:
            row.update(max_ratio_lower=float(ratios["lower"].max()),
                       violations_lower=int((ratios["lower"] > 1 + 1e-9).sum()))
        rows.append(row)
    return pd.DataFrame(rows)
