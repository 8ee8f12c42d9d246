"""Per-sample gradients, clipping and summing for FusionGAN's DP-SGD discriminators.

:class:`FuncGradients` computes the per-pair gradients with ``torch.func`` (default);
:class:`OpacusGradients` with Opacus' ``GradSampleModule`` (optional, ``opacus==1.6.0``, bce
only); :func:`clip_and_sum` clips each to norm C over all parameters and sums them.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from fusionlib.errors import InvalidInputError

__all__ = ["FuncGradients", "OpacusGradients", "clip_and_sum"]


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

