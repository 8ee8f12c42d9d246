"""Fidelity metrics of seed 002, Section 5.1-5.2 and Appendix C (Tables 3, 7, 8; Figure 5).

Every metric is a small object in the SDMetrics style: a ``name``, a ``goal`` (``"maximize"`` or
``"minimize"``), bounds ``min_value``/``max_value`` and ``compute(real, synthetic) -> float``.
All of them take two *all-categorical* tables (the discretised data of Appendix B) with the same
columns; a column must have the same dtype in both (an ``int`` 0/1 column never matches a ``str``
"0"/"1" column, and silently comparing them would report two disjoint supports), and a category
seen in only one table simply has frequency zero in the other.

- :class:`TVComplement`: ``1 - 0.5 * sum_k |f_syn(k) - f_real(k)|`` per column, mean over columns
  (SDMetrics ``single_column.TVComplement``).
- :class:`ContingencySimilarity`: ``1 - 0.5 * sum_{a,b} |P_syn(a,b) - P_real(a,b)|`` per column
  pair, mean over pairs (SDMetrics ``column_pairs.ContingencySimilarity``).
- :class:`DiscriminatorMeasure`: accuracy of a random forest telling real from synthetic rows
  (see the class for the exact protocol); 0.5 means indistinguishable.
- :class:`JointKL`: ``KL(p_syn(A, Y) || p_real(A, Y))`` for a protected attribute ``A`` and the
  label ``Y``, in nats, with additive smoothing ``epsilon`` of zero cells.

Association measures (Cramér's V, the DCC matrices of Figure 5, the mutual information of a
protected attribute and the label) are in :mod:`fusionlib.metrics.association`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from fusionlib.encoding.onehot import IndicatorEncoder
from fusionlib.errors import InvalidInputError
from fusionlib.rng import child, numpy_rng, seed_int

__all__ = [
    "TVComplement",
    "ContingencySimilarity",
    "DiscriminatorMeasure",
    "JointKL",
    "check_pair",
]


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _dtype_key(dtype: Any) -> str:
    # Categoricals with different category lists still hold comparable values.
    return "category" if isinstance(dtype, pd.CategoricalDtype) else str(dtype)


def check_pair(
    real: pd.DataFrame, synthetic: pd.DataFrame, columns: Sequence[str] | None = None
) -> list[str]:
    """Validate a (real, synthetic) pair and return the columns to compare.

    Raises :class:`InvalidInputError` when either is not a non-empty DataFrame, when a table
    repeats a column name, when the column sets differ (or ``columns`` are missing), when a
    column holds missing values, or when a column's dtype differs between the two tables.
    """
    for name, df in (("real", real), ("synthetic", synthetic)):
        if not isinstance(df, pd.DataFrame) or len(df) == 0:
            raise InvalidInputError(f"{name} must be a non-empty pandas DataFrame")
        dupes = sorted({str(c) for c in df.columns[df.columns.duplicated()]})
        if dupes:
            raise InvalidInputError(
                f"the {name} table repeats column names {dupes}; rename or drop the duplicates "
                "(e.g. df.loc[:, ~df.columns.duplicated()])")
    if columns is None:
        if set(real.columns) != set(synthetic.columns):
            raise InvalidInputError(
                "real and synthetic must have the same columns; only in real: "
                f"{sorted(set(real.columns) - set(synthetic.columns))}, only in synthetic: "
                f"{sorted(set(synthetic.columns) - set(real.columns))}. Select common columns."
            )
        columns = list(real.columns)
    columns = list(columns)
    for c in columns:
        absent = [n for n, df in (("real", real), ("synthetic", synthetic)) if c not in df.columns]
        if absent:
            raise InvalidInputError(
                f"column {c!r} is missing from the {' and '.join(absent)} table; pass column "
                f"names both tables have (real has {list(real.columns)})")
        if _dtype_key(real[c].dtype) != _dtype_key(synthetic[c].dtype):
            raise InvalidInputError(
                f"column {c!r} has dtype {real[c].dtype} in real but {synthetic[c].dtype} in "
                "synthetic; cast one to the other (e.g. synthetic.astype(real.dtypes))"
            )
        for name, df in (("real", real), ("synthetic", synthetic)):
            n_missing = int(df[c].isna().sum())
            if n_missing:
                raise InvalidInputError(
                    f"column {c!r} of the {name} table has {n_missing} missing values; drop "
                    "those rows (df.dropna()) or encode missingness as its own category first")
    return columns


def _codes(real: pd.Series, synthetic: pd.Series) -> tuple[np.ndarray, np.ndarray, int]:
    """Integer codes over the union of categories of both columns."""
    both = pd.concat([real.astype(object), synthetic.astype(object)], ignore_index=True)
    codes, uniques = pd.factorize(both, sort=False)
    return codes[: len(real)], codes[len(real) :], len(uniques)


def _freq(codes: np.ndarray, k: int) -> np.ndarray:
    return np.bincount(codes, minlength=k) / len(codes)


def _as_frames(real_data: object, synthetic_data: object) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two columns (Series, as SDMetrics' single-column metrics take them) as one-column
    tables under one name; tables as they are."""
    if isinstance(real_data, pd.Series) and isinstance(synthetic_data, pd.Series):
        name = real_data.name if real_data.name is not None else "column"
        return real_data.rename(name).to_frame(), synthetic_data.rename(name).to_frame()
    return real_data, synthetic_data


