"""Sphinx directives that put the answer on the introduction, from what the build computed.

``.. conclusions-summary::`` renders, per paper, how many of its main conclusions hold at this
build's scale and a compact table of each conclusion with its verdict, the reason for it
(shown on every screen, phones included: no tooltip) and links to its evidence (its key claims
in the scorecard, ``scorecard.html#conclusion-<id>``, and the "What we found" section of each
chapter that bears on it: the ``chapters`` column), from
``book/executed/scorecard/conclusions.csv`` (written by the scorecard chapter, which aggregates
every chapter's claims). ``.. build-provenance::`` renders the build's commit, date, scale,
root seed, device and package versions from the scorecard's ``provenance.json``. Nothing is
typed: a build without the executed scorecard fails (the strict build turns the error into a
failure).
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
    return f'<div class="rp-links">evidence: {" · ".join(links)}</div>' if links else ""


def conclusions_html(rows: list[dict], scale: str) -> str:
    """The summary: one line per paper, then every conclusion with its verdict, the reason for
    it (shown, not hidden in a tooltip) and links to its evidence."""
    titles = _chapter_titles()
    out = ['<div class="report-summary">', "<ul>"]
    for key, name in PAPERS:
        mine = [r for r in rows if r["seed_file"] == key]
        out.append(f"<li><b>{html.escape(name)}</b>: {len(mine)} main conclusions at scale "
                   f"<code>{html.escape(scale)}</code>: {_counts(mine)}</li>")
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
                f'<tr id="conclusion-{cid}"><td class="rp-v rp-{v.replace(" ", "-")}">'
                f"{MARKS.get(v, '')}&nbsp;{html.escape(v)}"
                f'<div class="rp-ran">{html.escape(str(r["ran"]))} of '
                f"{html.escape(str(r['claims']))} key claims run</div></td>"
                f"<td>{html.escape(r['statement'])}"
                f'<div class="rp-why">why: {html.escape(r["reason"])}</div>'
                f"{_evidence(r, titles)}</td></tr>")
    out.append("</tbody></table></div></div>")
    return "\n".join(out)


def provenance_html(record: dict) -> str:
    """The build-provenance box."""
    versions = ", ".join(f"{k} {v}" for k, v in sorted(record.get("versions", {}).items()))
    items = [("scale", record.get("scale", "?")), ("root seed", record.get("seed", "?")),
             ("commit", str(record.get("git_commit", "unknown"))[:12]),
             ("built (UTC)", record.get("finished_utc", "?")),
             ("device", record.get("device", "?")), ("packages", versions)]
    body = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>"
                   for k, v in items)
    return ('<div class="admonition note build-provenance"><p class="admonition-title">'
            f"This build</p><table class=\"rp-prov\">{body}</table></div>")


_CSS = """<style>
.report-summary ul{margin:.3em 0 .6em 0}.rp-wrap{overflow-x:auto}
table.rp{border-collapse:collapse;font-size:.9em;width:100%}
table.rp td,table.rp th{border-bottom:1px solid #ddd;padding:.2em .5em;vertical-align:top;
 text-align:left}
table.rp td.rp-v{white-space:nowrap;font-weight:600}
table.rp tr.rp-paper th{padding-top:.7em;border-bottom:2px solid #999}
.rp-ran{font-weight:400;color:#555;font-size:.9em;white-space:normal}
.rp-why{color:#444;font-size:.92em;margin-top:.15em}
.rp-links{font-size:.92em;margin-top:.1em}
.rp-reproduced{color:#1a7f37}.rp-differs{color:#b42318}.rp-inconclusive{color:#9a6700}
.rp-not-comparable{color:#6e4cc2}.rp-not-run{color:#666}
table.rp-prov th{text-align:left;padding-right:1em;vertical-align:top;white-space:nowrap}
table.rp-prov{font-size:.9em}
</style>"""


class ConclusionsSummary(Directive):
    has_content = False

    def run(self):
        rows = _read("conclusions.csv")
        scale = _read("provenance.json").get("scale", "?")
        return [nodes.raw("", _CSS + conclusions_html(rows, scale), format="html")]


class BuildProvenance(Directive):
    has_content = False

    def run(self):
        return [nodes.raw("", provenance_html(_read("provenance.json")), format="html")]


def setup(app):
    app.add_directive("conclusions-summary", ConclusionsSummary)
    app.add_directive("build-provenance", BuildProvenance)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
