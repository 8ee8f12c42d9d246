"""FusionGAN's encoding of the schema: pooled standardisation and pooled one-hot categories.

A continuous column is standardised with the mean and sd of every training row that observes
it, pooled over the sources that have it (:mod:`fusionlib.fusion.scaling`): one encoded column.
A discrete (categorical) column becomes a one-hot block over the *union* of the categories seen
in every source that has the column (sorted by their string form, as
:class:`~fusionlib.encoding.onehot.IndicatorEncoder` does), so a category seen in one source only
still has a place in the generator's output and in the other sources' discriminators (which
then never see it in real data). A single-level column is allowed: its block has width 1, the
softmax over it is always 1 and it decodes to its one level (like a constant continuous column).

The encoded layout follows the schema order; :attr:`SchemaEncoding.spans` says which encoded
columns belong to which schema column (:class:`~fusionlib.encoding.tabular.Span`), and
:meth:`SchemaEncoding.positions` gives the encoded positions of a source's columns, i.e. the
projection pi_Vk of its discriminator.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fusionlib.checks import check_choice
from fusionlib.data.sources import SourceSet
from fusionlib.encoding.onehot import IndicatorEncoder
from fusionlib.encoding.tabular import Span
from fusionlib.errors import InvalidInputError
from fusionlib.fusion.scaling import PooledScaler, pooled_scaler

__all__ = ["SchemaEncoding", "check_condition_column", "check_source_columns", "schema_encoding"]


@dataclass(frozen=True)
class SchemaEncoding:
    """How every schema column is encoded; ``transform`` and ``inverse`` map to and from it.

    Attributes
    ----------
    columns:
        The schema (|V| names).
    spans:
        One :class:`Span` per schema column, in schema order, tiling ``[0, width)``.
    scaler:
        The pooled scaler of the continuous columns (in schema order).
    onehot:
        Discrete column -> its :class:`IndicatorEncoder` (fitted on the pooled values).
    dtypes:
        Discrete column -> the dtype its decoded values get (the pooled dtype of the sources).
    """

    columns: tuple[str, ...]
    spans: tuple[Span, ...]
    scaler: PooledScaler
    onehot: Mapping[str, IndicatorEncoder]
    dtypes: Mapping[str, object]

    @property
    def width(self) -> int:
        """Number of encoded columns."""
        return self.spans[-1].stop

    @property
    def discrete(self) -> tuple[str, ...]:
        """The discrete columns, in schema order."""
        return tuple(s.column for s in self.spans if s.kind == "discrete")

    @property
    def categories(self) -> dict[str, np.ndarray]:
        """Discrete column -> its categories (object array, in one-hot order)."""
        return {c: enc.categories_[c] for c, enc in self.onehot.items()}

    def span(self, column: str) -> Span:
        for s in self.spans:
            if s.column == column:
                return s
        raise InvalidInputError(f"column {column!r} is not in the schema {list(self.columns)}")

    def positions(self, columns: Sequence[str]) -> list[int]:
        """Encoded positions of ``columns``, block after block in the order given."""
        return [j for c in columns for j in range(self.span(c).start, self.span(c).stop)]

    def transform(self, df: pd.DataFrame, *, unknown: str = "error") -> np.ndarray:
        """Encoded rows (n, len(positions(df.columns))) float32 of a table of schema columns.

        A category not seen when the encoding was fitted raises (``unknown="error"``) or gets
        an all-zero block (``unknown="zeros"``: e.g. held-out rows, which may hold a rare
        category that no training row has; no generated record can match them)."""
        check_choice("unknown", unknown, ("error", "zeros"))
        blocks = []
        for col in df.columns:
            s = self.span(col)
            if s.kind == "continuous":
                with np.errstate(over="ignore"):
                    block = self.scaler.transform(df[[col]])
                if not np.isfinite(block).all():
                    raise InvalidInputError(
                        f"column {col!r} has values too large to encode (largest |value| "
                        f"{np.abs(df[col].to_numpy(dtype=np.float64)).max():.3g}; the networks "
                        "compute in float32, up to 3.4e38); rescale it before fitting, e.g. "
                        "divide it by 1e6, or pass standardize=True")
                blocks.append(block)
                continue
            values = df[col].to_numpy()
            if unknown == "error":
                codes = self.onehot[col].codes(col, values)
            else:
                index = {c: i for i, c in enumerate(self.onehot[col].categories_[col])}
                codes = np.array([index.get(v, -1) for v in values], dtype=np.int64)
            block = np.zeros((len(df), s.stop - s.start), dtype=np.float32)
            known = codes >= 0
            block[np.arange(len(df))[known], codes[known]] = 1.0
            blocks.append(block)
        return np.concatenate(blocks, axis=1)

    def inverse(self, x: np.ndarray) -> pd.DataFrame:
        """The table (n, |V|) of schema columns from encoded rows ``x`` (n, width).

        Continuous columns are de-standardised (float64); a discrete column is the category of
        largest value in its block (argmax), with the column's original dtype.
        """
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.width:
            raise InvalidInputError(f"expected values of shape (n, {self.width}), got {x.shape}")
        cont = [s.start for s in self.spans if s.kind == "continuous"]
        values = self.scaler.inverse(x[:, cont]) if cont else pd.DataFrame(index=range(len(x)))
        out = {}
        for s in self.spans:
            if s.kind == "continuous":
                out[s.column] = values[s.column]
            else:
                cats = self.onehot[s.column].inverse_column(s.column, x[:, s.start:s.stop])
                out[s.column] = pd.Series(cats, dtype=object).astype(self.dtypes[s.column])
        return pd.DataFrame(out, columns=list(self.columns))


def schema_encoding(frames: Mapping[str, pd.DataFrame], columns: Sequence[str],
                    discrete: Sequence[str] = (), *, standardize: bool = True) -> SchemaEncoding:
    """The encoding of ``columns`` pooled over the tables ``frames``.

    ``discrete`` names the categorical columns; the others are continuous (standardised with
    the pooled mean and sd if ``standardize``, else left as they are).
    """
    columns = tuple(columns)
    discrete = set(discrete)
    continuous = [c for c in columns if c not in discrete]
    scaler = pooled_scaler(frames, continuous, standardize=standardize)
    onehot, dtypes, spans, pos = {}, {}, [], 0
    for col in columns:
        if col not in discrete:
            spans.append(Span(col, "continuous", pos, pos + 1))
            pos += 1
            continue
        pooled = pd.concat([df[col] for df in frames.values() if col in df.columns],
                           ignore_index=True)
        if pooled.empty:
            raise InvalidInputError(f"no table has rows with column {col!r}")
        onehot[col] = IndicatorEncoder().fit(pooled.to_frame(col))
        dtypes[col] = pooled.dtype
        width = len(onehot[col].categories_[col])
        spans.append(Span(col, "discrete", pos, pos + width))
        pos += width
    return SchemaEncoding(columns, tuple(spans), scaler, onehot, dtypes)


def _coding(values: pd.Series) -> set[str]:
    """``"text"`` and/or ``"numbers"``: how a discrete column's values are coded."""
    return {"text" if isinstance(v, str) else "numbers" for v in pd.unique(values)
            if isinstance(v, str | numbers.Number)}


