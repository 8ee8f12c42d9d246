"""The collapsed-generator toy of PTGAN Figures 2 and 4 (Section 2.3.2, Section 4.2, SM D.1).

Setting (SM D.1). The target is the 1-D mixture ``p_X = N(-mu2, s^2)/2 + N(mu2, s^2)/2`` with
``s^2 = 0.01`` (``mu1 = -mu2``). The generator is frozen on the left mode: it outputs draws of
``N(-mu2, s^2)``. Only the critic is trained, with the Wasserstein loss (phi(x) = x, eq. 1) and
the R1 penalty of Mescheder et al. (2018) "to control the size of the weight matrices"; after
each update the per-pair gradients ``dL_i/dw`` with ``L_i = D(x_i) - D(y_i)`` are computed on a
minibatch and their element-wise variances are summed (:func:`critic_gradient_variance`).

Figure 4 repeats this "with the same structure of D" for ``L^alpha_b`` (PTGAN, r = 0.99) against
``L^1_b`` (r = 1). We always build the critic with the temperature input ``t(alpha)``: at r = 1
every ``t = t(1) = 0``, so the extra input weight receives no gradient and the r = 1 run *is* the
untempered critic of Figure 2. At temperature ``alpha`` the real point is ``Q^alpha = alpha X +
(1 - alpha) X'`` (Algorithm 1) and the frozen generator's point is ``alpha Y + (1 - alpha) Y'``
(the interpolated-noise generator of SM C.2 / Proposition 5 when G is collapsed), with the same
``alpha`` for the real and the fake row (Algorithm 3).

Choices the paper leaves open (stated in the notebook): the R1 weight (gamma = 10, penalty
``gamma/2 E||grad_x D||^2`` on the real/tempered points), the number of iterations, Adam with the
paper's default lr 1e-4 and betas (0, 0.9), a fresh minibatch for each variance measurement, and
the unbiased variance.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import torch

from fusionlib.checks import check_choice, check_positive_int, check_probability
from fusionlib.errors import InvalidInputError
from fusionlib.gan.diagnostics.variance import critic_gradient_variances, last_layer_parameter_names
from fusionlib.gan.networks import Critic
from fusionlib.gan.penalties import coherency_penalty, r1_penalty
from fusionlib.ptgan.tempering import (
    ALPHA_SHARES,
    interpolate,
    minibatch_alpha,
    temperature,
    tempered_minibatch,
)
from fusionlib.rng import child, torch_generator

__all__ = ["CollapseSetup", "COLLAPSE_PENALTIES", "sample_two_modes", "collapse_trace"]

COLLAPSE_PENALTIES = ("r1", "cp", "none")


@dataclass(frozen=True)
class CollapseSetup:
    """One configuration of the Figure 2 / Figure 4 toy.

    Attributes
    ----------
    mu2:
        Right mode; the left mode is ``-mu2`` (Figure 2 compares 1.5 and 3.0).
    sd:
        Standard deviation of each mode (sigma^2 = 0.01, Section 2.3.2).
    r:
        Share of untempered points (eq. 7): 1.0 for ``L^1_b``, 0.99 for PTGAN in Figure 4.
    alpha_share:
        ``"fixed"``: every minibatch (training and measurement) holds the share r of
        untempered points, "only 1 % of interpolated samples in each minibatch" (Figure 4);
        ``"per_row"``: each row independently
        (:func:`~fusionlib.ptgan.tempering.minibatch_alpha`).
    hidden:
        Critic hidden widths; the Figure 1 critic has 4 layers of 256 ReLU units (d = 5).
    batch_size:
        ``n_b = m_b`` (100 in Figure 1).
    n_iter, measure_every:
        Critic updates, and the spacing of gradient-variance measurements.
    lr, beta1, beta2:
        Adam settings (the paper's defaults, Section 5 / REFERENCE).
    penalty, penalty_weight:
        ``"r1"`` (SM D.1; weight gamma, penalty gamma/2 mean ||grad||^2), ``"cp"`` (coherency
        penalty eq. 8, weight lambda) or ``"none"``.
    """

    mu2: float = 1.5
    sd: float = 0.1
    r: float = 1.0
    alpha_share: str = "fixed"
    hidden: tuple[int, ...] = (256, 256, 256, 256)
    batch_size: int = 100
    n_iter: int = 1000
    measure_every: int = 10
    lr: float = 1e-4
    beta1: float = 0.0
    beta2: float = 0.9
    penalty: str = "r1"
    penalty_weight: float = 10.0

    def validate(self) -> CollapseSetup:
        """Return self if every field is usable, else raise naming the field."""
        if not self.mu2 > 0 or not self.sd > 0:
            raise InvalidInputError(f"mu2 and sd must be > 0, got mu2={self.mu2}, sd={self.sd}")
        check_probability("r", self.r)
        check_choice("alpha_share", self.alpha_share, ALPHA_SHARES)
        check_positive_int("n_iter", self.n_iter)
        check_positive_int("measure_every", self.measure_every)
        check_positive_int("batch_size", self.batch_size)
        if self.batch_size < 2:
            raise InvalidInputError("batch_size must be >= 2 to estimate a variance")
        check_choice("penalty", self.penalty, COLLAPSE_PENALTIES)
        if self.penalty_weight < 0:
            raise InvalidInputError("penalty_weight must be >= 0")
        return self


def sample_two_modes(n: int, mu2: float, sd: float, generator: torch.Generator) -> torch.Tensor:
    """``n`` draws (n, 1) of ``N(-mu2, sd^2)/2 + N(mu2, sd^2)/2``."""
    sign = torch.where(torch.rand(n, generator=generator) < 0.5, -1.0, 1.0)
    return (sign * mu2 + sd * torch.randn(n, generator=generator)).unsqueeze(1)


def _collapsed(n: int, setup: CollapseSetup, generator: torch.Generator) -> torch.Tensor:
    return -setup.mu2 + setup.sd * torch.randn(n, 1, generator=generator)


def _batch(setup: CollapseSetup, generator: torch.Generator):
    """A tempered real minibatch (Algorithm 1) and the frozen generator's matching fakes."""
    n = setup.batch_size
    pool = sample_two_modes(2 * n, setup.mu2, setup.sd, generator)
    tb = tempered_minibatch(pool, n, setup.r, generator, share=setup.alpha_share)
    y1, y2 = _collapsed(n, setup, generator), _collapsed(n, setup, generator)
    fake = interpolate(y1, y2, tb.alpha1)
    return tb, fake


def _measure(critic: Critic, setup: CollapseSetup, generator: torch.Generator) -> dict:
    n = setup.batch_size
    x1, x2 = (sample_two_modes(n, setup.mu2, setup.sd, generator) for _ in range(2))
    u = torch.rand(2, n, generator=generator)
    alpha = minibatch_alpha(u[0], u[1], setup.r, generator, setup.alpha_share)
    real = interpolate(x1, x2, alpha)
    fake = interpolate(_collapsed(n, setup, generator), _collapsed(n, setup, generator), alpha)
    t = temperature(alpha)
    with torch.no_grad():
        loss_i = critic(real, t) - critic(fake, t)
    groups = {"grad_var": None, "grad_var_last": last_layer_parameter_names(critic)}
    out = critic_gradient_variances(critic, real, fake, groups, real_alpha=t, fake_alpha=t)
    return {"loss_mean": float(loss_i.mean()), **out}


def _penalty(critic: Critic, tb, setup: CollapseSetup) -> torch.Tensor:
    if setup.penalty == "r1":
        return 0.5 * setup.penalty_weight * r1_penalty(critic, tb.q1, temperature(tb.alpha1))
    if setup.penalty == "cp":
        return setup.penalty_weight * coherency_penalty(
            critic, tb.q_tilde, tb.q1 - tb.q2, temperature(tb.alpha_tilde))
    return torch.zeros(())


def collapse_trace(setup: CollapseSetup, seed: int) -> pd.DataFrame:
    """Train the critic against the frozen collapsed generator; record E[L] and the variance.

    Parameters
    ----------
    setup:
        The configuration (:class:`CollapseSetup`).
    seed:
        Seeds the critic's initialisation and, separately, every minibatch. Two setups run with
        the same seed start from the same critic weights ("updated from the same configuration
        of w^(t)", Section 4.2).

    Returns
    -------
    pandas.DataFrame
        One row per measurement (iterations 0, measure_every, ...): ``iteration``,
        ``loss_mean`` (minibatch estimate of E[L_i] = E D(X) - E D(G(Z)), tempered when r < 1),
        ``grad_var`` (all critic parameters), ``grad_var_last`` (last layer ``w_d`` only) and
        the setup's fields ``mu2``, ``r``, ``seed``.
    """
    setup.validate()
    critic = Critic(1, setup.hidden, conditional=True, seed=child(seed, "critic"))
    opt = torch.optim.Adam(critic.parameters(), lr=setup.lr, betas=(setup.beta1, setup.beta2))
    train_gen = torch_generator(seed, "train")
    meas_gen = torch_generator(seed, "measure")
    rows = [{"iteration": 0, **_measure(critic, setup, meas_gen)}]
    for it in range(1, setup.n_iter + 1):
        tb, fake = _batch(setup, train_gen)
        t = temperature(tb.alpha1)
        loss = critic(fake, t).mean() - critic(tb.q1, t).mean() + _penalty(critic, tb, setup)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if it % setup.measure_every == 0 or it == setup.n_iter:
            rows.append({"iteration": it, **_measure(critic, setup, meas_gen)})
    frame = pd.DataFrame(rows)
    frame["mu2"], frame["r"], frame["seed"] = setup.mu2, setup.r, int(seed)
    return frame

