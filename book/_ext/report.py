"""Sphinx directives that put the answer on the introduction, from what the build computed.

``.. conclusions-summary::`` renders, per paper, how many of its main conclusions hold at this
build's scale and a compact table of each conclusion with its verdict, the reason for it
(shown on every screen, phones included: no tooltip) and links to its evidence (its key claims
in the scorecard, ``scorecard.html#conclusion-<id>``, and the "What we found" section of each
chapter that bears on it: the ``chapters`` column), from
``book/executed/scorecard/conclusions.csv`` (written by the scorecard chapter, which aggregates
every chapter's claims). ``.. build-provenance::`` renders the build's commit, date, scale,
root seed, device and package versions from the scorecard's ``provenance.json``, and
``.. citation-bibtex::`` the compendium's BibTeX entry with its note from the same record (the
commit and the scale). Their styles, wide and on a phone, are in ``book/_static/book.css``.
Nothing is typed: a build without the executed scorecard fails (the strict build turns the
error into a failure).
"""

from __future__ import annotations

import csv
import html
import json
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive

REPO = Path(__file__).resolve().parents[2]
SCORECARD = REPO / "book" / "executed" / "scorecard"
PAPERS = (("000", "FusionGAN"), ("001", "PTGAN"),
          ("002", "Fairness testing from separate datasets"))
MARKS = {"reproduced": "✓", "differs": "✗", "inconclusive": "?", "not comparable": "≠",
         "not run": "–"}
ORDER = ("reproduced", "differs", "inconclusive", "not comparable", "not run")


def _read(name: str):
    path = SCORECARD / name
    if not path.is_file():
        raise FileNotFoundError(
            f"{path.relative_to(REPO)} is missing: the introduction is generated from the "
            "executed scorecard (make book runs it before the HTML build)")
    if path.suffix == ".json":
        return json.loads(path.read_text(encoding="utf-8"))
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _counts(rows: list[dict]) -> str:
    parts = []
    for v in ORDER:
        n = sum(r["verdict"] == v for r in rows)
        if n:
            parts.append(f'<span class="rp-{v.replace(" ", "-")}">{MARKS[v]} {n} {v}</span>')
    return " · ".join(parts)


def _chapter_titles() -> dict[str, str]:
    path = REPO / "fusionlib" / "compendium" / "chapters.csv"
    if not path.is_file():
        return {}
    with path.open(encoding="utf-8", newline="") as fh:
        return {r["chapter"]: r["title"] for r in csv.DictReader(fh)}


def _evidence(r: dict, titles: dict[str, str]) -> str:
    """Links from one conclusion to its key claims (the scorecard filtered to them) and to the
    'What we found' section of each chapter that bears on it."""
    n = int(r.get("claims") or 0)
    cid = html.escape(r.get("conclusion_id", ""))
    links = []
    if n and cid:
        links.append(f'<a href="executed/scorecard.html#conclusion-{cid}">its {n} key '
                     f"claim{'s' if n != 1 else ''}</a>")
    for ch in (r.get("chapters") or "").split():
        title = html.escape(titles.get(ch, ch))
        links.append(f'<a href="executed/{html.escape(ch)}.html#what-we-found">{title}</a>')
    return f'<span class="rp-links">evidence: {" · ".join(links)}</span>' if links else ""


