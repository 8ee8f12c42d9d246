"""Multilayer perceptrons for PTGAN: modules that only define ``forward``.

Both networks optionally take the temperature feature ``t(alpha)`` (Section 4.1: "W_1 and V_1
adopt one more input dimension for receiving alpha") as one extra input column. Parameters are
initialised from an explicit ``seed`` with a local :class:`torch.Generator`, following PyTorch's
default law for ``nn.Linear`` (uniform on +-1/sqrt(fan_in)), so construction never reads or
advances the global random state.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import torch
from torch import nn

from fusionlib import rng
from fusionlib.checks import check_choice, check_positive_int, is_int
from fusionlib.errors import InvalidInputError

__all__ = ["Critic", "Generator", "batch_statistics", "eval_mode", "init_parameters",
           "tabular_networks", "toy_networks"]


@contextmanager
def eval_mode(*modules: nn.Module) -> Iterator[None]:
    """Put ``modules`` in eval mode (batch norm uses its running statistics), restoring each
    one's previous mode on exit."""
    modes = [m.training for m in modules]
    for m in modules:
        m.eval()
    try:
        yield
    finally:
        for m, mode in zip(modules, modes, strict=True):
            m.train(mode)

@contextmanager
def batch_statistics(*modules: nn.Module) -> Iterator[None]:
    """Put ``modules`` in training mode, so batch norm normalises with the statistics of the
    batch it is given, and put every buffer (running statistics, batch counters) back as it was
    on exit: sampling in this mode changes nothing in the model."""
    modes = [m.training for m in modules]
    saved = [[b.detach().clone() for b in m.buffers()] for m in modules]
    for m in modules:
        m.train()
    try:
        yield
    finally:
        for m, mode, bufs in zip(modules, modes, saved, strict=True):
            with torch.no_grad():
                for b, old in zip(m.buffers(), bufs, strict=True):
                    b.copy_(old)
            m.train(mode)


TOY_SIZES = ("small", "paper")


def _hidden(hidden: Sequence[int]) -> tuple[int, ...]:
    hidden = tuple(hidden)
    if not hidden or any(not is_int(h) or h < 1 for h in hidden):
        raise InvalidInputError(
            f"hidden must be a non-empty sequence of positive ints, got {hidden}")
    return hidden


@torch.no_grad()
def init_parameters(module: nn.Module, seed: int) -> nn.Module:
    """(Re)initialise every Linear, BatchNorm and spectral-norm vector of ``module``."""
    g = rng.torch_generator(seed, "init")
    for m in module.modules():
        if isinstance(m, nn.Linear):
            weight = m.parametrizations.weight.original if _has_sn(m) else m.weight
            bound = 1.0 / math.sqrt(m.in_features)
            weight.copy_(torch.empty(weight.shape).uniform_(-bound, bound, generator=g))
            if m.bias is not None:
                m.bias.copy_(torch.empty(m.bias.shape).uniform_(-bound, bound, generator=g))
            if _has_sn(m):
                _init_power_vectors(m, g)
        elif isinstance(m, nn.BatchNorm1d):
            m.reset_parameters()
    return module


def _has_sn(m: nn.Module) -> bool:
    return hasattr(m, "parametrizations") and "weight" in m.parametrizations


def _init_power_vectors(m: nn.Linear, g: torch.Generator) -> None:
    sn = m.parametrizations.weight[0]
    w = m.parametrizations.weight.original
    u = nn.functional.normalize(torch.randn(w.shape[0], generator=g), dim=0)
    for _ in range(15):  # the 15 warm-up power iterations torch's spectral_norm also does
        v = nn.functional.normalize(w.t() @ u, dim=0)
        u = nn.functional.normalize(w @ v, dim=0)
    sn._u.copy_(u)
    sn._v.copy_(v)


def _linear(n_in: int, n_out: int, spectral: bool) -> nn.Linear:
    # nn.Linear and spectral_norm draw their initial values from the global RNG; restore its
    # state afterwards (init_parameters then redraws everything from the local generator)
    with torch.random.fork_rng(devices=[]):
        layer = nn.Linear(n_in, n_out)
        if spectral:
            layer = nn.utils.parametrizations.spectral_norm(layer)
    return layer


def _with_t(x: torch.Tensor, t: torch.Tensor | None, conditional: bool) -> torch.Tensor:
    if not conditional:
        if t is not None:
            raise InvalidInputError("this network is unconditional; call it without t")
        return x
    if t is None or t.shape != x.shape[:1]:
        raise InvalidInputError(
            f"a conditional network needs t of shape ({x.shape[0]},), got "
            f"{None if t is None else tuple(t.shape)}; pass t=temperature(alpha)"
        )
    return torch.cat([x, t.unsqueeze(1).to(x.dtype)], dim=1)


class Critic(nn.Module):
    """ReLU MLP critic ``D(x[, t]) -> (n,)`` with an optional temperature input.

    Parameters
    ----------
    in_dim:
        Data dimension d.
    hidden:
        Widths of the hidden ReLU layers (e.g. (64,) * 7 for Table 9).
    conditional:
        Whether ``forward`` takes ``t`` (n,) as an extra input column.
    spectral_norm:
        Spectral normalisation of every linear layer (Miyato et al. 2018).
    seed:
        Seed of the parameter initialisation.
    """

    def __init__(self, in_dim: int, hidden: Sequence[int] = (64, 64), *, conditional: bool = False,
                 spectral_norm: bool = False, seed: object = 0) -> None:
        super().__init__()
        check_positive_int("in_dim", in_dim)
        widths = (in_dim + int(conditional), *_hidden(hidden))
        layers: list[nn.Module] = []
        for n_in, n_out in zip(widths[:-1], widths[1:], strict=True):
            layers += [_linear(n_in, n_out, spectral_norm), nn.ReLU()]
        layers.append(_linear(widths[-1], 1, spectral_norm))
        self.net = nn.Sequential(*layers)
        self.in_dim, self.conditional = in_dim, conditional
        init_parameters(self, seed)

    def forward(self, x: torch.Tensor, t: torch.Tensor | None = None) -> torch.Tensor:
        """Scores (n,) of points ``x`` (n, in_dim) at temperature features ``t`` (n,)."""
        return self.net(_with_t(x, t, self.conditional)).squeeze(1)


