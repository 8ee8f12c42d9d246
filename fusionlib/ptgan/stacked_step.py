"""Algorithm 3 for R repetitions at once: :class:`StackedPTGANStep`.

R repetitions of one :class:`~fusionlib.ptgan.config.GANConfig` -- or R settings of one
architecture, such as MP with ``lambda_MP`` 1, 10 and 100 (``penalty_weights``) -- train as one
model (:mod:`fusionlib.gan.stacked`). Each repetition keeps everything of its separate run:

* its random stream (``rng[r]`` of a :class:`~fusionlib.gan.stacked.GeneratorBank`), drawn in
  the order of :class:`~fusionlib.ptgan.tabular.step.TabularPTGANStep`: the minibatch rows and
  mixing weights of Algorithm 1 (or the uniform rows of an untempered method), the reference
  noise, the Gumbel noise of the generator's head, then the penalty's interpolation weights;
* its training rows: the data are one encoded matrix ``x`` (M, d) and a table ``rows`` (R, N) of
  row indices, so repetition r trains on ``x[rows[r]]`` (its own 90 % split);
* its losses, penalties (the coherency penalty, the max and gradient penalties take gradients
  per repetition, their maxima and means run over its own rows), batch-norm statistics and Adam
  state.

The R losses are summed before ``backward``; nothing couples two repetitions, so a repetition
whose loss turns non-finite leaves the others as they were (the trainer records it). With R = 1
this is bitwise :class:`~fusionlib.ptgan.tabular.step.TabularPTGANStep` on CPU.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from fusionlib.checks import check_choice, check_matrix, check_probability
from fusionlib.errors import InvalidInputError
from fusionlib.gan.losses import critic_loss, generator_loss
from fusionlib.gan.networks import batch_statistics, eval_mode
from fusionlib.gan.noise import base_noise
from fusionlib.gan.penalties import coherency_penalty, gradient_penalty, max_penalty
from fusionlib.gan.stacked_networks import StackedCritic, StackedGenerator
from fusionlib.gan.step import Batch, OptimizerSpec, TrainingStep
from fusionlib.ptgan.config import GANConfig
from fusionlib.ptgan.objectives import StepInputs
from fusionlib.ptgan.tempering import (
    TemperedBatch,
    minibatch_alpha,
    n_tempered,
    temperature,
)

__all__ = ["BN_MODES", "StackedPTGANStep"]

#: how batch norm normalises when sampling: running statistics (eval mode) or the batch's own
BN_MODES: tuple[str, ...] = ("running", "batch")


def _rows(x: torch.Tensor, rows: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """``x[rows[r, idx[r]]]`` for every repetition, shape (R, k, d) (one index_select)."""
    pick = rows.gather(1, idx)
    return x.index_select(0, pick.reshape(-1)).view(*pick.shape, x.shape[1])


class StackedPTGANStep(TrainingStep):
    """Algorithm 3 (any :class:`GANConfig` but Mixup) for R stacked repetitions.

    Parameters
    ----------
    config:
        The method's configuration, shared by every repetition.
    generator, critic:
        A :class:`~fusionlib.gan.stacked_networks.StackedGenerator` and
        :class:`~fusionlib.gan.stacked_networks.StackedCritic` of R repetitions.
    penalty_weights:
        One penalty weight per repetition (None: ``config.penalty_weight`` for all).
    """

    def __init__(self, config: GANConfig, generator: StackedGenerator, critic: StackedCritic,
                 *, penalty_weights: Sequence[float] | None = None) -> None:
        if not isinstance(config, GANConfig):
            raise InvalidInputError("config must be a GANConfig; use default_config(method)")
        if config.mixup:
            raise InvalidInputError("Mixup GAN is not stacked; train it unstacked")
        if not isinstance(generator, StackedGenerator) or not isinstance(critic, StackedCritic):
            raise InvalidInputError(
                "the stacked step needs a StackedGenerator and a StackedCritic (build them with "
                "StackedGenerator.from_generators and StackedCritic.from_critics)")
        if generator.n_reps != critic.n_reps:
            raise InvalidInputError(f"the generator has {generator.n_reps} repetitions, the "
                                    f"critic {critic.n_reps}; stack as many of each")
        for name, net in (("generator", generator), ("critic", critic)):
            if net.conditional != config.conditional:
                raise InvalidInputError(
                    f"{name}.conditional differs from config.conditional={config.conditional}; "
                    "build the networks with the same setting")
        self.config, self.generator, self.critic = config, generator, critic
        self.n_reps = critic.n_reps
        weights = ([config.penalty_weight] * self.n_reps if penalty_weights is None
                   else [float(w) for w in penalty_weights])
        if len(weights) != self.n_reps or not all(w >= 0 and w < float("inf") for w in weights):
            raise InvalidInputError(
                f"penalty_weights must be {self.n_reps} finite numbers >= 0, got {weights}")
        self.penalty_weights = tuple(weights)
        self._weights = torch.tensor(weights)
        self.name = f"{config.method} x{self.n_reps}"

    def modules(self) -> dict[str, torch.nn.Module]:
        return {"generator": self.generator, "critic": self.critic}

    def optimizers(self) -> dict[str, OptimizerSpec]:
        # Adam is element-wise: one Adam over the stacked parameters is R independent Adams
        cfg = self.config
        return {"generator": OptimizerSpec(("generator",), cfg.lr_g, tuple(cfg.betas)),
                "critic": OptimizerSpec(("critic",), cfg.lr_d, tuple(cfg.betas))}

    def signature(self) -> dict:
        return {"config": self.config.to_dict(), "penalty_weights": list(self.penalty_weights),
                "generator": repr(self.generator), "critic": repr(self.critic)}

    # ------------------------------------------------------------------ data
    def prepare(self, data: object, device: str) -> Batch:
        """``data``: a matrix (M, d) that every repetition trains on, or ``(x, rows)`` with
        ``rows`` (R, N) the row indices of ``x`` that repetition r trains on."""
        x, rows = data if isinstance(data, tuple) else (data, None)
        x = torch.as_tensor(x, dtype=torch.float32) if not isinstance(x, torch.Tensor) \
            else x.float()
        check_matrix("data", x)
        if x.shape[1] != self.critic.in_dim:
            raise InvalidInputError(
                f"the data have {x.shape[1]} columns but the networks were built for "
                f"{self.critic.in_dim}; build them with data_dim equal to the encoded width")
        if rows is None:
            rows = torch.arange(x.shape[0]).expand(self.n_reps, -1)
        rows = torch.as_tensor(rows, dtype=torch.long)
        if rows.ndim != 2 or rows.shape[0] != self.n_reps or rows.shape[1] < 1:
            raise InvalidInputError(
                f"rows must have shape ({self.n_reps}, N): the training rows of each "
                f"repetition, got {tuple(rows.shape)}")
        if int(rows.min()) < 0 or int(rows.max()) >= x.shape[0]:
            raise InvalidInputError(f"rows must index the {x.shape[0]} rows of x")
        self._weights = self._weights.to(device)
        return (x.to(device), rows.contiguous().to(device))

    # ------------------------------------------------------------------ one iteration
    def draw_inputs(self, x: torch.Tensor, rows: torch.Tensor, rng) -> StepInputs:
        """The R minibatches and reference noises, each from its repetition's generator."""
        cfg, dev = self.config, x.device
        n, n_rows = cfg.batch_size, rows.shape[1]
        if cfg.tempered:  # Algorithm 1, as tempering.tempered_minibatch draws it
            idx = torch.stack([torch.randint(n_rows, (2 * n,), generator=g, device=dev)
                               for g in rng])
            u = torch.stack([torch.rand(4, n, generator=g, device=dev) for g in rng])
            pairs = _rows(x, rows, idx)
            xa, xb = pairs[:, :n], pairs[:, n:]
            alpha1 = _stacked_alpha(u[:, 0], u[:, 1], cfg.r, rng, cfg.alpha_share)
            alpha2, nu = u[:, 2], u[:, 3]
            q1 = torch.lerp(xb, xa, alpha1.unsqueeze(-1))
            q2 = torch.lerp(xb, xa, alpha2.unsqueeze(-1))
            tb = TemperedBatch(q1=q1, q2=q2, q_tilde=torch.lerp(q2, q1, nu.unsqueeze(-1)),
                               alpha1=alpha1, alpha2=alpha2, nu=nu,
                               alpha_tilde=torch.lerp(alpha2, alpha1, nu))
            real, alpha = q1, alpha1
        else:
            idx = torch.stack([torch.randint(n_rows, (n,), generator=g, device=dev)
                               for g in rng])
            tb, real = None, _rows(x, rows, idx)
            alpha = torch.ones(self.n_reps, n, device=dev)
        z = self._noise(n, rng, alpha)
        return StepInputs(real=real, alpha=alpha, z=z, tempered=tb,
                          t=temperature(alpha) if cfg.conditional else None)

    def _noise(self, n: int, rng, alpha: torch.Tensor) -> torch.Tensor:
        """Reference noise (R, n, latent): ``Z^alpha`` with interpolated noise (App. C.2)."""
        cfg, dev = self.config, alpha.device
        if not cfg.interpolated_noise:
            return torch.stack([base_noise((n, cfg.latent_dim), cfg.noise, g, dev) for g in rng])
        z = torch.stack([base_noise((2, n, cfg.latent_dim), cfg.noise, g, dev) for g in rng])
        return torch.lerp(z[:, 1], z[:, 0], alpha.unsqueeze(-1))

    def critic_objective(self, fake: torch.Tensor, inputs: StepInputs, rng
                         ) -> tuple[torch.Tensor, dict]:
        """The sum over repetitions of loss + lambda_r * penalty, and the (R,) parts."""
        cfg, real, t = self.config, inputs.real, inputs.t
        n = real.shape[1]
        both = torch.cat([real, fake], dim=1)  # one forward pass over real and fake rows
        scores = self.critic(both) if t is None else self.critic(both, torch.cat([t, t], dim=1))
        loss = critic_loss(scores[:, :n], scores[:, n:], cfg.loss)
        penalty = self._penalty(real, fake, t, inputs.tempered, rng)
        total = (loss + self._weights * penalty).sum()
        return total, {"d_loss": loss.detach(), "penalty": penalty.detach()}

    def _penalty(self, real, fake, t, tb: TemperedBatch | None, rng) -> torch.Tensor:
        cfg = self.config
        if cfg.penalty == "none":
            return torch.zeros(self.n_reps, device=real.device)
        if cfg.penalty == "cp":
            t_tilde = temperature(tb.alpha_tilde) if cfg.conditional else None
            return coherency_penalty(self.critic, tb.q_tilde, tb.q1 - tb.q2, t_tilde,
                                     mode=cfg.cp_mode)
        # random interpolates, one U(0, 1) weight per row from the repetition's stream
        eps = torch.stack([torch.rand(real.shape[1], 1, generator=g, device=real.device)
                           for g in rng])
        points = torch.lerp(fake.detach(), real.detach(), eps)
        fn = max_penalty if cfg.penalty == "mp" else gradient_penalty
        return fn(self.critic, points, t)

    def iteration(self, data: Batch, rng, optimizers: dict[str, torch.optim.Optimizer]
                  ) -> dict[str, torch.Tensor]:
        x, rows = data
        inputs = self.draw_inputs(x, rows, rng)
        # the critic steps and the generator step see the same G^(t) and z (Algorithm 3)
        fake = self.generator(inputs.z, inputs.t, generator=rng)
        opt_d, opt_g = optimizers["critic"], optimizers["generator"]
        for _ in range(self.config.n_critic):
            d_total, parts = self.critic_objective(fake.detach(), inputs, rng)
            opt_d.zero_grad(set_to_none=True)
            d_total.backward()
            opt_d.step()
        self.critic.requires_grad_(False)  # no critic weight-gradients in the generator step
        try:
            scores = self.critic(fake) if inputs.t is None else self.critic(fake, inputs.t)
            g_loss = generator_loss(scores, self.config.loss)
            opt_g.zero_grad(set_to_none=True)
            g_loss.sum().backward()
            opt_g.step()
        finally:
            self.critic.requires_grad_(True)
        return {"d_loss": parts["d_loss"], "g_loss": g_loss.detach(),
                "penalty": parts["penalty"]}

    # ------------------------------------------------------------------ sampling
    @torch.no_grad()
    def sample(self, n: int, rng, *, alpha: float = 1.0, bn: str = "running") -> torch.Tensor:
        """``n`` encoded rows per repetition, shape (R, n, d), at level ``alpha`` (1 = the data);
        repetition r draws its noise from ``rng[r]``.

        ``bn`` (the paper does not say): ``"running"`` samples in eval mode, batch norm with its
        running statistics (the default); ``"batch"`` normalises with the statistics of the
        sampled batch itself, as in training, and leaves the running statistics unchanged."""
        check_probability("alpha", alpha)
        check_choice("bn", bn, BN_MODES)
        cfg = self.config
        if alpha != 1.0 and not cfg.conditional:
            raise InvalidInputError(
                f"method {cfg.method!r} has no temperature input and samples only at alpha = 1")
        if len(rng) != self.n_reps:
            raise InvalidInputError(f"sampling {self.n_reps} repetitions needs {self.n_reps} "
                                    f"generators, got {len(rng)}")
        device = next(self.generator.parameters()).device
        a = torch.full((self.n_reps, n), float(alpha), device=device)
        z = self._noise(n, rng, a)
        t = temperature(a) if cfg.conditional else None
        if bn == "running":
            with eval_mode(self.generator):
                return self.generator(z, t, generator=rng)
        with batch_statistics(self.generator):
            return self.generator(z, t, generator=rng)


def _stacked_alpha(keep: torch.Tensor, uniform: torch.Tensor, r: float, rng,
                   share: str) -> torch.Tensor:
    """alpha1 of R minibatches, (R, n): repetition i's row is
    :func:`~fusionlib.ptgan.tempering.minibatch_alpha` of its draws and its generator."""
    if share == "per_row":
        return torch.where(keep < r, 1.0, uniform)
    k, frac = n_tempered(keep.shape[1], r)
    if frac > 0:  # each repetition draws its own count (k or k + 1) from its own generator
        return torch.stack([minibatch_alpha(keep[i], uniform[i], r, g, share)
                            for i, g in enumerate(rng)])
    if k == 0:
        return torch.ones_like(uniform)
    if k >= keep.shape[1]:
        return uniform
    threshold = torch.kthvalue(keep, k, dim=1, keepdim=True).values
    return torch.where(keep <= threshold, uniform, 1.0)
