"""The two baselines of FairPTGAN (seed 001, Section 5.2, Appendix D.3).

FairWGANGP (Rajabi and Garibay 2022, "TabFairGAN")
    WGAN-GP for ``T`` iterations, then ``T / 2`` more with
    ``lambda_f |E[Y~ | A~ = 1] - E[Y~ | A~ = 0]|`` added to the generator loss, ``lambda_f = 10``.
    :class:`FairnessPenalty` is that term as a ``generator_term`` builder of
    :class:`~fusionlib.ptgan.tabular.model.TabularPTGAN`. The expectations are taken over the
    generator's *soft* outputs (the Gumbel-softmax blocks of ``Y`` and ``A``), so the term is
    differentiable: ``E[Y~ | A~ = 1] = sum_i y_i a_i / sum_i a_i`` with ``y_i``, ``a_i`` the
    probabilities of ``Y = 1`` and ``A = 1`` of row ``i``. This follows the papers' absolute
    difference; TabFairGAN's public code uses a signed term.

GeoRepair (Feldman et al. 2015), geometric repair in *value* space (Appendix D.3)
    each covariate ``c`` of a row of group ``a`` becomes
    ``(1 - lambda_p) F_a^{-1}(q) + lambda_p median_{a'} F_{a'}^{-1}(q)`` with ``q = F_a(c)``:
    the row keeps its rank within its group and moves towards the median (over the groups) of
    the values at that rank. AIF360's ``DisparateImpactRemover`` instead repairs in rank space
    (it replaces values by those of a combinatorial "median" distribution built from the groups'
    quantiles); the two coincide only at ``lambda_p = 1`` for continuous data, so we implement
    the seed's formula.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from fusionlib.checks import check_array, check_finite_number
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.fair.mixing import group_column

__all__ = ["FAIR_WEIGHT", "FairnessPenalty", "geometric_repair", "repair_levels",
           "soft_parity_gap"]

#: lambda_f of FairWGANGP (Appendix D.3, after Rajabi and Garibay 2022)
FAIR_WEIGHT = 10.0


def soft_parity_gap(y: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """``|E[y | A=1] - E[y | A=0]|`` with soft group memberships ``a`` in [0, 1] (0-d tensor).

    ``y`` and ``a`` have shape (n,); for 0/1 ``a`` this is the difference of group means.
    A group with (almost) no mass gives a mean over a tiny denominator, clamped at 1e-8.
    """
    if y.shape != a.shape or y.ndim != 1:
        raise InvalidInputError(f"y and a must be vectors of equal length, got {tuple(y.shape)}"
                                f" and {tuple(a.shape)}")
    m1 = (y * a).sum() / a.sum().clamp_min(1e-8)
    m0 = (y * (1 - a)).sum() / (1 - a).sum().clamp_min(1e-8)
    return (m1 - m0).abs()


class FairnessPenalty:
    """FairWGANGP's generator term builder: ``FairnessPenalty(...)(encoder) -> term``.

    Parameters
    ----------
    sensitive, privileged:
        The binary sensitive column and its level that is ``A = 1``.
    target, positive:
        The binary label column and its level that is ``Y = 1``.
    weight:
        lambda_f (default :data:`FAIR_WEIGHT` = 10).
    """

    def __init__(self, sensitive: str, privileged: object, target: str, positive: object,
                 weight: float = FAIR_WEIGHT) -> None:
        self.sensitive, self.privileged = sensitive, privileged
        self.target, self.positive = target, positive
        self.weight = weight

    def __call__(self, encoder: object) -> Callable[[torch.Tensor, object], torch.Tensor]:
        weight = check_finite_number("weight", self.weight)
        if weight < 0:
            raise InvalidInputError(f"weight (lambda_f) must be >= 0, got {weight}")
        a_col = group_column(encoder, self.sensitive, self.privileged)
        y_col = group_column(encoder, self.target, self.positive)

        def fairness_penalty(fake: torch.Tensor, inputs: object) -> torch.Tensor:
            return weight * soft_parity_gap(fake[:, y_col], fake[:, a_col])

        return fairness_penalty


def repair_levels(n: int = 5) -> np.ndarray:
    """The ``n`` equally spaced repair levels ``lambda_p`` in [0, 1] (Appendix D.3: 5)."""
    if not isinstance(n, int) or n < 2:
        raise InvalidInputError(f"n must be an int >= 2 (the endpoints 0 and 1), got {n!r}")
    return np.linspace(0.0, 1.0, n)


def _quantile(sorted_values: np.ndarray, q: np.ndarray) -> np.ndarray:
    # F^{-1}(q) = inf{x : F(x) >= q}, the left-continuous inverse of the empirical CDF
    n = len(sorted_values)
    k = np.clip(np.ceil(q * n).astype(np.int64) - 1, 0, n - 1)
    return sorted_values[k]


def _mid_cdf(values: np.ndarray) -> np.ndarray:
    # F_a(c) at the middle of c's step: (average rank - 1/2) / n, in (0, 1). Then
    # F_a^{-1}(F_a(c)) = c exactly, ties included, so lambda_p = 0 is the identity
    from scipy.stats import rankdata

    return (rankdata(values, method="average") - 0.5) / len(values)


def geometric_repair(x: object, group: object, lam: float) -> np.ndarray:
    """Geometric repair of every column of ``x`` (n, d) between the groups of ``group`` (n,).

    Each column is repaired on its own (the method ignores the joint structure of the
    covariates, as the paper notes). ``lam`` is lambda_p in [0, 1]: 0 leaves ``x`` unchanged,
    1 gives both groups the same distribution per column (the median of their quantile
    functions; with two groups the median is their mean).
    """
    values = check_array("x", x, ndim=2)
    g = check_array("group", group, ndim=1)
    lam = check_finite_number("lam", lam)
    if not 0.0 <= lam <= 1.0:
        raise InvalidInputError(f"lam (lambda_p) must be in [0, 1], got {lam}")
    if len(g) != len(values) or not np.isin(g, (0.0, 1.0)).all():
        raise InvalidInputError("group must be a 0/1 vector with one entry per row of x")
    masks = [g == 0, g == 1]
    if not masks[0].any() or not masks[1].any():
        raise InvalidInputError(
            f"both groups need rows (A=0: {int(masks[0].sum())}, A=1: {int(masks[1].sum())})")
    out = values.copy()
    for j in range(values.shape[1]):
        col = values[:, j]
        sorted_by_group = [np.sort(col[m]) for m in masks]
        for m in masks:
            q = _mid_cdf(col[m])
            own = _quantile(np.sort(col[m]), q)  # = the values themselves
            median = np.median([_quantile(s, q) for s in sorted_by_group], axis=0)
            out[m, j] = (1.0 - lam) * own + lam * median
    return out
