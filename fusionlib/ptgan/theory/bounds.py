"""Proposition 1, Lemma 4, Theorem 1 and Corollary 1 of PTGAN evaluated on a critic and data.

Every quantity is computed on the *empirical measures* of the two samples given (``real``,
``fake``: the critic's inputs, ``[x, t(alpha)]`` for a conditional critic). On them the
statements hold exactly as the paper states them for two distributions with bounded support,
so each check is a claim that can fail: a violated inequality is a counterexample.

* :func:`neural_distance_bracket` -- ``d_D`` of the class that contains the critic
  (``M_w(l) = ||W_l||_F``, (A1)) lies between the best value of a network of the class we can
  name (the critic itself and the single-path witnesses of Lemma 4's proof) and Proposition 1's
  upper bound ``prod_l M_w(l) prod K W1``.
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
from fusionlib.metrics.distances import wasserstein1
from fusionlib.ptgan.theory.nets import (
    Layers,
    backward,
    forward,
    frobenius_norms,
    lipschitz_bounds,
)

__all__ = ["MAX_PATHS", "neural_distance_bracket", "lemma4_ratios", "theorem1_ratios",
           "empirical_w1"]

#: the largest number of paths through the network over which Theorem 1's constants take their
#: maximum (two hidden layers of 64 units have 64 paths per node of the first layer)
MAX_PATHS = 4096


def empirical_w1(real: np.ndarray, fake: np.ndarray) -> float:
    """Exact W1 between the two empirical measures (equal weights per sample)."""
    return wasserstein1(real, fake)


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
    and for a ReLU critic the witnesses of Lemma 4's proof (node ``r`` of layer ``l`` read
    through single weights of size ``M_w(j)``, giving ``prod_{j>l} M_w(j) |gap_{l,r}|``).
    ``upper``: Proposition 1, ``prod M_w prod K W1``. Also returns ``w1``, ``critic`` (the
    critic's own ``L``), ``lipschitz_spectral`` (the spectral-norm bound times W1) and
    ``ratio = lower / upper`` (at most 1 if Proposition 1 holds).
    """
    w1 = empirical_w1(real, fake) if w1 is None else float(w1)
    m = frobenius_norms(layers)
    gaps = _node_gaps(layers, real, fake)
    critic = float(gaps[-1][0])
    lower = abs(critic)
    if layers.slope == 0.0:
        for k, gap in enumerate(gaps[:-1], start=1):
            lower = max(lower, float(np.prod(m[k:]) * np.abs(gap).max()))
    bounds = lipschitz_bounds(layers)
    upper = bounds["frobenius"] * w1
    return {"w1": w1, "critic": critic, "lower": lower, "upper": upper,
            "lipschitz_spectral": bounds["spectral"] * w1,
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


def _layer_ratios(layers: Layers, fx, fg, k: int, d_values: dict[str, float], tv: float):
    (pre_x, post_x), (pre_g, post_g) = fx, fg
    dx, dg = backward(layers, pre_x), backward(layers, pre_g)
    grad = dx[k - 1].T @ post_x[k - 1] / len(post_x[0]) - dg[k - 1].T @ post_g[k - 1] / len(
        post_g[0])
    m = frobenius_norms(layers)
    cw = _c_w(layers, k)
    out = {}
    if k == layers.depth:
        rhs_parts = {name: np.full_like(grad, v / m[-1]) for name, v in d_values.items()}
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
        rhs_parts = {name: c1[:, None] * v + c2[None, :] * tv + c3 for name, v in d_values.items()}
    lhs = np.abs(grad)
    for key, rhs in rhs_parts.items():
        scaled = np.where(cw[:, None] > 0, lhs / np.where(cw[:, None] > 0, cw[:, None], 1.0),
                          np.where(lhs > 0, np.inf, 0.0))
        ratio = np.where(rhs > 0, scaled / np.where(rhs > 0, rhs, 1.0),
                         np.where(scaled > 0, np.inf, 0.0))
        out[key] = ratio
    return out


def theorem1_ratios(layers: Layers, real: np.ndarray, fake: np.ndarray, *, d_upper: float,
                    d_lower: float | None = None, tv: float = 1.0) -> pd.DataFrame:
    """Theorem 1 entry by entry: ``ratio = (|dL/dW_{l,r,c}| / C_w(l)) / RHS`` per layer.

    Parameters
    ----------
    d_upper:
        Proposition 1's upper bound on ``d_D`` (the check that can refute the theorem).
    d_lower:
        A value of a network of the class (:func:`neural_distance_bracket`'s ``lower``); the
        bound with it is tighter than the theorem's (a ratio above 1 there refutes nothing,
        it shows how much the ``d_D`` term carries).
    tv:
        ``d_TV`` between the two measures (1 for two samples of distinct points).

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
        ratios = _layer_ratios(layers, fx, fg, k, d_values, tv)
        row = {"layer": k, "entries": int(ratios["upper"].size),
               "max_ratio": float(ratios["upper"].max()),
               "violations": int((ratios["upper"] > 1 + 1e-9).sum())}
        if "lower" in ratios:
            row.update(max_ratio_lower=float(ratios["lower"].max()),
                       violations_lower=int((ratios["lower"] > 1 + 1e-9).sum()))
        rows.append(row)
    return pd.DataFrame(rows)
