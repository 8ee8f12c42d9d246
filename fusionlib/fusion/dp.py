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

over Opacus' default orders; this reproduces ``opacus.accountants.RDPAccountant`` (1.6.0).
Source k is private with respect to the rows of S_k (add/remove one row); a person present in
every source is covered by :meth:`DPFusionStep.epsilon_composed` (RDP summed over sources).

**What is not covered**: data-dependent preprocessing (FusionGAN's pooled standardisation and
the cluster/density weights of section D are computed from all rows; pass public scales and
uniform or public weights), and the logged losses (computed on real rows, for monitoring only).

Backends: per-sample gradients by ``torch.func`` (default) or by Opacus' ``GradSampleModule``
(``backend="opacus"``, pin ``opacus==1.6.0``, bce only); :class:`OpacusAccountant` is the
drop-in for the accountant.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn.functional as F
from scipy.special import binom, gammaln, log_ndtr, logsumexp
from torch import nn

from fusionlib.checks import check_choice, check_positive_int
from fusionlib.errors import InvalidInputError
from fusionlib.fusion.config import FusionConfig
from fusionlib.fusion.step import FusionStep, fusion_step
from fusionlib.gan.penalties import random_interpolates

__all__ = ["DEFAULT_ORDERS", "DPConfig", "DPFusionStep", "FuncGradients", "OpacusAccountant",
           "OpacusGradients", "RDPAccountant", "clip_and_sum", "compute_rdp", "dp_fusion_step",
           "epsilon", "rdp_to_epsilon"]

#: RDP orders searched (Opacus' ``RDPAccountant.DEFAULT_ALPHAS``)
DEFAULT_ORDERS = tuple([1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)))
SAMPLING = ("poisson", "uniform")
BACKENDS = ("func", "opacus")


# ---------------------------------------------------------------------- accountant
def _log_a_int(q: float, sigma: float, alpha: int) -> float:
    i = np.arange(alpha + 1)
    log_binom = gammaln(alpha + 1) - gammaln(i + 1) - gammaln(alpha - i + 1)
    return float(logsumexp(log_binom + i * math.log(q) + (alpha - i) * math.log1p(-q)
                           + (i * i - i) / (2 * sigma**2)))


def _log_a_frac(q: float, sigma: float, alpha: float) -> float:
    z0 = sigma**2 * math.log(1 / q - 1) + 0.5
    logs, signs, i = [], [], 0
    while True:
        coef, j = binom(alpha, i), alpha - i
        log_coef = math.log(abs(coef))
        s0 = (log_coef + i * math.log(q) + j * math.log1p(-q) + (i * i - i) / (2 * sigma**2)
              + math.log(0.5) + _log_erfc((i - z0) / (math.sqrt(2) * sigma)))
        s1 = (log_coef + j * math.log(q) + i * math.log1p(-q) + (j * j - j) / (2 * sigma**2)
              + math.log(0.5) + _log_erfc((z0 - j) / (math.sqrt(2) * sigma)))
        logs += [s0, s1]
        signs += [math.copysign(1.0, coef)] * 2
        i += 1
        if max(s0, s1) < -30:
            break
    value, sign = logsumexp(logs, b=signs, return_sign=True)
    return float(value) if sign > 0 else -math.inf


def _log_erfc(x: float) -> float:
    return math.log(2) + float(log_ndtr(-x * math.sqrt(2)))


