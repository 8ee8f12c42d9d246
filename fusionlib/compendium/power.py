"""Power of the claims: would a planted fault have changed the verdict?

A verdict is evidence only if it could have come out the other way. For every counted claim
(kind ``result`` or ``theory``) this module re-decides the claim from the numbers in its row of
the claims table, once as recorded and once with a **planted fault**, and says whether the
verdict changes:

* a comparison with the paper's value (the TOST rule of
  :func:`~fusionlib.compendium.verdicts.compare`): the paper's value doubled (a wrong constant;
  a paper value of 0 moves by three tolerances instead);
* a direction (:func:`~fusionlib.compendium.verdicts.direction`, "A below B"): our estimate
  negated, i.e. the two methods' labels swapped;
* a claim decided over the readings of an unstated choice
  (:func:`~fusionlib.compendium.verdicts.across_readings`): the two methods swapped under every
  reading (each reading's "reproduced" and "differs" exchanged);
* a claim decided by its own rule (``decision=``, e.g. a theory check with a certified bound):
  the chapter names its fault and a test asserts that it flips (``faults``: claim id -> the
  fault's text, e.g. :func:`fusionlib.ptgan.theory.planted.planted_faults`).

Every paper package keeps a registry of its theory claims' faults (``planted.py`` beside the
chapter's code, each with a ``planted_faults()`` table); :class:`Planted` is the entry they
share, :class:`Registry` the lookups every such module exposes (by claim id, the theory ids, a
claim's context, the table), :func:`planted_table` the table, and :func:`fault_texts` joins the
tables for :func:`claim_power` (this module imports no paper package: the notebook hands the
tables in).

The re-decision ignores the smoke scale's blanket "not comparable" (it asks whether the rule
has power on these numbers), so at ``smoke`` the count checks the mechanism, not the papers.
Claims without a computable fault (stated verdicts, binomial counts, text values, claims that
did not run) are counted as "no planted fault".
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import pandas as pd

from fusionlib.compendium.verdicts import (
    COUNTED_KINDS,
    VERDICTS,
    Decision,
    Estimate,
    across_readings,
    compare,
    direction,
)
from fusionlib.errors import InvalidInputError

__all__ = ["POWER_COLUMNS", "PLANTED_COLUMNS", "Planted", "Registry", "claim_power",
           "fault_texts", "planted_context", "planted_table", "power_summary"]

POWER_COLUMNS: tuple[str, ...] = ("claim_id", "rule", "fault", "verdict", "faulted", "flips")
#: the columns of every registry's ``planted_faults()`` table
PLANTED_COLUMNS: tuple[str, ...] = ("claim_id", "kind", "hypothesis", "instance", "fault")


@dataclass(frozen=True)
class Planted:
    """One claim of a chapter and its planted fault.

    ``kind`` is ``"theory"`` (counted; ``honest`` and ``faulted`` build the two decisions of its
    planted-fault test: the claim's rule on an instance where the statement holds, and on one
    where its hypothesis is broken or its constant is off) or ``"implementation"`` (shown, never
    counted; ``fault`` says why no honest fault could flip it, and both callables are ``None``).
    """

    claim_id: str
    kind: str
    hypothesis: str
    instance: str
    fault: str
    honest: Callable[[], Decision] | None = None
    faulted: Callable[[], Decision] | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("theory", "implementation"):
            raise InvalidInputError(f"{self.claim_id}: kind must be 'theory' or "
                                    f"'implementation', got {self.kind!r}")
        builds = (self.honest is not None, self.faulted is not None)
        if builds != ((self.kind == "theory"),) * 2:
            raise InvalidInputError(f"{self.claim_id}: a theory entry needs honest and faulted "
                                    "builders, an implementation entry neither")


def _refuse_duplicates(ids: Iterable[str]) -> None:
    """An error naming every claim id that occurs more than once."""
    dup = sorted(cid for cid, n in Counter(ids).items() if n > 1)
    if dup:
        raise InvalidInputError(f"claim ids entered twice: {', '.join(dup)}")


def planted_table(entries: Iterable[Planted]) -> pd.DataFrame:
    """One row per entry with :data:`PLANTED_COLUMNS` (duplicate claim ids are an error)."""
    rows = [{c: getattr(p, c) for c in PLANTED_COLUMNS} for p in entries]
    _refuse_duplicates(row["claim_id"] for row in rows)
    return pd.DataFrame(rows, columns=list(PLANTED_COLUMNS))


def planted_context(entry: Planted) -> str:
    """The text a claim's reason carries: its hypothesis, instance and planted fault (theory),
    or why it is an implementation check."""
    if entry.kind == "theory":
        return (f"hypothesis: {entry.hypothesis}; instance: {entry.instance}; planted fault it "
                f"catches: {entry.fault}")
    return f"implementation check ({entry.hypothesis}): {entry.fault}"


class Registry:
    """The planted-fault registry of one chapter: its entries, in order, and the lookups every
    ``planted.py`` module exposes (``PLANTED``, ``planted``, ``theory_ids``, ``context``,
    ``planted_faults``).

    Every entry must be a :class:`Planted`, and a claim id entered twice is an error.
    """

    def __init__(self, entries: Iterable[Planted]) -> None:
        self.entries: tuple[Planted, ...] = tuple(entries)
        wrong = [e for e in self.entries if not isinstance(e, Planted)]
        if wrong:
            raise InvalidInputError(f"a registry holds Planted entries, got "
                                    f"{type(wrong[0]).__name__}")
        _refuse_duplicates(p.claim_id for p in self.entries)
        #: claim id -> its entry, in the order of :attr:`entries`
        self.by_id: dict[str, Planted] = {p.claim_id: p for p in self.entries}

    def __repr__(self) -> str:
        return f"Registry({len(self.entries)} entries, {len(self.theory_ids())} theory)"

    def get(self, claim_id: str) -> Planted:
        """The entry of ``claim_id`` (an error naming the known ids when absent)."""
        if claim_id not in self.by_id:
            raise InvalidInputError(f"no planted-fault entry for {claim_id!r}; known: "
                                    f"{', '.join(self.by_id)}")
        return self.by_id[claim_id]

    def theory_ids(self) -> list[str]:
        """The claim ids counted as theory (each with a planted fault), in entry order."""
        return [p.claim_id for p in self.entries if p.kind == "theory"]

    def context(self, claim_id: str) -> str:
        """:func:`planted_context` of ``claim_id``'s entry, for the claim's reason."""
        return planted_context(self.get(claim_id))

    def table(self) -> pd.DataFrame:
        """:func:`planted_table` of the entries: one row per claim, :data:`PLANTED_COLUMNS`."""
        return planted_table(self.entries)


def fault_texts(*tables: pd.DataFrame) -> dict[str, str]:
    """Claim id -> fault text of the ``theory`` rows of every registry table (the ``faults``
    of :func:`claim_power`); implementation rows are left out (they name why none flips
    them). A claim id in two registries is an error."""
    out: dict[str, str] = {}
    for table in tables:
        theory = table[table["kind"] == "theory"]
        for cid, text in zip(theory["claim_id"], theory["fault"], strict=True):
            if cid in out:
                raise InvalidInputError(f"claim {cid!r} has a planted fault in two registries")
            out[str(cid)] = str(text)
    return out


def _num(value: object) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def _estimate(value: float, se: object, n: object) -> Estimate:
    s, k = _num(se), _num(n)
    k = int(k) if k is not None and k >= 1 else None
    if s is None:
        return Estimate(value, None, n=k)
    if s == 0 and (k is None or k <= 1):
        return Estimate(value, 0.0, exact=True)
    return Estimate(value, s, n=k)


def _expect(row: Mapping) -> str | None:
    """The sign a direction claim expects: from the paper's number, or '< 0' / '> 0' text."""
    p = _num(row.get("paper"))
    if p is not None and p != 0:
        return "<0" if p < 0 else ">0"
    text = f"{row.get('paper', '')} {row.get('quantity', '')}".replace(" ", "")
    if "<0" in text:
        return "<0"
    if ">0" in text:
        return ">0"
    return None


