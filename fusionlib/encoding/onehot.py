"""One-hot encoding of categorical columns: the one path every module uses.

Categories are kept per column, sorted by their string form, so the layout of the output does
not depend on row order. ``handle_unknown="error"`` refuses categories unseen at ``fit`` (a
generator's table encoding must be exact); ``"ignore"`` encodes them as all zeros (a classifier
scoring synthetic rows it was not trained on).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from fusionlib.checks import check_choice
from fusionlib.errors import InvalidInputError, NotFittedError

__all__ = ["IndicatorEncoder"]


class IndicatorEncoder(BaseEstimator):
    """Encode categorical DataFrame columns as {0, 1} indicator blocks (float32).

    A name of its own, not scikit-learn's ``OneHotEncoder``: that one takes arrays, keeps
    ``categories_`` as a list in column order and returns a sparse matrix by default; this one
    takes a DataFrame, keeps categories per column name (sorted by their string form) and returns
    a dense float32 array. Hyperparameters follow scikit-learn's contract (``get_params``,
    ``clone``).

    Parameters
    ----------
    handle_unknown:
        ``"error"`` (default) or ``"ignore"`` (unseen categories become all-zero rows).

    Fitted attributes: ``columns_``, ``categories_`` (column -> object array), ``offsets_``
    (column -> first output column), ``n_features_out_``.
    """

    def __init__(self, handle_unknown: str = "error") -> None:
        self.handle_unknown = handle_unknown

    def fit(self, df: pd.DataFrame, y: object = None) -> IndicatorEncoder:
        """Learn the categories of every column of ``df`` (``y`` is ignored: scikit-learn's
        ``Pipeline`` and ``ColumnTransformer`` pass it)."""
        check_choice("handle_unknown", self.handle_unknown, ("error", "ignore"))
        _check_frame(df)
        self.columns_ = list(df.columns)
        self.categories_ = {c: np.array(sorted(pd.unique(df[c]), key=str), dtype=object)
                            for c in self.columns_}
        sizes = [len(self.categories_[c]) for c in self.columns_]
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
        self.offsets_ = dict(zip(self.columns_, starts.tolist(), strict=True))
        self.n_features_out_ = int(sum(sizes))
        return self

    def get_feature_names_out(self) -> np.ndarray:
        """Output column names ``<column>_<category>`` (scikit-learn's convention)."""
        self._check_fitted()
        return np.array([f"{c}_{v}" for c in self.columns_ for v in self.categories_[c]],
                        dtype=object)

    def _check_fitted(self) -> None:
        if not hasattr(self, "categories_"):
            raise NotFittedError("this IndicatorEncoder is not fitted; call fit(df) first")

    def codes(self, column: str, values: np.ndarray) -> np.ndarray:
        """Integer codes of ``values`` in ``column``'s categories (-1 for unseen ones)."""
        self._check_fitted()
        index = {c: i for i, c in enumerate(self.categories_[column])}
        codes = np.fromiter((index.get(v, -1) for v in values), dtype=np.int64,
                            count=len(values))
        if self.handle_unknown == "error" and (codes < 0).any():
            unseen = sorted({str(v) for v in values[codes < 0]})[:5]
            raise InvalidInputError(
                f"column {column!r} has categories {unseen} unseen during fit; fit on data that "
                "contains every category, or use handle_unknown='ignore'")
        return codes

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        """Encode ``df`` -> float32 array (n_rows, n_features_out_)."""
        self._check_fitted()
        _check_frame(df, allow_empty=True)
        missing = [c for c in self.columns_ if c not in df.columns]
        if missing:
            raise InvalidInputError(f"columns {missing} are missing from the table to encode")
        out = np.zeros((len(df), self.n_features_out_), dtype=np.float32)
        rows = np.arange(len(df))
        for c in self.columns_:
            codes = self.codes(c, df[c].to_numpy())
            ok = codes >= 0
            out[rows[ok], self.offsets_[c] + codes[ok]] = 1.0
        return out

    def fit_transform(self, df: pd.DataFrame, y: object = None) -> np.ndarray:
        return self.fit(df).transform(df)

    def inverse_column(self, column: str, block: np.ndarray) -> np.ndarray:
        """The category of largest value in each row of ``block`` (n, n_categories)."""
        self._check_fitted()
        block = np.asarray(block, dtype=np.float64)
        if not np.isfinite(block).all():
            raise InvalidInputError(
                f"the block of column {column!r} contains NaN or infinite values; a generator "
                "that produces them has diverged")
        return self.categories_[column][np.argmax(block, axis=1)]


def _check_frame(df: object, *, allow_empty: bool = False) -> None:
    if not isinstance(df, pd.DataFrame):
        raise InvalidInputError(f"expected a pandas DataFrame, got {type(df).__name__}")
    if len(df) == 0 and not allow_empty:
        raise InvalidInputError("cannot fit an encoder on an empty table")
    nulls = df.columns[df.isna().any()].tolist()
    if nulls:
        raise InvalidInputError(
            f"columns {nulls} have missing values; drop or impute them before encoding")
