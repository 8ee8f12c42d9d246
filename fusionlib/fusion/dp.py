"""Differentially private discriminators for FusionGAN: DP-SGD (seed 000, Appendix I).

Only the discriminators D_k read real records; the generator sees them only through D_k, so a
private D_k update makes the generator (and every sample) private by post-processing. A
:class:`DPFusionStep` therefore runs Algorithm B with each D_k step replaced by DP-SGD (Abadi et
al. 2016), treating the *pair* ``(x_i, z_i)`` as the sample:

1. a batch of rows of S_k: ``sampling="poisson"`` keeps each row with probability q = B / n_k
   (the case the accountant analyses); ``"uniform"`` takes B distinct rows (the usual practice;
   its epsilon, computed as if it were Poisson, is an approximation, not a proof);
2. per pair, the gradient g_i of ``l_i = -[w_i log D(x_i) + log(1 - D(pi(G(z_i))))]`` (for
   ``wgan-gp``: ``D(pi(G(z_i))) - w_i D(x_i) + lambda (||grad D(x~_i)|| - 1)^2``), clipped to
   norm at most C: ``g_i min(1, C / (||g_i|| + 1e-6))`` (the norm over all of D_k's parameters);
3. ``grad = (sum_i clip(g_i) + N(0, sigma^2 C^2 I)) / B`` (B, the expected batch size, also for
   Poisson batches), then D_k's Adam step. The noise is drawn from the trainer's generator, so
   runs are reproducible and resume bitwise.

With ``sigma = 0`` and ``C = inf`` the gradient is that of Algorithm B's mean loss. Each critic
step draws a fresh batch and counts as one step of the mechanism. The generator step then uses
the same noise z as the pairs (m rows for a Poisson batch of m; B fresh rows if m = 0).

**Accounting** (:class:`RDPAccountant`): Renyi DP of the sampled Gaussian mechanism (Mironov,
Talwar & Zhang 2019, section 3.3: ``log A_alpha`` for integer and fractional orders), summed over
steps, converted to (epsilon, delta) by Balle et al. (2020, Theorem 21)::

    eps = min_alpha  RDP(alpha) + log((alpha - 1) / alpha) - (log delta + log alpha) / (alpha - 1)

over Opacus' default orders, implemented in :mod:`fusionlib.fusion.dp_accountant` with numpy and
scipy (Opacus is not a dependency); the test suite compares it with
``opacus.accountants.RDPAccountant`` (1.6.0) where Opacus is installed.
Source k is private with respect to the rows of S_k (add/remove one row); a person present in
every source is covered by :meth:`DPFusionStep.epsilon_composed` (RDP summed over sources).

**What is not covered**: data-dependent preprocessing (FusionGAN's pooled standardisation and
the cluster/density weights of section D are computed from all rows; pass public scales and
uniform or public weights), and the logged losses (computed on real rows, for monitoring only).

Backends (:mod:`fusionlib.fusion.dp_gradients`): per-sample gradients by ``torch.func``
(default) or by Opacus' ``GradSampleModule`` (``backend="opacus"``, pin ``opacus==1.6.0``, bce
only); :class:`OpacusAccountant` is the drop-in for the accountant. Every public name of the two
modules is importable from here.
"""


from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

from fusionlib.checks import check_choice, check_positive_int
from fusionlib.errors import InvalidInputError
from fusionlib.fusion.config import FusionConfig
from fusionlib.fusion.dp_accountant import (
    DEFAULT_ORDERS,
    OpacusAccountant,
    RDPAccountant,
    _check_steps,
    compute_rdp,
    epsilon,
    rdp_to_epsilon,
)
from fusionlib.fusion.dp_gradients import FuncGradients, OpacusGradients, clip_and_sum
from fusionlib.fusion.step import FusionStep, fusion_step
from fusionlib.gan.penalties import random_interpolates

__all__ = ["DEFAULT_ORDERS", "DPConfig", "DPFusionStep", "FuncGradients", "OpacusAccountant",
           "OpacusGradients", "RDPAccountant", "clip_and_sum", "compute_rdp", "dp_fusion_step",
           "epsilon", "rdp_to_epsilon"]

SAMPLING = ("poisson", "uniform")
BACKENDS = ("func", "opacus")


