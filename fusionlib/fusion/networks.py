"""FusionGAN's networks, exactly as in Appendix A of seed 000.

Generator ``G: R^32 -> R^|V|`` (the whole schema V)::

    Linear(32 -> 128) + ReLU, Linear(128 -> 128) + ReLU, Linear(128 -> 128) + ReLU,
    Linear(128 -> |V|)

Discriminator of source k ``D_k: R^|V_k| -> [0, 1]`` (on the projection pi_Vk)::

    Linear(|V_k| -> 128) + LeakyReLU(0.2), Linear(128 -> 128) + LeakyReLU(0.2),
    Linear(128 -> 64) + LeakyReLU(0.2), Linear(64 -> 1) + Sigmoid

The modules only define ``forward`` (the losses live in :mod:`fusionlib.fusion.step`). Layers are
built without drawing from torch's global generator (:func:`torch.nn.utils.skip_init`) and then
initialised by :func:`fusionlib.gan.networks.init_parameters` from an explicit seed (PyTorch's
default law for ``nn.Linear``: uniform on +-1/sqrt(fan_in)).
"""

from __future__ import annotations

import torch
from torch import nn

from fusionlib.checks import check_positive_int
from fusionlib.gan.networks import init_parameters
from fusionlib.rng import child

__all__ = ["FusionGenerator", "SourceDiscriminator", "LEAKY_SLOPE"]

#: negative slope of the discriminators' LeakyReLU (Appendix A)
LEAKY_SLOPE = 0.2


def _linear(n_in: int, n_out: int) -> nn.Linear:
    """An uninitialised ``nn.Linear`` (no global random draw; init_parameters fills it)."""
    return nn.utils.skip_init(nn.Linear, n_in, n_out)


class FusionGenerator(nn.Module):
    """Generator ``G(z) -> x_hat``: three hidden ReLU layers, linear output over the schema.

    Parameters
    ----------
    out_dim:
        |V|, the number of schema columns (the union of every source's columns).
    latent_dim:
        Dimension of the noise z (32 in Appendix C).
    hidden:
        Width of the three hidden layers (128 in Appendix C).
    seed:
        Seed of the initialisation (stream ``child(seed, "generator")``).

    Attributes
    ----------
    latent_dim, out_dim:
        As given.
    net:
        The ``nn.Sequential`` of the seven layers above.
    """

    def __init__(self, out_dim: int, *, latent_dim: int = 32, hidden: int = 128,
                 seed: object = 0) -> None:
        super().__init__()
        for name, value in (("out_dim", out_dim), ("latent_dim", latent_dim), ("hidden", hidden)):
            check_positive_int(name, value)
        self.net = nn.Sequential(
            _linear(latent_dim, hidden), nn.ReLU(),
            _linear(hidden, hidden), nn.ReLU(),
            _linear(hidden, hidden), nn.ReLU(),
            _linear(hidden, out_dim),
        )
        self.latent_dim, self.out_dim, self.hidden = int(latent_dim), int(out_dim), int(hidden)
        init_parameters(self, child(seed, "generator"))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        """Synthetic records (n, out_dim) from noise ``z`` (n, latent_dim)."""
        return self.net(z)


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