#: how :func:`~fusionlib.compendium.verdicts.across_readings` names its test
READINGS_TEST = "the verdicts under "
_SWAP = {"reproduced": "differs", "differs": "reproduced"}


def parse_readings(text: object) -> list[tuple[str, str]] | None:
    """``"reading a: differs; reading b: not run"`` (the ``ours`` of a claim decided by
    :func:`~fusionlib.compendium.verdicts.across_readings`) -> ``[(reading, verdict), ...]``;
    None when the text is not such a list."""
    pairs = []
    for part in str(text).split("; "):
        name, sep, verdict = part.rpartition(": ")
        if not sep or not name or verdict not in VERDICTS:
            return None
        pairs.append((name, verdict))
    return pairs or None


def _readings(row: Mapping, out: dict[str, object]) -> dict[str, object]:
    """A claim decided over the readings of an unstated choice: re-decided with the two
    methods swapped under every reading (each reading's reproduced <-> differs)."""
    pairs = parse_readings(row.get("ours"))
    if pairs is None:
        return out
    before = across_readings(pairs).verdict
    after = across_readings([(r, _SWAP.get(v, v)) for r, v in pairs]).verdict
    return dict(out, rule="across readings",
                fault="the two methods swapped under every reading", verdict=before,
                faulted=after, flips=before != after)


