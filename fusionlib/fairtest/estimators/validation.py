"""Input checks and integer encoding shared by the seed-002 joint estimators.

- :func:`check_table` rejects unusable tables with messages that say what to do;
- :func:`validate_pair` checks an (internal, external) pair and encodes both tables as
  integer codes over shared, sorted category lists (:class:`EncodedPair`);
- :func:`unique_rows` groups identical rows fast (mixed-radix packing).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from fusionlib.checks import is_int
from fusionlib.errors import InvalidInputError
from fusionlib.rng import child

__all__ = ["EncodedPair", "check_n_and_seed", "check_table", "encode", "unique_rows",
           "validate_pair"]


def check_table(df: object, name: str) -> pd.DataFrame:
    """Return ``df`` with every value as ``str``; raise a clear error for unusable input.

    Parameters
    ----------
    df : object
        The table to check; must be a non-empty :class:`pandas.DataFrame` with unique column
        names and no missing values.
    name : str
        How the error messages call this table ("internal", "external", "training").
    """
    if not isinstance(df, pd.DataFrame):
        raise InvalidInputError(
            f"the {name} table must be a pandas DataFrame, got {type(df).__name__}")
    if len(df) == 0 or df.shape[1] == 0:
        raise InvalidInputError(
            f"the {name} table is empty ({df.shape[0]} rows, {df.shape[1]} columns); "
            "pass a table with at least one row and one column"
        )
    dupes = sorted({str(c) for c in df.columns[df.columns.duplicated()]})
    if dupes:
        raise InvalidInputError(
            f"the {name} table repeats column names {dupes}; rename or drop the duplicates"
        )
    missing = df.isna().sum()
    missing = missing[missing > 0]
    if len(missing):
        detail = ", ".join(f"'{c}': {int(k)}" for c, k in missing.items())
        raise InvalidInputError(
            f"the {name} table has missing values (column: count) {detail}; drop those rows "
            "first (df.dropna()) or encode missingness as its own category"
        )
    continuous = [str(c) for c in df.columns if pd.api.types.is_float_dtype(df[c])]
    if continuous:
        raise InvalidInputError(
            f"the {name} table has continuous (float) columns {continuous}: these estimators "
            "treat every value as a category, so each distinct number would become its own "
            "category. Discretise first (fusionlib.fairtest.discretise, or pandas.cut), or cast "
            "genuinely categorical codes to str")
    out = df.astype(str)
    out.columns = [str(c) for c in df.columns]
    return out


@dataclass(frozen=True)
class EncodedPair:
    """Two tables as integer codes over shared category lists.

    Attributes
    ----------
    columns : tuple of str
        Output column order: the internal columns, then the external-only columns.
    overlap : tuple of str
        Columns present in both tables (in internal order).
    internal_only, external_only : tuple of str
        Columns present in one table only.
    categories : dict
        Column -> sorted tuple of the string categories seen in either table.
    internal_codes : ndarray of int64, shape (n_internal, len(internal columns))
        Codes of the internal table, columns ordered ``overlap + internal_only``.
    external_codes : ndarray of int64, shape (n_external, len(external columns))
        Codes of the external table, columns ordered ``overlap + external_only``.
    """

    columns: tuple[str, ...]
    overlap: tuple[str, ...]
    internal_only: tuple[str, ...]
    external_only: tuple[str, ...]
    categories: dict[str, tuple[str, ...]]
    internal_codes: np.ndarray
    external_codes: np.ndarray


def _overlap_category_check(uniques_int: dict, uniques_ext: dict, overlap) -> None:
    for col in overlap:
        only_int = sorted(set(uniques_int[col]) - set(uniques_ext[col]))
        only_ext = sorted(set(uniques_ext[col]) - set(uniques_int[col]))
        if only_int or only_ext:
            raise InvalidInputError(
                f"overlap column '{col}' has categories seen in only one table: "
                f"internal only {only_int}, external only {only_ext}; the tables must agree "
                "on the overlap's categories: merge the rare categories into others or drop "
                "those rows before fitting"
            )


def encode(df: pd.DataFrame, columns, categories) -> np.ndarray:
    """Integer codes of ``df[columns]`` under ``categories``; unseen values get code -1."""
    out = np.empty((len(df), len(columns)), dtype=np.int64)
    for j, col in enumerate(columns):
        out[:, j] = pd.Categorical(df[col], categories=categories[col]).codes
    return out


def _factorize(df: pd.DataFrame) -> tuple[dict, dict]:
    """Per column: local integer codes and the distinct values they index."""
    codes, uniques = {}, {}
    for col in df.columns:
        codes[col], uniques[col] = pd.factorize(df[col].to_numpy())
    return codes, uniques


def _global_codes(codes: dict, uniques: dict, columns, categories) -> np.ndarray:
    """Translate local factorize codes into positions in the sorted category lists."""
    out = np.empty((len(codes[columns[0]]), len(columns)), dtype=np.int64)
    for j, col in enumerate(columns):
        cats = np.asarray(categories[col], dtype=object)
        out[:, j] = np.searchsorted(cats, np.asarray(uniques[col], dtype=object))[codes[col]]
    return out


def validate_pair(internal: object, external: object) -> EncodedPair:
    """Check two tables for a joint estimator and encode them.

    Raises
    ------
    TypeError
        If either table is not a DataFrame.
    InvalidInputError
        If a table is empty, has missing values or duplicate columns; if the tables share no
        column; if a table has no column of its own; or if an overlap column has a category
        that only one table shows.
    """
    internal = check_table(internal, "internal")
    external = check_table(external, "external")
    overlap = tuple(c for c in internal.columns if c in set(external.columns))
    if not overlap:
        raise InvalidInputError(
            "the internal and external tables share no column, so nothing links them; "
            f"internal columns {list(internal.columns)}, external columns "
            f"{list(external.columns)}: give both tables at least one common (overlap) column"
        )
    internal_only = tuple(c for c in internal.columns if c not in overlap)
    external_only = tuple(c for c in external.columns if c not in overlap)
    for name, own in (("internal", internal_only), ("external", external_only)):
        if not own:
            raise InvalidInputError(
                f"the {name} table has no column of its own (all its columns {list(overlap)} "
                "are in the other table); it adds nothing to the joint: fit on the other "
                "table alone, or add the columns that only this table holds"
            )
    codes_int, uniq_int = _factorize(internal)
    codes_ext, uniq_ext = _factorize(external)
    _overlap_category_check(uniq_int, uniq_ext, overlap)
    categories = {c: tuple(sorted(uniq_int[c])) for c in internal_only}
    categories |= {c: tuple(sorted(uniq_ext[c])) for c in external_only}
    categories |= {c: tuple(sorted(uniq_int[c])) for c in overlap}
    return EncodedPair(
        columns=(*internal.columns, *external_only),
        overlap=overlap,
        internal_only=internal_only,
        external_only=external_only,
        categories={c: categories[c] for c in (*internal.columns, *external_only)},
        internal_codes=_global_codes(codes_int, uniq_int, (*overlap, *internal_only),
                                     categories),
        external_codes=_global_codes(codes_ext, uniq_ext, (*overlap, *external_only),
                                     categories),
    )


def unique_rows(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows of a non-negative int code matrix, in lexicographic order.

    Equivalent to ``np.unique(codes, axis=0, return_inverse=True, return_counts=True)`` but
    packs each row into one int64 (mixed radix) when that cannot overflow, which is much
    faster than NumPy's row-wise sort.

    Returns
    -------
    rows : ndarray, shape (u, d)
    inverse : ndarray, shape (n,)
        Index into ``rows`` of each input row.
    counts : ndarray, shape (u,)
    """
    sizes = codes.max(axis=0).astype(np.float64) + 1 if len(codes) else np.ones(codes.shape[1])
    if np.prod(sizes) >= 2.0**62:
        rows, inverse, counts = np.unique(codes, axis=0, return_inverse=True,
                                          return_counts=True)
        return rows, inverse.ravel(), counts
    radix = np.concatenate([np.cumprod(sizes[::-1])[::-1][1:], [1.0]]).astype(np.int64)
    packed = codes @ radix
    _, first, inverse, counts = np.unique(packed, return_index=True, return_inverse=True,
                                          return_counts=True)
    return codes[first], inverse.ravel(), counts


def check_n_and_seed(n: object, seed: object) -> None:
    """Reject a sample size that is not a positive int and a seed that is not an int."""
    if not is_int(n):
        raise InvalidInputError(f"n must be an int, got {type(n).__name__}")
    if n <= 0:
        raise InvalidInputError(f"n must be a positive number of rows to sample, got {n}")
    child(seed)  # raises InvalidInputError for anything but a seed
