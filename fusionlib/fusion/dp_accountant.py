"""The privacy accountant of FusionGAN's DP-SGD discriminators (seed 000, Appendix I).

Renyi DP of the sampled Gaussian mechanism (Mironov, Talwar & Zhang 2019, section 3.3:
``log A_alpha`` for integer and fractional orders), summed over steps, converted to
(epsilon, delta) by Balle et al. (2020, Theorem 21) over Opacus' default orders. The formulas
are implemented here (numpy/scipy); they reproduce ``opacus.accountants.RDPAccountant`` (1.6.0),
which :class:`OpacusAccountant` calls instead when opacus is installed (it is not a dependency).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np
from scipy.special import binom, gammaln, log_ndtr, logsumexp

from fusionlib.checks import check_array
from fusionlib.errors import InvalidInputError

__all__ = ["DEFAULT_ORDERS", "OpacusAccountant", "RDPAccountant", "compute_rdp", "epsilon",
           "rdp_to_epsilon"]

#: RDP orders searched (Opacus' ``RDPAccountant.DEFAULT_ALPHAS``)
DEFAULT_ORDERS = tuple([1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)))


def _log_a_int(q: float, sigma: float, alpha: int) -> float:
    i = np.arange(alpha + 1)
    log_binom = gammaln(alpha + 1) - gammaln(i + 1) - gammaln(alpha - i + 1)
    return float(logsumexp(log_binom + i * math.log(q) + (alpha - i) * math.log1p(-q)
                           + (i * i - i) / (2 * sigma**2)))


def _log_a_frac(q: float, sigma: float, alpha: float) -> float:
    z0 = sigma**2 * math.log(1 / q - 1) + 0.5
    logs, signs, i = [], [], 0
    while True:
        coef, j = binom(alpha, i), alpha - i
        log_coef = math.log(abs(coef))
        s0 = (log_coef + i * math.log(q) + j * math.log1p(-q) + (i * i - i) / (2 * sigma**2)
              + math.log(0.5) + _log_erfc((i - z0) / (math.sqrt(2) * sigma)))
        s1 = (log_coef + j * math.log(q) + i * math.log1p(-q) + (j * j - j) / (2 * sigma**2)
              + math.log(0.5) + _log_erfc((z0 - j) / (math.sqrt(2) * sigma)))
        logs += [s0, s1]
        signs += [math.copysign(1.0, coef)] * 2
        i += 1
        if max(s0, s1) < -30:
            break
    value, sign = logsumexp(logs, b=signs, return_sign=True)
    return float(value) if sign > 0 else -math.inf


def _log_erfc(x: float) -> float:
    return math.log(2) + float(log_ndtr(-x * math.sqrt(2)))


def compute_rdp(sample_rate: float, noise_multiplier: float, steps: int,
                orders: Sequence[float] = DEFAULT_ORDERS) -> np.ndarray:
    """RDP at each order of ``steps`` sampled Gaussian mechanisms (sensitivity 1).

    ``q = 1`` (no subsampling) gives the Gaussian mechanism's ``alpha / (2 sigma^2)``.
    """
    q, sigma = _number("sample_rate", sample_rate), _number("noise_multiplier", noise_multiplier)
    orders = _orders("orders", orders).tolist()
    if not 0.0 <= q <= 1.0:
        raise InvalidInputError(f"sample_rate must lie in [0, 1], got {sample_rate}")
    if sigma < 0 or not math.isfinite(sigma):
        raise InvalidInputError(f"noise_multiplier must be finite and >= 0, got {sigma}")
    out = []
    for alpha in orders:
        if alpha <= 1:
            raise InvalidInputError(f"RDP orders must be > 1, got {alpha}")
        if q == 0:
            out.append(0.0)
        elif sigma == 0:
            out.append(math.inf)
        elif q == 1:
            out.append(alpha / (2 * sigma**2))
        else:
            log_a = (_log_a_int(q, sigma, int(alpha)) if float(alpha).is_integer()
                     else _log_a_frac(q, sigma, alpha))
            out.append(log_a / (alpha - 1))
    return np.asarray(out) * _check_steps(steps)


def _number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidInputError(f"{name} must be a number, got {value!r}")
    return float(value)


def _orders(name: str, values: object) -> np.ndarray:
    return check_array(name, values, ndim=1, min_rows=0, finite=False)


def _check_steps(steps: object) -> int:
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise InvalidInputError(f"steps must be an integer >= 0, got {steps!r}")
    return int(steps)


def _check_delta(delta: object) -> float:
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0 < delta < 1:
        raise InvalidInputError(f"delta must lie in (0, 1), e.g. 1e-5 (below 1/n), got {delta!r}")
    return float(delta)


def rdp_to_epsilon(orders: Sequence[float], rdp: Sequence[float], delta: float
                   ) -> tuple[float, float]:
    """(epsilon, best order) from RDP values (Balle et al. 2020, Theorem 21), epsilon >= 0."""
    delta = _check_delta(delta)
    a, r = _orders("orders", orders), _orders("rdp", rdp)
    if a.shape != r.shape:
        raise InvalidInputError(f"{a.size} orders but {r.size} RDP values")
    with np.errstate(invalid="ignore"):
        eps = r + np.log1p(-1 / a) - (math.log(delta) + np.log(a)) / (a - 1)
    if (r == 0).all():
        return 0.0, math.nan  # nothing released (no steps, or sample rate 0)
    if np.isnan(eps).all() or np.isinf(eps).all():
        return math.inf, math.nan
    best = int(np.nanargmin(eps))
    return max(float(eps[best]), 0.0), float(a[best])


def epsilon(*, sample_rate: float, noise_multiplier: float, steps: int, delta: float,
            orders: Sequence[float] = DEFAULT_ORDERS) -> float:
    """Epsilon of ``steps`` DP-SGD steps at ``delta`` (:class:`RDPAccountant`)."""
    return RDPAccountant(orders).epsilon(sample_rate=sample_rate,
                                         noise_multiplier=noise_multiplier, steps=steps,
                                         delta=delta)


class RDPAccountant:
    """RDP accountant of the sampled Gaussian mechanism (this module's formulas)."""

    def __init__(self, orders: Sequence[float] = DEFAULT_ORDERS) -> None:
        self.orders = tuple(_orders("orders", orders).tolist())

    def rdp(self, *, sample_rate: float, noise_multiplier: float, steps: int) -> np.ndarray:
        return compute_rdp(sample_rate, noise_multiplier, steps, self.orders)

    def epsilon(self, *, sample_rate: float, noise_multiplier: float, steps: int,
                delta: float) -> float:
        rdp = self.rdp(sample_rate=sample_rate, noise_multiplier=noise_multiplier, steps=steps)
        return rdp_to_epsilon(self.orders, rdp, delta)[0]


class OpacusAccountant(RDPAccountant):
    """The same interface computed by ``opacus.accountants.analysis.rdp`` (opacus==1.6.0)."""

    def rdp(self, *, sample_rate: float, noise_multiplier: float, steps: int) -> np.ndarray:
        try:
            from opacus.accountants.analysis.rdp import compute_rdp as opacus_rdp
        except ImportError:
            raise InvalidInputError("OpacusAccountant needs opacus (pip install "
                                    "opacus==1.6.0); RDPAccountant needs nothing") from None
        return np.asarray(opacus_rdp(q=sample_rate, noise_multiplier=noise_multiplier,
                                     steps=_check_steps(steps), orders=list(self.orders)))