class TVComplement:
    """Mean over columns of ``1 - TVD`` between the real and synthetic category frequencies.

    Called as SDMetrics' ``single_column.TVComplement``: ``TVComplement.compute(real_data,
    synthetic_data)`` on two columns (Series) is SDMetrics' score; on two tables, the mean of
    the per-column scores (:meth:`compute_breakdown`). An instance works the same way.
    """

    name = "TVComplement"
    goal = "maximize"
    min_value, max_value = 0.0, 1.0

    @classmethod
    def compute_breakdown(cls, real_data: pd.DataFrame | pd.Series,
                          synthetic_data: pd.DataFrame | pd.Series) -> pd.Series:
        """Per-column score, indexed by column name."""
        real, synthetic = _as_frames(real_data, synthetic_data)
        out = {}
        for c in check_pair(real, synthetic):
            r, s, k = _codes(real[c], synthetic[c])
            out[c] = 1.0 - 0.5 * np.abs(_freq(s, k) - _freq(r, k)).sum()
        return pd.Series(out, dtype=float)

    @classmethod
    def compute(cls, real_data: pd.DataFrame | pd.Series,
                synthetic_data: pd.DataFrame | pd.Series) -> float:
        """Mean of :meth:`compute_breakdown`."""
        return float(cls.compute_breakdown(real_data, synthetic_data).mean())


class ContingencySimilarity:
    """Mean over column pairs of ``1 - TVD`` between normalised two-way contingency tables.

    Called as SDMetrics' ``column_pairs.ContingencySimilarity``:
    ``ContingencySimilarity.compute(real_data, synthetic_data)`` on two-column tables is
    SDMetrics' score; on wider tables, the mean over every pair of columns
    (:meth:`compute_breakdown`). An instance works the same way.
    """

    name = "ContingencySimilarity"
    goal = "maximize"
    min_value, max_value = 0.0, 1.0

    @classmethod
    def compute_breakdown(cls, real_data: pd.DataFrame,
                          synthetic_data: pd.DataFrame) -> pd.Series:
        """Per-pair score, indexed by ``(column_a, column_b)`` in column order."""
        cols = check_pair(real_data, synthetic_data)
        coded = {c: _codes(real_data[c], synthetic_data[c]) for c in cols}
        out = {}
        for a, b in combinations(cols, 2):
            ra, sa, ka = coded[a]
            rb, sb, kb = coded[b]
            diff = _freq(ra * kb + rb, ka * kb) - _freq(sa * kb + sb, ka * kb)
            out[(a, b)] = 1.0 - 0.5 * np.abs(diff).sum()
        return pd.Series(out, dtype=float)

    @classmethod
    def compute(cls, real_data: pd.DataFrame, synthetic_data: pd.DataFrame) -> float:
        """Mean of :meth:`compute_breakdown` (needs at least two columns)."""
        scores = cls.compute_breakdown(real_data, synthetic_data)
        if scores.empty:
            raise InvalidInputError("ContingencySimilarity needs at least two columns; give "
                                    "tables of two or more columns (a pair, as SDMetrics)")
        return float(scores.mean())