class Generator(nn.Module):
    """ReLU MLP generator ``G(z[, t]) -> (n, out_dim)``, optional batch norm and custom head.

    Parameters
    ----------
    latent_dim, out_dim:
        Noise and data dimensions.
    hidden:
        Widths of the hidden layers (Linear -> [BatchNorm] -> ReLU).
    conditional:
        Whether ``forward`` takes the temperature feature ``t`` (n,).
    batch_norm:
        Batch normalisation after each hidden linear layer (Table 9 generator).
    head:
        Replaces the default final ``Linear(hidden[-1], out_dim)``; it must map (n, hidden[-1])
        to (n, out_dim) (e.g. a tabular head with Gumbel-softmax blocks). Not re-initialised.
    seed:
        Seed of the parameter initialisation.
    """

    def __init__(self, latent_dim: int, out_dim: int, hidden: Sequence[int] = (64, 64), *,
                 conditional: bool = False, batch_norm: bool = False,
                 head: nn.Module | None = None, seed: object = 0) -> None:
        super().__init__()
        check_positive_int("latent_dim", latent_dim)
        check_positive_int("out_dim", out_dim)
        widths = (latent_dim + int(conditional), *_hidden(hidden))
        layers: list[nn.Module] = []
        for n_in, n_out in zip(widths[:-1], widths[1:], strict=True):
            layers.append(_linear(n_in, n_out, False))
            if batch_norm:
                layers.append(nn.BatchNorm1d(n_out))
            layers.append(nn.ReLU())
        self.body = nn.Sequential(*layers)
        init_parameters(self.body, seed)
        self.head = head if head is not None else init_parameters(
            _linear(widths[-1], out_dim, False), rng.child(seed, "head"))
        self.latent_dim, self.out_dim, self.conditional = latent_dim, out_dim, conditional

    @property
    def stochastic(self) -> bool:
        """Whether the head draws noise (Gumbel) from ``forward``'s ``generator`` argument."""
        return bool(getattr(self.head, "stochastic", False))

    def forward(self, z: torch.Tensor, t: torch.Tensor | None = None, *,
                generator: torch.Generator | None = None) -> torch.Tensor:
        """Samples (n, out_dim) from noise ``z`` (n, latent_dim) at temperature features ``t``.

        ``generator`` feeds the noise of a stochastic head (the Gumbel draws of a
        :class:`~fusionlib.gan.heads.TabularHead`); a linear head ignores it.
        """
        h = self.body(_with_t(z, t, self.conditional))
        if generator is not None and self.stochastic:
            return self.head(h, generator)
        return self.head(h)


def toy_networks(size: str = "small", *, conditional: bool, seed: int, latent_dim: int = 4,
                 data_dim: int = 2) -> tuple[Generator, Critic]:
    """Generator and critic for the 2-D toys.

    ``"paper"``: 4 hidden layers of 256 ReLU units in both networks (Figure 1: d = g = 5);
    ``"small"``: 2 hidden layers of 64 (the CPU-scale choice). Latent dimension 4 (Figure 1).
    The generator and critic are initialised on the streams ``(seed, "generator")`` and
    ``(seed, "critic")`` (:mod:`fusionlib.rng`), so the two networks never share a stream.
    """
    check_choice("toy network size", size, TOY_SIZES)
    hidden = (256,) * 4 if size == "paper" else (64, 64)
    gen = Generator(latent_dim, data_dim, hidden, conditional=conditional,
                    seed=rng.child(seed, "generator"))
    critic = Critic(data_dim, hidden, conditional=conditional, seed=rng.child(seed, "critic"))
    return gen, critic


def tabular_networks(data_dim: int, *, conditional: bool, seed: int, latent_dim: int = 16,
                     head: nn.Module | None = None) -> tuple[Generator, Critic]:
    """Table 9 networks of seed 001 (PTGAN, Appendix D.2.3).

    Critic: ``data_dim`` (+1 for ``t(alpha)`` when ``conditional``) -> 7 dense layers of 64 with
    ReLU -> 1. Generator: latent 16 (+1 for ``t``) -> 7 dense layers of 64 with batch norm and
    ReLU ([common]) -> ``head``: pass a :class:`~fusionlib.gan.heads.TabularHead` on 64 input
    features for Table 9's linear output per continuous column ([continuous]) and dense layer +
    Gumbel-softmax per one-hot column ([discrete]); default: a linear layer to ``data_dim``.
    """
    out = getattr(head, "out_features", data_dim)
    if out != data_dim:
        raise InvalidInputError(
            f"the head has {out} outputs but data_dim is {data_dim}; build both from the same "
            "encoding")
    gen = Generator(latent_dim, data_dim, (64,) * 7, conditional=conditional, batch_norm=True,
                    head=head, seed=rng.child(seed, "generator"))
    critic = Critic(data_dim, (64,) * 7, conditional=conditional, seed=rng.child(seed, "critic"))
    return gen, critic
