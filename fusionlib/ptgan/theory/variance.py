"""Proposition 2, Lemmas 1-3 and Remark 3 of PTGAN on the collapsed-generator toy (Figure 2).

The setting is that of :mod:`fusionlib.ptgan.variance.collapse` (SM D.1): the target
``p_X = N(-mu2, s^2)/2 + N(mu2, s^2)/2``, a generator frozen on the left mode, a critic trained
with the Wasserstein loss and the R1 penalty. At chosen iterations :func:`collapse_checks`
evaluates, for the untempered loss ``L_b = mean D(X_i) - mean D(G(Z_i))``:

* **Lemma 2** (exact): ``Var(L_i) = z s_S^2 + (1 - z) s_Sc^2 + z (1 - z)(m_Sc - m_S)^2`` for
  ``L_i = D(X_i) - E D(G(Z))`` split at a threshold ``eps`` (empirical moments, ddof 0).
* **Proposition 2**: ``||Cov(dL_b/dw_d)||_2 >= [z(1-z) E[L|L>=eps]^2 + z s_S^2 + (1-z) s_Sc^2 +
  s_G^2] / (n_b ||w_d||^2)`` at the ``eps > 0`` where ``E[L | L <= eps] = 0`` (the
  proposition's condition). The left side is estimated from ``K`` independent minibatch
  gradients of the last layer by a *split sample* (:func:`split_top_eigenvalue`): the top
  eigenvector from one half, the Rayleigh quotient of the other half's covariance along it.
  Given the first half this is unbiased for ``v' Cov v <= ||Cov||_2``: a lower estimate, so a
  pass certifies the lower bound (the full-sample top eigenvalue is biased upwards and can pass
  a violated bound). The right side comes from a large independent sample.
* **Lemma 1**: ``||Cov(dL_b/dw_d)||_2 >= Var(L_b) / ||w_d||^2`` with ``Var(L_b)`` the variance
  of the same ``K`` minibatch losses (a Rayleigh quotient: ``L_b = w_d . dL_b/dw_d``; linear
  algebra on one matrix, shown as an implementation identity).
* **Lemma 3**: the spread of ``L_b`` around its centre shrinks as ``n_b^(-1/2)`` (the
  ``O_p(1/sqrt(n_b))`` term), measured at three minibatch sizes by the standard deviation and by
  the interquartile range (``O_p`` is a statement in probability; quantiles stay defined when
  the data violate (A3) with infinite variance): :func:`minibatch_spreads`.
* **Remark 3**: one-step gradients of ``w_d`` at several ``r`` from the same minibatch draws:
  the variance ``tr Cov g_r`` (paired differences against ``r = 1``) and the squared "bias"
  ``||E g_r - E g_1||^2``, estimated without the upward bias of a norm of a noisy mean (a
  U-statistic over the minibatches, with a jackknife standard error): :func:`remark3_terms`.
* **Proposition 1** on the example: ``L(D) <= prod ||W_l||_F W1(p_X, p_G)`` (in-sample; W1 by
  SciPy's one-dimensional solution).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from fusionlib.checks import check_positive_int
from fusionlib.errors import InvalidInputError
from fusionlib.gan.networks import Critic
from fusionlib.gan.penalties import r1_penalty
from fusionlib.ptgan.tempering import minibatch_alpha, temperature, tempered_minibatch
from fusionlib.ptgan.theory.bounds import neural_distance_bracket
from fusionlib.ptgan.theory.nets import layers_of
from fusionlib.ptgan.variance.collapse import sample_two_modes
from fusionlib.rng import child, torch_generator

__all__ = ["CollapseCheck", "epsilon_root", "lemma2_parts", "penultimate", "collapse_checks",
           "split_top_eigenvalue", "full_top_eigenvalue", "minibatch_spreads", "remark3_terms",
           "unbiased_sq_norm"]

#: r values of the one-step bias-variance comparison (Remark 3)
REMARK3_R = (1.0, 0.99, 0.9, 0.5)


@dataclass(frozen=True)
class CollapseCheck:
    """Settings of one run (the Figure 2 toy plus the sizes of the checks)."""

    mu2: float = 1.5
    sd: float = 0.1
    hidden: tuple[int, ...] = (64, 64, 64)
    n_iter: int = 300
    check_every: int = 50
    batch_size: int = 100
    n_batches: int = 200
    n_big: int = 10_000
    lr: float = 1e-4
    r1_weight: float = 10.0


def penultimate(critic: Critic, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """``A_{d-1}`` of a :class:`~fusionlib.gan.networks.Critic` at inputs ``x`` (n, 1), ``t``:
    the gradient of the score with respect to ``w_d`` (per row)."""
    h = torch.cat([x, t.unsqueeze(1)], dim=1)
    return critic.net[:-1](h)


def epsilon_root(losses: np.ndarray) -> float | None:
    """The largest ``eps`` with ``mean{L_i : L_i <= eps} <= 0`` (where the conditional mean of
    the covered part crosses 0); None when no ``eps > 0`` meets Proposition 2's condition."""
    s = np.sort(losses)
    cm = np.cumsum(s) / np.arange(1, len(s) + 1)
    ok = np.nonzero(cm <= 0)[0]
    if not len(ok) or s[ok[-1]] <= 0:
        return None
    return float(s[ok[-1]])