@dataclass(frozen=True)
class DPConfig:
    """DP-SGD settings of the discriminators.

    noise_multiplier: sigma (>= 0; 0: no privacy). max_grad_norm: C (> 0; ``math.inf`` only
    with sigma = 0). sampling: ``"poisson"`` or ``"uniform"``. backend: ``"func"`` or
    ``"opacus"``.
    """

    noise_multiplier: float = 1.0
    max_grad_norm: float = 1.0
    sampling: str = "poisson"
    backend: str = "func"

    def __post_init__(self) -> None:
        sigma, c = self.noise_multiplier, self.max_grad_norm
        for name, v in (("noise_multiplier", sigma), ("max_grad_norm", c)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v):
                raise InvalidInputError(f"{name} must be a number, got {v!r}")
        if sigma < 0 or math.isinf(sigma):
            raise InvalidInputError(f"noise_multiplier must be finite and >= 0, got {sigma}")
        if c <= 0:
            raise InvalidInputError(f"max_grad_norm must be > 0, got {c}; e.g. 1.0")
        if math.isinf(c) and sigma > 0:
            raise InvalidInputError("max_grad_norm=inf with noise_multiplier > 0 gives infinite "
                                    "noise; clip (finite C) or set noise_multiplier=0")
        check_choice("sampling", self.sampling, SAMPLING)
        check_choice("backend", self.backend, BACKENDS)

    def to_dict(self) -> dict:
        return asdict(self)


class PrivacyLedger(nn.Module):
    """DP-SGD steps taken and sample rates per source, as buffers (checkpointed with the run)."""

    def __init__(self, k: int) -> None:
        super().__init__()
        self.register_buffer("steps", torch.zeros(k, dtype=torch.int64))
        self.register_buffer("sample_rates", torch.zeros(k, dtype=torch.float64))


