"""PTGAN's tabular encoding (seed 001, Section 5 / Table 9): continuous columns min-max scaled
to [-1, 1], discrete columns one-hot; with an exact inverse.

The encoder follows scikit-learn's contract (``fit`` / ``transform`` / ``inverse_transform``)
and records, in :attr:`TabularEncoder.spans_`, which output columns belong to which input
column so that a generator can put a linear head on continuous spans and a Gumbel-softmax head
on each discrete span.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from fusionlib.encoding.onehot import IndicatorEncoder
from fusionlib.errors import InvalidInputError, NotFittedError

__all__ = ["Span", "TabularEncoder"]


@dataclass(frozen=True)
class Span:
    """Output columns ``[start, stop)`` that encode input column ``column``."""

    column: str
    kind: str  # "continuous" or "discrete"
    start: int
    stop: int


class TabularEncoder(BaseEstimator):
    """Encode a DataFrame into a float matrix in [-1, 1] (continuous) and {0, 1} (one-hot).

    Parameters
    ----------
    discrete_columns:
        Names of the discrete columns; every other column is continuous and must be numeric.
    """

    def __init__(self, discrete_columns: tuple[str, ...] | list[str] = ()) -> None:
        self.discrete_columns = discrete_columns

    # ---------------------------------------------------------------- fit
    def fit(self, df: pd.DataFrame, y: object = None) -> TabularEncoder:
        """Learn the ranges and categories of ``df`` (``y`` is ignored: scikit-learn's
        ``Pipeline`` and ``ColumnTransformer`` pass it)."""
        if not isinstance(df, pd.DataFrame):
            raise InvalidInputError(f"fit expects a pandas DataFrame, got {type(df).__name__}")
        if len(df) == 0:
            raise InvalidInputError("cannot fit an encoder on an empty table")
        if isinstance(self.discrete_columns, str):
            raise InvalidInputError(
                f"discrete_columns must be a list of column names, got the string "
                f"{self.discrete_columns!r}; write discrete_columns=[{self.discrete_columns!r}]")
        unknown = [c for c in self.discrete_columns if c not in df.columns]
        if unknown:
            raise InvalidInputError(
                f"discrete columns {unknown} are not in the table (columns: {list(df.columns)})"
            )
        nulls = df.columns[df.isna().any()].tolist()
        if nulls:
            raise InvalidInputError(
                f"columns {nulls} have missing values; drop or impute them before encoding"
            )
        self.columns_ = list(df.columns)
        self.dtypes_ = df.dtypes.to_dict()
        discrete = [c for c in self.columns_ if c in self.discrete_columns]
        self.onehot_ = IndicatorEncoder().fit(df[discrete]) if discrete else None
        self.categories_: dict[str, np.ndarray] = dict(
            self.onehot_.categories_ if self.onehot_ else {})
        self.ranges_: dict[str, tuple[float, float]] = {}
        spans, pos = [], 0
        for col in self.columns_:
            if col in self.discrete_columns:
                cats = self.categories_[col]
                spans.append(Span(col, "discrete", pos, pos + len(cats)))
                pos += len(cats)
            else:
                if not pd.api.types.is_numeric_dtype(df[col]):
                    raise InvalidInputError(
                        f"column {col!r} is not numeric; list it in discrete_columns"
                    )
                if not np.isfinite(df[col].to_numpy(dtype=float)).all():
                    raise InvalidInputError(
                        f"column {col!r} has infinite values; drop or clip them before encoding")
                lo, hi = float(df[col].min()), float(df[col].max())
                self.ranges_[col] = (lo, hi)
                spans.append(Span(col, "continuous", pos, pos + 1))
                pos += 1
        self.spans_ = tuple(spans)
        self.n_features_out_ = pos
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "spans_"):
            raise NotFittedError("this TabularEncoder is not fitted; call fit(df) first")

    # ---------------------------------------------------------------- transform
    def transform(self, df: pd.DataFrame) -> np.ndarray:
        """Encode ``df`` -> float32 array of shape ``(n_rows, n_features_out_)``."""
        self._check_fitted()
        if not isinstance(df, pd.DataFrame):
            raise InvalidInputError(f"transform expects a DataFrame, got {type(df).__name__}")
        missing = [c for c in self.columns_ if c not in df.columns]
        if missing:
            raise InvalidInputError(f"columns {missing} are missing from the table to encode")
        nulls = [c for c in self.columns_ if df[c].isna().any()]
        if nulls:
            raise InvalidInputError(
                f"columns {nulls} have missing values; drop or impute them before encoding")
        out = np.zeros((len(df), self.n_features_out_), dtype=np.float32)
        for span in self.spans_:
            values = df[span.column].to_numpy()
            if span.kind == "continuous":
                lo, hi = self.ranges_[span.column]
                scale = (hi - lo) or 1.0
                values = values.astype(float)
                if not np.isfinite(values).all():
                    raise InvalidInputError(
                        f"column {span.column!r} has infinite values; drop or clip them")
                out[:, span.start] = 2.0 * (values - lo) / scale - 1.0
            else:
                codes = self.onehot_.codes(span.column, values)
                out[np.arange(len(df)), span.start + codes] = 1.0
        return out

    def fit_transform(self, df: pd.DataFrame, y: object = None) -> np.ndarray:
        return self.fit(df).transform(df)

    # ---------------------------------------------------------------- inverse
    def inverse_transform(self, x: np.ndarray) -> pd.DataFrame:
        """Decode an encoded (or generated) matrix back to a DataFrame.

        Continuous values are clipped to the fitted range and rounded for integer columns;
        a discrete span becomes the category with the largest value (argmax), so soft
        generator outputs decode too. ``inverse_transform(transform(df))`` equals ``df``
        for integer and categorical columns, and up to float rounding for float columns.
        """
        self._check_fitted()
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.n_features_out_:
            raise InvalidInputError(
                f"expected an array of shape (n, {self.n_features_out_}), got {x.shape}"
            )
        if not np.isfinite(x).all():
            raise InvalidInputError(
                "the matrix to decode contains NaN or infinite values (a diverged generator?); "
                "decoding them would invent values")
        data = {}
        for span in self.spans_:
            if span.kind == "continuous":
                lo, hi = self.ranges_[span.column]
                unit = (np.clip(x[:, span.start], -1.0, 1.0) + 1.0) / 2.0
                values = unit * (hi - lo) + lo  # a constant column (hi == lo) decodes to lo
                if pd.api.types.is_integer_dtype(self.dtypes_[span.column]):
                    values = np.rint(values)
                data[span.column] = values.astype(self.dtypes_[span.column])
            else:
                data[span.column] = self.onehot_.inverse_column(
                    span.column, x[:, span.start:span.stop])
        frame = pd.DataFrame(data, columns=self.columns_)
        for col in self.categories_:
            frame[col] = frame[col].astype(self.dtypes_[col])
        return frame
