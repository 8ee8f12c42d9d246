"""Pooled per-column standardisation of overlapping sources.

Each schema column is standardised with the mean and standard deviation (ddof=0) of *all*
training rows that observe it, pooled over the sources that have it, so a shared column gets one
scale in every discriminator and in the generator's output. A constant column (every pooled value
equal) keeps its mean and gets standard deviation 1, and decodes to its value. Values so large
that the pooled mean or sd overflows are refused (rescale them first).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fusionlib.errors import InvalidInputError

__all__ = ["PooledScaler", "pooled_scaler"]


@dataclass(frozen=True)
class PooledScaler:
    """Column means and scales over a schema; ``transform`` and ``inverse`` map to and from z.

    Attributes
    ----------
    columns:
        The schema (|V| names).
    mean, scale:
        Float64 arrays (|V|,): ``z = (x - mean) / scale``.
    constant:
        None, or a float64 array (|V|,): the value of each column whose training values are all
        equal (NaN for the others); ``inverse`` gives such a column that value, whatever ``z``.
    """

    columns: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    constant: np.ndarray | None = None

    def _positions(self, columns: Sequence[str]) -> list[int]:
        where = {c: j for j, c in enumerate(self.columns)}
        missing = [c for c in columns if c not in where]
        if missing:
            raise InvalidInputError(
                f"column(s) {missing} are not in the schema {list(self.columns)}")
        return [where[c] for c in columns]

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        """Standardised values (n, df.shape[1]) float32 of a table with schema columns."""
        pos = self._positions(list(df.columns))
        x = df.to_numpy(dtype=np.float64, na_value=np.nan)
        return ((x - self.mean[pos]) / self.scale[pos]).astype(np.float32)

    def inverse(self, z: np.ndarray) -> pd.DataFrame:
        """The table (n, |V|) of schema columns from standardised values ``z`` (n, |V|)."""
        z = np.asarray(z, dtype=np.float64)
        if z.ndim != 2 or z.shape[1] != len(self.columns):
            raise InvalidInputError(
                f"expected values of shape (n, {len(self.columns)}), got {z.shape}")
        x = z * self.scale + self.mean
        if self.constant is not None:
            fixed = ~np.isnan(self.constant)
            x[:, fixed] = self.constant[fixed]
        return pd.DataFrame(x, columns=list(self.columns))


def pooled_scaler(frames: Mapping[str, pd.DataFrame], columns: Sequence[str], *,
                  standardize: bool = True) -> PooledScaler:
    """The pooled scaler of ``columns`` over the tables ``frames`` (the identity if not
    ``standardize``): mean and sd of every row, in any table, that has the column."""
    columns = tuple(columns)
    mean, scale = np.zeros(len(columns)), np.ones(len(columns))
    constant = np.full(len(columns), np.nan)
    for j, col in enumerate(columns):
        parts = [df[col].to_numpy(dtype=np.float64, na_value=np.nan)
                 for df in frames.values() if col in df.columns]
        values = np.concatenate(parts) if parts else np.zeros(0)
        if values.size == 0:
            if standardize:
                raise InvalidInputError(f"no table has rows with column {col!r}")
            continue
        with np.errstate(over="ignore", invalid="ignore"):
            spread = np.ptp(values)
            if spread == 0:
                constant[j] = values[0]
            if not standardize:
                continue
            mean[j] = values.mean()
            if spread > 0:
                scale[j] = values.std()
        if not (np.isfinite(mean[j]) and np.isfinite(scale[j])):
            raise InvalidInputError(
                f"column {col!r} has values too large to standardise (largest |value| "
                f"{np.abs(values).max():.3g}: its pooled mean or sd overflows float64); rescale "
                "it before fitting, e.g. divide it by 1e6 or take logs")
    return PooledScaler(columns, mean, scale, None if np.isnan(constant).all() else constant)
