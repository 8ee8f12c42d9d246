"""Association measures of seed 002: Cramér's V and the DCC matrices of Figure 5 (Appendix
C.1), and the mutual information of a protected attribute and the label (Section 5.2).

- :func:`cramers_v`, :func:`cramers_v_matrix`: Cramér's V of a pair / of every pair of columns;
- :func:`dcc_matrix`: the difference in Cramér's V correlation ``|V_syn - V_real|`` per pair;
- :func:`plot_dcc_heatmaps`: one heatmap per method, shared colour scale;
- :func:`mutual_information`: plug-in ``I(A; Y)`` of two columns of one table, in nats.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats.contingency import association

from fusionlib.checks import check_frame
from fusionlib.errors import InvalidInputError
from fusionlib.metrics.fidelity import check_pair

__all__ = ["cramers_v", "cramers_v_matrix", "dcc_matrix", "mutual_information",
           "plot_dcc_heatmaps"]


def _labels(name: str, values: object) -> pd.Series:
    """``values`` as a Series of category labels (a list or 1-D array is wrapped)."""
    if isinstance(values, str | bytes) or np.ndim(values) != 1:
        raise InvalidInputError(
            f"{name} must be a 1-D sequence of category labels (a pandas Series), got "
            f"{type(values).__name__}; pass a column, e.g. df['sex']")
    s = values if isinstance(values, pd.Series) else pd.Series(values)
    if s.isna().any():
        raise InvalidInputError(f"{name} has {int(s.isna().sum())} missing values; drop those "
                                "rows or fill them with a category of their own first")
    return s


def cramers_v(x: pd.Series, y: pd.Series) -> float:
    """Cramér's V of two categorical series (no bias correction), in ``[0, 1]``.

    ``V = sqrt(chi2 / (n * (min(r, c) - 1)))`` over the observed levels. When either variable has
    a single observed level there is no association to measure and V is defined as 0 (the
    formula would divide by zero).
    """
    x, y = _labels("x", x), _labels("y", y)
    if len(x) != len(y) or len(x) == 0:
        raise InvalidInputError(f"x and y need equal lengths of at least 1 row, got {len(x)} "
                                f"and {len(y)}; pass two columns of the same (non-empty) table")
    cx, ux = pd.factorize(x.astype(object).to_numpy())
    cy, uy = pd.factorize(y.astype(object).to_numpy())
    table = np.bincount(cx * len(uy) + cy, minlength=len(ux) * len(uy)).reshape(len(ux), -1)
    if min(table.shape) < 2:
        return 0.0
    return float(association(table, method="cramer"))


def cramers_v_matrix(df: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Symmetric matrix of pairwise Cramér's V (diagonal 1), indexed by ``columns``."""
    check_frame("df", df)
    cols = list(df.columns if columns is None else columns)
    unknown = [c for c in cols if c not in df.columns]
    if unknown:
        raise InvalidInputError(f"columns {unknown} are not in the table (columns: "
                                f"{list(df.columns)}); name columns of df")
    mat = pd.DataFrame(np.eye(len(cols)), index=cols, columns=cols)
    for a, b in combinations(cols, 2):
        mat.loc[a, b] = mat.loc[b, a] = cramers_v(df[a], df[b])
    return mat


def dcc_matrix(
    real: pd.DataFrame, synthetic: pd.DataFrame, columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """Difference in Cramér's V correlation ``|V_syn - V_real|`` per pair (Figure 5)."""
    cols = check_pair(real, synthetic, columns)
    return (cramers_v_matrix(synthetic, cols) - cramers_v_matrix(real, cols)).abs()


def plot_dcc_heatmaps(
    matrices: Mapping[str, pd.DataFrame], *, vmax: float | None = None, ncols: int = 3
) -> Any:
    """One heatmap per method (shared colour scale, lower triangle); returns the figure."""
    import matplotlib.pyplot as plt

    names = list(matrices)
    nrows = int(np.ceil(len(names) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.4 * ncols, 4.2 * nrows), squeeze=False,
                             layout="constrained")
    top = vmax if vmax is not None else max(float(m.to_numpy().max()) for m in matrices.values())
    image = None
    for ax, name in zip(axes.flat, names, strict=False):
        mat = matrices[name].iloc[1:, :-1]  # strict lower triangle: rows 2..n, columns 1..n-1
        shown = np.where(np.tril(np.ones(mat.shape, dtype=bool)), mat.to_numpy(), np.nan)
        image = ax.imshow(shown, cmap="viridis", vmin=0.0, vmax=max(top, 1e-9))
        ax.set_xticks(range(mat.shape[1]), mat.columns, rotation=90, fontsize=7)
        ax.set_yticks(range(mat.shape[0]), mat.index, fontsize=7)
        ax.set_title(name, fontsize=9)
    for ax in axes.flat[len(names) :]:
        ax.set_visible(False)
    if image is not None:
        fig.colorbar(image, ax=axes, shrink=0.6, label="|V_syn - V_real|")
    return fig


def mutual_information(df: pd.DataFrame, a: str, y: str) -> float:
    """Plug-in mutual information ``I(A; Y)`` of two categorical columns of ``df``, in nats.

    ``I = sum_{a,y} p(a, y) ln(p(a, y) / (p(a) p(y)))`` over the observed cells, with the
    empirical frequencies of ``df``. It is 0 exactly when the empirical joint is the product of
    its marginals. For an independent model of a weak association, ``KL(p_A p_Y || p_AY)``
    (what :class:`~fusionlib.metrics.fidelity.JointKL` gives for such a model) agrees with it
    to second order.
    """
    if not isinstance(df, pd.DataFrame) or len(df) == 0:
        raise InvalidInputError("df must be a non-empty pandas DataFrame")
    if a == y:
        raise InvalidInputError("a and y must be different columns")
    absent = [c for c in (a, y) if c not in df.columns]
    if absent:
        raise InvalidInputError(
            f"columns {absent} are not in the table (columns: {list(df.columns)}); pass the "
            "names of the protected attribute and the label")
    cols = check_pair(df, df, [a, y])  # missing values, duplicated names
    ca, cy = (pd.factorize(df[c].astype(object))[0] for c in cols)
    ka, ky = ca.max() + 1, cy.max() + 1
    joint = (np.bincount(ca * ky + cy, minlength=ka * ky) / len(ca)).reshape(ka, ky)
    outer = joint.sum(axis=1, keepdims=True) * joint.sum(axis=0, keepdims=True)
    mask = joint > 0
    return float(max((joint[mask] * np.log(joint[mask] / outer[mask])).sum(), 0.0))