def compute_rdp(sample_rate: float, noise_multiplier: float, steps: int,
                orders: Sequence[float] = DEFAULT_ORDERS) -> np.ndarray:
    """RDP at each order of ``steps`` sampled Gaussian mechanisms (sensitivity 1).

    ``q = 1`` (no subsampling) gives the Gaussian mechanism's ``alpha / (2 sigma^2)``.
    """
    q, sigma = float(sample_rate), float(noise_multiplier)
    if not 0.0 <= q <= 1.0:
        raise InvalidInputError(f"sample_rate must lie in [0, 1], got {sample_rate}")
    if sigma < 0 or not math.isfinite(sigma):
        raise InvalidInputError(f"noise_multiplier must be finite and >= 0, got {sigma}")
    out = []
    for alpha in orders:
        if alpha <= 1:
            raise InvalidInputError(f"RDP orders must be > 1, got {alpha}")
        if q == 0:
            out.append(0.0)
        elif sigma == 0:
            out.append(math.inf)
        elif q == 1:
            out.append(alpha / (2 * sigma**2))
        else:
            log_a = (_log_a_int(q, sigma, int(alpha)) if float(alpha).is_integer()
                     else _log_a_frac(q, sigma, alpha))
            out.append(log_a / (alpha - 1))
    return np.asarray(out) * _check_steps(steps)


def _check_steps(steps: object) -> int:
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise InvalidInputError(f"steps must be an integer >= 0, got {steps!r}")
    return int(steps)


def _check_delta(delta: object) -> float:
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 < delta < 1:
        raise InvalidInputError(f"delta must lie in (0, 1), e.g. 1e-5 (below 1/n), got {delta!r}")
    return float(delta)


def rdp_to_epsilon(orders: Sequence[float], rdp: Sequence[float], delta: float
                   ) -> tuple[float, float]:
    """(epsilon, best order) from RDP values (Balle et al. 2020, Theorem 21), epsilon >= 0."""
    delta = _check_delta(delta)
    a, r = np.asarray(orders, dtype=float), np.asarray(rdp, dtype=float)
    if a.shape != r.shape:
        raise InvalidInputError(f"{a.size} orders but {r.size} RDP values")
    with np.errstate(invalid="ignore"):
        eps = r + np.log1p(-1 / a) - (math.log(delta) + np.log(a)) / (a - 1)
    if (r == 0).all():
        return 0.0, math.nan  # nothing released (no steps, or sample rate 0)
    if np.isnan(eps).all() or np.isinf(eps).all():
        return math.inf, math.nan
    best = int(np.nanargmin(eps))
    return max(float(eps[best]), 0.0), float(a[best])


def epsilon(*, sample_rate: float, noise_multiplier: float, steps: int, delta: float,
            orders: Sequence[float] = DEFAULT_ORDERS) -> float:
    """Epsilon of ``steps`` DP-SGD steps at ``delta`` (:class:`RDPAccountant`)."""
    return RDPAccountant(orders).epsilon(sample_rate=sample_rate,
                                         noise_multiplier=noise_multiplier, steps=steps,
                                         delta=delta)


class RDPAccountant:
    """RDP accountant of the sampled Gaussian mechanism (this module's formulas)."""

    def __init__(self, orders: Sequence[float] = DEFAULT_ORDERS) -> None:
        self.orders = tuple(float(a) for a in orders)

    def rdp(self, *, sample_rate: float, noise_multiplier: float, steps: int) -> np.ndarray:
        return compute_rdp(sample_rate, noise_multiplier, steps, self.orders)

    def epsilon(self, *, sample_rate: float, noise_multiplier: float, steps: int,
                delta: float) -> float:
        rdp = self.rdp(sample_rate=sample_rate, noise_multiplier=noise_multiplier, steps=steps)
        return rdp_to_epsilon(self.orders, rdp, delta)[0]


class OpacusAccountant(RDPAccountant):
    """The same interface computed by ``opacus.accountants.analysis.rdp`` (opacus==1.6.0)."""

    def rdp(self, *, sample_rate: float, noise_multiplier: float, steps: int) -> np.ndarray:
        try:
            from opacus.accountants.analysis.rdp import compute_rdp as opacus_rdp
        except ImportError:
            raise InvalidInputError("OpacusAccountant needs opacus (pip install "
                                    "opacus==1.6.0); RDPAccountant needs nothing") from None
        return np.asarray(opacus_rdp(q=sample_rate, noise_multiplier=noise_multiplier,
                                     steps=_check_steps(steps), orders=list(self.orders)))


