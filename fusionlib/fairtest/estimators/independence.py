"""Independence Given Overlap (seed 002, Section 3.1.1 and Appendix A.1).

    p(x_int, o, x_ext) = p(o) * p_hat(x_int | o) * p_hat(x_ext | o),
    p(o) = (p_hat_int(o) + p_hat_ext(o)) / 2.

Appendix A.1 shows that this p(o) minimises KL(p_hat_int || p) + KL(p_hat_ext || p) over the
overlap marginal. The two tables' KL terms carry equal weight, so p(o) is the plain average of
the two tables' *proportions*, whatever their row counts (the latent naive Bayes, which
maximises the likelihood of all rows, pools counts instead). With several overlap columns
(Section 3.1.4) o is their joint combination.
"""

from __future__ import annotations

import numpy as np

from fusionlib.fairtest.estimators.overlap import OverlapFactorisation

__all__ = ["IndependenceGivenOverlap"]


class IndependenceGivenOverlap(OverlapFactorisation):
    """Joint distribution assuming the two sides are independent given the overlap.

    Takes no options. ``fit(internal, external)``; ``sample(n, seed)``; exact
    ``joint_proba(rows)`` and ``proba_table(columns)``.

    Fitted attributes
    -----------------
    overlap_combinations_ : DataFrame
        The overlap combinations seen in either table.
    overlap_proba_ : ndarray, shape (n_combos,)
        p(o): the average of the two tables' overlap proportions (Appendix A.1, eq. 12).

    Examples
    --------
    >>> import pandas as pd
    >>> internal = pd.DataFrame({"o": ["a", "a", "b"], "y": ["1", "0", "1"]})
    >>> external = pd.DataFrame({"o": ["a", "b"], "s": ["m", "f"]})
    >>> model = IndependenceGivenOverlap().fit(internal, external)
    >>> model.overlap_proba_.round(4).tolist()
    [0.5833, 0.4167]
    """

    def _overlap_weights(self, p_internal: np.ndarray, p_external: np.ndarray) -> np.ndarray:
        return (p_internal + p_external) / 2.0
