"""Standard errors of seed 002's fidelity scores by the bootstrap (ours; the paper reports none).

Every score of Tables 3, 7 and 8 and of Figure 5 compares ONE synthetic set with ONE real test
set, and both are samples: a second draw of either would move the score. The paper reports one
value per set; to say whether our value and the paper's differ by more than that noise, each
score here gets a standard error, the standard deviation of the score over ``n_boot`` bootstrap
replicates in which *both* tables are resampled with replacement (each at its own size).

All four scores depend on the rows only through counts (one-column, two-column and ``(A, Y)``
contingency tables), so a replicate is a multinomial draw of the counts of each table's distinct
rows (the same distribution as drawing rows with replacement) and the scores are computed from
the replicate's counts, vectorised over replicates:

- ``1-TVD`` and ``CS`` as :class:`~fusionlib.metrics.fidelity.TVComplement` and
  :class:`~fusionlib.metrics.fidelity.ContingencySimilarity`;
- ``KL (<A>)`` as :class:`~fusionlib.metrics.fidelity.JointKL` (same smoothing ``epsilon`` over
  the union of the two tables' categories);
- ``DCC``: the mean over column pairs of ``|V_syn - V_real|`` (Cramér's V without correction,
  over the levels observed in the replicate, 0 for a constant column), Figure 5's summary
  (:func:`fusionlib.metrics.association.dcc_matrix`).

:func:`fidelity_point` applies the same code to the tables themselves (every row once); the
tests check it against the metric classes, which is what makes the replicates the same scores.
The se describes the sampling of the two tables given the fitted generator; the variation
between fits of a stochastic generator (EM starts, CTGAN runs) is measured separately, by
repeated fits.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import sparse

from fusionlib.errors import InvalidInputError
from fusionlib.metrics.fidelity import check_pair
from fusionlib.rng import Seed, numpy_rng

__all__ = ["FIDELITY_SCORES", "fidelity_point", "fidelity_bootstrap", "fidelity_se"]

#: the scores, in column order (KL columns follow, one per protected attribute)
FIDELITY_SCORES: tuple[str, ...] = ("1-TVD", "CS", "DCC")


class _Coded:
    """Both tables as integer codes over the union of each column's categories."""

    def __init__(self, real: pd.DataFrame, synthetic: pd.DataFrame) -> None:
        self.columns = check_pair(real, synthetic)
        codes_r, codes_s, sizes = [], [], []
        for c in self.columns:
            both = pd.concat([real[c].astype(object), synthetic[c].astype(object)],
                             ignore_index=True)
            codes, uniques = pd.factorize(both, sort=False)
            codes_r.append(codes[: len(real)])
            codes_s.append(codes[len(real):])
            sizes.append(len(uniques))
        self.real = np.column_stack(codes_r)
        self.synthetic = np.column_stack(codes_s)
        self.sizes = np.asarray(sizes)
        self.pairs = list(combinations(range(len(self.columns)), 2))


def _one_hot(blocks: list[np.ndarray], widths: Sequence[int]) -> sparse.csc_matrix:
    """Rows x (sum of widths): row r has a 1 in each block at ``blocks[j][r]``."""
    n = len(blocks[0])
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]])
    cols = np.column_stack([b + o for b, o in zip(blocks, offsets, strict=True)]).ravel()
    rows = np.repeat(np.arange(n), len(blocks))
    return sparse.csc_matrix((np.ones(len(cols)), (rows, cols)), shape=(n, int(sum(widths))))


