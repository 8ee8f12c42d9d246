"""The layer plans of PTGAN's image networks (seed 001, Tables 5 and 6), both ways.

:func:`critic_specs` and :func:`generator_specs` turn a table into the list of (transposed)
convolutions that :mod:`fusionlib.gan.cnn` builds; :func:`table_geometry` refuses image sizes a
table does not cover; :func:`layer_table` reads a built pair of networks back into the rows of
the paper's tables, so a comparison with the typed tables checks the modules themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import nn

from fusionlib.checks import check_choice
from fusionlib.errors import InvalidInputError

__all__ = ["ARCHITECTURES", "ConvSpec", "critic_specs", "generator_specs", "layer_table",
           "scale_channels", "table_geometry"]

#: architectures by table: "table5" (32 or 64 px) and "table6" (256 px)
ARCHITECTURES = ("table5", "table6")


@dataclass(frozen=True)
class ConvSpec:
    """One (transposed) convolution: kernel, stride, output channels, upsample first."""

    kernel: int
    stride: int
    out: int
    upsample: bool = False


def scale_channels(c: int, width: float) -> int:
    """``c`` channels scaled by ``width`` (at least one)."""
    return max(1, int(round(c * width)))


def critic_specs(arch: str, width: float = 1.0) -> list[ConvSpec]:
    """The critic's convolutions of Table 5 or Table 6, channels scaled by ``width``."""
    check_choice("arch", arch, ARCHITECTURES)
    if arch == "table5":
        plan = [(3, 1, 64), (4, 2, 64), (3, 1, 128), (4, 2, 128), (3, 1, 256), (4, 2, 256),
                (3, 1, 512)]
    else:
        plan = [(4, 2, c) for c in (64, 128, 256, 512, 1024, 2048)]
    return [ConvSpec(k, s, scale_channels(c, width)) for k, s, c in plan]


def generator_specs(arch: str, width: float = 1.0, *, channels: int = 3,
                    stride_out: int = 1) -> list[ConvSpec]:
    """The generator's layers after the dense one (Table 5 or 6); the last has ``channels``."""
    check_choice("arch", arch, ARCHITECTURES)
    if arch == "table5":
        body = [ConvSpec(4, 2, scale_channels(c, width)) for c in (256, 128, 64)]
        return [*body, ConvSpec(3, stride_out, channels)]
    body = [ConvSpec(k, 1, scale_channels(c, width), upsample=True)
            for k, c in ((4, 2048), (4, 1024), (4, 512), (3, 256), (3, 128))]
    return [*body, ConvSpec(3, 1, channels, upsample=True)]


def table_geometry(arch: str, image_size: int, stride_out: int) -> int:
    """The side ``M_Z`` of the generator's first feature map; refuses sizes the table lacks."""
    if arch == "table6":
        if image_size != 256 or stride_out != 1:
            raise InvalidInputError("Table 6 is for 256 px images (stride_out 1); got "
                                    f"image_size={image_size}, stride_out={stride_out}")
        return 4
    check_choice("stride_out", stride_out, (1, 2))
    m_z = image_size // (8 * stride_out)
    if m_z < 1 or m_z * 8 * stride_out != image_size:
        raise InvalidInputError(
            f"Table 5 needs image_size = 8 * M_Z * S_G (32 px with S_G=1, 64 px with S_G=2); "
            f"got image_size={image_size}, stride_out={stride_out}")
    return m_z



def layer_table(generator: nn.Module, critic: nn.Module) -> list[dict]:
    """The layers of a built :class:`~fusionlib.gan.cnn.CNNGenerator` and
    :class:`~fusionlib.gan.cnn.CNNCritic` in the form of the paper's Tables 5 and 6 (one dict
    per layer).

    Keys: ``net``, ``layer``, ``kind`` (conv, deconv, up+conv, dense), ``kernel``, ``stride``,
    ``out``, ``activation`` and ``norm`` (``sn``, ``bn`` or empty), read from the modules, so a
    comparison with the typed tables checks the networks themselves.
    """
    rows: list[dict] = []
    act = f"lrelu{critic.slope:g}"
    for i, conv in enumerate(critic.convs):
        sn = "sn" if hasattr(conv, "parametrizations") else ""
        rows.append(dict(net="critic", layer=i + 1, kind="conv", kernel=conv.kernel_size[0],
                         stride=conv.stride[0], out=conv.out_channels, activation=act, norm=sn))
    rows.append(dict(net="critic", layer=len(rows) + 1, kind="dense", kernel=None, stride=None,
                     out=critic.dense.out_features, activation="", norm=""))
    rows.append(dict(net="generator", layer=1, kind="dense", kernel=None, stride=None,
                     out=generator.dense.out_features, activation="", norm=""))
    for i, (up, layer, norm) in enumerate(zip(generator.upsample, generator.layers,
                                              generator.norms, strict=True)):
        bn = isinstance(norm, nn.BatchNorm2d)
        kind = "up+conv" if up else "deconv"
        rows.append(dict(net="generator", layer=i + 2, kind=kind, kernel=layer.kernel_size[0],
                         stride=layer.stride[0], out=layer.out_channels,
                         activation="relu" if bn else "", norm="bn" if bn else ""))
    return rows
