"""GAN losses as pure functions of critic outputs.

Every function returns the scalar that the corresponding network *minimises*. Critic outputs are
raw scores of shape (n,) (logits for the Jensen-Shannon loss). Scores of R stacked repetitions,
shape (R, n) (:mod:`fusionlib.gan.stacked`), give one loss per repetition, shape (R,): every
mean runs over the last (row) dimension.

::

 =============  ===============================================  ==================================
 name           critic minimises                                 generator minimises
 =============  ===============================================  ==================================
 wasserstein    mean D(fake) - mean D(real)   (phi(x) = x, eq. 1)  -mean D(fake)
 js             softplus(-D(real)) + softplus(D(fake))  (BCE)    softplus(-D(fake)) (non-saturating)
 pearson        0.5 mean (D(real) - 1)^2 + 0.5 mean (D(fake) + 1)^2  0.5 mean D(fake)^2
 pearson01      0.5 mean (D(real) - 1)^2 + 0.5 mean D(fake)^2           0.5 mean (D(fake) - 1)^2
 =============  ===============================================  ==================================

"pearson" is least-squares GAN with labels a = -1, b = 1, c = 0 (Mao et al. 2017, Thm 1:
b - c = 1 and b - a = 2 make the generator minimise the Pearson chi-square divergence).
"pearson01" is the critic objective PTGAN prints for PD (Appendix D.2.1: labels 0 for generated
and 1 for real rows) with the generator of Mao et al.'s 0-1 coding (c = 1: the generator pulls
D(G(z)) to the real label; the paper gives no generator loss).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from fusionlib.checks import check_choice
from fusionlib.errors import InvalidInputError

__all__ = ["LOSSES", "check_loss", "critic_loss", "generator_loss", "soft_label_bce"]

#: the loss names accepted by critic_loss and generator_loss
LOSSES = ("wasserstein", "js", "pearson", "pearson01")


def check_loss(kind: str) -> str:
    """Return ``kind`` if it names a loss in :data:`LOSSES`, else raise listing them."""
    return check_choice("loss", kind, LOSSES)


def _check_scores(name: str, out: torch.Tensor) -> None:
    # (n, 1) is an unsqueezed critic output, not R = n stacked repetitions of one row
    if (not isinstance(out, torch.Tensor) or out.ndim not in (1, 2) or out.numel() == 0
            or (out.ndim == 2 and out.shape[1] == 1)):
        raise InvalidInputError(
            f"{name} must be a non-empty tensor of critic scores of shape (n,) or (R, n) with "
            f"n > 1, got {getattr(out, 'shape', type(out).__name__)}; squeeze the critic "
            "output to (n,)"
        )


def critic_loss(real_out: torch.Tensor, fake_out: torch.Tensor, kind: str) -> torch.Tensor:
    """Critic loss (to minimise) from scores on real (n,) and generated (m,) points.

    Stacked scores (R, n) and (R, m) give the R losses of the repetitions, shape (R,).
    """
    check_loss(kind)
    _check_scores("real_out", real_out)
    _check_scores("fake_out", fake_out)
    if real_out.shape[:-1] != fake_out.shape[:-1]:
        raise InvalidInputError(
            f"real_out {tuple(real_out.shape)} and fake_out {tuple(fake_out.shape)} need the "
            "same leading (repetition) dimensions; squeeze critic outputs to (n,)")
    if kind == "wasserstein":
        return fake_out.mean(-1) - real_out.mean(-1)
    if kind == "js":
        return F.softplus(-real_out).mean(-1) + F.softplus(fake_out).mean(-1)
    if kind == "pearson01":
        return 0.5 * (real_out - 1.0).pow(2).mean(-1) + 0.5 * fake_out.pow(2).mean(-1)
    return 0.5 * (real_out - 1.0).pow(2).mean(-1) + 0.5 * (fake_out + 1.0).pow(2).mean(-1)


def generator_loss(fake_out: torch.Tensor, kind: str) -> torch.Tensor:
    """Generator loss (to minimise) from critic scores on generated points (m,) (or (R, m):
    one loss per repetition)."""
    check_loss(kind)
    _check_scores("fake_out", fake_out)
    if kind == "wasserstein":
        return -fake_out.mean(-1)
    if kind == "js":
        return F.softplus(-fake_out).mean(-1)
    if kind == "pearson01":
        return 0.5 * (fake_out - 1.0).pow(2).mean(-1)
    return 0.5 * fake_out.pow(2).mean(-1)


def soft_label_bce(out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Binary cross-entropy of logits ``out`` (n,) against soft labels ``target`` in [0, 1].

    The Mixup GAN critic loss: a mixed point ``lam x + (1 - lam) G(z)`` carries label ``lam``.
    """
    _check_scores("out", out)
    if target.shape != out.shape:
        raise InvalidInputError(f"target {tuple(target.shape)} must match out {tuple(out.shape)}")
    if bool(((target < 0) | (target > 1)).any()):
        raise InvalidInputError("soft labels must lie in [0, 1]")
    return F.binary_cross_entropy_with_logits(out, target)
