"""The scorecard: every claim of every experiment, and the share of the papers it covers.

:func:`collect_claims` reads each executed experiment's ``claims.csv``; the *inventory*
(``inventory.csv`` beside this module) lists every table, figure, proposition, theorem, lemma,
corollary and algorithm of the three seeds (and seed 000's sections A-I) with its declared
status; :func:`inventory_status` marks an item "checked" when at least one claim refers to it
in its ``where`` column, so the denominator of "how much of the papers is checked" is explicit.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from fusionlib.compendium.claims import read_claims, verdict_counts
from fusionlib.compendium.summary import MARKS, load_chapters
from fusionlib.compendium.verdicts import COUNTED_KINDS, VERDICTS
from fusionlib.errors import InvalidInputError

__all__ = ["INVENTORY", "ITEM_STATUSES", "collect_claims", "load_inventory", "inventory_status",
           "unmapped_claims", "kind_counts", "coverage_summary", "conclusion_chapters",
           "conclusion_table", "flips_per_paper", "EVIDENCE_SECTION"]

#: the section of every chapter that says what it found (its anchor: conclusions link there)
EVIDENCE_SECTION = "what-we-found"

INVENTORY = Path(__file__).resolve().parent / "inventory.csv"
#: declared statuses of items without claims; "checked" is computed from the claims. "proof
#: only": a lemma with no numerical content of its own to check (the chapter says why)
ITEM_STATUSES = ("checked", "settings only", "implementation only", "extension only",
                 "used, no claim", "not built yet", "not run", "not checkable", "proof only")


def collect_claims(executed: str | Path, *, exclude: tuple[str, ...] = ("scorecard",)
                   ) -> tuple[pd.DataFrame, list[Path]]:
    """Every ``<executed>/<experiment>/claims.csv`` (hidden folders of unfinished runs skipped).

    Returns the claims table and the files read.
    """
    executed = Path(executed)
    files = sorted(p for p in executed.glob("*/claims.csv")
                   if not p.parent.name.startswith(".") and p.parent.name not in exclude)
    return read_claims(files), files


def load_inventory(path: str | Path = INVENTORY) -> pd.DataFrame:
    """The inventory of the seeds' items (one row per item, columns of ``inventory.csv``)."""
    inv = pd.read_csv(path, dtype=str, keep_default_na=False)
    bad = sorted(set(inv["status"]) - set(ITEM_STATUSES))
    if bad:
        raise InvalidInputError(f"{path}: unknown status {bad}; allowed: {list(ITEM_STATUSES)}")
    if inv["item_id"].duplicated().any():
        raise InvalidInputError(f"{path}: repeated item_id {inv.loc[inv.item_id.duplicated()]}")
    return inv


def _refers(where: pd.Series, label: str) -> pd.Series:
    pattern = rf"(?:^|[^0-9A-Za-z]){re.escape(label)}(?![0-9A-Za-z])"
    return where.str.contains(pattern, regex=True)


