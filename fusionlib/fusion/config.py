"""FusionGAN's configuration (Appendix C defaults) and its two losses (Algorithm B, and the
WGAN-GP extension of Appendix I)."""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from fusionlib.checks import check_choice, check_positive, check_positive_int, check_probability
from fusionlib.errors import InvalidInputError

__all__ = ["FusionConfig", "LOSSES", "WEIGHTINGS", "DEFAULT_CONFIG", "discriminator_loss",
           "generator_loss"]

LOSSES = ("bce", "wgan-gp")
WEIGHTINGS = ("uniform", "cluster", "density")


@dataclass(frozen=True)
class FusionConfig:
    """FusionGAN hyperparameters; the defaults are Appendix C of seed 000.

    ``weighting`` names the sample-weighting strategy of Appendix D (used by
    :class:`~fusionlib.fusion.synthesizer.FusionGAN`); ``weight_sampling=True`` also draws the
    batches with probability proportional to w (the origin project's behaviour: with the weights
    in the loss too, the effective weight is w squared). ``gp_weight`` (lambda = 10) is used with
    ``loss="wgan-gp"`` only. ``holdout`` is the fraction of each source kept for evaluation.
    """

    latent_dim: int = 32
    hidden: int = 128
    lr_g: float = 1e-4
    lr_d: float = 1e-4
    betas: tuple[float, float] = (0.5, 0.999)
    batch_size: int = 64
    n_critic: int = 1
    holdout: float = 0.2
    weighting: str = "uniform"
    weight_sampling: bool = False
    loss: str = "bce"
    gp_weight: float = 10.0

    def __post_init__(self) -> None:
        for name in ("latent_dim", "hidden", "batch_size", "n_critic"):
            check_positive_int(name, getattr(self, name))
        check_positive("lr_g", self.lr_g)
        check_positive("lr_d", self.lr_d)
        check_positive("gp_weight", self.gp_weight, allow_zero=True)
        object.__setattr__(self, "betas", _betas(self.betas))
        if check_probability("holdout", self.holdout) >= 1.0:
            raise InvalidInputError(f"holdout must be in [0, 1), got {self.holdout}; e.g. 0.2")
        check_choice("weighting", self.weighting, WEIGHTINGS)
        check_choice("loss", self.loss, LOSSES)
        if not isinstance(self.weight_sampling, bool):
            raise InvalidInputError(
                f"weight_sampling must be True or False, got {self.weight_sampling!r}")

    def to_dict(self) -> dict:
        """Plain-dict form (provenance, checkpoint signatures)."""
        return dataclasses.asdict(self)


def _betas(betas: object) -> tuple[float, float]:
    values = tuple(betas) if isinstance(betas, (tuple, list)) else ()
    if len(values) != 2 or not all(isinstance(b, numbers.Real) and not isinstance(b, bool)
                                   and 0.0 <= float(b) < 1.0 for b in values):
        raise InvalidInputError(f"betas must be two numbers in [0, 1), got {betas!r}")
    return float(values[0]), float(values[1])


def discriminator_loss(real_logits: torch.Tensor, fake_logits: torch.Tensor,
                       weights: torch.Tensor, loss: str = "bce") -> torch.Tensor:
    """The loss D_k minimises, from logits on B real (B,) and B generated (B,) records.

    ``bce``: ``-(1/B) sum_i [w_i log D(x_i) + log(1 - D(x_hat_i))]`` with ``log D =
    logsigmoid(l)`` and ``log(1 - D) = logsigmoid(-l)``; ``wgan-gp`` (without the penalty):
    ``mean(l_fake) - mean(w_i l_real_i)``. ``weights`` (B,) multiply the real term only.
    """
    check_choice("loss", loss, LOSSES)
    if loss == "bce":
        return -(weights * F.logsigmoid(real_logits)).mean() - F.logsigmoid(-fake_logits).mean()
    return fake_logits.mean() - (weights * real_logits).mean()


def generator_loss(fake_logits: torch.Tensor, loss: str = "bce") -> torch.Tensor:
    """The loss G minimises against one discriminator, from its logits (B,) on pi(G(z)).

    ``bce``: non-saturating ``-(1/B) sum_i log D(x_hat_i)``; ``wgan-gp``: ``-mean(l_fake)``.
    """
    check_choice("loss", loss, LOSSES)
    if loss == "bce":
        return -F.logsigmoid(fake_logits).mean()
    return -fake_logits.mean()


DEFAULT_CONFIG = FusionConfig()
