"""Theory checks along training runs on the 8-Gaussian ring (Figure 1's toy).

:func:`training_checks` trains one method with the package's trainer (Algorithm 3) and, at
the initial weights and at every checked iteration, evaluates on fresh samples:

* (A1): the Frobenius norm of every critic weight matrix (the smallest ``M_w(l)``);
* Proposition 1 (upper side, with the ridge witnesses of
  :func:`~fusionlib.ptgan.theory.bounds.ridge_witness`), Lemma 4 and Theorem 1 at ``alpha = 1``
  (Theorem 1 with ``d_D`` at both ends of its bracket): the critic against
  ``p_X`` and ``G(Z, 1)`` (:mod:`fusionlib.ptgan.theory.bounds`);
* Corollary 1 (tempered methods): the same on the joint inputs ``[Q^alpha, t(alpha)]`` and
  ``[G(Z^alpha, alpha), t(alpha)]`` with ``alpha ~ U(0, 1)`` (eq. 7 with r = 0, an admissible
  ``p_alpha``);
* Remark 3's condition: W1 of the tempered pair against W1 at ``alpha = 1``;
* Remark 4 (tempered methods): the coherency penalty's per-pair term
  ``(grad D(q~, t(a~)) . (q1 - q2))^2`` for pairs drawn from the same mode and from two modes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from fusionlib.gan.networks import eval_mode, toy_networks
from fusionlib.gan.penalties import input_gradient
from fusionlib.gan.trainer import Trainer
from fusionlib.ptgan.config import default_config
from fusionlib.ptgan.step import ptgan_trainer
from fusionlib.ptgan.tempering import interpolate, reference_noise, sample_alpha, temperature
from fusionlib.ptgan.theory.bounds import lemma4_ratios, neural_distance_bracket, theorem1_ratios
from fusionlib.ptgan.theory.nets import frobenius_norms, layers_of
from fusionlib.ptgan.toys.data import ring_centers, sample_ring
from fusionlib.rng import child, torch_generator

__all__ = ["view_checks", "remark4_terms", "training_checks"]


def view_checks(layers, real: np.ndarray, fake: np.ndarray) -> dict:
    """Proposition 1's bracket, Theorem 1's and Lemma 4's largest ratios per layer."""
    br = neural_distance_bracket(layers, real, fake)
    out = dict(br)
    t1 = theorem1_ratios(layers, real, fake, d_upper=br["upper"], d_lower=br["lower"])
    for row in t1.itertuples():
        out[f"thm1_l{row.layer}"] = row.max_ratio
        out[f"thm1_viol_l{row.layer}"] = row.violations
        out[f"thm1_lower_l{row.layer}"] = row.max_ratio_lower
    out["thm1_entries"] = int(t1["entries"].sum())
    for row in lemma4_ratios(layers, real, fake, d_upper=br["upper"]).itertuples():
        out[f"lemma4_l{row.layer}"] = row.max_ratio
    return out


def _modes(x: np.ndarray) -> np.ndarray:
    return np.argmin(((x[:, None, :] - ring_centers()[None]) ** 2).sum(-1), axis=1)