def _one(row: Mapping, faults: Mapping[str, str]) -> dict[str, object]:
    cid, test = str(row["claim_id"]), str(row.get("test", ""))
    out: dict[str, object] = dict(claim_id=cid, rule="", fault="", verdict="", faulted="",
                                  flips=False)
    if cid in faults:
        return dict(out, rule="its own rule", fault=faults[cid], flips=True)
    if test.startswith(READINGS_TEST):
        return _readings(row, out)
    ours = _num(row.get("ours"))
    if ours is None or str(row.get("stated", "")) == "True":
        return out
    mine = _estimate(ours, row.get("ours_se"), row.get("ours_n"))
    is_direction = any(t in test for t in ("expected side", "on the other side",
                                           "includes 0", "exact value: sign"))
    is_compare = any(t in test for t in ("TOST", "interval of the gap", "exact values: |gap|"))
    if is_direction:
        expect = _expect(row)
        if expect is None:
            return out
        before = direction(mine, expect).verdict
        after = direction(Estimate(-mine.value, mine.se, n=mine.n, df=mine.df,
                                   exact=mine.exact), expect).verdict
        return dict(out, rule="direction", fault="the two methods swapped (estimate negated)",
                    verdict=before, faulted=after, flips=before != after)
    paper, tol = _num(row.get("paper")), _num(row.get("tolerance"))
    if paper is None or tol is None or not is_compare:
        return out
    theirs = _estimate(paper, row.get("paper_se"), row.get("paper_n"))
    moved = 2 * paper if paper != 0 else 3 * tol
    before = compare(theirs, mine, tol).verdict
    after = compare(Estimate(moved, theirs.se, n=theirs.n, df=theirs.df, exact=theirs.exact),
                    mine, tol).verdict
    what = "the paper's value doubled" if paper != 0 else "the paper's value moved by 3 tolerances"
    return dict(out, rule="compare", fault=what, verdict=before, faulted=after,
                flips=before != after)


def claim_power(claims: pd.DataFrame, faults: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per counted claim of ``claims`` (a claims table): its rule, the planted fault,
    the verdict its rule gives on the recorded numbers and with the fault, and ``flips``."""
    faults = dict(faults or {})
    if claims.empty:
        return pd.DataFrame(columns=list(POWER_COLUMNS))
    counted = claims[claims["kind"].isin(COUNTED_KINDS) & (claims["verdict"] != "not run")]
    rows = [_one(r, faults) for r in counted.to_dict("records")]
    return pd.DataFrame(rows, columns=list(POWER_COLUMNS))


def power_summary(claims: pd.DataFrame, power: pd.DataFrame) -> pd.DataFrame:
    """Per paper: counted claims that ran, and how many have a planted fault that flips them."""
    if power.empty:
        return pd.DataFrame(columns=["seed_file", "counted claims run", "fault flips",
                                     "share"])
    merged = power.merge(claims[["claim_id", "seed_file"]].drop_duplicates("claim_id"),
                         on="claim_id", how="left")
    g = merged.groupby("seed_file")["flips"]
    out = pd.DataFrame({"counted claims run": g.size(), "fault flips": g.sum()}).reset_index()
    out["share"] = out["fault flips"] / out["counted claims run"]
    return out
