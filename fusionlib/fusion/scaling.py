"""Pooled per-column standardisation of overlapping sources.

Each schema column is standardised with the mean and standard deviation (ddof=0) of *all*
training rows that observe it, pooled over the sources that have it, so a shared column gets one
scale in every discriminator and in the generator's output. A constant column (every pooled value
equal) keeps its mean and gets standard deviation 1.
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
    """

    columns: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray

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
        return pd.DataFrame(z * self.scale + self.mean, columns=list(self.columns))


def pooled_scaler(frames: Mapping[str, pd.DataFrame], columns: Sequence[str], *,
                  standardize: bool = True) -> PooledScaler:
    """The pooled scaler of ``columns`` over the tables ``frames`` (the identity if not
    ``standardize``): mean and sd of every row, in any table, that has the column."""
    columns = tuple(columns)
    mean, scale = np.zeros(len(columns)), np.ones(len(columns))
    if standardize:
        for j, col in enumerate(columns):
            parts = [df[col].to_numpy(dtype=np.float64, na_value=np.nan)
                     for df in frames.values() if col in df.columns]
            values = np.concatenate(parts) if parts else np.zeros(0)
            if values.size == 0:
                raise InvalidInputError(f"no table has rows with column {col!r}")
            mean[j] = values.mean()
            if np.ptp(values) > 0:
                scale[j] = values.std()
    return PooledScaler(columns, mean, scale)