class DiscriminatorMeasure:
    """Accuracy of a random forest separating real (label 0) from synthetic (label 1) rows.

    Protocol for each of ``n_seeds`` trials ``s = seed, seed + 1, ...``:

    1. balance: draw ``n = min(len(real), len(synthetic), max_rows)`` rows without replacement
       from each table (generator ``default_rng(s)``);
    2. encode the stacked ``2n`` rows, one-hot (default) or as ordinal category codes; the
       encoding is fitted on both tables together (unsupervised, so no label leaks);
    3. split stratified into train / held-out test (``test_size``, ``random_state=s``);
    4. fit ``RandomForestClassifier(n_estimators, random_state=s)`` on the train part and record
       its accuracy on the held-out part.

    The score is the mean accuracy over trials. 0.5 is the ideal (indistinguishable); 1.0 means
    every row is recognised. Seed 002 reports it with "lower is better" (Table 3, DM).
    """

    name = "DiscriminatorMeasure"
    goal = "minimize"
    min_value, max_value = 0.0, 1.0
    ideal = 0.5

    def __init__(
        self, *, n_seeds: int = 5, seed: int = 0, test_size: float = 0.3,
        n_estimators: int = 100, max_rows: int | None = None, encoding: str = "onehot",
    ) -> None:
        self.n_seeds = n_seeds
        self.seed = seed
        self.test_size = test_size
        self.n_estimators = n_estimators
        self.max_rows = max_rows
        self.encoding = encoding

    def _validate(self) -> None:
        if self.encoding not in ("onehot", "ordinal"):
            raise InvalidInputError(
                f"encoding must be 'onehot' or 'ordinal', got {self.encoding!r}")
        if not (isinstance(self.n_seeds, int) and self.n_seeds >= 1):
            raise InvalidInputError(f"n_seeds must be an int >= 1, got {self.n_seeds!r}")
        if not 0.0 < self.test_size < 1.0:
            raise InvalidInputError(f"test_size must lie in (0, 1), got {self.test_size!r}")
        if not (_is_int(self.n_estimators) and self.n_estimators >= 1):
            raise InvalidInputError(
                f"n_estimators must be an int >= 1 (trees per forest), got {self.n_estimators!r}")
        if self.max_rows is not None and not (_is_int(self.max_rows) and self.max_rows >= 1):
            raise InvalidInputError(
                f"max_rows must be None (every row) or an int >= 1, got {self.max_rows!r}")
        child(self.seed)  # validates the seed

    def _encode(self, stacked: pd.DataFrame) -> np.ndarray:
        as_str = stacked.astype(str)
        if self.encoding == "onehot":
            return IndicatorEncoder().fit_transform(as_str)
        return np.column_stack([pd.factorize(as_str[c])[0] for c in as_str.columns])

    def trial_scores(self, real: pd.DataFrame, synthetic: pd.DataFrame) -> np.ndarray:
        """Held-out accuracy of each trial, shape ``(n_seeds,)``."""
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.model_selection import train_test_split

        self._validate()
        cols = check_pair(real, synthetic)
        n = min(len(real), len(synthetic), self.max_rows or len(real))
        scores = []
        for trial in range(self.n_seeds):
            rng = numpy_rng(self.seed, "dm", trial, "rows")
            s = seed_int(self.seed, "dm", trial, "model")
            stacked = pd.concat(
                [real[cols].iloc[rng.choice(len(real), n, replace=False)],
                 synthetic[cols].iloc[rng.choice(len(synthetic), n, replace=False)]],
                ignore_index=True,
            )
            y = np.repeat([0, 1], n)
            x_tr, x_te, y_tr, y_te = train_test_split(
                self._encode(stacked), y, test_size=self.test_size, stratify=y, random_state=s
            )
            forest = RandomForestClassifier(n_estimators=self.n_estimators, random_state=s)
            scores.append(float((forest.fit(x_tr, y_tr).predict(x_te) == y_te).mean()))
        return np.asarray(scores)

    def compute(self, real: pd.DataFrame, synthetic: pd.DataFrame) -> float:
        """Mean held-out accuracy over the trials."""
        return float(self.trial_scores(real, synthetic).mean())


