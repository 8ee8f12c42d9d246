"""Marginal Preservation (seed 002, Section 3.1.2).

keep="internal" (the paper's eq. 4, the first table being the internal one):

    p(x_int, o, x_ext) = p_hat_int(x_int, o) * p_hat_ext(x_ext | o)

keeps the *whole* internal table's joint distribution, including its overlap marginal,
exactly; only the external table's conditional given the overlap is borrowed.
keep="external" (the paper's "alternatively"):

    p(x_int, o, x_ext) = p_hat_int(x_int | o) * p_hat_ext(o, x_ext)

keeps the external table's joint exactly. The model differs from Independence Given Overlap
only in p(o): one table's overlap marginal instead of the average of both.
"""

from __future__ import annotations

import numpy as np

from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.estimators.overlap import OverlapFactorisation

__all__ = ["MarginalPreservation"]

_KEEP = ("internal", "external")


class MarginalPreservation(OverlapFactorisation):
    """Joint distribution that reproduces one table's joint distribution exactly.

    Parameters
    ----------
    keep : {"internal", "external"}, default "internal"
        Which table's joint distribution (own columns *and* overlap) is preserved. Overlap
        combinations that only the other table shows get probability 0.

    Fitted attributes
    -----------------
    overlap_proba_ : ndarray, shape (n_combos,)
        p(o): the kept table's overlap proportions.
    """

    def __init__(self, *, keep: str = "internal") -> None:
        self.keep = keep

    def _check_params(self) -> None:
        if self.keep not in _KEEP:
            raise InvalidInputError(f"keep must be one of {list(_KEEP)}, got {self.keep!r}")

    def _overlap_weights(self, p_internal: np.ndarray, p_external: np.ndarray) -> np.ndarray:
        return p_internal if self.keep == "internal" else p_external
