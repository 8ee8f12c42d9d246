"""Data frames as JSON for shard files (full float precision, NaN and infinities kept).

Part of the cell machinery; left out of every code key.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import math
from pathlib import Path
from typing import Any

import pandas as pd

from fusionlib.errors import InvalidInputError

__all__ = ["frame_to_json", "frame_from_json", "json_default"]


def _json_default(obj: Any) -> Any:
    # numpy arrays and scalars, paths, frames inside figure data
    if isinstance(obj, pd.DataFrame):
        return frame_to_json(obj)
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"cannot write {type(obj).__name__} to a shard; use JSON-able figure data")


def _plain(value: Any) -> Any:
    if value is None or value is pd.NaT:
        return None
    if hasattr(value, "item") and not isinstance(value, list | dict | str):
        value = value.item()  # numpy / pandas scalars
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, pd.Timestamp | _dt.datetime | _dt.date):
        return value.isoformat()
    return value


def frame_to_json(df: pd.DataFrame) -> dict[str, Any]:
    """A JSON-able dict of ``df`` (columns, dtypes, rows as lists; the index is dropped).

    Floats keep full precision (``repr``); NaN becomes ``null``; infinities become the strings
    ``"inf"`` / ``"-inf"`` in float columns. :func:`frame_from_json` reverses it.
    """
    if not isinstance(df, pd.DataFrame):
        raise InvalidInputError(f"expected a DataFrame, got {type(df).__name__}")
    if df.columns.has_duplicates:
        raise InvalidInputError(f"a shard frame needs unique column names, got {list(df.columns)}")
    cols = [str(c) for c in df.columns]
    data = [[_plain(v) for v in row] for row in df.itertuples(index=False, name=None)]
    return {"columns": cols, "dtypes": [str(t) for t in df.dtypes], "data": data}


_INFINITIES = {"inf": math.inf, "-inf": -math.inf}


def frame_from_json(obj: dict[str, Any]) -> pd.DataFrame:
    """The frame written by :func:`frame_to_json`."""
    cols, dtypes, data = obj["columns"], obj["dtypes"], obj["data"]
    if len(cols) != len(dtypes) or any(len(r) != len(cols) for r in data):
        raise ValueError("frame JSON: columns, dtypes and rows disagree")
    df = pd.DataFrame(data, columns=cols, dtype=object) if data else pd.DataFrame(
        {c: pd.Series([], dtype=object) for c in cols})
    for c, t in zip(cols, dtypes, strict=True):
        if t.startswith(("float", "Float")):
            df[c] = pd.to_numeric(df[c].map(_INFINITIES.get, na_action=None).where(
                df[c].isin(list(_INFINITIES)), df[c]), errors="raise").astype(t)
        elif t != "object":
            with contextlib.suppress(TypeError, ValueError):
                df[c] = df[c].astype(t)
    return df


json_default = _json_default
