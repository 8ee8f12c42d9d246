"""Shared machinery of the joint-distribution estimators of seed 002 (Section 3.1).

Every estimator learns a joint distribution over the union of the columns of two tables that
share one or more *overlap* columns: an *internal* table (model features, label) and an
*external* table (protected attributes). This module holds their common
surface; the input checks and encoding are in
:mod:`fusionlib.fairtest.estimators.validation`.

- :class:`JointEstimator` is the scikit-learn-like surface (``fit`` / ``sample`` /
  ``joint_proba`` / ``proba_table``) with the argument checks done once.

All values are treated as categories and returned as plain Python strings (``object`` dtype),
the same representation :func:`fusionlib.fairtest.discretise` produces.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from fusionlib.data.sources import as_source_set
from fusionlib.errors import InvalidInputError, NotFittedError
from fusionlib.fairtest.estimators.validation import (
    EncodedPair,
    check_n_and_seed,
    encode,
    validate_pair,
)
from fusionlib.rng import numpy_rng

__all__ = ["JointEstimator"]

# proba_table refuses to build tables with more cells than this (they would not be "small").
MAX_TABLE_CELLS = 5_000_000


class JointEstimator(BaseEstimator):
    """Base class: a joint distribution over categorical columns learned from two tables.

    Subclasses implement ``_fit(pair)``, ``_sample_codes(n, rng)`` and, where the model has
    exact probabilities, ``_joint_proba_codes(codes)`` and ``_proba_table(columns)``.

    Fitted attributes (all estimators): ``columns_``, ``overlap_``, ``internal_only_``,
    ``external_only_``, ``categories_`` (see :class:`EncodedPair`).
    """

    #: trained on separated sources (not on the complete table, unlike the CTGAN baseline)
    trains_on_complete = False

    def fit(self, sources: object, external: pd.DataFrame | None = None) -> JointEstimator:
        """Learn the joint distribution from the internal and external tables.

        Parameters
        ----------
        sources : SourceSet with two tables, or DataFrame
            The two sources in the order (internal, external): the internal table holds
            the model features and label (no protected attribute), the external one the
            protected attributes; they share the overlap column(s); row counts may differ.
            A DataFrame is read as the internal table and needs ``external``.
        external : DataFrame, optional
            The external table when ``sources`` is the internal DataFrame.

        Returns
        -------
        self
        """
        self._check_params()
        src = as_source_set(sources, external).require(2)
        pair = validate_pair(src[src.names[0]], src[src.names[1]])
        self.columns_ = list(pair.columns)
        self.overlap_ = list(pair.overlap)
        self.internal_only_ = list(pair.internal_only)
        self.external_only_ = list(pair.external_only)
        self.categories_ = {c: list(v) for c, v in pair.categories.items()}
        self._fit(pair)
        return self

    def sample(self, n: int, seed: int = 0) -> pd.DataFrame:
        """Draw ``n`` complete rows (all columns, values as ``str``).

        Parameters
        ----------
        n : int
            Number of rows, > 0.
        seed : int, default 0
            Seed of the local random generator; the same seed gives the same rows (without
            one, ``sample(n)`` draws the documented default stream 0, as SDV's ``sample``
            needs no seed).

        Returns
        -------
        DataFrame, shape (n, len(columns_))
        """
        self._check_fitted()
        check_n_and_seed(n, seed)
        codes = self._sample_codes(int(n), numpy_rng(seed, "sample"))
        return self._decode(codes, self.columns_)

    def joint_proba(self, rows: pd.DataFrame) -> np.ndarray:
        """Model probability of each complete row.

        Parameters
        ----------
        rows : DataFrame, shape (m, >= len(columns_))
            Must contain every column in ``columns_`` (extra columns are ignored). Values
            never seen in training get probability 0.

        Returns
        -------
        ndarray of float64, shape (m,)
        """
        self._check_fitted()
        codes = self._encode_rows(rows, self.columns_)
        return self._joint_proba_codes(codes)

    def proba_table(self, columns) -> pd.DataFrame:
        """Exact marginal distribution of a few columns.

        Parameters
        ----------
        columns : sequence of str
            Distinct columns of ``columns_``.

        Returns
        -------
        DataFrame
            One row per combination with positive probability (the latent naive Bayes and the
            independent model list every combination): the columns, then ``"proba"``; sorted
            by the columns; probabilities sum to 1.
        """
        self._check_fitted()
        columns = self._check_columns(columns)
        cells = int(np.prod([len(self.categories_[c]) for c in columns], dtype=float))
        if cells > MAX_TABLE_CELLS:
            raise InvalidInputError(
                f"the table over {columns} has {cells} cells (> {MAX_TABLE_CELLS}); ask for "
                "fewer columns, or estimate it from sample()"
            )
        table = self._proba_table(columns)
        return table.sort_values(columns, kind="stable").reset_index(drop=True)

    # -- helpers for subclasses ------------------------------------------------------------

    def _check_params(self) -> None:
        """Validate constructor arguments (subclasses override)."""

    def _check_fitted(self) -> None:
        if not hasattr(self, "columns_"):
            raise NotFittedError(
                f"this {type(self).__name__} is not fitted yet; call fit(internal, external) "
                "before sample(), joint_proba() or proba_table()"
            )

    def _check_columns(self, columns) -> list[str]:
        if isinstance(columns, str):
            columns = [columns]
        columns = list(columns)
        unknown = [c for c in columns if c not in self.columns_]
        if not columns or unknown or len(set(columns)) != len(columns):
            raise InvalidInputError(
                f"columns must be distinct names among {self.columns_}; got {columns}"
            )
        return columns

    def _encode_rows(self, rows: object, columns) -> np.ndarray:
        if not isinstance(rows, pd.DataFrame):
            raise InvalidInputError(f"rows must be a pandas DataFrame, got {type(rows).__name__}")
        missing = [c for c in columns if c not in rows.columns]
        if missing:
            raise InvalidInputError(
                f"rows lack columns {missing}; pass complete rows with columns {list(columns)}"
            )
        return encode(rows[list(columns)].astype(str), columns, self.categories_)

    def _decode(self, codes: np.ndarray, columns) -> pd.DataFrame:
        data = {}
        for j, col in enumerate(columns):
            cats = np.asarray(self.categories_[col], dtype=object)
            data[col] = cats[codes[:, j]]
        return pd.DataFrame(data, columns=list(columns))

    def _fit(self, pair: EncodedPair) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _sample_codes(self, n: int, rng: np.random.Generator) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def _joint_proba_codes(self, codes: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def _proba_table(self, columns: list[str]) -> pd.DataFrame:  # pragma: no cover
        raise NotImplementedError