def lemma2_parts(losses: np.ndarray, eps: float) -> dict:
    """The pieces of Lemma 2's decomposition at ``eps`` (empirical, ddof 0)."""
    low, high = losses[losses <= eps], losses[losses > eps]
    z = len(low) / len(losses)
    m_s, m_c = (low.mean() if len(low) else 0.0), (high.mean() if len(high) else 0.0)
    v_s, v_c = (low.var() if len(low) else 0.0), (high.var() if len(high) else 0.0)
    total = z * v_s + (1 - z) * v_c + z * (1 - z) * (m_c - m_s) ** 2
    return {"zeta": z, "mean_s": m_s, "mean_sc": m_c, "var_s": v_s, "var_sc": v_c,
            "decomposed": float(total), "var": float(losses.var())}


def _collapsed(n: int, c: CollapseCheck, g: torch.Generator) -> torch.Tensor:
    return -c.mu2 + c.sd * torch.randn(n, 1, generator=g)


def split_top_eigenvalue(grads: np.ndarray) -> tuple[float, float, np.ndarray]:
    """A lower estimate of ``||Cov g||_2`` from ``K`` independent draws ``grads`` (K, p).

    The top eigenvector ``v`` of the sample covariance of the first half, then the mean of
    ``((g - mean) . v)^2`` over the second half (``ddof = 1``): given the first half, unbiased for
    ``v' Cov v``, which is at most ``||Cov||_2``. Returns ``(value, se, v)``; ``se`` is the
    standard error of that mean over the second half."""
    g = np.asarray(grads, dtype=np.float64)
    if g.ndim != 2 or len(g) < 8:
        raise InvalidInputError(f"need at least 8 draws (K, p), got {g.shape}")
    half = len(g) // 2
    a, b = g[:half], g[half:]
    _, vecs = np.linalg.eigh(np.cov(a, rowvar=False).reshape(g.shape[1], g.shape[1]))
    v = vecs[:, -1]
    proj = ((b - b.mean(0)) @ v) ** 2 * len(b) / (len(b) - 1)
    return float(proj.mean()), float(proj.std(ddof=1) / np.sqrt(len(b))), v


def full_top_eigenvalue(grads: np.ndarray) -> tuple[float, float]:
    """The top eigenvalue of the full sample covariance and its delta-method standard error
    (the estimator the chapter used before: biased upwards, see :func:`split_top_eigenvalue`)."""
    g = np.asarray(grads, dtype=np.float64)
    vals, vecs = np.linalg.eigh(np.cov(g, rowvar=False).reshape(g.shape[1], g.shape[1]))
    proj = ((g - g.mean(0)) @ vecs[:, -1]) ** 2
    return float(vals[-1]), float(proj.std(ddof=1) / np.sqrt(len(g)))


@torch.no_grad()
def _prop2(critic: Critic, c: CollapseCheck, g: torch.Generator) -> dict:
    nb, k = c.batch_size, c.n_batches
    zero = torch.zeros(nb * k)
    x, y = sample_two_modes(nb * k, c.mu2, c.sd, g), _collapsed(nb * k, c, g)
    grads = (penultimate(critic, x, zero) - penultimate(critic, y, zero)).reshape(k, nb, -1)
    grads = grads.mean(1).double().numpy()
    w = critic.net[-1].weight.detach().double().numpy()[0]
    cov = np.cov(grads, rowvar=False)
    split, split_se, _ = split_top_eigenvalue(grads)
    top, top_se = full_top_eigenvalue(grads)
    losses_b = grads @ w
    xb, yb = sample_two_modes(c.n_big, c.mu2, c.sd, g), _collapsed(c.n_big, c, g)
    zb = torch.zeros(c.n_big)
    d_x = critic(xb, zb).double().numpy()
    d_g = critic(yb, zb).double().numpy()
    loss_i = d_x - d_g.mean()
    eps = epsilon_root(loss_i)
    out = {"cov_norm": split, "cov_norm_se": split_se, "cov_norm_full": top,
           "cov_norm_full_se": top_se,
           "var_lb": float(losses_b.var(ddof=1)), "w_norm2": float(w @ w),
           "rayleigh": float(w @ cov @ w / (w @ w)), "eps": np.nan, "prop2_rhs": np.nan}
    parts = lemma2_parts(loss_i, 0.0 if eps is None else eps)
    out.update({f"l2_{k2}": v2 for k2, v2 in parts.items()})
    if eps is not None:
        high = loss_i[loss_i >= eps]
        z = parts["zeta"]
        num = (z * (1 - z) * (high.mean() if len(high) else 0.0) ** 2 + z * parts["var_s"]
               + (1 - z) * parts["var_sc"] + d_g.var())
        out.update(eps=eps, prop2_rhs=float(num / (nb * (w @ w))))
    return out


