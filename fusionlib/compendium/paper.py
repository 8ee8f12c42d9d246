"""The papers' tables as data, side by side with ours, and registered as claims.

Each published table that a chapter checks is a CSV file under
``fusionlib/compendium/paper_tables/<seed>/table<N>.csv`` (``section<X>.csv`` for seed
000, whose appendix numbers sections, not tables), typed once from the seed text, with a
header of ``# key: value`` lines naming the seed and the table. :func:`paper_table` loads it,
:func:`side_by_side` puts it beside our results, :func:`register_table` turns every cell into a
scorecard claim and :func:`tally` counts verdicts for the prose.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from fusionlib.compendium.verdicts import Estimate
from fusionlib.errors import InvalidInputError

__all__ = ["PAPER_TABLES", "paper_table", "paper_table_info", "side_by_side",
           "register_table", "tally"]

PAPER_TABLES = Path(__file__).resolve().parent / "paper_tables"


def _path(seed_file: str, table: str) -> Path:
    m = re.fullmatch(r"(Table|Section) ([0-9A-Z]+)", table)
    if m is None:
        raise InvalidInputError(
            f"table must look like 'Table 7' (or 'Section C' for seed 000), got {table!r}")
    path = PAPER_TABLES / seed_file / f"{m[1].lower()}{m[2].lower()}.csv"
    if not path.is_file():
        have = sorted(p.relative_to(PAPER_TABLES).as_posix()
                      for p in PAPER_TABLES.glob("*/*.csv"))
        raise InvalidInputError(
            f"no paper table {table!r} for seed {seed_file!r} ({path}); available: {have}")
    return path


def paper_table_info(seed_file: str, table: str) -> dict[str, str]:
    """The ``# key: value`` header of a paper table (seed, table, what, ...)."""
    info = {}
    for line in _path(seed_file, table).read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        key, _, value = line[1:].partition(":")
        info[key.strip()] = value.strip()
    return info


def paper_table(seed_file: str, table: str) -> pd.DataFrame:
    """Load a paper table: text columns stay strings (an empty key such as a baseline's overlap
    stays ``""``), columns whose every non-empty cell is a number become floats with ``nan``
    where the paper prints nothing."""
    text = _path(seed_file, table).read_text(encoding="utf-8")
    body = "\n".join(ln for ln in text.splitlines() if not ln.startswith("#"))
    frame = pd.read_csv(io.StringIO(body), dtype=str, keep_default_na=False)
    for col in frame.columns:
        values = frame[col].replace("", np.nan)
        numeric = pd.to_numeric(values, errors="coerce")
        if numeric.notna().sum() == values.notna().sum() and values.notna().any():
            frame[col] = numeric.astype(float)
    return frame


def side_by_side(paper: pd.DataFrame, ours: pd.DataFrame, keys: Sequence[str],
                 metrics: Sequence[str]) -> pd.DataFrame:
    """The paper's rows with ``"<metric> paper"`` and ``"<metric> ours"`` columns side by side.

    Rows follow ``paper``; ours are matched on ``keys`` (a missing match gives ``nan`` and the
    status "not run"). The ``status``, ``reason`` and ``scale`` columns of ``ours`` are carried
    when present (``scale``: the scale of the cells a row of ours was computed from, when a
    chapter mixes scales; :func:`register_table` labels its claims with it).
    """
    missing = [k for k in (*keys, *metrics) if k not in paper.columns or k not in ours.columns]
    if missing:
        raise InvalidInputError(f"columns {missing} missing from the paper or our table")
    extra = [c for c in ("status", "reason", "scale") if c in ours.columns]
    merged = paper[[*keys, *metrics]].merge(
        ours[[*keys, *metrics, *extra]], on=list(keys), how="left", suffixes=(" paper", " ours"))
    if "status" in merged:
        merged["status"] = merged["status"].fillna("not run")
        merged["reason"] = merged["reason"].fillna("no matching row in our results")
    order = [*keys] + [f"{m} {w}" for m in metrics for w in ("paper", "ours")] + extra
    return merged[order]


def register_table(run: object, table: pd.DataFrame, *, seed_file: str, tag: str, where: str,
                   metrics: Sequence[str], tolerance: Mapping[str, float] | Callable,
                   keys: Sequence[str] = ("method", "overlap"), group: str = "dataset",
                   why: Callable[[dict, str], str] | None = None,
                   not_comparable: Callable[[dict, str], str | None] | None = None,
                   estimates: Callable[[dict, str], tuple[Estimate, Estimate]] | None = None,
                   kind: str = "result", exact: str | None = None) -> pd.DataFrame:
    """One claim per (row, metric) of a :func:`side_by_side` table; empty paper cells skipped.

    ``tolerance`` maps a metric to its tolerance, or is ``f(row, metric) -> float``; ``why(row,
    metric)`` gives the known cause of a difference (added to the reason). Rows whose ``status``
    is not "run" become "not run" claims with their ``reason``; cells for which
    ``not_comparable(row, metric)`` returns a reason become "not comparable" (the protocol at
    this scale changes the quantity, or a setting of this scale biases the metric, so a verdict
    would rest on it). ``estimates(row, metric)`` returns the paper's and our
    :class:`~fusionlib.compendium.verdicts.Estimate` (value, standard error, repetitions);
    without it our cells are bare numbers, which a result table must declare exact with
    ``exact="<why they have no sampling error>"``
    (:func:`~fusionlib.compendium.claims.make_claim`). Returns one row per claim:
    ``group``, the keys, ``metric`` and ``verdict``.
    """
    verdicts = []
    for r in table.to_dict("records"):
        name = "-".join(str(r[k]) for k in keys if r.get(k))
        for m in metrics:
            paper_v, ours_v = r[f"{m} paper"], r[f"{m} ours"]
            if pd.isna(paper_v):
                continue
            not_run, tol, biased = None, None, None
            if r.get("status", "run") != "run":
                not_run = r.get("reason") or "not run at this scale"
            else:
                biased = not_comparable(r, m) if not_comparable is not None else None
                tol = float(tolerance(r, m) if callable(tolerance) else tolerance[m])
                if not np.isfinite(tol):
                    not_run, tol = "no tolerance at this scale (its noise floor is undefined)", None
            paper_e, ours_e = (estimates(r, m) if estimates is not None and not_run is None
                               else (float(paper_v), ours_v))
            claim_id = re.sub(r"[^A-Za-z0-9.-]+", "_", f"{seed_file}-{tag}-{r[group]}-{name}-{m}")
            c = run.claim(claim_id.strip("_"), seed_file, where, f"{r[group]}, {name}: {m}",
                          paper_e, ours_e, kind=kind,
                          tolerance=None if tol is None else round(tol, 5), not_run=not_run,
                          not_comparable=biased or None,
                          why=why(r, m) if why is not None else "",
                          **({} if exact is None else {"exact": exact}),
                          **({"scale": r["scale"]} if isinstance(r.get("scale"), str)
                             and r["scale"] else {}))
            verdicts.append({group: r[group], **{k: r[k] for k in keys}, "metric": m,
                             "verdict": c.verdict})
    return pd.DataFrame(verdicts, columns=[group, *keys, "metric", "verdict"])


def tally(verdicts: pd.DataFrame, **where: object) -> str:
    """``"r of n"``: reproduced claims among the verdict rows matching ``where`` (column=values)."""
    sub = verdicts
    for col, values in where.items():
        sub = sub[sub[col].isin(values if isinstance(values, list) else [values])]
    return f"{int((sub['verdict'] == 'reproduced').sum())} of {len(sub)}"