def inventory_status(inventory: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """The inventory with ``status`` computed and claim counts per verdict.

    An item is "checked" when a claim of its seed of kind ``result`` or ``theory`` names its
    label in ``where`` (``"Figure 1 / Figure 9"`` names both) *and computed something* (its
    verdict is not "not run"): settings echoed back and our extensions do not make an item
    checked. Otherwise an item whose computed claims only echo the paper's settings (an
    architecture table, a list of defaults) is "settings only", one whose computed claims only
    check our code against its text (implementation identities on hand instances) is
    "implementation only", one with only our extensions' claims computed is "extension only";
    any other keeps its declared status, except that an
    item declared "checked" without such a claim in this build becomes "not run". The counts
    cover every claim naming the item, of any kind.
    """
    out = inventory.copy()
    counts: dict[str, list[int]] = {v: [] for v in ("claims", *VERDICTS)}
    status = []
    for item in out.itertuples():
        mine = claims[(claims["seed_file"] == item.seed_file)
                      & _refers(claims["where"], item.label)] if len(claims) else claims
        counts["claims"].append(len(mine))
        for v in VERDICTS:
            counts[v].append(int((mine["verdict"] == v).sum()) if len(mine) else 0)
        ran = mine[mine["verdict"] != "not run"] if len(mine) else mine
        kinds = set(ran["kind"]) if len(ran) else set()
        declared = "not run" if item.status == "checked" else item.status
        status.append("checked" if kinds & set(COUNTED_KINDS) else
                      "settings only" if "setting" in kinds else
                      "implementation only" if "implementation" in kinds else
                      "extension only" if "extension" in kinds else declared)
    out["status"] = status
    for k, v in counts.items():
        out[k] = v
    return out


def unmapped_claims(inventory: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """The claims whose ``where`` names no inventory item of their seed (there must be none:
    every claim belongs to an item of the papers, or to an extension listed in the inventory)."""
    if not len(claims):
        return claims
    mapped = pd.Series(False, index=claims.index)
    for item in inventory.itertuples():
        mapped |= (claims["seed_file"] == item.seed_file) & _refers(claims["where"], item.label)
    return claims[~mapped]


def kind_counts(claims: pd.DataFrame) -> pd.DataFrame:
    """Claims per paper, kind and verdict (every verdict a column)."""
    return verdict_counts(claims, ["seed_file", "kind"]) if len(claims) else pd.DataFrame()


def coverage_summary(status: pd.DataFrame) -> pd.DataFrame:
    """Items per seed and status, and the share of items that are checked (per seed and all)."""
    table = pd.crosstab(status["seed_file"], status["status"])
    table = table.reindex(columns=list(ITEM_STATUSES), fill_value=0)
    table.loc["all"] = table.sum()
    table["items"] = table[list(ITEM_STATUSES)].sum(axis=1)
    table["checked share"] = (table["checked"] / table["items"]).round(3)
    return table


def conclusion_chapters(conclusions: pd.DataFrame, claims: pd.DataFrame) -> list[str]:
    """For each conclusion (rows of :func:`~fusionlib.compendium.conclusions.conclusion_verdicts`),
    the chapters whose claims bear on it, space-separated, the chapter with most of its key
    claims first (the claims shown beside it when it has no key claim)."""
    where = dict(zip(claims["claim_id"], claims["experiment"], strict=True)) if len(claims) \
        else {}
    out = []
    for c in conclusions.itertuples():
        ids = str(c.claim_ids).split() or str(getattr(c, "shown_ids", "")).split()
        counts = pd.Series([where[i] for i in ids if i in where], dtype=object).value_counts()
        out.append(" ".join(counts.index))
    return out


def _evidence(row: object, titles: dict[str, str]) -> object:
    from fusionlib.compendium.run import Link

    cid, n = str(row.conclusion_id), int(row.claims)
    links = [Link(f"its {n} key claim{'s' if n != 1 else ''}", f"#conclusion-{cid}")] if n else []
    links += [Link(f"{titles.get(ch, ch)}: what we found", f"{ch}.html#{EVIDENCE_SECTION}")
              for ch in str(getattr(row, "chapters", "") or "").split()]
    return tuple(links) if links else "–"


def conclusion_table(group: pd.DataFrame) -> pd.DataFrame:
    """The scorecard's table of one paper's conclusions (rows of
    :func:`fusionlib.compendium.conclusions.conclusion_verdicts`): the verdict with its mark,
    the statement, where it is made, why, how many of its key claims ran (marked "partly
    decided" when not all did), how many claims are shown beside it without deciding it, how
    many key claims are seed-stable (when the seed-stability table was there) and what it would
    take to decide the rest. With ``conclusion_id`` (and ``chapters``, from
    :func:`conclusion_chapters`) an ``evidence`` column links each conclusion to its key claims
    in the scorecard's table (``#conclusion-<id>``) and to the "What we found" section of each
    chapter that bears on it (:class:`~fusionlib.compendium.run.Link` cells)."""
    partly = (group["partly_decided"].astype(str) == "True" if "partly_decided" in group
              else pd.Series(False, index=group.index))
    cols = {"verdict": [f"{MARKS[v]} {v}" for v in group.verdict],
            "conclusion": group.statement, "where": group.source, "why": group.reason}
    if "conclusion_id" in group:
        titles = load_chapters()["title"].to_dict()
        cols["evidence"] = [_evidence(r, titles) for r in group.itertuples()]
    cols |= {"claims run": [f"{r} of {n}" + (" (partly decided)" if p else "")
                           for r, n, p in zip(group.ran, group.claims, partly, strict=True)]}
    if "shown" in group:
        cols["shown beside"] = group["shown"]
    if "seed-stable claims" in group:
        cols["seed-stable"] = group["seed-stable claims"]
    cols["to decide the rest"] = group.to_decide
    return pd.DataFrame(cols)


def flips_per_paper(stability: pd.DataFrame, papers: dict[str, str]) -> pd.Series:
    """How many claims of each paper change verdict with the root seed (a ``stability`` text
    starting with "flips"), by the paper's name (``papers``: seed file -> name)."""
    flips = stability.stability.str.startswith("flips")
    return (stability.assign(paper=stability.seed_file.map(papers), flips=flips)
            .groupby("paper").flips.sum().rename("stability"))