class DPFusionStep(FusionStep):
    """:class:`~fusionlib.fusion.step.FusionStep` with DP-SGD discriminator updates.

    Parameters as FusionStep, plus ``dp`` (a :class:`DPConfig`, default ``DPConfig()``) and
    ``accountant`` (default :class:`RDPAccountant`). Its modules add ``privacy_ledger`` (no
    parameters).
    """

    name = "fusiongan-dp"

    def __init__(self, config: FusionConfig, generator: nn.Module,
                 discriminators: Sequence[nn.Module], indices: Sequence[Sequence[int]], *,
                 dp: DPConfig | None = None, names: Sequence[str] | None = None,
                 accountant: RDPAccountant | None = None) -> None:
        super().__init__(config, generator, discriminators, indices, names=names)
        dp = DPConfig() if dp is None else dp
        if not isinstance(dp, DPConfig):
            raise InvalidInputError("dp must be a DPConfig, e.g. DPConfig(noise_multiplier=1.0)")
        if config.weight_sampling:
            raise InvalidInputError("weight_sampling=True draws rows by their weights, which "
                                    "DP-SGD's accounting does not cover; weights enter the loss")
        self.dp, self.accountant = dp, accountant or RDPAccountant()
        self.gradients = FuncGradients() if dp.backend == "func" else OpacusGradients()
        self.ledger = PrivacyLedger(len(self.discriminators))

    def modules(self) -> dict[str, nn.Module]:
        return {**super().modules(), "privacy_ledger": self.ledger}

    def signature(self) -> dict:
        return {**super().signature(), "dp": self.dp.to_dict()}

    def prepare(self, data: object, device: str) -> tuple[torch.Tensor, ...]:
        batch = super().prepare(data, device)
        rates = [self.config.batch_size / batch[2 * k].shape[0] for k in range(len(self.names))]
        self.ledger.sample_rates.copy_(torch.tensor(rates, dtype=torch.float64))
        return batch

    def draw_private_rows(self, n: int, rng: torch.Generator, device: torch.device
                          ) -> torch.Tensor:
        """Row indices of one DP-SGD batch: Poisson (rate B/n) or B distinct rows."""
        b = self.config.batch_size
        if self.dp.sampling == "poisson":
            keep = torch.rand(n, generator=rng, device=device) < b / n
            return keep.nonzero().squeeze(1)
        return torch.randperm(n, generator=rng, device=device)[:b]

    def private_gradients(self, disc: nn.Module, real: torch.Tensor, w: torch.Tensor,
                          fake: torch.Tensor, rng: torch.Generator
                          ) -> tuple[list[torch.Tensor], torch.Tensor]:
        """D_k's DP-SGD gradient (one tensor per parameter) and the batch loss (sum / B)."""
        cfg, dp, params = self.config, self.dp, list(disc.parameters())
        points = (random_interpolates(real, fake, rng) if cfg.loss == "wgan-gp" else None)
        if real.shape[0]:
            per_sample, losses = self.gradients(disc, real, w, fake, points, cfg.loss,
                                                cfg.gp_weight)
            summed, _ = clip_and_sum(per_sample, dp.max_grad_norm)
            loss = losses.sum() / cfg.batch_size
        else:  # an empty Poisson batch: noise only
            summed, loss = [torch.zeros_like(p) for p in params], real.new_zeros(())
        scale = dp.noise_multiplier * dp.max_grad_norm
        if scale > 0:
            summed = [s + scale * torch.randn(s.shape, generator=rng, device=s.device)
                      for s in summed]
        return [s / cfg.batch_size for s in summed], loss.detach()

    def _source_update(self, k: int, x: torch.Tensor, w: torch.Tensor, rng: torch.Generator,
                       optimizers: dict[str, torch.optim.Optimizer]) -> dict[str, torch.Tensor]:
        cfg, disc, cols = self.config, self.discriminators[k], self._index[k]
        opt_d = optimizers[f"discriminator_{k}"]
        for _ in range(cfg.n_critic):  # a fresh private batch per critic step
            rows = self.draw_private_rows(x.shape[0], rng, x.device)
            m = rows.numel()
            z = torch.randn(m or cfg.batch_size, cfg.latent_dim, generator=rng, device=x.device)
            with torch.no_grad():
                fake = self._generate(z[:m], rng).index_select(1, cols)
            grads, d_loss = self.private_gradients(disc, x[rows], w[rows], fake, rng)
            opt_d.zero_grad(set_to_none=True)
            for p, g in zip(disc.parameters(), grads, strict=True):
                p.grad = g
            opt_d.step()
            self.ledger.steps[k] += 1
        # the generator step: post-processing of the private D_k (Gumbel noise: training stream)
        g_loss = self._generator_update(k, z, rng, optimizers)
        return {f"d_loss_{k}": d_loss, f"g_loss_{k}": g_loss}

    # ------------------------------------------------------------------ privacy spent
    def _rdp(self, k: int, steps: int | None) -> np.ndarray:
        if math.isinf(self.dp.max_grad_norm):
            return np.full(len(self.accountant.orders), math.inf)
        q = float(self.ledger.sample_rates[k])
        if q == 0:
            raise InvalidInputError("the sample rates are unknown before the data are "
                                    "prepared; fit the trainer first")
        t = int(self.ledger.steps[k]) if steps is None else _check_steps(steps)
        return self.accountant.rdp(sample_rate=q, noise_multiplier=self.dp.noise_multiplier,
                                   steps=t)

    def epsilon(self, delta: float, steps: int | None = None) -> dict[str, float]:
        """Epsilon per source at ``delta`` after ``steps`` D_k steps (None: those taken)."""
        return {name: rdp_to_epsilon(self.accountant.orders, self._rdp(k, steps), delta)[0]
                for k, name in enumerate(self.names)}

    def epsilon_composed(self, delta: float, steps: int | None = None) -> float:
        """Epsilon for a person present in every source (RDP summed over the sources)."""
        rdp = sum(self._rdp(k, steps) for k in range(len(self.names)))
        return rdp_to_epsilon(self.accountant.orders, rdp, delta)[0]


def dp_fusion_step(config: FusionConfig, out_dim: int, indices: Sequence[Sequence[int]], *,
                   dp: DPConfig | None = None, names: Sequence[str] | None = None,
                   seed: object = 0) -> DPFusionStep:
    """A :class:`DPFusionStep` with the networks :func:`fusion_step` would build for ``seed``."""
    check_positive_int("out_dim", out_dim)
    base = fusion_step(config, out_dim, indices, names=names, seed=seed)
    return DPFusionStep(config, base.generator, base.discriminators, base.indices, dp=dp,
                        names=names)