def _counts(codes: np.ndarray, coded: _Coded, weights: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """Column and pair counts, shapes ``(B, sum k)`` and ``(B, sum ka*kb)``, for the weights
    ``(B, rows)`` of the rows ``codes``."""
    k = coded.sizes
    single = _one_hot([codes[:, j] for j in range(codes.shape[1])], k)
    pair = _one_hot([codes[:, a] * k[b] + codes[:, b] for a, b in coded.pairs],
                    [k[a] * k[b] for a, b in coded.pairs])
    return (single.T @ weights.T).T, (pair.T @ weights.T).T


def _cramers_v(table: np.ndarray) -> np.ndarray:
    """Cramér's V of ``(B, r, c)`` count tables over the levels each table observes."""
    n = table.sum(axis=(1, 2))
    rows, cols = table.sum(axis=2), table.sum(axis=1)
    expected = rows[:, :, None] * cols[:, None, :] / np.maximum(n, 1)[:, None, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(expected > 0, (table - expected) ** 2 / expected, 0.0)
    chi2 = terms.sum(axis=(1, 2))
    levels = np.minimum((rows > 0).sum(axis=1), (cols > 0).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.sqrt(chi2 / (n * (levels - 1)))
    return np.where(levels >= 2, v, 0.0)


def _scores(coded: _Coded, real_w: np.ndarray, syn_w: np.ndarray, protected: Sequence[str],
            label: str, epsilon: float) -> pd.DataFrame:
    """The scores of count-weighted tables: weights ``(B, n_real)`` and ``(B, n_syn)``."""
    f_r, g_r = _counts(coded.real, coded, real_w)
    f_s, g_s = _counts(coded.synthetic, coded, syn_w)
    n_r, n_s = real_w.sum(axis=1)[:, None], syn_w.sum(axis=1)[:, None]
    k = coded.sizes
    diff = np.abs(f_s / n_s - f_r / n_r)
    edges = np.concatenate([[0], np.cumsum(k)])
    tvd = [1 - 0.5 * diff[:, edges[j]:edges[j + 1]].sum(axis=1) for j in range(len(k))]
    out = {"1-TVD": np.mean(tvd, axis=0)}
    widths = [k[a] * k[b] for a, b in coded.pairs]
    pair_edges = np.concatenate([[0], np.cumsum(widths)])
    cs, dcc, blocks = [], [], {}
    for i, (a, b) in enumerate(coded.pairs):
        sl = slice(pair_edges[i], pair_edges[i + 1])
        blocks[(a, b)] = (g_r[:, sl], g_s[:, sl])
        cs.append(1 - 0.5 * np.abs(g_s[:, sl] / n_s - g_r[:, sl] / n_r).sum(axis=1))
        shape = (-1, k[a], k[b])
        dcc.append(np.abs(_cramers_v(g_s[:, sl].reshape(shape))
                          - _cramers_v(g_r[:, sl].reshape(shape))))
    out["CS"] = np.mean(cs, axis=0) if cs else np.full(len(real_w), np.nan)
    out["DCC"] = np.mean(dcc, axis=0) if dcc else np.full(len(real_w), np.nan)
    y = coded.columns.index(label)
    for attr in protected:
        a = coded.columns.index(attr)
        c_r, c_s = blocks[(min(a, y), max(a, y))]
        p_r = c_r / n_r + epsilon
        p_s = c_s / n_s + epsilon
        p_r, p_s = p_r / p_r.sum(axis=1, keepdims=True), p_s / p_s.sum(axis=1, keepdims=True)
        out[f"KL ({attr})"] = np.maximum((p_s * (np.log(p_s) - np.log(p_r))).sum(axis=1), 0.0)
    return pd.DataFrame(out)


def _check(protected: Sequence[str], label: str, real: pd.DataFrame) -> None:
    missing = [c for c in (*protected, label) if c not in real.columns]
    if missing:
        raise InvalidInputError(
            f"columns {missing} are not in the tables (columns: {list(real.columns)}); pass "
            "the dataset's protected attributes and label (DatasetSpec.protected, .label)")


def fidelity_point(real: pd.DataFrame, synthetic: pd.DataFrame, *, protected: Sequence[str],
                   label: str, epsilon: float = 1e-6) -> dict[str, float]:
    """The scores of the tables themselves (each row once): 1-TVD, CS, DCC, KL (<A>)."""
    _check(protected, label, real)
    coded = _Coded(real, synthetic)
    scores = _scores(coded, np.ones((1, len(real))), np.ones((1, len(synthetic))), protected,
                     label, epsilon)
    return {k: float(v) for k, v in scores.iloc[0].items()}


def _replicate_weights(codes: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_boot, rows)`` weights: a multinomial draw of each distinct row's count, spread on
    the first occurrence of that row (same counts as resampling rows with replacement)."""
    _, first, inverse, counts = np.unique(codes, axis=0, return_index=True, return_inverse=True,
                                          return_counts=True)
    draws = rng.multinomial(len(codes), counts / len(codes), size=n_boot)
    weights = np.zeros((n_boot, len(codes)))
    weights[:, first] = draws
    return weights


def fidelity_bootstrap(real: pd.DataFrame, synthetic: pd.DataFrame, *,
                       protected: Sequence[str], label: str, n_boot: int, seed: Seed,
                       epsilon: float = 1e-6) -> pd.DataFrame:
    """``n_boot`` bootstrap replicates of the scores, both tables resampled (rows: replicates;
    columns: 1-TVD, CS, DCC, KL (<A>)). The same ``seed`` gives the same replicates."""
    if not (isinstance(n_boot, int) and not isinstance(n_boot, bool) and n_boot >= 2):
        raise InvalidInputError(f"n_boot must be an int >= 2, got {n_boot!r}")
    _check(protected, label, real)
    coded = _Coded(real, synthetic)
    w_r = _replicate_weights(coded.real, n_boot, numpy_rng(seed, "fidelity-boot", "real"))
    w_s = _replicate_weights(coded.synthetic, n_boot,
                             numpy_rng(seed, "fidelity-boot", "synthetic"))
    return _scores(coded, w_r, w_s, protected, label, epsilon)


def fidelity_se(real: pd.DataFrame, synthetic: pd.DataFrame, *, protected: Sequence[str],
                label: str, n_boot: int, seed: Seed, epsilon: float = 1e-6) -> dict[str, float]:
    """Bootstrap standard error (sd of the replicates, ``ddof=1``) of each score."""
    reps = fidelity_bootstrap(real, synthetic, protected=protected, label=label, n_boot=n_boot,
                              seed=seed, epsilon=epsilon)
    return {k: float(v) for k, v in reps.std(ddof=1).items()}