def minibatch_spreads(draw, sizes, n_batches: int) -> dict:
    """Spread of the minibatch loss ``L_b`` over ``n_batches`` minibatches of every size.

    ``draw(n)`` returns ``n`` per-row terms ``L_i = D(X_i) - D(G(Z_i))`` (a 1-D array); ``L_b``
    is their mean over a minibatch. Returns ``sd_lb_<n_b>`` (standard deviation) and
    ``iqr_lb_<n_b>`` (interquartile range / 1.349, the sd of a normal law with that range)."""
    out = {}
    for nb in sizes:
        lb = np.asarray(draw(int(nb) * n_batches), dtype=np.float64).reshape(n_batches, nb)
        lb = lb.mean(1)
        q1, q3 = np.quantile(lb, [0.25, 0.75])
        out[f"sd_lb_{nb}"] = float(lb.std(ddof=1))
        out[f"iqr_lb_{nb}"] = float((q3 - q1) / 1.349)
    return out


@torch.no_grad()
def _lemma3(critic: Critic, c: CollapseCheck, g: torch.Generator, sizes=(16, 64, 256)) -> dict:
    def draw(n: int) -> np.ndarray:
        x, y = sample_two_modes(n, c.mu2, c.sd, g), _collapsed(n, c, g)
        zero = torch.zeros(n)
        return (critic(x, zero) - critic(y, zero)).double().numpy()

    return minibatch_spreads(draw, sizes, c.n_batches)


def unbiased_sq_norm(d: np.ndarray) -> tuple[float, np.ndarray]:
    """``||E d||^2`` from ``K`` independent draws ``d`` (K, p) without the upward bias of
    ``||mean d||^2`` (which adds ``tr Cov d / K``): the U-statistic
    ``sum_{k != l} d_k . d_l / (K (K - 1))``. Returns it and its ``K`` leave-one-out values
    (for a jackknife standard error)."""
    d = np.asarray(d, dtype=np.float64)
    k = len(d)
    if k < 3:
        raise InvalidInputError(f"need at least 3 draws, got {k}")
    s, q = d.sum(0), float((d**2).sum())
    sq = (d**2).sum(1)
    u = (float(s @ s) - q) / (k * (k - 1))
    s_minus = s[None, :] - d
    loo = ((s_minus**2).sum(1) - (q - sq)) / ((k - 1) * (k - 2))
    return float(u), loo


def _jackknife_se(loo: np.ndarray) -> float:
    k = len(loo)
    return float(np.sqrt((k - 1) / k * ((loo - loo.mean()) ** 2).sum()))


def _lerp(alpha: torch.Tensor, y1: torch.Tensor, y2: torch.Tensor) -> torch.Tensor:
    a = alpha.unsqueeze(1)
    return a * y1 + (1 - a) * y2