def conclusions_html(rows: list[dict], scale: str) -> str:
    """The summary: one line per paper (the answer, first), then every conclusion with its
    verdict, how many of its key claims ran, the reason for it (shown, not hidden in a tooltip)
    and links to its evidence. A table on a wide screen; on a phone (book/_static/book.css) each
    conclusion is a card: the verdict and the claims run on one line, the statement below at the
    full width of the screen, then why and the evidence."""
    titles = _chapter_titles()
    out = ['<div class="report-summary">',
           f'<p class="rp-lead">What held in this build (scale <code>{html.escape(scale)}'
           "</code>), paper by paper:</p>", '<ul class="rp-papers">']
    for key, name in PAPERS:
        mine = [r for r in rows if r["seed_file"] == key]
        counted = f"{len(mine)} main conclusion{'s' if len(mine) != 1 else ''}"
        out.append(f"<li><b>{html.escape(name)}</b>, {counted}: {_counts(mine) or 'none'}"
                   "</li>")
    out.append("</ul>")
    out.append('<div class="rp-wrap"><table class="rp"><thead><tr><th>verdict</th>'
               "<th>conclusion, why, and the evidence</th></tr></thead><tbody>")
    for key, name in PAPERS:
        mine = [r for r in rows if r["seed_file"] == key]
        if mine:
            out.append(f'<tr class="rp-paper"><th colspan="2">{html.escape(name)}</th></tr>')
        for r in mine:
            v = r["verdict"]
            cid = html.escape(r.get("conclusion_id", ""))
            out.append(
                f'<tr class="rp-row" id="conclusion-{cid}"><td class="rp-v rp-'
                f'{v.replace(" ", "-")}">{MARKS.get(v, "")}&nbsp;{html.escape(v)}'
                f'<span class="rp-ran">{html.escape(str(r["ran"]))} of '
                f"{html.escape(str(r['claims']))} key claims run</span></td>"
                f'<td class="rp-c"><span class="rp-statement">{html.escape(r["statement"])}'
                f'</span><span class="rp-why">why: {html.escape(r["reason"])}</span>'
                f"{_evidence(r, titles)}</td></tr>")
    out.append("</tbody></table></div></div>")
    return "\n".join(out)


def provenance_html(record: dict) -> str:
    """The build-provenance box: its first line (scale, commit, date) always shown, the rest
    (root seed, device, package versions) one click away."""
    versions = ", ".join(f"{k} {v}" for k, v in sorted(record.get("versions", {}).items()))
    commit = str(record.get("git_commit", "unknown"))[:12]
    items = [("scale", record.get("scale", "?")), ("root seed", record.get("seed", "?")),
             ("commit", commit), ("built (UTC)", record.get("finished_utc", "?")),
             ("device", record.get("device", "?")), ("packages", versions)]
    body = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>"
                   for k, v in items)
    head = (f"This build: scale <code>{html.escape(str(record.get('scale', '?')))}</code>, "
            f"commit <code>{html.escape(commit)}</code>, "
            f"{html.escape(str(record.get('finished_utc', '?'))[:10])}")
    return ('<details class="build-provenance"><summary>'
            f'{head}</summary><table class="rp-prov">{body}</table></details>')


def citation_bibtex(record: dict, *, version: str = "0.1.0") -> str:
    """The compendium's BibTeX entry, its ``note`` from this build's provenance (the commit and
    the scale the numbers were computed at)."""
    commit = str(record.get("git_commit", "unknown"))
    dirty = commit.endswith("-dirty")
    commit = commit.removesuffix("-dirty")[:12]
    built = str(record.get("finished_utc", ""))[:10]
    note = (f"commit {commit}{' with uncommitted changes' if dirty else ''}, built at scale "
            f"{record.get('scale', '?')}" + (f" on {built}" if built else ""))
    year = built[:4] if built[:4].isdigit() else "2026"
    return ("@software{fusionlib_compendium,\n"
            "  title   = {Data fusion, tempered GANs and fairness testing: a reproduction},\n"
            "  author  = {{The fusionlib compendium team}},\n"
            f"  year    = {{{year}}},\n"
            f"  version = {{{version}}},\n"
            f"  note    = {{{note}}}\n"
            "}")


class ConclusionsSummary(Directive):
    has_content = False

    def run(self):
        rows = _read("conclusions.csv")
        scale = _read("provenance.json").get("scale", "?")
        return [nodes.raw("", conclusions_html(rows, scale), format="html")]


class BuildProvenance(Directive):
    has_content = False

    def run(self):
        return [nodes.raw("", provenance_html(_read("provenance.json")), format="html")]


class CitationBibtex(Directive):
    has_content = False

    def run(self):
        text = citation_bibtex(_read("provenance.json"))
        block = nodes.literal_block(text, text)
        block["language"] = "bibtex"
        return [block]


def setup(app):
    app.add_directive("conclusions-summary", ConclusionsSummary)
    app.add_directive("build-provenance", BuildProvenance)
    app.add_directive("citation-bibtex", CitationBibtex)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
