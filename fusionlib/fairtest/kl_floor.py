"""How far apart two samples of ONE distribution are in KL: the noise floor of seed 002's
``KL(A, Y)`` fidelity score, and the tolerance the chapter compares the paper's KL values with.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fusionlib.checks import is_int
from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.protocol.runs import DatasetResult

__all__ = ["PAPER_ROUNDING", "kl_noise_floor", "kl_noise_floors", "kl_tolerance"]

#: the paper prints three decimals
PAPER_ROUNDING = 0.0005


def kl_tolerance(floors: dict, dataset: str, attribute: str, paper_value: float) -> float:
    """KL tolerance: this run's 95 % noise floor (``floors[(dataset, attribute)]``, from
    :func:`kl_noise_floors`) + the paper's rounding + half the paper's value."""
    return floors.get((dataset, attribute), np.nan) + PAPER_ROUNDING + 0.5 * paper_value


def kl_noise_floor(n_real: int, n_synth: int, n_cells: int, *, quantile: float = 0.95) -> float:
    """Sampling noise of ``KL(p_syn || p_real)`` between two samples of ONE distribution (nats).

    For independent samples of sizes ``n`` (real) and ``m`` (synthetic) from the same
    distribution over ``k`` cells, ``KL ~= 0.5 * sum_i (p_syn_i - p_real_i)^2 / p_i`` and
    ``2 n_eff KL`` is asymptotically chi-square with ``k - 1`` degrees of freedom,
    ``n_eff = 1 / (1/n + 1/m)`` (the two-sample homogeneity statistic). Returned: the
    ``quantile`` of that law, ``chi2.ppf(quantile, k - 1) / (2 n_eff)``; a perfect generator
    exceeds it with probability ``1 - quantile``. (Its mean is ``(k - 1) / 2 * (1/n + 1/m)``,
    i.e. ``1.5 (1/n + 1/m)`` for a 2 x 2 table.)
    """
    from scipy.stats import chi2

    for name, v in (("n_real", n_real), ("n_synth", n_synth)):
        if not is_int(v) or v < 1:
            raise InvalidInputError(f"{name} must be an int >= 1 (a sample size), got {v!r}")
    if not is_int(n_cells) or n_cells < 2:
        raise InvalidInputError(f"n_cells must be an int >= 2, got {n_cells!r}")
    if not 0.0 < quantile < 1.0:
        raise InvalidInputError(f"quantile must lie in (0, 1), got {quantile!r}")
    return float(chi2.ppf(quantile, n_cells - 1) * (1.0 / n_real + 1.0 / n_synth) / 2.0)


def kl_noise_floors(result: DatasetResult, *, quantile: float = 0.95) -> pd.DataFrame:
    """:func:`kl_noise_floor` per protected attribute of a run dataset (synthetic sets have the
    test-set size); columns: dataset, attribute, n_test, cells (observed ``(A, Y)`` cells of the
    real test set), floor. Empty for a dataset that was not run."""
    cols = ["dataset", "attribute", "n_test", "cells", "floor"]
    if result.prepared is None:
        return pd.DataFrame(columns=cols)
    test, spec = result.prepared.test, result.prepared.spec
    rows = []
    for attr in spec.protected:
        cells = int(test[[attr, spec.label]].drop_duplicates().shape[0])
        rows.append([result.dataset, attr, len(test), cells,
                     kl_noise_floor(len(test), len(test), max(cells, 2), quantile=quantile)])
    return pd.DataFrame(rows, columns=cols)
