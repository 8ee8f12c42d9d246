"""Sphinx directives that put the answer on the introduction, from what the build computed.

``.. conclusions-summary::`` renders, per paper, how many of its main conclusions hold at this
build's scale and a compact table of each conclusion with its verdict, from
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


def conclusions_html(rows: list[dict], scale: str) -> str:
    """The summary: one line per paper, then every conclusion with its verdict."""
    out = ['<div class="report-summary">', "<ul>"]
    for key, name in PAPERS:
        mine = [r for r in rows if r["seed_file"] == key]
        out.append(f"<li><b>{html.escape(name)}</b>: {len(mine)} main conclusions at scale "
                   f"<code>{html.escape(scale)}</code>: {_counts(mine)}</li>")
    out.append("</ul>")
    out.append('<div class="rp-wrap"><table class="rp"><thead><tr><th>paper</th>'
               "<th>verdict</th><th>conclusion</th><th>claims run</th></tr></thead><tbody>")
    for key, name in PAPERS:
        for r in (r for r in rows if r["seed_file"] == key):
            v = r["verdict"]
            out.append(
                f"<tr><td>{html.escape(name)}</td>"
                f'<td class="rp-{v.replace(" ", "-")}" title="{html.escape(r["reason"])}">'
                f"{MARKS.get(v, '')}&nbsp;{html.escape(v)}</td>"
                f"<td>{html.escape(r['statement'])}</td>"
                f"<td>{html.escape(r['ran'])} of {html.escape(r['claims'])}</td></tr>")
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
table.rp td:nth-child(2){white-space:nowrap;font-weight:600}
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
