"""The losses of one training iteration (Algorithm 3), as functions of networks and a minibatch.

Kept apart from the trainer so that other experiments (e.g. the gradient-variance figures) can
evaluate exactly the objective the trainer optimises, on minibatches they control.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from fusionlib.errors import InvalidInputError
from fusionlib.gan.losses import critic_loss, generator_loss, soft_label_bce
from fusionlib.gan.penalties import (
    coherency_penalty,
    gradient_penalty,
    max_penalty,
    random_interpolates,
)
from fusionlib.ptgan.config import GANConfig
from fusionlib.ptgan.tempering import (
    TemperedBatch,
    mixup_batch,
    reference_noise,
    temperature,
    tempered_minibatch,
)

__all__ = ["StepInputs", "critic_objective", "draw_step_inputs", "generator_objective"]


@dataclass(frozen=True)
class StepInputs:
    """The random inputs of one iteration.

    Attributes
    ----------
    real: (n, d) the critic's "real" points: ``q1 = Q^alpha1`` when tempered, else data rows.
    alpha: (n,) ``alpha1`` (all ones when not tempered); the generator is run at the same alpha.
    z: (n, latent_dim) generator input (``Z^alpha1`` with interpolated noise).
    tempered: the full Algorithm 1 batch (for the coherency penalty), or None.
    t: (n,) temperature features ``t(alpha)`` for conditional networks, else None.
    """

    real: torch.Tensor
    alpha: torch.Tensor
    z: torch.Tensor
    tempered: TemperedBatch | None
    t: torch.Tensor | None


def draw_step_inputs(data: torch.Tensor, config: GANConfig, rng: torch.Generator) -> StepInputs:
    """Draw one iteration's minibatch (Algorithm 1 when tempered) and reference noise.

    ``data`` (N, d) is not re-validated here (this runs every iteration); the trainer checks it
    once with :func:`fusionlib.checks.check_matrix`.
    """
    if data.ndim != 2:
        raise InvalidInputError(f"data must have shape (N, d), got {tuple(data.shape)}")
    n, dev = config.batch_size, data.device
    if config.tempered:
        tb = tempered_minibatch(data, n, config.r, rng, share=config.alpha_share)
        real, alpha = tb.q1, tb.alpha1
    else:
        tb = None
        real = data[torch.randint(data.shape[0], (n,), generator=rng, device=dev)]
        alpha = torch.ones(n, device=dev)
    z = reference_noise(n, config.latent_dim, rng, alpha=alpha,
                        interpolated=config.interpolated_noise, distribution=config.noise,
                        device=dev)
    return StepInputs(real=real, alpha=alpha, z=z, tempered=tb, t=_t(config, alpha))


def _t(config: GANConfig, alpha: torch.Tensor) -> torch.Tensor | None:
    return temperature(alpha) if config.conditional else None


def critic_objective(critic: torch.nn.Module, fake: torch.Tensor, inputs: StepInputs,
                     config: GANConfig, rng: torch.Generator) -> tuple[torch.Tensor, dict]:
    """Critic loss to minimise (loss + lambda * penalty) and its detached parts.

    ``fake`` (n, d) are generator outputs at ``inputs.alpha`` (detached by the caller).
    Returns ``(total, {"d_loss": ..., "penalty": ...})``.
    """
    real, t = inputs.real, inputs.t
    if config.mixup:
        mixed, lam = mixup_batch(real, fake, rng, a=config.mixup_a, b=config.mixup_b)
        loss = soft_label_bce(critic(mixed), lam)
        return loss, {"d_loss": loss.detach(), "penalty": torch.zeros(())}
    n = real.shape[0]
    # one forward pass over real and fake rows (the critic has no cross-row operations)
    both = torch.cat([real, fake])
    scores = critic(both) if t is None else critic(both, torch.cat([t, t]))
    loss = critic_loss(scores[:n], scores[n:], config.loss)
    penalty = _penalty(critic, real, fake, t, inputs.tempered, config, rng)
    return loss + config.penalty_weight * penalty, {"d_loss": loss.detach(),
                                                    "penalty": penalty.detach()}


def _penalty(critic, real, fake, t, tb: TemperedBatch | None, config: GANConfig,
             rng: torch.Generator) -> torch.Tensor:
    if config.penalty == "none":
        return torch.zeros((), device=real.device)
    if config.penalty == "cp":
        return coherency_penalty(critic, tb.q_tilde, tb.q1 - tb.q2,
                                 _t(config, tb.alpha_tilde), mode=config.cp_mode)
    points = random_interpolates(real, fake, rng)
    fn = max_penalty if config.penalty == "mp" else gradient_penalty
    return fn(critic, points, t)


def generator_objective(critic: torch.nn.Module, fake: torch.Tensor, inputs: StepInputs,
                        config: GANConfig) -> torch.Tensor:
    """Generator loss to minimise, from generator outputs ``fake`` (n, d) with their graph."""
    t = inputs.t
    scores = critic(fake) if t is None else critic(fake, t)
    return generator_loss(scores, config.loss)
