"""Tempered minibatches of PTGAN (Algorithm 1, eq. 5-8) and the generator's reference noise.

The tempered variable of the paper (Section 3.1, eq. 5) interpolates two *real* data points,
``Q^alpha = alpha X_1 + (1 - alpha) X_2``; it never mixes real with generated points (that is
Mixup GAN, Appendix A.4, provided here as :func:`mixup_batch` for the comparison of Figure 9).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from fusionlib.errors import InvalidInputError
from fusionlib.gan._validate import (
    check_choice,
    check_matrix,
    check_positive_int,
    check_probability,
)

__all__ = [
    "NOISE_DISTRIBUTIONS",
    "TemperedBatch",
    "interpolate",
    "mixup_batch",
    "reference_noise",
    "sample_alpha",
    "temperature",
    "tempered_minibatch",
]

NOISE_DISTRIBUTIONS = ("normal", "uniform", "uniform_sign")


def temperature(alpha: torch.Tensor) -> torch.Tensor:
    """The symmetric temperature feature ``t(a) = 1 - 2|a - 0.5|`` (Section 4.1).

    ``t(a) = t(1 - a)``, so the networks see ``Q^alpha`` and ``Q^(1-alpha)`` (equal in law) alike;
    ``t(1) = t(0) = 0`` (the data) and ``t(0.5) = 1`` (the most tempered level).
    """
    return 1.0 - 2.0 * (alpha - 0.5).abs()


def sample_alpha(n: int, r: float, generator: torch.Generator, device: str = "cpu") -> torch.Tensor:
    """Draw ``n`` mixing weights from ``r * delta_1 + (1 - r) * U(0, 1)`` (eq. 7), shape (n,).

    ``r`` is the expected share of untempered data points (alpha = 1) in a minibatch.
    """
    check_positive_int("n", n)
    r = check_probability("r", r)
    keep = torch.rand(n, generator=generator, device=device) < r
    uniform = torch.rand(n, generator=generator, device=device)
    return torch.where(keep, torch.ones_like(uniform), uniform)


def interpolate(x1: torch.Tensor, x2: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
    """Row-wise convex combination ``alpha_i x1_i + (1 - alpha_i) x2_i``; alpha shape (n,)."""
    if x1.shape != x2.shape or alpha.shape != x1.shape[:1]:
        raise InvalidInputError(
            f"shapes do not match: x1 {tuple(x1.shape)}, x2 {tuple(x2.shape)}, "
            f"alpha {tuple(alpha.shape)}; alpha needs one weight per row"
        )
    a = alpha.unsqueeze(1)
    return a * x1 + (1.0 - a) * x2


@dataclass(frozen=True)
class TemperedBatch:
    """One PTGAN minibatch (output of Algorithm 1).

    Attributes
    ----------
    q1, q2, q_tilde:
        (n, d) tempered points ``Q^alpha1``, ``Q^alpha2`` and the penalty point
        ``q~ = nu q1 + (1 - nu) q2``; all three share the same pair of data rows.
    alpha1, alpha2, nu, alpha_tilde:
        (n,) ``alpha1 ~ p_alpha`` (eq. 7), ``alpha2 ~ U(0,1)``, ``nu ~ U(0,1)`` and
        ``alpha~ = nu alpha1 + (1 - nu) alpha2``.
    """

    q1: torch.Tensor
    q2: torch.Tensor
    q_tilde: torch.Tensor
    alpha1: torch.Tensor
    alpha2: torch.Tensor
    nu: torch.Tensor
    alpha_tilde: torch.Tensor


def tempered_minibatch(
    x: torch.Tensor, batch_size: int, r: float, generator: torch.Generator
) -> TemperedBatch:
    """Algorithm 1: a tempered minibatch from the real data ``x`` (N, d).

    The two rows of each pair are drawn independently and uniformly *with replacement* (the
    paper says "randomly choose ... independently"; with replacement keeps pairs i.i.d.).
    """
    check_matrix("x", x)
    check_positive_int("batch_size", batch_size)
    r = check_probability("r", r)
    dev = x.device
    idx = torch.randint(x.shape[0], (2, batch_size), generator=generator, device=dev)
    xa, xb = x[idx[0]], x[idx[1]]
    alpha1 = sample_alpha(batch_size, r, generator, device=dev)
    alpha2 = torch.rand(batch_size, generator=generator, device=dev)
    nu = torch.rand(batch_size, generator=generator, device=dev)
    q1 = interpolate(xa, xb, alpha1)
    q2 = interpolate(xa, xb, alpha2)
    return TemperedBatch(
        q1=q1,
        q2=q2,
        q_tilde=interpolate(q1, q2, nu),
        alpha1=alpha1,
        alpha2=alpha2,
        nu=nu,
        alpha_tilde=nu * alpha1 + (1.0 - nu) * alpha2,
    )


def _base_noise(n: int, dim: int, distribution: str, generator: torch.Generator, device: str):
    if distribution == "normal":
        return torch.randn(n, dim, generator=generator, device=device)
    u = torch.rand(n, dim, generator=generator, device=device) * 2.0 - 1.0
    if distribution == "uniform":
        return u
    # "uniform_sign": Appendix C.2 / Figure 11: first coordinate U(-1, 1), the rest U{-1, 1}
    u[:, 1:] = torch.sign(u[:, 1:])
    u[:, 1:][u[:, 1:] == 0] = 1.0
    return u


def reference_noise(
    n: int,
    latent_dim: int,
    generator: torch.Generator,
    *,
    alpha: torch.Tensor | None = None,
    interpolated: bool = False,
    distribution: str = "normal",
    device: str = "cpu",
) -> torch.Tensor:
    """Reference noise ``Z`` (n, latent_dim), or ``Z^alpha = alpha Z1 + (1 - alpha) Z2``.

    Parameters
    ----------
    alpha:
        (n,) mixing weights; required when ``interpolated`` is True (Appendix C.2).
    distribution:
        ``"normal"`` N(0, I); ``"uniform"`` U(-1, 1)^d; ``"uniform_sign"`` first coordinate
        U(-1, 1) and the others uniform on {-1, 1} (the noise of Figure 11).
    """
    check_positive_int("n", n)
    check_positive_int("latent_dim", latent_dim)
    check_choice("noise distribution", distribution, NOISE_DISTRIBUTIONS)
    z1 = _base_noise(n, latent_dim, distribution, generator, device)
    if not interpolated:
        return z1
    if alpha is None or alpha.shape != (n,):
        raise InvalidInputError("interpolated noise needs alpha of shape (n,); pass alpha=...")
    z2 = _base_noise(n, latent_dim, distribution, generator, device)
    return interpolate(z1, z2, alpha)


def mixup_batch(
    real: torch.Tensor,
    fake: torch.Tensor,
    generator: torch.Generator,
    *,
    a: float = 0.2,
    b: float = 0.2,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mixup GAN inputs (Zhang et al. 2018; PTGAN Appendix A.4): ``lam x + (1 - lam) G(z)``.

    Returns the mixed points (n, d) and their soft "real" labels ``lam ~ Beta(a, b)``, shape (n,).
    The defaults a = b = 0.2 are the mixup paper's GAN setting; PTGAN's Figure 9 compares two
    (unstated) Beta settings.
    """
    if real.shape != fake.shape:
        raise InvalidInputError(f"real {tuple(real.shape)} and fake {tuple(fake.shape)} differ")
    if a <= 0 or b <= 0:
        raise InvalidInputError(f"Beta parameters must be positive, got a={a}, b={b}")
    lam = _beta(real.shape[0], a, b, generator, real.device)
    return interpolate(real, fake, lam), lam


def _beta(n: int, a: float, b: float, generator: torch.Generator, device) -> torch.Tensor:
    """Exact Beta(a, b) draws from a local generator (Joehnk's method, in log space).

    torch.distributions.Beta samples from the global RNG, which library code must not use.
    Joehnk's acceptance rate is Gamma(a+1)Gamma(b+1)/Gamma(a+b+1): 1/2 for a = b = 1, higher for
    smaller parameters, so it suits the small Beta parameters used by Mixup.
    """
    out = torch.empty(n, device=device)
    filled = 0
    while filled < n:
        m = 2 * (n - filled) + 16
        lu = torch.rand(m, generator=generator, device=device).clamp_min(1e-38).log() / a
        lv = torch.rand(m, generator=generator, device=device).clamp_min(1e-38).log() / b
        ls = torch.logaddexp(lu, lv)
        draws = (lu - ls).exp()[ls <= 0.0][: n - filled]
        out[filled : filled + draws.numel()] = draws
        filled += draws.numel()
    return out