@torch.no_grad()
def remark3_terms(critic: Critic, x1: torch.Tensor, x2: torch.Tensor, y1: torch.Tensor,
                  y2: torch.Tensor, u: torch.Tensor, g: torch.Generator, *,
                  fake=_lerp, rs=REMARK3_R) -> dict:
    """One-step gradients of ``w_d`` at every ``r`` of ``rs`` from the same draws.

    ``x1, x2`` (K n_b, 1) data pairs and ``y1, y2`` generator pairs; ``u`` (2, K, n_b) the
    uniforms of Algorithm 1's alpha; ``fake(alpha, y1, y2)`` the generator's tempered output
    (default: the interpolation ``alpha y1 + (1 - alpha) y2`` of a generator that follows the
    tempering, SM A.3). Returns per ``r``: ``var_<r>`` (tr Cov of the minibatch gradient),
    ``var_diff_<r>`` (against ``r = 1``, paired) with ``var_diff_se_<r>``; ``bias2_<r>``
    (``||E g_r - E g_1||^2``, :func:`unbiased_sq_norm`) with its jackknife ``bias2_se_<r>``,
    ``bias_<r>`` (its square root, 0 when negative), and ``bias2_diff`` = ``bias2_0.5 -
    bias2_0.99`` with ``bias2_diff_se`` (jackknife of the paired difference)."""
    k = u.shape[1]
    grads = {}
    for r in rs:
        alpha = torch.cat([minibatch_alpha(u[0, i], u[1, i], r, g) for i in range(k)])
        a = alpha.unsqueeze(1)
        q, t = a * x1 + (1 - a) * x2, temperature(alpha)
        f = fake(alpha, y1, y2)
        gr = (penultimate(critic, q, t) - penultimate(critic, f, t)).reshape(k, x1.shape[0] // k,
                                                                            -1)
        grads[r] = gr.mean(1).double().numpy()
    out: dict = {}
    base = grads[rs[0]]
    dev1 = ((base - base.mean(0)) ** 2).sum(1)
    loos = {}
    for r, gr in grads.items():
        dev = ((gr - gr.mean(0)) ** 2).sum(1)
        # paired over the same minibatch draws: the variance change and its standard error
        out[f"var_diff_{r:g}"] = float((dev - dev1).mean() * k / (k - 1))
        out[f"var_diff_se_{r:g}"] = float((dev - dev1).std(ddof=1) / np.sqrt(k))
        out[f"var_{r:g}"] = float(dev.mean() * k / (k - 1))
        out[f"var_se_{r:g}"] = float(dev.std(ddof=1) / np.sqrt(k))
        b2, loo = unbiased_sq_norm(gr - base)
        loos[r] = loo
        out[f"bias2_{r:g}"] = b2
        out[f"bias2_se_{r:g}"] = _jackknife_se(loo) if r != rs[0] else 0.0
        out[f"bias_{r:g}"] = float(np.sqrt(max(b2, 0.0)))
    if 0.5 in grads and 0.99 in grads:
        out["bias2_diff"] = out["bias2_0.5"] - out["bias2_0.99"]
        out["bias2_diff_se"] = _jackknife_se(loos[0.5] - loos[0.99])
    return out


@torch.no_grad()
def _remark3(critic: Critic, c: CollapseCheck, g: torch.Generator) -> dict:
    nb, k = c.batch_size, c.n_batches
    x1, x2 = (sample_two_modes(nb * k, c.mu2, c.sd, g) for _ in range(2))
    y1, y2 = _collapsed(nb * k, c, g), _collapsed(nb * k, c, g)
    u = torch.rand(2, k, nb, generator=g)
    return remark3_terms(critic, x1, x2, y1, y2, u, g)


def _prop1(critic: Critic, c: CollapseCheck, g: torch.Generator, n: int = 1000) -> dict:
    x, y = sample_two_modes(n, c.mu2, c.sd, g), _collapsed(n, c, g)
    zero = torch.zeros(n, 1)
    real, fake = torch.cat([x, zero], 1).numpy(), torch.cat([y, zero], 1).numpy()
    br = neural_distance_bracket(layers_of(critic), real, fake)
    return {f"p1_{k}": v for k, v in br.items()}


def collapse_checks(check: CollapseCheck, seed: object) -> pd.DataFrame:
    """Train the Figure 2 critic and evaluate every check at iterations 0, check_every, ....

    Returns one row per checked iteration with the columns described in the module text
    (``cov_norm`` (split sample) and ``cov_norm_full``, ``prop2_rhs``, ``rayleigh``, ``l2_*``,
    ``sd_lb_*``, ``iqr_lb_*``, ``var_*``, ``bias2_*``, ``p1_*``) and ``iteration``, ``mu2``,
    ``seed``.
    """
    check_positive_int("n_iter", check.n_iter)
    check_positive_int("check_every", check.check_every)
    critic = Critic(1, check.hidden, conditional=True, seed=child(seed, "critic"))
    opt = torch.optim.Adam(critic.parameters(), lr=check.lr, betas=(0.0, 0.9))
    train, meas = torch_generator(seed, "train"), torch_generator(seed, "checks")
    rows = []

    def measure(it: int) -> None:
        rows.append({"iteration": it, **_prop2(critic, check, meas),
                     **_lemma3(critic, check, meas), **_remark3(critic, check, meas),
                     **_prop1(critic, check, meas)})

    measure(0)
    for it in range(1, check.n_iter + 1):
        pool = sample_two_modes(2 * check.batch_size, check.mu2, check.sd, train)
        tb = tempered_minibatch(pool, check.batch_size, 1.0, train)
        fake = _collapsed(check.batch_size, check, train)
        t = temperature(tb.alpha1)
        loss = (critic(fake, t).mean() - critic(tb.q1, t).mean()
                + 0.5 * check.r1_weight * r1_penalty(critic, tb.q1, t))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if it % check.check_every == 0 or it == check.n_iter:
            measure(it)
    frame = pd.DataFrame(rows)
    frame["mu2"], frame["seed"] = check.mu2, int(seed)
    return frame
