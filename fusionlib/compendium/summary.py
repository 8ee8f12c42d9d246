"""The answer first: a generated box at the top of every chapter, and code folded below it.

After a chapter has run, the notebook runner (:mod:`fusionlib.compendium.runner`) calls
:func:`dress_chapter` on the executed notebook: it inserts, right below the chapter's title and
above any code, a box that says what the paper claims (``chapters.csv`` beside this module),
what we found (the verdict counts of the chapter's claims, and the verdict of each of the
paper's conclusions, ``conclusions.csv``, computed from this chapter's claims alone) and at
what scale; and it folds every code cell (the code stays one click away). Nothing in the box
is typed: it is computed from the ``claims.csv`` the chapter wrote.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd

from fusionlib.compendium.conclusions import conclusion_verdicts, load_conclusions
from fusionlib.compendium.verdicts import COUNTED_KINDS, VERDICTS
from fusionlib.errors import InvalidInputError

__all__ = ["CHAPTERS", "SUMMARY_CLASS", "MARKS", "SCALE_MEANING", "load_chapters",
           "chapter_summary", "insert_summary", "fold_code", "label_figures", "dress_chapter",
           "dress_scorecard"]

CHAPTERS = Path(__file__).resolve().parent / "chapters.csv"
#: the CSS class of the box (tools/check_html.py looks for it on every chapter page)
SUMMARY_CLASS = "chapter-summary"
#: one mark per verdict, shown beside the word (never instead of it)
MARKS: dict[str, str] = {"reproduced": "✓", "differs": "✗", "inconclusive": "?",
                         "not comparable": "≠", "not run": "–"}
SCALE_MEANING: dict[str, str] = {
    "smoke": "every code path runs once on tiny settings; the numbers carry no evidence, so "
             "every result is 'not comparable'",
    "cpu": "reduced runs on a 2-core CPU where the papers' protocol does not fit; a reduction "
           "that changes the quantity gives 'not comparable', never 'differs'",
    "paper": "the papers' full protocol",
}
#: the glossary, relative to a chapter page (book/executed/<chapter>.html)
GLOSSARY = "../glossary.html"
_FOLD_EXEMPT = ("remove-cell", "remove-input", "hide-input", "hide-cell", "full-width-code")


def load_chapters(path: str | Path = CHAPTERS) -> pd.DataFrame:
    """The chapters table (chapter, seed_file, part, title, paper_claims), validated."""
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    expected = ["chapter", "seed_file", "part", "title", "paper_claims"]
    if list(table.columns) != expected:
        raise InvalidInputError(f"{path}: columns {list(table.columns)}; expected {expected}")
    if table["chapter"].duplicated().any():
        raise InvalidInputError(f"{path}: a chapter is listed twice")
    return table.set_index("chapter", drop=False)


def _counts_text(claims: pd.DataFrame) -> str:
    parts = [f"{MARKS[v]} {int((claims['verdict'] == v).sum())} {v}" for v in VERDICTS
             if (claims["verdict"] == v).any()]
    return " · ".join(parts) if parts else "none"


def chapter_summary(chapter: str, claims: pd.DataFrame, scale: str, *,
                    chapters: pd.DataFrame | None = None,
                    conclusions: pd.DataFrame | None = None,
                    origin: str | None = None) -> str:
    """The box (MyST Markdown) for ``chapter`` from its claims at ``scale``; ``origin``: one
    line saying where its cells' results came from
    (:func:`~fusionlib.compendium.cells.origin.origin_line`, recorded by ``Run.finish``)."""
    chapters = load_chapters() if chapters is None else chapters
    if chapter in chapters.index:
        row = chapters.loc[chapter]
    else:  # a notebook outside the book (tests); every book chapter has a row (tested)
        row = {"part": "extension", "paper_claims": f"(no description: add a row for "
               f"{chapter!r} to fusionlib/compendium/{CHAPTERS.name})"}
    counted = claims[claims["kind"].isin(COUNTED_KINDS)] if len(claims) else claims
    other = claims[~claims["kind"].isin(COUNTED_KINDS)] if len(claims) else claims
    lines = [f":::{{admonition}} At a glance: computed at scale `{scale}`",
             f":class: {SUMMARY_CLASS} tip", ""]
    who = "What the paper claims" if row["part"] == "paper" else "What this chapter asks"
    lines += [f'The <a href="{GLOSSARY}">glossary</a> spells out every abbreviation.', ""]
    lines += [f"**{who}.** {row['paper_claims']}", ""]
    if len(counted):
        lines += [f"**What we found.** {len(counted)} checks of the paper's results and theory: "
                  f"{_counts_text(counted)}.", ""]
    if len(other):
        kinds = other["kind"].value_counts()
        what = ", ".join(f"{n} {k}{'s' if n > 1 else ''}" for k, n in kinds.items())
        lines += [f"**Also checked.** {what} (settings echo the paper's hyperparameters and "
                  f"architectures; extensions are ours, not the paper's): "
                  f"{_counts_text(other)}.", ""]
    if not len(claims):
        lines += ["**What we found.** This chapter registers no claims.", ""]
    conclusions = load_conclusions() if conclusions is None else conclusions
    mine = conclusion_verdicts(conclusions, claims) if len(claims) else pd.DataFrame()
    mine = mine[mine["claims"] > 0] if len(mine) else mine
    if len(mine):
        lines += ["**The paper's conclusions, as far as this chapter bears on them:**", ""]
        for c in mine.itertuples():
            lines.append(f"- {MARKS[c.verdict]} **{c.verdict}**: {c.statement} "
                         f"({c.reason}; {c.ran} of {c.claims} bearing claims ran here)")
        lines.append("")
    undecided = int(claims["verdict"].isin(["inconclusive"]).sum()) if len(claims) else 0
    lines += [f"**Scale.** `{scale}`: {SCALE_MEANING.get(scale, scale)}."
              + (f" {undecided} claim(s) could have gone either way (inconclusive)."
                 if undecided else ""), ""]
    if origin:
        lines += [f"**Where the numbers came from.** {origin}", ""]
    anchor = html.escape(f"chapter-{chapter}")
    lines += [f'<a href="scorecard.html#{anchor}">Every claim of this chapter in the '
              "scorecard</a>", ":::"]
    return "\n".join(lines)


def insert_summary(nb: Any, markdown: str) -> None:
    """Put ``markdown`` right after the notebook's title (its first line that starts with a
    single hash and a space), above any code. A title cell holding more than the title is split
    in two; a box inserted before is replaced (calling it twice leaves one box)."""
    import nbformat

    nb.cells = [c for c in nb.cells
                if "chapter-summary" not in c.get("metadata", {}).get("tags", [])]
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        text = cell.source if isinstance(cell.source, str) else "".join(cell.source)
        lines = text.splitlines()
        at = next((k for k, ln in enumerate(lines) if ln.startswith("# ")), None)
        if at is None:
            continue
        head, rest = "\n".join(lines[: at + 1]), "\n".join(lines[at + 1:]).strip("\n")
        cell.source = head
        box = nbformat.v4.new_markdown_cell(markdown)
        box.metadata["tags"] = ["chapter-summary"]
        new = [box] + ([nbformat.v4.new_markdown_cell(rest)] if rest.strip() else [])
        nb.cells[i + 1:i + 1] = new
        return
    raise InvalidInputError("the notebook has no title ('# ...' line in a Markdown cell)")


def fold_code(nb: Any) -> int:
    """Tag every code cell ``hide-input`` (folded, one click away) unless it is already removed
    or hidden; returns the number of cells folded now."""
    folded = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if not any(t in tags for t in _FOLD_EXEMPT):
            tags.append("hide-input")
            folded += 1
    return folded


_SAVED = re.compile(r"""save_figure\(\s*[^,()]+,\s*(f?)(["'])(.+?)\2""")


def _saved_names(source: str, figures: dict[str, str]) -> list[str]:
    """The figures a cell saves (``run.save_figure(fig, "name")``; an f-string name matches the
    saved names of its shape, in the order they were saved)."""
    names = []
    for fstring, _, name in _SAVED.findall(source):
        if not fstring:
            names += [name] if name in figures else []
            continue
        pattern = re.compile("".join(".+?" if part.startswith("{") else re.escape(part)
                                     for part in re.split(r"(\{[^}]*\})", name)) + "$")
        names += [k for k in figures if pattern.match(k)]
    return names


def label_figures(nb: Any, figures: dict[str, str]) -> int:
    """Give every figure a code cell shows the alternative text of the figure it saved
    (``Run.save_figure`` records them); a figure shown without being saved gets a generic text.
    Returns the number of cells labelled."""
    labelled = 0
    for cell in nb.cells:
        if cell.cell_type != "code" or not any(
                "image/png" in o.get("data", {}) for o in cell.get("outputs", [])):
            continue
        names = _saved_names(cell.source, figures)
        alt = " ".join(figures[n] for n in names) or (
            "A figure of this chapter; the text around it says what it shows.")
        image = cell.metadata.setdefault("mystnb", {}).setdefault("image", {})
        image.setdefault("alt", alt)
        labelled += 1
    return labelled


def dress_chapter(nb: Any, chapter: str, results: Path, scale: str) -> None:
    """Insert the opening box (from ``results/claims.csv``, and where its cells' results came
    from: ``origin`` in ``results/provenance.json``), fold the code and give the figures their
    alternative text (``results/figures.json``)."""
    from fusionlib.compendium.claims import read_claims

    path = Path(results) / "claims.csv"
    claims = read_claims([path]) if path.is_file() else read_claims([])
    prov = Path(results) / "provenance.json"
    origin = json.loads(prov.read_text()).get("origin") if prov.is_file() else None
    insert_summary(nb, chapter_summary(chapter, claims, scale, origin=origin))
    fold_code(nb)
    fig_file = Path(results) / "figures.json"
    label_figures(nb, json.loads(fig_file.read_text()) if fig_file.is_file() else {})


def dress_scorecard(nb: Any, results: Path) -> None:
    """The scorecard is itself the summary (no opening box): fold its code and give its figures
    their alternative text (``results/figures.json``), as :func:`dress_chapter` does."""
    fold_code(nb)
    fig_file = Path(results) / "figures.json"
    label_figures(nb, json.loads(fig_file.read_text()) if fig_file.is_file() else {})
