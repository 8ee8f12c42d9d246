"""The papers' main conclusions, each decided by the claims that test what it states.

``conclusions.csv`` (beside this module) lists what each paper's abstract, contributions and
conclusion sections assert. Each row names two sets of claims (regular expressions over claim
ids of its seed file):

``key_claims`` (matched from the start of the id) minus ``exclude`` (searched anywhere in the id)
    the **key claims**: the claims that test what the statement says. Only they decide the
    verdict, and only those of kind ``result`` or ``theory`` (a setting echoed back, an
    implementation identity or an extension of ours never decides).
``claims`` (matched from the start)
    the claims **shown beside** the conclusion: every claim this pattern or the key pattern
    matches that is not a key claim (baselines' cells, run-to-run sds, settings, implementation
    identities, our extensions, statements the conclusion does not make). They are listed with
    it, never counted.

Rules, over the key claims that ran (verdict other than "not run"):

``all``
    differs if any claim differs; reproduced if every one is reproduced; not comparable if every
    one is not comparable; else inconclusive.
``most``
    reproduced if at least three quarters are reproduced; differs if more than a quarter differ;
    else inconclusive (for conclusions the paper itself states with exceptions, "on nearly all
    metrics").

**Partly decided.** A conclusion whose key claims did not all run cannot read "reproduced": it
reads what the key claims that ran say, except that "reproduced" on part of them becomes "not
run"; its reason starts "partly decided (k of n key claims)" and ``partly_decided`` is true. No
key claim run (or none registered): "not run".
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from fusionlib.compendium.verdicts import COUNTED_KINDS, VERDICTS
from fusionlib.errors import InvalidInputError

__all__ = ["CONCLUSIONS", "RULES", "CONCLUSION_COLUMNS", "VERDICT_COLUMNS", "load_conclusions",
           "aggregate", "key_and_shown", "conclusion_verdicts"]

CONCLUSIONS = Path(__file__).resolve().parent / "conclusions.csv"
RULES: tuple[str, ...] = ("all", "most")
CONCLUSION_COLUMNS: tuple[str, ...] = ("conclusion_id", "seed_file", "statement", "source",
                                       "claims", "key_claims", "exclude", "rule", "to_decide")
#: columns of :func:`conclusion_verdicts`: ``claims``, ``ran`` and ``claim_ids`` are about the
#: key claims; ``shown`` and ``shown_ids`` about the claims shown beside the conclusion
VERDICT_COLUMNS: tuple[str, ...] = (
    "conclusion_id", "seed_file", "statement", "source", "verdict", "reason", "claims", "ran",
    "partly_decided", "rule", "to_decide", "claim_ids", "shown", "shown_ids")


def _compile(path: object, cid: str, column: str, pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as err:
        raise InvalidInputError(
            f"{path}: {cid}: {column} pattern {pattern!r} is not a regular expression "
            f"({err})") from err


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
        for column in ("claims", "key_claims"):
            if not getattr(row, column).strip():
                what = "claims shown beside it" if column == "claims" else "key claims"
                raise InvalidInputError(f"{path}: {row.conclusion_id} names no {what} "
                                        f"(column {column})")
        for column in ("claims", "key_claims", "exclude"):
            _compile(path, row.conclusion_id, column, getattr(row, column))
    return table


def _on_ran(ran: list[str], rule: str) -> tuple[str, str]:
    n = len(ran)
    claims = "key claim" if n == 1 else "key claims"
    r, d = ran.count("reproduced"), ran.count("differs")
    nc = ran.count("not comparable")
    counts = f"{r} reproduced, {d} differ, {n - r - d - nc} inconclusive, {nc} not comparable"
    if rule == "all":
        if d:
            return "differs", f"{d} of {n} {claims} differ ({counts})"
        if r == n:
            return "reproduced", f"all {n} {claims} reproduced"
        if nc == n:
            return "not comparable", f"all {n} {claims} not comparable at this scale"
        return "inconclusive", f"no key claim differs, but not all are reproduced ({counts})"
    if r >= 0.75 * n:
        return "reproduced", f"{r} of {n} {claims} reproduced ({counts})"
    if d > 0.25 * n:
        return "differs", f"{d} of {n} {claims} differ ({counts})"
    if nc == n:
        return "not comparable", f"all {n} {claims} not comparable at this scale"
    return "inconclusive", counts


def aggregate(verdicts: list[str], rule: str) -> tuple[str, str]:
    """The verdict of a conclusion from its key claims' verdicts, and why.

    Decided on the key claims that ran; when some did not run the reason starts "partly
    decided (k of n key claims)" and a "reproduced" on the k becomes "not run" (the missing
    key claims could refute it)."""
    if rule not in RULES:
        raise InvalidInputError(f"rule {rule!r} unknown; allowed: {', '.join(RULES)}")
    bad = sorted(set(verdicts) - set(VERDICTS))
    if bad:
        raise InvalidInputError(f"unknown verdicts {bad}")
    ran = [v for v in verdicts if v != "not run"]
    if not ran:
        return "not run", ("no key claim was computed" if verdicts
                           else "no key claim is registered in this build")
    verdict, why = _on_ran(ran, rule)
    if len(ran) == len(verdicts):
        return verdict, why
    missing = len(verdicts) - len(ran)
    part = f"partly decided ({len(ran)} of {len(verdicts)} key claims)"
    if verdict == "reproduced":
        return "not run", (f"{part}: those that ran read reproduced ({why}), but {missing} "
                           f"key claim{'s' if missing > 1 else ''} did not run, so it cannot "
                           "read reproduced")
    return verdict, f"{part}: {why}; {missing} did not run"


def key_and_shown(conclusion: object, claims: pd.DataFrame
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The key claims of ``conclusion`` (a row of :func:`load_conclusions`: needs
    ``seed_file``, ``claims``, ``key_claims``, ``exclude``) among ``claims`` and the claims
    shown beside it (matched by either pattern, not key)."""
    get = conclusion.get if isinstance(conclusion, dict) else (
        lambda k, default=None: getattr(conclusion, k, default))
    if not len(claims):
        return claims, claims
    ids = claims["claim_id"]
    mine = claims["seed_file"] == get("seed_file")
    keyed = mine & ids.str.match(get("key_claims"))
    exclude = get("exclude", "") or ""
    if exclude:
        keyed &= ~ids.map(lambda i: re.search(exclude, i) is not None).astype(bool)
    key = keyed & claims["kind"].isin(COUNTED_KINDS)
    shown = mine & (ids.str.match(get("claims")) | keyed) & ~key
    return claims[key], claims[shown]


def conclusion_verdicts(conclusions: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """One row per conclusion (:data:`VERDICT_COLUMNS`): its verdict and reason from its key
    claims, how many key claims there are and how many ran, whether it is partly decided, the
    key claims' ids and the claims shown beside it."""
    rows = []
    for c in conclusions.itertuples():
        key, shown = key_and_shown(c, claims)
        verdicts = list(key["verdict"]) if len(key) else []
        verdict, reason = aggregate(verdicts, c.rule)
        ran = sum(v != "not run" for v in verdicts)
        rows.append({"conclusion_id": c.conclusion_id, "seed_file": c.seed_file,
                     "statement": c.statement, "source": c.source, "verdict": verdict,
                     "reason": reason, "claims": len(verdicts), "ran": ran,
                     "partly_decided": 0 < ran < len(verdicts),
                     "rule": c.rule, "to_decide": c.to_decide,
                     "claim_ids": " ".join(key["claim_id"]) if len(key) else "",
                     "shown": len(shown),
                     "shown_ids": " ".join(shown["claim_id"]) if len(shown) else ""})
    return pd.DataFrame(rows, columns=list(VERDICT_COLUMNS))