class JointKL:
    """``KL(p_syn(A, Y) || p_real(A, Y))`` in nats for protected attribute ``A`` and label ``Y``.

    Both joint tables are built over the union of the observed categories of ``A`` and ``Y``
    (so every cell exists in both). Zero cells would make the divergence infinite (a cell the
    synthetic data has but the real data lacks), so ``epsilon`` is added to every cell *of both*
    tables, which are then renormalised: with ``epsilon=1e-6`` a synthetic cell of mass 0.01 that
    is absent from the real data costs about ``0.01 * ln(0.01 / 1e-6) = 0.092`` nats, while
    tables with full support move by ~1e-6 only. ``epsilon=0`` gives the unsmoothed divergence
    (``inf`` on a support mismatch). The seed does not state its log base or smoothing.
    """

    name = "JointKL"
    goal = "minimize"
    min_value, max_value = 0.0, float("inf")

    def __init__(self, protected: str, label: str, *, epsilon: float = 1e-6) -> None:
        self.protected = protected
        self.label = label
        self.epsilon = epsilon

    def joint_tables(self, real: pd.DataFrame, synthetic: pd.DataFrame) -> tuple[np.ndarray, ...]:
        """Smoothed, normalised ``(p_real, p_syn)`` tables, shape ``(n_A * n_Y,)``."""
        if not (isinstance(self.epsilon, int | float) and self.epsilon >= 0):
            raise InvalidInputError(f"epsilon must be a number >= 0, got {self.epsilon!r}")
        if self.protected == self.label:
            raise InvalidInputError("protected and label must be different columns")
        for name, df in (("real", real), ("synthetic", synthetic)):
            for role, col in (("protected attribute", self.protected), ("label", self.label)):
                if isinstance(df, pd.DataFrame) and col not in df.columns:
                    raise InvalidInputError(
                        f"the {role} {col!r} is not a column of the {name} table (columns: "
                        f"{list(df.columns)}); pass JointKL(protected, label) with column names "
                        "both tables have")
        cols = check_pair(real, synthetic, [self.protected, self.label])
        ra, sa, ka = _codes(real[cols[0]], synthetic[cols[0]])
        ry, sy, ky = _codes(real[cols[1]], synthetic[cols[1]])
        p_real = _freq(ra * ky + ry, ka * ky) + self.epsilon
        p_syn = _freq(sa * ky + sy, ka * ky) + self.epsilon
        return p_real / p_real.sum(), p_syn / p_syn.sum()

    def compute(self, real: pd.DataFrame, synthetic: pd.DataFrame) -> float:
        """The divergence (>= 0; 0 iff the two smoothed joint tables are equal)."""
        p_real, p_syn = self.joint_tables(real, synthetic)
        mask = p_syn > 0
        with np.errstate(divide="ignore"):
            terms = p_syn[mask] * (np.log(p_syn[mask]) - np.log(p_real[mask]))
        return float(max(terms.sum(), 0.0))
