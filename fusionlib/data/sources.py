"""``SourceSet``: named tables whose columns may overlap, the input of every generator.

Every synthesizer of the package answers ``fit(sources)`` and ``sample(n, seed)``. ``sources``
is a :class:`SourceSet`: K >= 1 named tables (pandas DataFrames) about the same population,
each observing some of the variables. One complete table is the K = 1 case; seed 002's internal
and external tables are K = 2 with one overlap column; FusionGAN takes any K >= 2.

The *schema* is the union of the columns in first-seen order (source order, then column order),
and ``columns_of(name)`` is the projection pi_Vk onto source k's columns.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pandas as pd

from fusionlib.errors import InvalidInputError

__all__ = ["SourceSet", "as_source_set"]


class SourceSet(Mapping[str, pd.DataFrame]):
    """An ordered, read-only mapping ``name -> DataFrame`` with schema helpers.

    Parameters
    ----------
    tables:
        Mapping of source name (a non-empty string) to a non-empty DataFrame with unique,
        string column names. Row counts may differ between sources; rows are not linked.
    """

    def __init__(self, tables: Mapping[str, pd.DataFrame]) -> None:
        if not isinstance(tables, Mapping) or not tables:
            raise InvalidInputError(
                "a SourceSet needs at least one named table, e.g. SourceSet({'a': df_a, "
                "'b': df_b}) or SourceSet.single(df)")
        checked: dict[str, pd.DataFrame] = {}
        for name, df in tables.items():
            checked[_check_name(name)] = _check_table(name, df)
        self._tables = checked

    # -- constructors ----------------------------------------------------------------------
    @classmethod
    def single(cls, df: pd.DataFrame, name: str = "data") -> SourceSet:
        """One complete table (K = 1)."""
        return cls({name: df})

    @classmethod
    def pair(cls, internal: pd.DataFrame, external: pd.DataFrame) -> SourceSet:
        """Seed 002's two tables, named ``internal`` and ``external``."""
        return cls({"internal": internal, "external": external})

    # -- mapping protocol --------------------------------------------------------------------
    def __getitem__(self, name: str) -> pd.DataFrame:
        try:
            return self._tables[name]
        except KeyError:
            raise InvalidInputError(
                f"no source named {name!r}; the sources are {list(self._tables)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._tables)

    def __len__(self) -> int:
        return len(self._tables)

    def __repr__(self) -> str:
        parts = ", ".join(f"{k}: {v.shape[0]}x{v.shape[1]}" for k, v in self._tables.items())
        return f"SourceSet({parts})"

    # -- schema --------------------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        """Source names in order."""
        return tuple(self._tables)

    @property
    def columns(self) -> tuple[str, ...]:
        """The schema: every column, in first-seen order."""
        seen: dict[str, None] = {}
        for df in self._tables.values():
            seen.update(dict.fromkeys(df.columns))
        return tuple(seen)

    def columns_of(self, name: str) -> tuple[str, ...]:
        """The columns V_k of source ``name`` (its projection pi_Vk)."""
        return tuple(self[name].columns)

    def overlap(self, a: str | None = None, b: str | None = None) -> tuple[str, ...]:
        """Columns shared by sources ``a`` and ``b`` (default: by at least two sources)."""
        if a is not None and b is not None:
            other = set(self.columns_of(b))
            return tuple(c for c in self.columns_of(a) if c in other)
        counts = {c: sum(c in df.columns for df in self._tables.values()) for c in self.columns}
        return tuple(c for c, k in counts.items() if k >= 2)

    @property
    def is_complete(self) -> bool:
        """True for one table (K = 1)."""
        return len(self) == 1

    def check_linked(self) -> None:
        """Raise unless every source shares at least one column with another source (K >= 2)."""
        if len(self) < 2:
            return
        lonely = [n for n in self.names
                  if not any(self.overlap(n, m) for m in self.names if m != n)]
        if lonely:
            raise InvalidInputError(
                f"source(s) {lonely} share no column with any other source, so nothing links "
                "their rows to the rest; add a shared (overlap) column to each, or fit them "
                "separately")

    def require(self, k: int | None = None, *, min_k: int = 1) -> SourceSet:
        """Raise unless there are exactly ``k`` sources (or at least ``min_k``)."""
        if (k is not None and len(self) != k) or len(self) < min_k:
            want = f"exactly {k}" if k is not None else f"at least {min_k}"
            raise InvalidInputError(
                f"this generator needs {want} source table(s), got {len(self)} "
                f"({list(self.names)})")
        return self


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name:
        raise InvalidInputError(f"source names must be non-empty strings, got {name!r}")
    return name


def _check_table(name: str, df: object) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise InvalidInputError(
            f"source {name!r} must be a pandas DataFrame, got {type(df).__name__}")
    if df.shape[1] == 0:
        raise InvalidInputError(
            f"source {name!r} has no columns; give every source at least one column")
    if len(df) == 0:
        raise InvalidInputError(f"source {name!r} has no rows; drop it or give it data")
    dupes = sorted({str(c) for c in df.columns[df.columns.duplicated()]})
    if dupes:
        raise InvalidInputError(f"source {name!r} repeats column names {dupes}; rename them")
    bad = [c for c in df.columns if not isinstance(c, str)]
    if bad:
        raise InvalidInputError(
            f"source {name!r} has non-string column names {bad[:5]}; name columns with strings")
    return df


def as_source_set(sources: object, external: object = None) -> SourceSet:
    """Coerce the accepted spellings of ``fit``'s argument to a :class:`SourceSet`.

    A ``SourceSet`` is returned as it is; a mapping of name to table becomes one; one DataFrame
    is the complete (K = 1) case; two DataFrames ``(internal, external)`` are seed 002's pair.
    """
    if isinstance(sources, SourceSet) and external is None:
        return sources
    if isinstance(sources, pd.DataFrame) and external is None:
        return SourceSet.single(sources)
    if isinstance(sources, pd.DataFrame) and isinstance(external, pd.DataFrame):
        return SourceSet.pair(sources, external)
    if isinstance(sources, Mapping) and external is None:
        return SourceSet(sources)
    raise InvalidInputError(
        f"fit expects a SourceSet (or one DataFrame, or internal and external DataFrames), got "
        f"{type(sources).__name__}{'' if external is None else ' and ' + type(external).__name__}")
