"""Input checks shared by the matcher and the bounds: two sources, an overlap, no NaN.

Every check raises :class:`~fusionlib.errors.InvalidInputError` with a message naming the
problem and the fix (seed 002's two-table setting and R StatMatch's requirements).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from fusionlib.data.sources import SourceSet, as_source_set
from fusionlib.errors import InvalidInputError

__all__ = ["check_pair", "check_no_nan", "check_shared_categories", "is_categorical",
           "resolve_roles"]


def is_categorical(series: pd.Series) -> bool:
    """True for columns matched exactly (donation classes): not numeric, or boolean."""
    return bool(pd.api.types.is_bool_dtype(series)
                or not pd.api.types.is_numeric_dtype(series))


def check_no_nan(sources: SourceSet) -> None:
    """Raise if any table holds a missing value (NaN, None, NaT)."""
    for name in sources:
        df = sources[name]
        bad = [c for c in df.columns if df[c].isna().any()]
        if bad:
            raise InvalidInputError(
                f"source {name!r} has missing values in column(s) {bad[:5]}; hot-deck matching "
                "needs complete tables: drop or impute those rows first")


def check_pair(sources: object) -> SourceSet:
    """Coerce to a :class:`SourceSet` of exactly two tables that share a column, without NaN."""
    src = as_source_set(sources).require(2)
    a, b = src.names
    if not src.overlap(a, b):
        raise InvalidInputError(
            f"sources {a!r} and {b!r} share no column, so nothing links a recipient to a donor "
            "(matching needs at least one overlap variable observed in both tables); add a "
            "shared column, e.g. a common demographic, to both")
    check_no_nan(src)
    return src


def resolve_roles(src: SourceSet, recipient: str | None, donor: str | None
                  ) -> tuple[str, str]:
    """The (recipient, donor) names: defaults are the first and the second source."""
    names = src.names
    rec = names[0] if recipient is None else recipient
    don = ([n for n in names if n != rec] or [None])[0] if donor is None else donor
    for role, value in (("recipient", rec), ("donor", don)):
        if value not in names:
            raise InvalidInputError(
                f"{role} {value!r} is not a source; allowed values are {list(names)}")
    if rec == don:
        raise InvalidInputError(
            f"recipient and donor are both {rec!r}; name two different sources {list(names)}")
    return rec, don


def check_shared_categories(a: pd.DataFrame, b: pd.DataFrame, columns: Sequence[str],
                            names: tuple[str, str]) -> None:
    """Raise if a category of a class column occurs in one source only."""
    for col in columns:
        va, vb = set(a[col].unique()), set(b[col].unique())
        only_a, only_b = sorted(map(str, va - vb)), sorted(map(str, vb - va))
        if only_a or only_b:
            where = "; ".join(f"{sorted_vals[:5]} only in {n!r}" for n, sorted_vals in
                              ((names[0], only_a), (names[1], only_b)) if sorted_vals)
            raise InvalidInputError(
                f"overlap column {col!r} has categories present in one source only ({where}); "
                "harmonise the coding of both tables (merge or recode those categories) or drop "
                "those rows before matching")


def numeric_matrix(df: pd.DataFrame, columns: Sequence[str], name: str) -> np.ndarray:
    """The columns as a float array (they must be numeric)."""
    try:
        return df[list(columns)].to_numpy(dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError(
            f"match_on columns {list(columns)} of source {name!r} must be numeric; put "
            "categorical overlap columns in donation_classes instead") from None
