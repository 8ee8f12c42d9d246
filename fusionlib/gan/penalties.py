"""Critic regularisers, all unweighted (the trainer multiplies by the configured weight).

::

 =========  ===================================================  ===============================
 name       value                                                source
 =========  ===================================================  ===============================
 mp         max_i ||grad_x D(x^_i)||^2, x^ real/fake interpolate  Lipschitz GAN (Zhou et al. 2019)
 gp         mean_i (||grad_x D(x^_i)|| - 1)^2                     WGAN-GP (Gulrajani et al. 2017)
 r1         mean_i ||grad_x D(x_i)||^2 on real points             Mescheder et al. (2018)
 cp         mean_i (grad_q D(q~_i, t(a~_i)) . (q1_i - q2_i))^2     PTGAN eq. (8) / Algorithm 3
 =========  ===================================================  ===============================

Points have shape (n, d), or (R, n, d) for R stacked repetitions (:mod:`fusionlib.gan.stacked`):
every reduction runs over the rows of the last-but-one dimension, so stacked points give one
penalty per repetition, shape (R,).

Gradients are taken with ``create_graph=True`` so the penalty can be back-propagated into the
critic's parameters (a double-backward pass). :func:`coherency_penalty` also offers a
forward-mode variant (``mode="jvp"``) that computes the directional derivative directly.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import torch
import torch.autograd.forward_ad as fwad

from fusionlib.checks import check_choice
from fusionlib.errors import InvalidInputError

__all__ = [
    "PENALTIES",
    "coherency_penalty",
    "gradient_penalty",
    "input_gradient",
    "max_penalty",
    "r1_penalty",
    "random_interpolates",
]

#: the penalty names of a GAN configuration ("none" and the four above)
PENALTIES = ("none", "mp", "gp", "cp")
CriticFn = Callable[..., torch.Tensor]


def _call(critic: CriticFn, x: torch.Tensor, t: torch.Tensor | None) -> torch.Tensor:
    return critic(x) if t is None else critic(x, t)


def input_gradient(critic: CriticFn, x: torch.Tensor,
                   t: torch.Tensor | None = None) -> torch.Tensor:
    """``grad_x D(x_i[, t_i])`` for every row, shape (n, d) (or (R, n, d)), differentiable
    (create_graph).

    Rows are treated independently (the sum of scores is differentiated), which is exact for
    critics without cross-row operations (no batch norm in the critic); so are repetitions.
    """
    x = x.detach().requires_grad_(True)
    score = _call(critic, x, t)
    (grad,) = torch.autograd.grad(score.sum(), x, create_graph=True)
    return grad


def random_interpolates(real: torch.Tensor, fake: torch.Tensor,
                        generator: torch.Generator) -> torch.Tensor:
    """``eps_i real_i + (1 - eps_i) fake_i`` with ``eps_i ~ U(0, 1)``, shape (n, d) (or
    (..., n, d): one ``eps`` per row, all drawn from ``generator``)."""
    if real.shape != fake.shape:
        raise InvalidInputError(f"real {tuple(real.shape)} and fake {tuple(fake.shape)} differ")
    eps = torch.rand(*real.shape[:-1], 1, generator=generator, device=real.device)
    return torch.lerp(fake.detach(), real.detach(), eps)


def _sq_norm(grad: torch.Tensor) -> torch.Tensor:
    return grad.pow(2).sum(dim=-1)


def max_penalty(critic: CriticFn, points: torch.Tensor,
                t: torch.Tensor | None = None) -> torch.Tensor:
    """Lipschitz-GAN max penalty ``max_i ||grad D(points_i)||^2`` (no target of 1)."""
    return _sq_norm(input_gradient(critic, points, t)).amax(dim=-1)


def gradient_penalty(critic: CriticFn, points: torch.Tensor,
                     t: torch.Tensor | None = None) -> torch.Tensor:
    """WGAN-GP two-sided penalty ``mean_i (||grad D(points_i)|| - 1)^2``."""
    # the 1e-12 keeps the square root differentiable at a zero gradient
    norm = (_sq_norm(input_gradient(critic, points, t)) + 1e-12).sqrt()
    return (norm - 1.0).pow(2).mean(dim=-1)


def r1_penalty(critic: CriticFn, real: torch.Tensor,
               t: torch.Tensor | None = None) -> torch.Tensor:
    """Mescheder et al. (2018) R1: ``mean_i ||grad D(real_i)||^2`` (times gamma/2 by the caller)."""
    return _sq_norm(input_gradient(critic, real, t)).mean(dim=-1)


def coherency_penalty(critic: CriticFn, q_tilde: torch.Tensor, direction: torch.Tensor,
                      t: torch.Tensor | None = None, *,
                      mode: str = "double_backward") -> torch.Tensor:
    """PTGAN coherency penalty (eq. 8): ``mean_i (grad_q D(q~_i, t_i) . direction_i)^2``.

    Parameters
    ----------
    q_tilde:
        (n, d) penalty points ``nu q1 + (1 - nu) q2``.
    direction:
        (n, d) ``q1 - q2`` (equal to ``(alpha1 - alpha2)(x - x')``, Remark 4).
    t:
        (n,) temperature features ``t(alpha~)`` for a conditional critic, else None.
    mode:
        ``"double_backward"`` (input gradient, then dot product) or ``"jvp"`` (forward-mode
        directional derivative; same value, one Jacobian-vector product instead of a full
        input gradient).
    """
    check_choice("coherency penalty mode", mode, ("double_backward", "jvp"))
    if q_tilde.shape != direction.shape:
        raise InvalidInputError(
            f"q_tilde {tuple(q_tilde.shape)} and direction {tuple(direction.shape)} differ")
    direction = direction.detach()
    if mode == "jvp":
        with warnings.catch_warnings(), fwad.dual_level():
            # torch scripts a helper on the first make_dual and warns about its own jit.script
            warnings.filterwarnings("ignore", "`torch.jit.script` is deprecated",
                                    DeprecationWarning)
            out = _call(critic, fwad.make_dual(q_tilde.detach(), direction), t)
            deriv = fwad.unpack_dual(out).tangent
    else:
        deriv = (input_gradient(critic, q_tilde, t) * direction).sum(dim=-1)
    return deriv.pow(2).mean(dim=-1)
