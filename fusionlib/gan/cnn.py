"""Convolutional critic and generator of PTGAN's image experiments (seed 001, Tables 5 and 6).

Table 5 (the SNGAN-style networks of Miyato et al. 2018, for CIFAR-10 at ``p_x = 32`` with
``S_G = 1`` and BloodMNIST at ``p_x = 64`` with ``S_G = 2``; ``M_Z = 4``):

* critic: seven convolutions ``[3x3, 1, 64] [4x4, 2, 64] [3x3, 1, 128] [4x4, 2, 128]
  [3x3, 1, 256] [4x4, 2, 256] [3x3, 1, 512]``, each followed by LeakyReLU(0.1), then a dense
  layer to one score; spectral normalisation on every layer for the SN competitor only;
* generator: ``Z`` in R^128, dense to ``M_Z x M_Z x 512``, three transposed convolutions
  ``[4x4, 2, 256|128|64]`` with batch norm and ReLU, and ``[3x3, S_G, channels]``.

Table 6 (CelebA-HQ, 256 px): six ``[4x4, 2, 64 ... 2048]`` convolutions with LeakyReLU(0.2) and
a dense score; a generator from ``Z`` in R^256 through ``4 x 4 x 512`` and six upsample +
convolution blocks (``[4x4|3x3, 1, 2048 ... 3]``, batch norm and ReLU between).

Both tables leave the generator's output activation unprinted; we use ``tanh`` (images scaled to
[-1, 1]) as SNGAN does. For PTGAN the temperature feature ``t(alpha)`` is "concatenated to every
hidden layer" (SM D.2.1): here it enters as one extra constant channel of the input of every
convolution after the first and as one extra input of every dense layer (and of the generator's
first layer, beside ``Z``). ``width`` scales every channel count (1.0 = the tables; the cpu-scale
runs use smaller widths, stated beside their results).

The networks keep the package's flat convention: the critic takes ``(n, C*H*W)`` rows (or
``(n, C, H, W)`` images) and the generator returns ``(n, C*H*W)`` rows, so the shared training
steps, penalties and diagnostics (which work on ``(n, d)`` tensors) apply unchanged.
Parameters are initialised from an explicit ``seed`` (uniform on +-1/sqrt(fan_in), PyTorch's
default law) without touching the global random state.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn.utils.parametrizations import spectral_norm as _sn

from fusionlib import rng
from fusionlib.checks import check_choice, check_positive, check_positive_int
from fusionlib.errors import InvalidInputError
from fusionlib.gan.cnn_specs import (
    ConvSpec,
    critic_specs,
    generator_specs,
    scale_channels,
    table_geometry,
)

__all__ = ["CNNCritic", "CNNModule", "CNNGenerator", "cnn_networks"]

def _with_t(h: torch.Tensor, t: torch.Tensor | None) -> torch.Tensor:
    """Append ``t`` (n,) as a constant channel (4-D ``h``) or a column (2-D ``h``)."""
    if t is None:
        return h
    t = t.to(h.dtype).reshape(-1, *([1] * (h.ndim - 1)))
    return torch.cat([h, t.expand(-1, 1, *h.shape[2:])], dim=1)


def _init(module: nn.Module, seed: int) -> nn.Module:
    """Uniform(+-1/sqrt(fan_in)) weights and biases, unit BN, fresh SN vectors, from ``seed``."""
    g = rng.torch_generator(seed, "init")
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.Conv2d | nn.ConvTranspose2d | nn.Linear):
                has_sn = hasattr(m, "parametrizations") and "weight" in m.parametrizations
                w = m.parametrizations.weight.original if has_sn else m.weight
                fan_in = w.shape[1] * math.prod(w.shape[2:]) if not isinstance(
                    m, nn.ConvTranspose2d) else w.shape[0] * math.prod(w.shape[2:])
                bound = 1.0 / math.sqrt(fan_in)
                w.copy_(torch.empty(w.shape).uniform_(-bound, bound, generator=g))
                if m.bias is not None:
                    m.bias.copy_(torch.empty(m.bias.shape).uniform_(-bound, bound, generator=g))
                if has_sn:
                    sn = m.parametrizations.weight[0]
                    for name in ("_u", "_v"):
                        vec = getattr(sn, name)
                        vec.copy_(nn.functional.normalize(
                            torch.randn(vec.shape, generator=g), dim=0))
            elif isinstance(m, nn.BatchNorm2d):
                m.reset_parameters()
    return module


class CNNModule(nn.Module):
    """Base of the CNN critic and generator: built under a forked global RNG, then seeded;
    checks of the t(alpha) input."""

    def _finish(self, seed: int, device: str | None) -> None:
        # on the "meta" device (structure and parameter counts only) nothing is initialised
        if device != "meta":
            _init(self, seed)

    def _check_t(self, t: torch.Tensor | None, n: int) -> None:
        if self.conditional and t is None:
            raise InvalidInputError(f"this {type(self).__name__} is conditional: pass t(alpha)")
        if not self.conditional and t is not None:
            raise InvalidInputError(f"this {type(self).__name__} takes no t(alpha); build it "
                                    "with conditional=True for PTGAN")
        if t is not None and tuple(t.shape) != (n,):
            raise InvalidInputError(f"t must have shape ({n},), got {tuple(t.shape)}")


class CNNCritic(CNNModule):
    """Convolutional critic of Table 5 / 6: ``forward(x[, t]) -> (n,)`` scores.

    Parameters
    ----------
    image_size, channels: side in pixels and channel count of the images.
    arch: ``"table5"`` or ``"table6"``.
    width: channel multiplier (1.0 = the table).
    conditional: receive ``t(alpha)`` at every hidden layer (PTGAN).
    spectral_norm: spectral normalisation on every layer (the SN competitor).
    seed: initialisation seed.
    device: build on this device; ``"meta"`` builds the structure only (no memory, no init).
    """

    def __init__(self, image_size: int = 32, channels: int = 3, *, arch: str = "table5",
                 width: float = 1.0, conditional: bool = False, spectral_norm: bool = False,
                 seed: int = 0, device: str | None = None) -> None:
        super().__init__()
        check_positive_int("image_size", image_size)
        check_positive_int("channels", channels)
        check_positive("width", width)
        self.image_shape = (channels, image_size, image_size)
        self.in_dim = channels * image_size * image_size
        self.conditional, self.arch = bool(conditional), arch
        specs = critic_specs(arch, width)
        side = image_size
        for s in specs:
            side = side // s.stride
        if side < 1:
            raise InvalidInputError(f"image_size {image_size} too small for {arch}")
        extra = int(self.conditional)
        wrap = _sn if spectral_norm else (lambda m: m)
        with torch.random.fork_rng(devices=[]), torch.device(device or "cpu"):
            convs, c_in = [], channels
            for i, s in enumerate(specs):
                convs.append(wrap(nn.Conv2d(c_in + (extra if i else 0), s.out, s.kernel,
                                            s.stride, padding=1)))
                c_in = s.out
            self.convs = nn.ModuleList(convs)
            self.dense = wrap(nn.Linear(c_in * side * side + extra, 1))
        self.slope = 0.1 if arch == "table5" else 0.2
        self.feature_dim = c_in * side * side
        self._finish(seed, device)

    def features(self, x: torch.Tensor, t: torch.Tensor | None = None) -> torch.Tensor:
        """The input of the dense layer, ``(n, feature_dim [+ 1])`` (with ``t`` when given)."""
        n = x.shape[0]
        if x.ndim == 2:
            if x.shape[1] != self.in_dim:
                raise InvalidInputError(
                    f"critic built for {self.in_dim} values per image {self.image_shape}, got "
                    f"rows of {x.shape[1]}")
            x = x.reshape(n, *self.image_shape)
        elif tuple(x.shape[1:]) != self.image_shape:
            raise InvalidInputError(f"critic built for images {self.image_shape}, got "
                                    f"{tuple(x.shape[1:])}")
        self._check_t(t, n)
        h = x
        for i, conv in enumerate(self.convs):
            h = nn.functional.leaky_relu(conv(_with_t(h, t) if i else h), self.slope)
        return _with_t(h.flatten(1), t)

    def forward(self, x: torch.Tensor, t: torch.Tensor | None = None) -> torch.Tensor:
        return self.dense(self.features(x, t)).squeeze(1)


class CNNGenerator(CNNModule):
    """Generator of Table 5 / 6: ``forward(z[, t]) -> (n, C*H*W)`` in (-1, 1).

    Parameters
    ----------
    image_size, channels: output images.
    latent_dim: dimension of ``Z`` (128 in Table 5, 256 in Table 6).
    arch, width, conditional, seed, device: as for :class:`CNNCritic`.
    stride_out: ``S_G`` of the last layer (1 for 32 px, 2 for 64 px; Table 5).
    """

    def __init__(self, image_size: int = 32, channels: int = 3, *, latent_dim: int = 128,
                 arch: str = "table5", width: float = 1.0, conditional: bool = False,
                 stride_out: int = 1, seed: int = 0, device: str | None = None) -> None:
        super().__init__()
        check_positive_int("latent_dim", latent_dim)
        check_positive("width", width)
        check_positive_int("channels", channels)
        self.m_z = table_geometry(arch, image_size, stride_out)
        self.image_shape = (channels, image_size, image_size)
        self.out_dim = channels * image_size * image_size
        self.latent_dim, self.conditional, self.arch = latent_dim, bool(conditional), arch
        extra = int(self.conditional)
        self.c0 = scale_channels(512, width)
        specs = generator_specs(arch, width, channels=channels, stride_out=stride_out)
        with torch.random.fork_rng(devices=[]), torch.device(device or "cpu"):
            self.dense = nn.Linear(latent_dim + extra, self.m_z * self.m_z * self.c0)
            layers, norms, c_in = [], [], self.c0
            for i, s in enumerate(specs):
                last = i == len(specs) - 1
                layers.append(self._layer(arch, s, c_in + extra))
                norms.append(nn.Identity() if last else nn.BatchNorm2d(s.out))
                c_in = s.out
            self.layers, self.norms = nn.ModuleList(layers), nn.ModuleList(norms)
            self.upsample = [s.upsample for s in specs]
        self._finish(seed, device)

    @staticmethod
    def _layer(arch: str, s: ConvSpec, c_in: int) -> nn.Module:
        if arch == "table6":  # "Up. [conv: k x k, 1, c]": nearest upsampling, then a same conv
            # "same" padding is applied in forward (asymmetric for the even 4x4 kernels)
            return nn.Conv2d(c_in, s.out, s.kernel, 1, padding=0)
        # padding 1 (+ output_padding for stride 2 at 3x3) doubles the side exactly
        return nn.ConvTranspose2d(c_in, s.out, s.kernel, s.stride, padding=1,
                                  output_padding=1 if (s.stride == 2 and s.kernel == 3) else 0)

    def forward(self, z: torch.Tensor, t: torch.Tensor | None = None) -> torch.Tensor:
        if z.ndim != 2 or z.shape[1] != self.latent_dim:
            raise InvalidInputError(
                f"z must have shape (n, {self.latent_dim}), got {tuple(z.shape)}")
        n = z.shape[0]
        self._check_t(t, n)
        # neither table prints an activation after the dense layer (nor does SNGAN's Table 3)
        h = self.dense(_with_t(z, t)).reshape(n, self.c0, self.m_z, self.m_z)
        for up, layer, norm in zip(self.upsample, self.layers, self.norms, strict=True):
            h = _with_t(h, t)
            if up:
                k = layer.kernel_size[0]
                h = nn.functional.interpolate(h, scale_factor=2, mode="nearest")
                h = nn.functional.pad(h, ((k - 1) // 2, k // 2, (k - 1) // 2, k // 2))
            h = layer(h)
            h = torch.relu(norm(h)) if not isinstance(norm, nn.Identity) else h
        return torch.tanh(h).flatten(1)


def cnn_networks(image_size: int, channels: int, *, conditional: bool, spectral_norm: bool,
                 width: float = 1.0, latent_dim: int | None = None, seed: int = 0,
                 device: str | None = None) -> tuple[CNNGenerator, CNNCritic]:
    """Generator and critic of the table that fits ``image_size`` (32/64: Table 5; 256: 6).

    ``latent_dim`` defaults to the table's (128 or 256); the two networks get independent
    initialisation streams of ``seed``.
    """
    check_choice("image_size", image_size, (32, 64, 256))
    arch = "table6" if image_size == 256 else "table5"
    stride_out = 2 if image_size == 64 else 1
    latent = latent_dim or (256 if arch == "table6" else 128)
    gen = CNNGenerator(image_size, channels, latent_dim=latent, arch=arch, width=width,
                       conditional=conditional, stride_out=stride_out,
                       seed=rng.seed_int(seed, "generator"), device=device)
    critic = CNNCritic(image_size, channels, arch=arch, width=width, conditional=conditional,
                       spectral_norm=spectral_norm, seed=rng.seed_int(seed, "critic"),
                       device=device)
    return gen, critic