def _check_coding(src: SourceSet, discrete: Sequence[str]) -> None:
    """Raise if a discrete column holds text in one place and numbers in another (1 and '1'
    would be two categories of the one-hot block)."""
    for col in discrete:
        where: dict[str, list[str]] = {"text": [], "numbers": []}
        for name in src.names:
            if col in src[name].columns:
                for kind in _coding(src[name][col]):
                    where[kind].append(name)
        if where["text"] and where["numbers"]:
            raise InvalidInputError(
                f"discrete column {col!r} is coded as text in source(s) {where['text']} and as "
                f"numbers in source(s) {where['numbers']}, so '1' and 1 would be two "
                f"categories; code it one way in every source, e.g. "
                f"df[{col!r}] = df[{col!r}].astype(str)")


def check_source_columns(src: SourceSet, discrete: Sequence[str]) -> None:
    """Raise unless every name in ``discrete`` is a column of some source, coded one way (text
    or numbers) everywhere, discrete columns have no missing value, and every other column is
    numeric and finite."""
    unknown = [c for c in discrete if c not in src.columns]
    if unknown:
        raise InvalidInputError(
            f"discrete column(s) {unknown} are in no source (columns: {list(src.columns)}); "
            "fix the names in discrete_columns")
    for name in src.names:
        df = src[name]
        nulls = [c for c in df.columns if c in discrete and df[c].isna().any()]
        if nulls:
            raise InvalidInputError(f"source {name!r} has missing values in discrete "
                                    f"column(s) {nulls}; drop or impute those rows first")
        cont = [c for c in df.columns if c not in discrete]
        for col in cont:
            _check_numeric(name, col, df[col].dtype)
        finite = np.isfinite(df[cont].to_numpy(dtype=np.float64, na_value=np.nan)).all(axis=0)
        bad = [c for c, ok in zip(cont, finite, strict=True) if not ok]
        if bad:
            raise InvalidInputError(
                f"source {name!r} has NaN or infinite values in column(s) {bad}; drop or "
                "impute those rows first")
    _check_coding(src, discrete)


def check_condition_column(src: SourceSet, condition: str) -> None:
    """Raise if the condition column holds non-integer floats in some source: a continuous
    column would make one group per distinct value."""
    for name in src.names:
        values = src[name].get(condition)
        if values is not None and pd.api.types.is_float_dtype(values) \
                and not (values.dropna() % 1 == 0).all():
            raise InvalidInputError(
                f"the condition column {condition!r} is continuous (float values, "
                f"{values.nunique()} distinct in source {name!r}): it would make one group per "
                f"value; condition on a categorical column, or bin it first, e.g. "
                f"df[{condition!r}] = pd.cut(df[{condition!r}], 4).astype(str)")


def _check_numeric(source: str, column: str, dtype: object) -> None:
    numeric = pd.api.types.is_bool_dtype(dtype) or (
        pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype))
    if not numeric:
        raise InvalidInputError(
            f"column {column!r} of source {source!r} is not numeric (dtype {dtype}); list it in "
            "discrete_columns to model it as categorical, or encode it as numbers")
