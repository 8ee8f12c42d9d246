"""Proposition 3 of the PTGAN paper: moments of the tempered two-component mixture.

Setting (Section 3.2, Appendix B.3): X ~ (1/2) N(mu1, sigma^2) + (1/2) N(mu2, sigma^2),
alpha ~ U(0.5, 1), u ~ N(mu1, sigma^2), v ~ N(mu2, sigma^2), X2 an independent copy of X.
The components of Q^alpha are p1^alpha = law(alpha u + (1 - alpha) X2) and
p2^alpha = law(alpha v + (1 - alpha) X2). The paper states

    |mu1* - mu2*| = 3 |mu1 - mu2| / 4,
    sigma*^2     = 3 sigma^2 / 4 + 5 |mu1 - mu2|^2 / 192.

Its own derivation (B.3) gives sigma^2 E[alpha^2] + Var(X2) E[(1 - alpha)^2]
+ ((mu1 - mu2)/2)^2 Var(alpha) with E[alpha^2] = 7/12, E[(1-alpha)^2] = 1/12, Var(alpha) = 1/48
and Var(X2) = sigma^2 + (mu1 - mu2)^2 / 4, which sums to 2 sigma^2 / 3 + 5 (mu1 - mu2)^2 / 192:
the coefficient of sigma^2 is 7/12 + 1/12 = 2/3, not 3/4. Both are returned; the Monte Carlo
estimate decides between them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fusionlib.errors import InvalidInputError
from fusionlib.rng import numpy_rng

__all__ = ["Prop3Moments", "prop3_closed_form", "prop3_monte_carlo"]


@dataclass(frozen=True)
class Prop3Moments:
    """Between-component gap ``|mu1* - mu2*|`` and within-component sd ``sigma*``."""

    gap: float
    sigma: float


def _check(sigma: float) -> None:
    if not sigma >= 0:
        raise InvalidInputError(f"sigma must be >= 0, got {sigma}")


def prop3_closed_form(mu1: float, mu2: float, sigma: float, *,
                      variant: str = "paper") -> Prop3Moments:
    """Proposition 3's closed forms; ``variant="paper"`` (3/4 sigma^2 as printed) or
    ``"derived"`` (2/3 sigma^2, what Appendix B.3's own steps add up to)."""
    _check(sigma)
    if variant not in ("paper", "derived"):
        raise InvalidInputError(f"variant must be 'paper' or 'derived', got {variant!r}")
    delta2 = (mu1 - mu2) ** 2
    coef = 0.75 if variant == "paper" else 2.0 / 3.0
    return Prop3Moments(gap=0.75 * abs(mu1 - mu2),
                        sigma=float(np.sqrt(coef * sigma**2 + 5.0 * delta2 / 192.0)))


def prop3_monte_carlo(mu1: float, mu2: float, sigma: float, n: int, seed: int) -> dict:
    """Monte Carlo estimates of the moments of p1^alpha and p2^alpha (``n`` draws each).

    Returns a dict with ``gap``, ``sigma1``, ``sigma2`` (sample sds of the two components),
    their standard errors ``gap_se`` and ``sigma_se`` (delta method, from the sample fourth
    moment), and ``samples`` (the two component samples, each (n,)).
    """
    _check(sigma)
    if n < 2:
        raise InvalidInputError(f"n must be >= 2, got {n}")
    rng = numpy_rng(seed, "prop3")
    comps = []
    for mu in (mu1, mu2):
        alpha = rng.uniform(0.5, 1.0, size=n)
        own = rng.normal(mu, sigma, size=n)
        x2 = np.where(rng.integers(2, size=n) == 0, mu1, mu2) + sigma * rng.standard_normal(n)
        comps.append(alpha * own + (1.0 - alpha) * x2)
    c1, c2 = comps
    s1, s2 = c1.std(ddof=1), c2.std(ddof=1)
    m4 = np.mean((c1 - c1.mean()) ** 4)
    # se of a sample sd: sqrt((m4 - s^4) / n) / (2 s)
    sigma_se = float(np.sqrt(max(m4 - s1**4, 0.0) / n) / (2.0 * s1)) if s1 > 0 else 0.0
    return {
        "gap": float(abs(c1.mean() - c2.mean())),
        "gap_se": float(np.sqrt(c1.var(ddof=1) / n + c2.var(ddof=1) / n)),
        "sigma1": float(s1),
        "sigma2": float(s2),
        "sigma_se": sigma_se,
        "samples": (c1, c2),
    }
