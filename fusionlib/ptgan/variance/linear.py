"""Proposition 5 of PTGAN (SM A.3, proof in SM B.9): gradient variance of a linear critic.

Setting. The critic is linear in ``[x, alpha]``, ``D(x, alpha) = W_1^T [x, alpha]`` (plus an
irrelevant bias), so its minibatch gradient does not depend on ``W_1``:

    dL_b/dW_1 = mean_i [Q_i, alpha_i] - mean_j [G(Z_j^alpha, alpha_j), alpha'_j],

with ``Q_i = alpha_i X_i + (1 - alpha_i) X'_i``, ``alpha ~ r delta_1 + (1 - r) U(0, 1)`` (eq. 7)
and the proposition's generator assumption ``G(Z^alpha, alpha) = alpha Y + (1 - alpha) Y'`` in
law, ``Y, Y' ~ G(Z, 1)`` i.i.d. The proposition states

    tr Cov(dL^alpha_b/dW_1) = (2/3 + r/3) tr Cov(dL^1_b/dW_1) + Var(alpha) (1/n_b + 1/m_b),
    tr Cov(dL^1_b/dW_1)     = tr Cov(X)/n_b + tr Cov(Y)/m_b.

The ``Var(alpha)`` term is the variance of the ``alpha`` coordinate of the gradient, which
assumes the real and the fake minibatch draw *independent* alphas (``pairing="independent"``).
Algorithm 3 instead feeds the fake row ``i`` the same ``alpha_i`` as the real row ``i``
(``pairing="shared"``, with ``n_b = m_b``); then the alpha coordinate of the gradient is exactly
zero and the ``Var(alpha)`` term drops out. Both are implemented and checked.

Note on the stated sufficient condition. SM A.3 says the tempered variance is the smaller one
"for any r if tr Cov(X) + tr Cov(Y) >= 3 Var(alpha)". The proof's last display (SM B.9) is the
identity's difference, with ``n_b = m_b = n``

    tempered - untempered = -(1 - r)/3 (tr Cov X + tr Cov Y)/n + 2 Var(alpha)/n,

so the reduction holds iff ``tr Cov X + tr Cov Y >= 6 Var(alpha)/(1 - r)``. The printed
condition loses both the factor ``(1 - r)`` and the factor 2 of ``1/n_b + 1/m_b = 2/n``. Since
``Var(alpha) = (1 - r)(1/3 - (1 - r)/4)``, the exact threshold is ``1/2 + 3r/2`` for ``r < 1``
(:func:`reduction_threshold`), while the printed one, ``3 Var(alpha)``, is at most 1/3 (e.g. at
``r = 0.99`` it asks for ``3 Var(alpha) = 0.0099`` where 1.985 is needed); see the notebook.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from fusionlib.checks import check_choice, check_positive_int, check_probability
from fusionlib.errors import InvalidInputError
from fusionlib.gan.diagnostics.variance import trace_with_error
from fusionlib.ptgan.tempering import interpolate, sample_alpha
from fusionlib.rng import torch_generator

__all__ = [
    "PAIRINGS",
    "Prop5Result",
    "alpha_variance",
    "prop5_closed_form",
    "reduction_threshold",
    "paper_condition_holds",
    "prop5_gradients",
    "prop5_monte_carlo",
]

PAIRINGS = ("independent", "shared")

#: ``sampler(n, generator) -> (n, d)`` tensor of i.i.d. draws.
Sampler = Callable[[int, torch.Generator], torch.Tensor]


def alpha_variance(r: float) -> float:
    """``Var(alpha)`` for ``alpha ~ r delta_1 + (1 - r) U(0, 1)``.

    ``E alpha = (1 + r)/2``, ``E alpha^2 = r + (1 - r)/3``, so
    ``Var = r + (1 - r)/3 - (1 + r)^2/4 = (1 - r)(1/3 - (1 - r)/4)``; maximum 1/9 at r = 1/3.
    """
    r = check_probability("r", r)
    s = 1.0 - r
    return s * (1.0 / 3.0 - s / 4.0)


def _check_sizes(trace_x: float, trace_g: float, n_b: int, m_b: int) -> None:
    check_positive_int("n_b", n_b)
    check_positive_int("m_b", m_b)
    for name, v in (("trace_cov_x", trace_x), ("trace_cov_g", trace_g)):
        if not (isinstance(v, (int, float)) and v >= 0):
            raise InvalidInputError(f"{name} must be a number >= 0 (a trace of a covariance)")


def prop5_closed_form(
    trace_cov_x: float,
    trace_cov_g: float,
    r: float,
    n_b: int,
    m_b: int,
    *,
    pairing: str = "independent",
) -> dict[str, float]:
    """Both sides of Proposition 5.

    Returns
    -------
    dict
        ``untempered`` = tr Cov(dL^1_b/dW_1), ``tempered`` = tr Cov(dL^alpha_b/dW_1),
        ``alpha_term`` (the ``Var(alpha)(1/n_b + 1/m_b)`` part; 0 for ``pairing="shared"``) and
        ``ratio`` = tempered / untempered (nan when both are 0).
    """
    check_choice("pairing", pairing, PAIRINGS)
    _check_sizes(trace_cov_x, trace_cov_g, n_b, m_b)
    if pairing == "shared" and n_b != m_b:
        raise InvalidInputError("pairing='shared' pairs real row i with fake row i: use n_b == m_b")
    untempered = trace_cov_x / n_b + trace_cov_g / m_b
    alpha_term = alpha_variance(r) * (1.0 / n_b + 1.0 / m_b) if pairing == "independent" else 0.0
    tempered = (2.0 / 3.0 + r / 3.0) * untempered + alpha_term
    ratio = tempered / untempered if untempered > 0 else float("nan")
    return {"untempered": untempered, "tempered": tempered, "alpha_term": alpha_term,
            "ratio": ratio}


def reduction_threshold(r: float) -> float:
    """Smallest ``tr Cov X + tr Cov Y`` for which tempering lowers the variance (n_b = m_b).

    ``6 Var(alpha)/(1 - r) = 1/2 + 3r/2`` for ``r < 1`` with independent alphas (at r = 1 both
    sides are equal and nan is returned).
    """
    r = check_probability("r", r)
    if r == 1.0:
        return float("nan")
    return 6.0 * alpha_variance(r) / (1.0 - r)


def paper_condition_holds(trace_cov_x: float, trace_cov_g: float, r: float) -> bool:
    """The sufficient condition as printed in SM A.3: ``tr Cov X + tr Cov Y >= 3 Var(alpha)``."""
    return trace_cov_x + trace_cov_g >= 3.0 * alpha_variance(r)


def prop5_gradients(
    sample_x: Sampler,
    sample_g: Sampler,
    r: float,
    n_b: int,
    m_b: int,
    n_batches: int,
    generator: torch.Generator,
    *,
    pairing: str = "independent",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Exact linear-critic gradients for ``n_batches`` tempered and untempered minibatches.

    Returns two tensors of shape ``(n_batches, d + 1)``: rows of ``dL^alpha_b/dW_1`` and of
    ``dL^1_b/dW_1`` (the last column is the alpha coordinate, identically 0 for ``L^1``).
    """
    check_choice("pairing", pairing, PAIRINGS)
    if pairing == "shared" and n_b != m_b:
        raise InvalidInputError("pairing='shared' needs n_b == m_b")
    nr, nf = n_batches * n_b, n_batches * m_b
    x1, x2 = sample_x(nr, generator), sample_x(nr, generator)
    y1, y2 = sample_g(nf, generator), sample_g(nf, generator)
    a_real = sample_alpha(nr, r, generator)
    a_fake = a_real if pairing == "shared" else sample_alpha(nf, r, generator)
    real = torch.cat([interpolate(x1, x2, a_real), a_real[:, None]], dim=1)
    fake = torch.cat([interpolate(y1, y2, a_fake), a_fake[:, None]], dim=1)
    tempered = real.reshape(n_batches, n_b, -1).mean(1) - fake.reshape(n_batches, m_b, -1).mean(1)
    one_r = torch.cat([x1, torch.ones(nr, 1)], dim=1).reshape(n_batches, n_b, -1).mean(1)
    one_f = torch.cat([y1, torch.ones(nf, 1)], dim=1).reshape(n_batches, m_b, -1).mean(1)
    return tempered.double(), (one_r - one_f).double()


