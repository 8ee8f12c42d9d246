"""Generator input noise laws shared by every GAN step."""

from __future__ import annotations

import torch

from fusionlib.checks import check_choice

__all__ = ["NOISE_DISTRIBUTIONS", "base_noise"]

NOISE_DISTRIBUTIONS = ("normal", "uniform", "uniform_sign")


def base_noise(shape: tuple[int, ...], distribution: str, generator: torch.Generator,
               device: str | torch.device = "cpu") -> torch.Tensor:
    """Noise of ``shape`` drawn with ``generator``.

    ``"normal"`` N(0, I); ``"uniform"`` U(-1, 1); ``"uniform_sign"`` first coordinate U(-1, 1)
    and the others uniform on {-1, 1} (PTGAN Appendix C.2, Figure 11).
    """
    check_choice("noise distribution", distribution, NOISE_DISTRIBUTIONS)
    if distribution == "normal":
        return torch.randn(shape, generator=generator, device=device)
    u = torch.empty(shape, device=device).uniform_(-1.0, 1.0, generator=generator)
    if distribution == "uniform":
        return u
    u[..., 1:] = torch.where(u[..., 1:] < 0, -1.0, 1.0)
    return u
