"""Targets of the calibration of synthetic records (:mod:`fusionlib.fusion.calibration`):
parsing the ``{"counts": ..., "totals": ...}`` mapping into linear constraints
``sum_i w_i x_ij = T_j``, checking them, and the residual table."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fusionlib.errors import InvalidInputError

__all__ = ["Target", "parse_targets", "check_margins", "target_errors", "residual_table"]


@dataclass(frozen=True)
class Target:
    kind: str  # "count" or "total"
    column: str
    group: str
    value: float
    x: np.ndarray  # (n,) the record's contribution x_ij
    mask: np.ndarray  # (n,) bool: records the target constrains


def _match(records: pd.DataFrame, column: str, value: object) -> np.ndarray:
    col = records[column]
    if pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col.dtype):
        try:
            return (col.to_numpy(dtype=np.float64) == float(value)).astype(bool)
        except (TypeError, ValueError):
            return np.zeros(len(col), dtype=bool)
    return (col.astype(str) == str(value)).to_numpy()


def _column(records: pd.DataFrame, column: object, numeric: bool) -> pd.Series:
    if column not in records.columns:
        raise InvalidInputError(f"target column {column!r} is not a column of the records; "
                                f"columns: {list(records.columns)}")
    col = records[column]
    if numeric and (not pd.api.types.is_numeric_dtype(col.dtype)
                    or pd.api.types.is_bool_dtype(col.dtype)):
        raise InvalidInputError(f"totals need a numeric column; {column!r} has dtype {col.dtype}")
    if col.isna().any():
        raise InvalidInputError(f"column {column!r} has {int(col.isna().sum())} missing "
                                "value(s); drop or impute those records before calibrating")
    if numeric and not np.isfinite(col.to_numpy(dtype=np.float64)).all():
        raise InvalidInputError(f"column {column!r} has infinite values")
    return col


def _group_mask(records: pd.DataFrame, group: object) -> np.ndarray:
    if not isinstance(group, str) or not group.strip():
        raise InvalidInputError(f"a group must be 'all' or 'column=value[&column=value]', "
                                f"got {group!r}")
    mask = np.ones(len(records), dtype=bool)
    if group.strip() == "all":
        return mask
    for cond in group.split("&"):
        column, sep, value = (s.strip() for s in cond.partition("="))
        if not sep or not column:
            raise InvalidInputError(f"group {group!r}: condition {cond!r} is not 'column=value'")
        _column(records, column, numeric=False)
        mask &= _match(records, column, value)
    return mask


def _number(what: str, value: object) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{what} must be a number, got {value!r}") from None
    if not math.isfinite(v):
        raise InvalidInputError(f"{what} must be finite, got {value!r}")
    return v


def parse_targets(records: pd.DataFrame, targets: object, method: str) -> list[Target]:
    if not isinstance(targets, Mapping) or not targets or set(targets) - {"counts", "totals"}:
        raise InvalidInputError(
            "targets must be a mapping with keys 'counts' and/or 'totals', e.g. {'counts': "
            "{'sex': {'F': 510, 'M': 490}}, 'totals': {'income': {'sex=F': 2e7, 'all': 5e7}}}; "
            f"got {targets!r:.200}")
    out: list[Target] = []
    for column, cats in (targets.get("counts") or {}).items():
        col = _column(records, column, numeric=False)
        if not isinstance(cats, Mapping) or not cats:
            raise InvalidInputError(f"counts[{column!r}] must map categories to counts")
        seen = np.zeros(len(records), dtype=bool)
        for cat, value in cats.items():
            v = _number(f"the count of {column}={cat!r}", value)
            mask = _match(records, column, cat)
            if (mask & seen).any():
                raise InvalidInputError(f"category {cat!r} of {column!r} is given twice (e.g. "
                                        "as 1 and '1'); give each category once")
            seen |= mask
            if v < 0 or (v == 0 and method == "raking"):
                raise InvalidInputError(
                    f"the count of {column}={cat!r} is {v:g}; counts must be > 0 for raking "
                    "(positive weights cannot sum to 0) and >= 0 for linear calibration")
            if not mask.any():
                raise InvalidInputError(
                    f"infeasible target: no record has {column}={cat!r} (values present: "
                    f"{sorted(map(str, col.unique()))[:20]}), so no weights reach its count "
                    f"{v:g}; drop that target or generate records of that category")
            out.append(Target("count", str(column), f"{column}={cat}", v, mask * 1.0, mask))
    for column, groups in (targets.get("totals") or {}).items():
        y = _column(records, column, numeric=True).to_numpy(dtype=np.float64)
        if not isinstance(groups, Mapping) or not groups:
            raise InvalidInputError(f"totals[{column!r}] must map groups to totals")
        for group, value in groups.items():
            v = _number(f"the total of {column} over {group!r}", value)
            mask = _group_mask(records, group)
            if not mask.any():
                raise InvalidInputError(f"infeasible target: no record is in group {group!r} "
                                        f"(total of {column!r}); drop that target")
            yg = y[mask]
            pos, neg = bool((yg > 0).any()), bool((yg < 0).any())
            if method == "raking" and not (v > 0 and pos or v < 0 and neg or v == 0 and pos == neg):
                raise InvalidInputError(
                    f"infeasible target: the total of {column!r} over {group!r} is {v:g} but "
                    f"the records there have values in [{yg.min():g}, {yg.max():g}]; positive "
                    "weights cannot reach it (use method='linear' or check the target's sign)")
            out.append(Target("total", str(column), str(group), v, np.where(mask, y, 0.0), mask))
    if not out:
        raise InvalidInputError("targets contain no count and no total")
    return out


def check_margins(records: pd.DataFrame, targets: list[Target], tol: float) -> float | None:
    """Population size N implied by complete count margins; they must agree."""
    sizes: dict[str, float] = {}
    for column in dict.fromkeys(t.column for t in targets if t.kind == "count"):
        ts = [t for t in targets if t.kind == "count" and t.column == column]
        if np.logical_or.reduce([t.mask for t in ts]).all():
            sizes[column] = sum(t.value for t in ts)
    if sizes and max(sizes.values()) - min(sizes.values()) > tol * max(sizes.values()):
        raise InvalidInputError(f"the complete count margins imply different population sizes "
                                f"{sizes}; make them sum to the same total")
    return next(iter(sizes.values()), None)


def target_errors(targets: list[Target], w: np.ndarray) -> np.ndarray:
    got = np.array([t.x @ w for t in targets])
    want = np.array([t.value for t in targets])
    return (got - want) / np.where(want == 0, 1.0, np.abs(want))


def residual_table(targets: list[Target], w: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({
        "kind": [t.kind for t in targets], "column": [t.column for t in targets],
        "group": [t.group for t in targets], "target": [t.value for t in targets],
        "achieved": [float(t.x @ w) for t in targets], "rel_error": target_errors(targets, w)})