@dataclass(frozen=True)
class Prop5Result:
    """Monte Carlo estimates (with standard errors) beside the closed form."""

    r: float
    pairing: str
    mc_tempered: float
    se_tempered: float
    mc_untempered: float
    se_untempered: float
    cf_tempered: float
    cf_untempered: float

    @property
    def z_tempered(self) -> float:
        """(MC - closed form) / SE for the tempered side."""
        return (self.mc_tempered - self.cf_tempered) / self.se_tempered

    @property
    def z_untempered(self) -> float:
        """(MC - closed form) / SE for the untempered side."""
        return (self.mc_untempered - self.cf_untempered) / self.se_untempered


def prop5_monte_carlo(
    sample_x: Sampler,
    sample_g: Sampler,
    *,
    trace_cov_x: float,
    trace_cov_g: float,
    r: float,
    n_b: int,
    m_b: int,
    n_batches: int,
    seed: int,
    pairing: str = "independent",
) -> Prop5Result:
    """Check Proposition 5 by simulation: MC traces with standard errors and the closed form.

    ``trace_cov_x`` / ``trace_cov_g`` are the true traces of the two samplers (used by the
    closed form only). The MC side uses ``n_batches`` independent minibatches.
    """
    check_positive_int("n_batches", n_batches)
    if n_batches < 2:
        raise InvalidInputError("n_batches must be >= 2 to estimate a covariance")
    gen = torch_generator(seed, "prop5")
    tempered, untempered = prop5_gradients(sample_x, sample_g, r, n_b, m_b, n_batches, gen,
                                           pairing=pairing)
    t_mc, t_se = trace_with_error(tempered)
    u_mc, u_se = trace_with_error(untempered)
    cf = prop5_closed_form(trace_cov_x, trace_cov_g, r, n_b, m_b, pairing=pairing)
    return Prop5Result(r=float(r), pairing=pairing, mc_tempered=t_mc, se_tempered=t_se,
                       mc_untempered=u_mc, se_untempered=u_se, cf_tempered=cf["tempered"],
                       cf_untempered=cf["untempered"])
