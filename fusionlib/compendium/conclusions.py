"""The papers' main conclusions, each with a verdict aggregated from the claims that bear on it.

``conclusions.csv`` (beside this module) lists what each paper's abstract, contributions and
conclusion sections assert. Each row names the claims that bear on it (a regular expression over
claim ids, matched from the start), a rule that aggregates their verdicts, and what it would
take to decide it where this build cannot. Only claims of kind ``result`` or ``theory`` bear on a
conclusion (settings echoed back and our extensions do not).

Rules, over the bearing claims that ran (verdict other than "not run"):

``all``
    differs if any claim differs; reproduced if every one is reproduced; not comparable if every
    one is not comparable; else inconclusive.
``most``
    reproduced if at least three quarters are reproduced; differs if more than a quarter differ;
    else inconclusive (for conclusions the paper itself states with exceptions, "on nearly all
    metrics").

No bearing claim ran: "not run". The verdict is on what ran: the ``ran`` column says how many of
the bearing claims ran, so a conclusion reproduced on one of three data sets says so.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from fusionlib.compendium.verdicts import COUNTED_KINDS, VERDICTS
from fusionlib.errors import InvalidInputError

__all__ = ["CONCLUSIONS", "RULES", "CONCLUSION_COLUMNS", "load_conclusions", "aggregate",
           "conclusion_verdicts"]

CONCLUSIONS = Path(__file__).resolve().parent / "conclusions.csv"
RULES: tuple[str, ...] = ("all", "most")
CONCLUSION_COLUMNS: tuple[str, ...] = ("conclusion_id", "seed_file", "statement", "source",
                                       "claims", "rule", "to_decide")


def load_conclusions(path: str | Path = CONCLUSIONS) -> pd.DataFrame:
    """The conclusions table, validated (columns, rules, ids, patterns)."""
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except pd.errors.ParserError as err:
        raise InvalidInputError(f"{path}: not a valid CSV ({err}); quote fields that hold "
                                "commas") from err
    if tuple(table.columns) != CONCLUSION_COLUMNS:
        raise InvalidInputError(f"{path}: columns {list(table.columns)}; expected "
                                f"{list(CONCLUSION_COLUMNS)}")
    bad = sorted(set(table["rule"]) - set(RULES))
    if bad:
        raise InvalidInputError(f"{path}: unknown rule {bad}; allowed: {list(RULES)}")
    if table["conclusion_id"].duplicated().any():
        dup = sorted(set(table.loc[table["conclusion_id"].duplicated(), "conclusion_id"]))
        raise InvalidInputError(f"{path}: repeated conclusion_id {dup}")
    for row in table.itertuples():
        if not row.claims.strip():
            raise InvalidInputError(f"{path}: {row.conclusion_id} names no claims")
        try:
            re.compile(row.claims)
        except re.error as err:
            raise InvalidInputError(
                f"{path}: {row.conclusion_id}: claims pattern {row.claims!r} is not a regular "
                f"expression ({err})") from err
    return table


def aggregate(verdicts: list[str], rule: str) -> tuple[str, str]:
    """The verdict of a conclusion from its bearing claims' verdicts, and why."""
    if rule not in RULES:
        raise InvalidInputError(f"rule {rule!r} unknown; allowed: {', '.join(RULES)}")
    bad = sorted(set(verdicts) - set(VERDICTS))
    if bad:
        raise InvalidInputError(f"unknown verdicts {bad}")
    ran = [v for v in verdicts if v != "not run"]
    if not ran:
        return "not run", ("no bearing claim was computed" if verdicts
                           else "no claim bears on it yet")
    n = len(ran)
    r, d = ran.count("reproduced"), ran.count("differs")
    nc = ran.count("not comparable")
    counts = f"{r} reproduced, {d} differ, {n - r - d - nc} inconclusive, {nc} not comparable"
    if rule == "all":
        if d:
            return "differs", f"{d} of {n} claims differ ({counts})"
        if r == n:
            return "reproduced", f"all {n} claims reproduced"
        if nc == n:
            return "not comparable", f"all {n} claims not comparable at this scale"
        return "inconclusive", f"no claim differs, but not all are reproduced ({counts})"
    if r >= 0.75 * n:
        return "reproduced", f"{r} of {n} claims reproduced ({counts})"
    if d > 0.25 * n:
        return "differs", f"{d} of {n} claims differ ({counts})"
    if nc == n:
        return "not comparable", f"all {n} claims not comparable at this scale"
    return "inconclusive", counts


def conclusion_verdicts(conclusions: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """One row per conclusion: its verdict, reason, the bearing claims and how many ran."""
    rows = []
    counted = claims[claims["kind"].isin(COUNTED_KINDS)] if len(claims) else claims
    for c in conclusions.itertuples():
        mine = counted[(counted["seed_file"] == c.seed_file)
                       & counted["claim_id"].str.match(c.claims)] if len(counted) else counted
        verdicts = list(mine["verdict"]) if len(mine) else []
        verdict, reason = aggregate(verdicts, c.rule)
        ran = sum(v != "not run" for v in verdicts)
        rows.append({"conclusion_id": c.conclusion_id, "seed_file": c.seed_file,
                     "statement": c.statement, "source": c.source, "verdict": verdict,
                     "reason": reason, "claims": len(verdicts), "ran": ran,
                     "rule": c.rule, "to_decide": c.to_decide,
                     "claim_ids": " ".join(mine["claim_id"]) if len(mine) else ""})
    return pd.DataFrame(rows, columns=["conclusion_id", "seed_file", "statement", "source",
                                       "verdict", "reason", "claims", "ran", "rule",
                                       "to_decide", "claim_ids"])
