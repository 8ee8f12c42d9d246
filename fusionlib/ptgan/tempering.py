"""Tempered minibatches of PTGAN (Algorithm 1, eq. 5-8) and the generator's reference noise.

The tempered variable of the paper (Section 3.1, eq. 5) interpolates two *real* data points,
``Q^alpha = alpha X_1 + (1 - alpha) X_2``; it never mixes real with generated points (that is
Mixup GAN, Appendix A.4, provided here as :func:`mixup_batch` for the comparison of Figure 9).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from fusionlib.checks import (
    check_choice,
    check_positive_int,
    check_probability,
)
from fusionlib.errors import InvalidInputError
from fusionlib.gan.noise import NOISE_DISTRIBUTIONS, base_noise

__all__ = [
    "ALPHA_SHARES",
    "NOISE_DISTRIBUTIONS",
    "TemperedBatch",
    "interpolate",
    "minibatch_alpha",
    "mixup_batch",
    "n_tempered",
    "reference_noise",
    "sample_alpha",
    "temperature",
    "tempered_minibatch",
]

#: how a minibatch's alpha = 1 rows are drawn (see :func:`minibatch_alpha`)
ALPHA_SHARES: tuple[str, ...] = ("fixed", "per_row")

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
    u = torch.rand(2, n, generator=generator, device=device)
    return _alpha_from_uniforms(u[0], u[1], r)


def _alpha_from_uniforms(keep: torch.Tensor, uniform: torch.Tensor, r: float) -> torch.Tensor:
    # alpha = 1 where keep < r (probability r), else the uniform draw
    return torch.where(keep < r, 1.0, uniform)


def n_tempered(n: int, r: float) -> tuple[int, float]:
    """``(k, f)``: a minibatch of ``n`` rows with share ``r`` at alpha = 1 holds ``k`` or
    ``k + 1`` tempered rows, ``k + 1`` with probability ``f`` (``(1 - r) n = k + f``).

    ``f`` is 0 when ``(1 - r) n`` is whole (the paper's settings: r = 0.9 and 0.99 with
    n_b = 100, r = 0.98 with n_b = 50, r = 0.5 with n_b = 100); rounding to 9 decimals keeps
    ``(1 - 0.9) * 100`` at 10, not 9.999...
    """
    m = round((1.0 - r) * n, 9)
    k = math.floor(m)
    return k, m - k


def _fixed_share(keep: torch.Tensor, uniform: torch.Tensor, r: float,
                 generator: torch.Generator) -> torch.Tensor:
    # the k (or k + 1) rows with the smallest ``keep`` draws are tempered: a uniformly random
    # subset of fixed size, from the draws the per-row rule would use
    n = keep.shape[0]
    k, frac = n_tempered(n, r)
    if frac > 0 and float(torch.rand(1, generator=generator, device=keep.device)) < frac:
        k += 1
    if k == 0:
        return torch.ones_like(uniform)
    if k >= n:
        return uniform
    threshold = torch.kthvalue(keep, k).values
    return torch.where(keep <= threshold, uniform, 1.0)


def minibatch_alpha(keep: torch.Tensor, uniform: torch.Tensor, r: float,
                    generator: torch.Generator, share: str = "fixed") -> torch.Tensor:
    """The alpha1 of one minibatch from two (n,) vectors of U(0, 1) draws.

    ``share="fixed"`` (the default, the paper's reading): "r stands for the proportion of data
    instances picked from p_X in minibatches" (Section 4.1; "r = 0.98, i.e., there is only one
    interpolated image in every minibatch", Section 5.1; "for r = 0.99, there is only 1 % of
    interpolated samples in each minibatch", Figure 4). Exactly ``(1 - r) n`` rows are tempered,
    a random subset; when ``(1 - r) n`` is not whole the count is ``k`` or ``k + 1`` at random
    (:func:`n_tempered`), so that the expected share stays ``r``. ``share="per_row"``: every row
    independently (eq. 7 applied row by row, a Binomial count: with n_b = 50 and r = 0.98, 36 %
    of minibatches hold no tempered row). Tempered rows take their alpha from ``uniform``.
    """
    check_choice("alpha share", share, ALPHA_SHARES)
    if share == "per_row":
        return _alpha_from_uniforms(keep, uniform, r)
    return _fixed_share(keep, uniform, r, generator)


def interpolate(x1: torch.Tensor, x2: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
    """Row-wise convex combination ``alpha_i x1_i + (1 - alpha_i) x2_i``; alpha shape (n,)."""
    if x1.shape != x2.shape or alpha.shape != x1.shape[:1]:
        raise InvalidInputError(
            f"shapes do not match: x1 {tuple(x1.shape)}, x2 {tuple(x2.shape)}, "
            f"alpha {tuple(alpha.shape)}; alpha needs one weight per row"
        )
    # one fused kernel; torch.lerp returns x1 exactly where alpha == 1
    return torch.lerp(x2, x1, alpha.unsqueeze(1))


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
    x: torch.Tensor, batch_size: int, r: float, generator: torch.Generator, *,
    share: str = "fixed",
) -> TemperedBatch:
    """Algorithm 1: a tempered minibatch from the real data ``x`` (N, d).

    The two rows of each pair are drawn independently and uniformly *with replacement* (the
    paper says "randomly choose ... independently"; with replacement keeps pairs i.i.d.).
    ``share`` says how the rows at alpha = 1 are chosen (:func:`minibatch_alpha`: a fixed share
    ``r`` per minibatch, as the paper states, or each row independently).
    Only the shape of ``x`` is checked here (this runs every iteration); check finiteness once
    beforehand (the trainer does).
    """
    if not isinstance(x, torch.Tensor) or x.ndim != 2 or x.shape[0] < 1:
        raise InvalidInputError(f"x must be a tensor of shape (N, d) with N >= 1, got "
                                f"{getattr(x, 'shape', type(x).__name__)}")
    check_positive_int("batch_size", batch_size)
    r = check_probability("r", r)
    dev = x.device
    # few, large random draws: this runs every iteration and small ops dominate on a CPU
    idx = torch.randint(x.shape[0], (2 * batch_size,), generator=generator, device=dev)
    pairs = x[idx]
    xa, xb = pairs[:batch_size], pairs[batch_size:]
    u = torch.rand(4, batch_size, generator=generator, device=dev)
    alpha1 = minibatch_alpha(u[0], u[1], r, generator, share)
    alpha2, nu = u[2], u[3]
    q1 = torch.lerp(xb, xa, alpha1.unsqueeze(1))  # = interpolate(xa, xb, alpha1)
    q2 = torch.lerp(xb, xa, alpha2.unsqueeze(1))
    return TemperedBatch(
        q1=q1,
        q2=q2,
        q_tilde=torch.lerp(q2, q1, nu.unsqueeze(1)),
        alpha1=alpha1,
        alpha2=alpha2,
        nu=nu,
        alpha_tilde=torch.lerp(alpha2, alpha1, nu),
    )


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
    if not interpolated:
        return base_noise((n, latent_dim), distribution, generator, device)
    if alpha is None or alpha.shape != (n,):
        raise InvalidInputError("interpolated noise needs alpha of shape (n,); pass alpha=...")
    z = base_noise((2, n, latent_dim), distribution, generator, device)  # Z1 = z[0], Z2 = z[1]
    return torch.lerp(z[1], z[0], alpha.unsqueeze(1))


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