def _ring_pairs(n: int, seed: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    x1, x2 = sample_ring(n, child(seed, "x1")), sample_ring(n, child(seed, "x2"))
    return x1, x2, _modes(x1), _modes(x2)


def remark4_terms(critic, n: int, r: float, seed: object, *, pairs=_ring_pairs) -> dict:
    """Per-pair coherency-penalty terms on data pairs (Algorithm 1's draws, by hand).

    ``pairs(n, seed)`` returns ``(x1, x2, modes1, modes2)``: two (n, 2) samples and the mode of
    every point (default: the ring, each point's nearest centre). Returns the mean term over
    same-mode and two-mode pairs (with standard errors), the largest deviation from Remark 4's
    factorised form ``((a1 - a2) grad D . (x1 - x2))^2``, and the Spearman correlation of the
    term with ``||x1 - x2||``."""
    from scipy import stats

    g = torch_generator(seed, "remark4")
    x1n, x2n, m1, m2 = pairs(n, seed)
    x1 = torch.as_tensor(x1n, dtype=torch.float32)
    x2 = torch.as_tensor(x2n, dtype=torch.float32)
    a1, a2, nu = sample_alpha(n, r, g), torch.rand(n, generator=g), torch.rand(n, generator=g)
    q1, q2 = interpolate(x1, x2, a1), interpolate(x1, x2, a2)
    q_t, a_t = interpolate(q1, q2, nu), torch.lerp(a2, a1, nu)
    grad = input_gradient(critic, q_t, temperature(a_t)).detach()
    term = ((grad * (q1 - q2)).sum(1) ** 2).double().numpy()
    factored = (((a1 - a2) * (grad * (x1 - x2)).sum(1)) ** 2).double().numpy()
    same = np.asarray(m1) == np.asarray(m2)
    dist = np.linalg.norm((x1 - x2).numpy(), axis=1)
    out = {"r4_factor_dev": float(np.abs(term - factored).max() / max(term.max(), 1e-300)),
           "r4_spearman": float(stats.spearmanr(term, dist).statistic)}
    for name, mask in (("same", same), ("two", ~same)):
        out[f"r4_{name}"] = float(term[mask].mean())
        out[f"r4_{name}_se"] = float(term[mask].std(ddof=1) / np.sqrt(mask.sum()))
    return out


@torch.no_grad()
def _tempered_fake(tr: Trainer, alpha: torch.Tensor, seed: object) -> np.ndarray:
    step, cfg = tr.step, tr.step.config
    g = torch_generator(seed, "fake")
    z = reference_noise(len(alpha), cfg.latent_dim, g, alpha=alpha,
                        interpolated=cfg.interpolated_noise, distribution=cfg.noise)
    with eval_mode(step.generator):
        return step.generator(z, temperature(alpha)).numpy()


def _checkpoint(tr: Trainer, it: int, n: int, seed: object) -> list[dict]:
    critic, cfg = tr.step.critic, tr.step.config
    layers = layers_of(critic)
    base = {"iteration": it, **{f"norm_l{i + 1}": v
                                for i, v in enumerate(frobenius_norms(layers))}}
    x = sample_ring(n, child(seed, "x", it))
    fake = tr.sample(n, seed=child(seed, "fake", it)).numpy()
    if cfg.conditional:
        zero = np.zeros((n, 1))
        x, fake = np.hstack([x, zero]), np.hstack([fake, zero])
    rows = [{**base, "view": "alpha=1", **view_checks(layers, x, fake)}]
    if cfg.conditional:
        alpha = torch.rand(n, generator=torch_generator(seed, "alpha", it))
        xs = sample_ring(2 * n, child(seed, "xq", it))
        a = alpha.double().numpy()[:, None]
        q = a * xs[:n] + (1 - a) * xs[n:]
        t = temperature(alpha).double().numpy()[:, None]
        gq = _tempered_fake(tr, alpha, child(seed, "tempered", it))
        row = {**base, "view": "tempered", **view_checks(layers, np.hstack([q, t]),
                                                          np.hstack([gq, t]))}
        row.update(remark4_terms(critic, n, cfg.r, child(seed, "r4", it)))
        rows.append(row)
    return rows


def training_checks(method: str, seed: int, n_iter: int, *, check_every: int, n_check: int,
                    n_data: int = 10_000, size: str = "small") -> pd.DataFrame:
    """Train ``method`` on the ring and run the checks at iterations 0, check_every, ....

    Returns one row per (checked iteration, view) with ``norm_l*`` ((A1)), the Proposition 1
    bracket (``w1``, ``critic``, ``lower``, ``upper``, ``ratio``, ``lipschitz_spectral``),
    Theorem 1's largest ratio per layer (``thm1_l*`` with ``d_D`` at its upper bound,
    ``thm1_lower_l*`` at the lower value, ``thm1_viol_l*`` entries above 1), Lemma 4's
    (``lemma4_l*``) and, for the tempered view, Remark 4's terms (``r4_*``).
    """
    cfg = default_config(method)
    gen, critic = toy_networks(size, conditional=cfg.conditional, seed=seed,
                               latent_dim=cfg.latent_dim)
    trainer = ptgan_trainer(cfg, gen, critic, seed=seed)
    data = sample_ring(n_data, child(seed, "data"))
    checks_seed = child(seed, "checks")
    rows: list[dict] = []

    def callback(tr: Trainer, it: int) -> None:
        rows.extend(_checkpoint(tr, it, n_check, checks_seed))

    # the first check after one update (the trainer's networks exist from then on)
    at = sorted({1, *range(check_every, n_iter + 1, check_every)})
    trainer.fit(data, n_iter, callback=callback, callback_at=at)
    frame = pd.DataFrame(rows)
    frame["method"], frame["seed"] = method, int(seed)
    return frame
