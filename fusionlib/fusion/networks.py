"""FusionGAN's networks, exactly as in Appendix A of seed 000.

Generator ``G: R^32 -> R^|V|`` (the whole schema V)::

    Linear(32 -> 128) + ReLU, Linear(128 -> 128) + ReLU, Linear(128 -> 128) + ReLU,
    Linear(128 -> |V|)

With categorical columns (Appendix I, planned extension 2) the last linear layer is replaced by
a :class:`~fusionlib.gan.heads.TabularHead` on the encoded schema's spans (a linear output per
continuous column, a Gumbel-softmax block per categorical column); |V| then counts encoded
columns. Without a categorical column the generator is exactly the one above.

Discriminator of source k ``D_k: R^|V_k| -> [0, 1]`` (on the projection pi_Vk)::

    Linear(|V_k| -> 128) + LeakyReLU(0.2), Linear(128 -> 128) + LeakyReLU(0.2),
    Linear(128 -> 64) + LeakyReLU(0.2), Linear(64 -> 1) + Sigmoid

The modules only define ``forward`` (the losses live in :mod:`fusionlib.fusion.step`). Layers are
built without drawing from torch's global generator (:func:`torch.nn.utils.skip_init`) and then
initialised by :func:`fusionlib.gan.networks.init_parameters` from an explicit seed (PyTorch's
default law for ``nn.Linear``: uniform on +-1/sqrt(fan_in)).
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import nn

from fusionlib.checks import check_positive_int
from fusionlib.errors import InvalidInputError
from fusionlib.gan.heads import TabularHead, check_spans
from fusionlib.gan.networks import init_parameters
from fusionlib.rng import child

__all__ = ["FusionGenerator", "SourceDiscriminator", "LEAKY_SLOPE"]

#: negative slope of the discriminators' LeakyReLU (Appendix A)
LEAKY_SLOPE = 0.2


def _linear(n_in: int, n_out: int) -> nn.Linear:
    """An uninitialised ``nn.Linear`` (no global random draw; init_parameters fills it)."""
    return nn.utils.skip_init(nn.Linear, n_in, n_out)


class FusionGenerator(nn.Module):
    """Generator ``G(z) -> x_hat``: three hidden ReLU layers, then the output over the schema.

    Parameters
    ----------
    out_dim:
        |V|, the number of (encoded) schema columns (the union of every source's columns).
    latent_dim:
        Dimension of the noise z (32 in Appendix C).
    hidden:
        Width of the three hidden layers (128 in Appendix C).
    spans:
        Optional :class:`~fusionlib.encoding.tabular.Span` layout of the ``out_dim`` columns.
        With at least one discrete span, the last linear layer is replaced by a
        :class:`~fusionlib.gan.heads.TabularHead` (Gumbel-softmax over each discrete span);
        otherwise (None, or continuous spans only) the output is the Appendix A linear layer.
    tau, hard:
        Temperature and straight-through flag of the head (unused without a discrete span).
        ``hard=True`` (default) makes the generated blocks exactly one-hot like the real ones;
        see :class:`~fusionlib.fusion.synthesizer.FusionGAN` for why.
    seed:
        Seed of the initialisation: stream ``child(seed, "generator")`` for the Appendix A layers
        and ``child(seed, "generator", "head")`` for a tabular head.

    Attributes
    ----------
    latent_dim, out_dim, hidden:
        As given.
    net:
        Without a head: the ``nn.Sequential`` of the seven layers above. With a head: the six
        hidden layers (three Linear + ReLU).
    head:
        The :class:`TabularHead`, or None; with a head, ``forward`` draws Gumbel noise from its
        ``generator`` argument (see :attr:`stochastic`).
    """

    def __init__(self, out_dim: int, *, latent_dim: int = 32, hidden: int = 128,
                 spans: Iterable[object] | None = None, tau: float = 0.2, hard: bool = True,
                 seed: object = 0) -> None:
        super().__init__()
        for name, value in (("out_dim", out_dim), ("latent_dim", latent_dim), ("hidden", hidden)):
            check_positive_int(name, value)
        layout = None if spans is None else check_spans(spans)
        if layout is not None and layout[-1].stop != out_dim:
            raise InvalidInputError(f"the spans cover {layout[-1].stop} output columns but "
                                    f"out_dim is {out_dim}; build both from the same encoding")
        body = [_linear(latent_dim, hidden), nn.ReLU(),
                _linear(hidden, hidden), nn.ReLU(),
                _linear(hidden, hidden), nn.ReLU()]
        self.head: TabularHead | None = None
        if layout is not None and any(s.kind == "discrete" for s in layout):
            self.net = nn.Sequential(*body)
            self.head = TabularHead(hidden, layout, tau=tau, hard=hard,
                                    seed=child(seed, "generator", "head"))
        else:
            self.net = nn.Sequential(*body, _linear(hidden, out_dim))
        self.latent_dim, self.out_dim, self.hidden = int(latent_dim), int(out_dim), int(hidden)
        init_parameters(self.net, child(seed, "generator"))

    @property
    def stochastic(self) -> bool:
        """Whether ``forward`` draws noise (Gumbel) from its ``generator`` argument."""
        return self.head is not None

    def forward(self, z: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """Synthetic records (n, out_dim) from noise ``z`` (n, latent_dim).

        ``generator`` feeds the Gumbel noise of a tabular head (None: the noiseless softmax, see
        :class:`~fusionlib.gan.heads.TabularHead`); the Appendix A network ignores it.
        """
        h = self.net(z)
        return h if self.head is None else self.head(h, generator)


class SourceDiscriminator(nn.Module):
    """Discriminator ``D_k(x) -> p`` of one source, on its projected columns.

    ``forward`` returns the Appendix A output, the probability ``sigmoid(logits(x))`` in [0, 1].
    The training losses use :meth:`logits` with ``log D = logsigmoid(l)`` and
    ``log(1 - D) = logsigmoid(-l)``: mathematically the same as the log of the sigmoid output,
    but finite when D saturates (``log(sigmoid(l))`` is ``log(0) = -inf`` once ``sigmoid(l)``
    rounds to 0 in float32, i.e. for l below about -104; logsigmoid is exact there).

    Parameters
    ----------
    in_dim:
        |V_k|, the number of columns of the source.
    hidden:
        Width of the first two hidden layers (128); the third has ``hidden // 2`` units (64).
    seed:
        Seed of the initialisation (stream ``child(seed, "discriminator")``).

    Attributes
    ----------
    in_dim:
        As given.
    body:
        The ``nn.Sequential`` from the input to the logit (four Linear layers, three LeakyReLU).
    output:
        The final ``nn.Sigmoid``.
    """

    def __init__(self, in_dim: int, *, hidden: int = 128, seed: object = 0) -> None:
        super().__init__()
        check_positive_int("in_dim", in_dim)
        check_positive_int("hidden", hidden)
        last = max(int(hidden) // 2, 1)
        self.body = nn.Sequential(
            _linear(in_dim, hidden), nn.LeakyReLU(LEAKY_SLOPE),
            _linear(hidden, hidden), nn.LeakyReLU(LEAKY_SLOPE),
            _linear(hidden, last), nn.LeakyReLU(LEAKY_SLOPE),
            _linear(last, 1),
        )
        self.output = nn.Sigmoid()
        self.in_dim, self.hidden = int(in_dim), int(hidden)
        init_parameters(self, child(seed, "discriminator"))

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        """Pre-sigmoid scores (n,) of records ``x`` (n, in_dim) (the WGAN-GP critic score)."""
        return self.body(x).squeeze(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Probabilities (n,) in [0, 1] that the records ``x`` (n, in_dim) are real."""
        return self.output(self.logits(x))
