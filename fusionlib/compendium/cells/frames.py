"""Data frames as JSON for shard files (full float precision, NaN and infinities kept), and
the same rule for the free-form ``meta`` and ``figures`` of a shard (valid JSON: no bare
``NaN`` / ``Infinity`` tokens).

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

__all__ = ["frame_to_json", "frame_from_json", "json_default", "json_safe", "json_restore"]


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
_FRAME_KEYS = {"columns", "dtypes", "data"}


def _non_finite(value: float) -> Any:
    return None if math.isnan(value) else ("inf" if value > 0 else "-inf")


def json_safe(obj: Any) -> Any:
    """``obj`` (a shard's ``meta`` or ``figures``) with arrays, tensors and numpy scalars as
    plain lists and numbers, frames as :func:`frame_to_json`, and every non-finite float as in
    frames: NaN as ``null``, infinities as ``"inf"`` / ``"-inf"``; :func:`json_restore` reads
    it back."""
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v) for v in obj]
    if isinstance(obj, pd.DataFrame):
        return frame_to_json(obj)
    if hasattr(obj, "tolist") and not isinstance(obj, str | bytes):
        return json_safe(obj.tolist())
    if isinstance(obj, float) and not math.isfinite(obj):
        return _non_finite(obj)
    return obj


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def json_restore(obj: Any) -> Any:
    """The ``meta`` or ``figures`` read from a shard, as :func:`json_safe` wrote them: in a list
    of numbers (with at least one number or infinity), ``null`` is NaN again and ``"inf"`` /
    ``"-inf"`` are infinities; elsewhere ``null`` stays ``None``. Shards written before (bare
    ``NaN`` tokens) read back the same. Frames inside (``frame_to_json``) are left to
    :func:`frame_from_json`."""
    if isinstance(obj, dict):
        if set(obj) == _FRAME_KEYS:
            return obj
        return {k: json_restore(v) for k, v in obj.items()}
    if isinstance(obj, float) and not math.isfinite(obj):
        return _non_finite(obj)
    if not isinstance(obj, list):
        return obj
    items = [json_restore(v) for v in obj]
    numeric = all(v is None or _is_number(v) or (isinstance(v, str) and v in _INFINITIES)
                  for v in items)
    if numeric and any(v is not None for v in items):
        return [math.nan if v is None else _INFINITIES.get(v, v) if isinstance(v, str) else v
                for v in items]
    return items
