"""The opening of every chapter's "What we found" section, written from the chapter's claims.

:func:`what_we_found` says, in a few sentences of Markdown, what the chapter's claims decided:
how many it registers and with which verdicts; then, for each of the papers' conclusions
(``conclusions.csv``) with a key claim in this chapter, which of those key claims decided
(reproduced or differs), how many are still open, what would decide them, and a link to the
conclusion's key claims in the scorecard (``scorecard.html#conclusion-<id>``). The conclusion's
own verdict is the scorecard's: it may rest on key claims of other chapters too.
"""

from __future__ import annotations

import html

import pandas as pd

from fusionlib.compendium.conclusions import key_and_shown, load_conclusions
from fusionlib.compendium.summary import MARKS
from fusionlib.compendium.verdicts import COUNTED_KINDS, DECIDED, VERDICTS

__all__ = ["what_we_found", "SHOWN_IDS"]

#: key claims named one by one before "and k more"
SHOWN_IDS = 4


def _counts(claims: pd.DataFrame) -> str:
    parts = []
    for v in VERDICTS:
        n = int((claims["verdict"] == v).sum())
        if n:
            word = {"differs": "differ"}.get(v, v) if n > 1 else v
            parts.append(f"{MARKS[v]} {n} {word}")
    return ", ".join(parts)


def _ids(claims: pd.DataFrame) -> str:
    named = [f"`{i}` ({v})" for i, v in zip(claims["claim_id"], claims["verdict"], strict=True)]
    more = len(named) - SHOWN_IDS
    return ", ".join(named[:SHOWN_IDS]) + (f" and {more} more" if more > 0 else "")


def what_we_found(claims: pd.DataFrame, conclusions: pd.DataFrame | None = None, *,
                  scorecard: str = "scorecard.html") -> str:
    """Markdown: what this chapter's ``claims`` (``Run.claims``) decide, conclusion by
    conclusion (see the module text). ``scorecard``: the scorecard page, relative to the
    chapter."""
    if not len(claims):
        return "This chapter registers no claims: it checks nothing of the papers by itself."
    conclusions = load_conclusions() if conclusions is None else conclusions
    counted = claims[claims["kind"].isin(COUNTED_KINDS)]
    lines = [f"This chapter registers {len(claims)} claims ({_counts(claims)}); "
             f"{len(counted)} of them check the paper's results or theory and count toward its "
             "reproduction" + (f" ({_counts(counted)})." if len(counted) else ".")]
    bullets = []
    for c in conclusions.itertuples():
        key, _ = key_and_shown(c, claims)
        if not len(key):
            continue
        decided = key[key["verdict"].isin(DECIDED)].sort_values(
            "verdict", key=lambda v: v.map({"differs": 0, "reproduced": 1}), kind="stable")
        open_ = key[~key["verdict"].isin(DECIDED)]
        link = (f'<a href="{html.escape(scorecard)}#conclusion-{html.escape(c.conclusion_id)}">'
                f"{c.conclusion_id}</a>")
        text = (f"- **{link}**, *{c.statement.rstrip('.')}*: {len(key)} of its key claims "
                "are here. ")
        text += (f"Decided: {_ids(decided)}. " if len(decided)
                 else "None of them is decided at this scale. ")
        if len(open_):
            text += (f"Open: {_counts(open_)}; what would decide them: "
                     f"{c.to_decide.rstrip('.')}.")
        bullets.append(text)
    if bullets:
        lines += ["", "The papers' conclusions whose key claims are computed here (the "
                  "conclusion's verdict, in the scorecard, also counts key claims of other "
                  "chapters):", "", *bullets]
    else:
        lines += ["", "No conclusion of the papers has a key claim in this chapter: its claims "
                  "are shown beside the conclusions (settings echoed, our extensions, baselines) "
                  "and decide none of them."]
    return "\n".join(lines)