# ---------------------------------------------------------------------- per-sample gradients
class _Logits(nn.Module):
    def __init__(self, disc: nn.Module) -> None:
        super().__init__()
        self.disc = disc

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.disc.logits(x)


class FuncGradients:
    """Per-pair gradients and losses by ``torch.func`` (vmap of grad), exact, any loss."""

    def __call__(self, disc: nn.Module, real: torch.Tensor, w: torch.Tensor,
                 fake: torch.Tensor, points: torch.Tensor | None, loss: str,
                 gp_weight: float) -> tuple[list[torch.Tensor], torch.Tensor]:
        net = _Logits(disc)
        params = {n: p.detach() for n, p in net.named_parameters()}

        def score(p: dict, x: torch.Tensor) -> torch.Tensor:
            return torch.func.functional_call(net, p, (x.unsqueeze(0),)).squeeze(0)

        def pair(p: dict, x: torch.Tensor, f: torch.Tensor, wi: torch.Tensor,
                 xi: torch.Tensor) -> torch.Tensor:
            if loss == "bce":
                both = torch.func.functional_call(net, p, (torch.stack([x, f]),))
                return -(wi * F.logsigmoid(both[0]) + F.logsigmoid(-both[1]))
            g = torch.func.grad(score, argnums=1)(p, xi)
            norm = (g.pow(2).sum() + 1e-12).sqrt()  # as fusionlib.gan.penalties
            return score(p, f) - wi * score(p, x) + gp_weight * (norm - 1.0).pow(2)

        pts = real if points is None else points
        grads, losses = torch.func.vmap(torch.func.grad_and_value(pair),
                                        in_dims=(None, 0, 0, 0, 0))(params, real, fake, w, pts)
        return [grads[n] for n in params], losses


class OpacusGradients:
    """Per-pair gradients by Opacus' ``GradSampleModule`` hooks (bce only): the real row and
    the generated row of a pair are two rows of one forward pass; their gradients are added."""

    def __call__(self, disc: nn.Module, real: torch.Tensor, w: torch.Tensor,
                 fake: torch.Tensor, points: torch.Tensor | None, loss: str,
                 gp_weight: float) -> tuple[list[torch.Tensor], torch.Tensor]:
        try:
            from opacus import GradSampleModule
        except ImportError:
            raise InvalidInputError("backend='opacus' needs opacus (pip install "
                                    "opacus==1.6.0); or use backend='func'") from None
        if loss != "bce":
            raise InvalidInputError("backend='opacus' supports loss='bce' only; use "
                                    "backend='func' for 'wgan-gp' (its input-gradient penalty)")
        params, b = list(disc.parameters()), real.shape[0]
        gsm = GradSampleModule(disc, loss_reduction="sum")
        try:
            with torch.enable_grad(), warnings.catch_warnings():
                warnings.filterwarnings("ignore", "Full backward hook is firing")
                logits = disc.logits(torch.cat([real, fake]))
                losses = -(w * F.logsigmoid(logits[:b]) + F.logsigmoid(-logits[b:]))
                losses.sum().backward()
            grads = [p.grad_sample[:b] + p.grad_sample[b:] for p in params]
        finally:
            gsm.cleanup()
            for p in params:
                p.grad = None
        return grads, losses.detach()


def clip_and_sum(grads: Sequence[torch.Tensor], max_grad_norm: float
                 ) -> tuple[list[torch.Tensor], torch.Tensor]:
    """``sum_i g_i min(1, C / (||g_i|| + 1e-6))`` per parameter, and the norms ``||g_i||``.

    ``grads`` are per-sample gradients ``(m, *shape)``, one per parameter; the norm of sample i is
    taken over all parameters together.
    """
    m = grads[0].shape[0]
    norms = torch.linalg.vector_norm(
        torch.stack([torch.linalg.vector_norm(g.reshape(m, -1), dim=1) for g in grads]), dim=0)
    factor = (max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
    return [torch.einsum("i,i...->...", factor, g) for g in grads], norms


# ---------------------------------------------------------------------- the step
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
