"""R critics or generators of :mod:`fusionlib.gan.networks` stacked into one module.

:class:`StackedCritic` and :class:`StackedGenerator` are built from R unstacked networks of one
architecture (:meth:`StackedCritic.from_critics`, :meth:`StackedGenerator.from_generators`), so
repetition r starts from exactly the parameters of its separate run, and give each repetition
back as an unstacked network (:meth:`StackedCritic.unstacked`,
:meth:`StackedGenerator.unstacked`). Inputs and outputs carry a leading repetition dimension:
``critic(x (R, n, d), t (R, n)) -> (R, n)`` and ``generator(z (R, n, latent), t) -> (R, n, d)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from fusionlib.errors import InvalidInputError
from fusionlib.gan.heads import TabularHead
from fusionlib.gan.networks import Critic, Generator
from fusionlib.gan.stacked import (
    PenaltyReLU,
    StackedBatchNorm1d,
    StackedLinear,
    load_rep_state_dict,
    rep_state_dict,
    stack_inputs_t,
)
from fusionlib.gan.stacked_heads import StackedTabularHead

__all__ = ["StackedCritic", "StackedGenerator"]


def _same_architecture(nets: Sequence[nn.Module], kind: type, part: str) -> int:
    if not nets or not all(isinstance(n, kind) for n in nets):
        raise InvalidInputError(
            f"stacking needs a non-empty list of {kind.__name__} objects, got "
            f"{[type(n).__name__ for n in nets] if nets else 'none'}")
    if len({repr(getattr(n, part)) for n in nets}) > 1 or len(
            {(n.conditional, getattr(n, "latent_dim", 0)) for n in nets}) > 1:
        raise InvalidInputError(
            f"the {kind.__name__}s to stack differ in architecture; build them with the same "
            "sizes (only their seeds, and a head's temperature, may differ)")
    return len(nets)


def _stack_layer(layers: Sequence[nn.Module], *, critic: bool = False) -> nn.Module:
    layer, n_reps = layers[0], len(layers)
    if isinstance(layer, nn.Linear):
        return StackedLinear.like(layer, n_reps)
    if isinstance(layer, nn.BatchNorm1d):
        return StackedBatchNorm1d.like(layer, n_reps)
    if isinstance(layer, nn.ReLU):
        return PenaltyReLU() if critic else nn.ReLU()
    if isinstance(layer, TabularHead):
        return StackedTabularHead.like(layers)
    raise InvalidInputError(f"layer {layer!r} cannot be stacked (Linear, BatchNorm1d, ReLU and "
                            "TabularHead can)")


def _linears(seq: nn.Sequential) -> list[StackedLinear]:
    return [m for m in seq if isinstance(m, StackedLinear)]


class StackedCritic(nn.Module):
    """R critics ``D_r(x[, t]) -> (n,)``; see the module docstring.

    Attributes
    ----------
    net:
        The stacked layers, at the positions of the unstacked ``Critic.net``.
    in_dim, conditional, n_reps:
        Data dimension, whether ``t`` is an input, number of repetitions.
    """

    def __init__(self, net: nn.Sequential, *, in_dim: int, conditional: bool) -> None:
        super().__init__()
        self.net, self.in_dim, self.conditional = net, in_dim, conditional
        self.n_reps = _linears(net)[0].weight.shape[0]

    @classmethod
    def from_critics(cls, critics: Sequence[Critic]) -> StackedCritic:
        """Stack R critics of one architecture (repetition r = ``critics[r]``)."""
        critics = list(critics)
        _same_architecture(critics, Critic, "net")
        first = critics[0]
        net = nn.Sequential(*(_stack_layer(layers, critic=True)
                              for layers in zip(*(c.net for c in critics), strict=True)))
        out = cls(net, in_dim=first.in_dim, conditional=first.conditional)
        for r, c in enumerate(critics):
            load_rep_state_dict(out, r, c.state_dict())
        return out

    def forward(self, x: torch.Tensor, t: torch.Tensor | None = None) -> torch.Tensor:
        """Scores (R, n) of points ``x`` (R, n, in_dim) at temperature features ``t`` (R, n)."""
        return self.net(stack_inputs_t(x, t, self.conditional)).squeeze(-1)

    def unstacked(self, r: int) -> Critic:
        """Repetition ``r`` as a :class:`~fusionlib.gan.networks.Critic` (a copy)."""
        hidden = [m.out_features for m in _linears(self.net)[:-1]]
        critic = Critic(self.in_dim, hidden, conditional=self.conditional)
        critic.load_state_dict(rep_state_dict(self, r))
        return critic.to(self.net[0].weight.device)


class StackedGenerator(nn.Module):
    """R generators ``G_r(z[, t]) -> (n, out_dim)``; see the module docstring.

    Attributes
    ----------
    body, head:
        The stacked hidden layers (positions of ``Generator.body``) and output head
        (:class:`~fusionlib.gan.stacked.StackedLinear` or
        :class:`~fusionlib.gan.stacked_heads.StackedTabularHead`).
    latent_dim, out_dim, conditional, n_reps:
        As for :class:`~fusionlib.gan.networks.Generator`, and the number of repetitions.
    """

    def __init__(self, body: nn.Sequential, head: nn.Module, *, latent_dim: int, out_dim: int,
                 conditional: bool) -> None:
        super().__init__()
        self.body, self.head = body, head
        self.latent_dim, self.out_dim, self.conditional = latent_dim, out_dim, conditional
        self.n_reps = _linears(body)[0].weight.shape[0]

    @classmethod
    def from_generators(cls, generators: Sequence[Generator]) -> StackedGenerator:
        """Stack R generators of one architecture (repetition r = ``generators[r]``)."""
        generators = list(generators)
        _same_architecture(generators, Generator, "body")
        first = generators[0]
        body = nn.Sequential(*(_stack_layer(layers)
                               for layers in zip(*(g.body for g in generators), strict=True)))
        out = cls(body, _stack_layer([g.head for g in generators]), latent_dim=first.latent_dim,
                  out_dim=first.out_dim, conditional=first.conditional)
        for r, g in enumerate(generators):
            load_rep_state_dict(out, r, g.state_dict())
        return out

    @property
    def stochastic(self) -> bool:
        """Whether the head draws Gumbel noise from ``forward``'s ``generator`` argument."""
        return bool(getattr(self.head, "stochastic", False))

    def forward(self, z: torch.Tensor, t: torch.Tensor | None = None, *,
                generator: object | None = None) -> torch.Tensor:
        """Samples (R, n, out_dim) from noise ``z`` (R, n, latent_dim) at features ``t`` (R, n).

        ``generator``: a :class:`~fusionlib.gan.stacked.GeneratorBank` feeding the Gumbel noise
        of a stochastic head (repetition r from ``generator[r]``); a linear head ignores it.
        """
        h = self.body(stack_inputs_t(z, t, self.conditional))
        if generator is not None and self.stochastic:
            return self.head(h, generator)
        return self.head(h)

    def unstacked(self, r: int) -> Generator:
        """Repetition ``r`` as a :class:`~fusionlib.gan.networks.Generator` (a copy)."""
        hidden = [m.out_features for m in _linears(self.body)]
        head = None
        if isinstance(self.head, StackedTabularHead):
            head = TabularHead(self.head.in_features, self.head.spans, tau=self.head.taus[r])
        gen = Generator(self.latent_dim, self.out_dim, hidden, conditional=self.conditional,
                        batch_norm=any(isinstance(m, StackedBatchNorm1d) for m in self.body),
                        head=head)
        gen.load_state_dict(rep_state_dict(self, r))
        return gen.to(self.body[0].weight.device)
