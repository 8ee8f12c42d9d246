"""The scorecard's table of every claim: compact, filterable, sortable and searchable offline.

:func:`claims_widget` returns one self-contained HTML fragment (the claims as JSON, a few lines
of CSS and plain JavaScript; no library, no network) that shows a page of claims at a time with
the verdict first, the details of a claim on a click, filters by paper, chapter, verdict, kind
and scale, a search box and sortable columns. It fits the text column: a row is the verdict,
the claim id (broken only after its hyphens and underscores), the quantity in at most two lines
with the reason on one line below it, and the paper's and our values; the chapter and the
'where' columns show only where the table is 1,000 px wide or more, and below 560 px each claim
is a card (verdict and id on one line, then the quantity, the reason and the two values). The
full texts are in the row's details. Every claim has a stable
anchor, ``#claim-<claim id>``, every chapter one, ``#chapter-<chapter>``, and, when the
conclusions are given, every conclusion one, ``#conclusion-<conclusion id>``: opening the page
at such an anchor filters the table to it (chapters link to their claims that way, and the
introduction and the scorecard link each conclusion to its key claims).
"""

from __future__ import annotations

import html
import json
import re

import pandas as pd

from fusionlib.compendium.claims import PAPERS
from fusionlib.compendium.summary import MARKS

__all__ = ["claims_widget", "recompute_command", "SHORT"]

#: characters of a quantity shown in its row (its details show it whole)
SHORT = 90


def recompute_command(claim_id: str) -> str:
    """The one command that recomputes a claim (its cells and its chapter) and prints its row."""
    return f"make claim ID={claim_id}"


def _se_text(se: str) -> str:
    """A standard error as a reader needs it: two significant figures (``0.00126491`` ->
    ``0.0013``); text that is not a number is kept."""
    try:
        x = float(se)
    except ValueError:
        return se
    return f"{x:.2g}" if x == x and abs(x) != float("inf") else se


def _value(v: str, se: str, n: str) -> str:
    if v in ("", "nan"):
        return "–"
    out = v
    if v in ("inf", "-inf"):
        out = v.replace("inf", "∞")
    if se not in ("", "0"):
        out += f" ± {_se_text(se)}"
    if n:
        out += f" (n={n})"
    return out


def _records(claims: pd.DataFrame, stability: pd.DataFrame | None) -> list[dict]:
    flips = {}
    if stability is not None and len(stability):
        flips = dict(zip(stability["claim_id"], stability["stability"], strict=True))
    rows = []
    for c in claims.itertuples():
        rows.append({
            "id": c.claim_id, "paper": PAPERS.get(c.seed_file, c.seed_file),
            "chapter": c.experiment, "kind": c.kind, "where": c.where, "q": c.quantity,
            "p": _value(c.paper, c.paper_se, c.paper_n), "o": _value(c.ours, c.ours_se, c.ours_n),
            "tol": c.tolerance, "v": c.verdict, "m": MARKS.get(c.verdict, ""),
            "r": c.reason, "t": c.test, "s": c.scale, "seeds": flips.get(c.claim_id, ""),
            "cmd": recompute_command(c.claim_id),
        })
    return rows


_CSS = """
.ct-controls{display:flex;flex-wrap:wrap;gap:.4em .8em;align-items:center;margin:.5em 0}
.ct-controls select,.ct-controls input{font-size:.9em;max-width:14em}
.ct-wrap{overflow-x:auto;max-width:100%;container-type:inline-size}
table.ct{border-collapse:collapse;width:100%;font-size:.88em}
/* the theme lays output tables out automatically; the live table's columns are fixed */
.ct-live table.ct{table-layout:fixed!important}
table.ct th{cursor:pointer;text-align:left;border-bottom:2px solid #999;padding:.2em .4em;
 white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
table.ct td{border-bottom:1px solid #ddd;padding:.2em .4em;vertical-align:top;
 overflow-wrap:anywhere}
table.ct th.ct-h-v{width:8.8em}table.ct th.ct-h-id{width:10em}
table.ct th.ct-h-chapter{width:8.5em}table.ct th.ct-h-where{width:6.5em}
table.ct th.ct-h-p,table.ct th.ct-h-o{width:6.8em}
table.ct td.ct-v{font-weight:600;overflow-wrap:normal}
table.ct td.ct-id{font-size:.92em;overflow-wrap:normal;word-break:normal}
table.ct td.ct-id a{overflow-wrap:anywhere}
.ct-clamp{display:-webkit-box;-webkit-box-orient:vertical;-webkit-line-clamp:2;overflow:hidden}
table.ct .ct-r{display:block;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;
 color:#555;font-size:.92em}
table.ct tr.ct-row{cursor:pointer}
table.ct tr.ct-row:hover{background:#f4f6fa}
table.ct tr.ct-detail td{background:#fafafa;font-size:.95em}
table.ct code{white-space:pre-wrap;word-break:break-all}
.ct-only{margin:.3em 0;padding:.3em .6em;background:#f4f6fa;border-left:3px solid #8aa}
.ct-only[hidden]{display:none}
.ct-reproduced{color:#1a7f37}.ct-differs{color:#b42318}.ct-inconclusive{color:#9a6700}
.ct-not-comparable{color:#6e4cc2}.ct-not-run{color:#666}
.ct-pager{margin:.4em 0;display:flex;flex-wrap:wrap;gap:.6em;align-items:center}
@container (max-width:999px){table.ct .ct-wide{display:none}}
@container (max-width:560px){
 .ct-live table.ct,.ct-live table.ct tbody,.ct-live table.ct tr,.ct-live table.ct td{
  display:block;width:auto}
 .ct-live table.ct thead tr{display:flex;flex-wrap:wrap;gap:0 .2em}
 .ct-live table.ct thead th{width:auto;border:0;padding:.1em .3em;font-size:.92em;
  text-decoration:underline dotted}
 .ct-live table.ct th.ct-wide,.ct-live table.ct td.ct-wide{display:none}
 .ct-live table.ct tr.ct-row{padding:.3em 0;border-bottom:1px solid #ddd}
 .ct-live table.ct tr.ct-row td{border:0;padding:0 .2em}
 .ct-live table.ct td.ct-v,.ct-live table.ct td.ct-id{display:inline}
 .ct-live table.ct td.ct-id{margin-left:.4em}
 .ct-live table.ct td.ct-val{display:inline-block;margin-right:1em}
 .ct-live table.ct td.ct-val::before{content:attr(data-l) ": ";color:#555}
 .ct-live table.ct td.ct-val .ct-clamp{display:inline}
}
.ct-static{display:none}
div.ct-nojs .ct-live{display:none}
div.ct-nojs .ct-static{display:block}
@media print{.ct-live{display:none!important}.ct-static{display:block!important}}
"""

_JS = r"""
(function(){
const root=document.getElementById("%(uid)s");root.classList.remove("ct-nojs");
const data=JSON.parse(
 document.getElementById("%(uid)s-data").textContent);
const per=%(per_page)d;let page=0,sortKey=null,sortDir=1,open=null,only=null;
const groups=JSON.parse(document.getElementById("%(uid)s-groups").textContent);
const banner=root.querySelector(".ct-only");
const sel={};["paper","chapter","v","kind","s"].forEach(k=>{const el=root.querySelector(
 "[data-f='"+k+"']");if(!el)return;sel[k]=el;const vals=[...new Set(data.map(r=>r[k]))].sort();
 vals.forEach(v=>{const o=document.createElement("option");o.value=v;o.textContent=v;
 sel[k].appendChild(o);});sel[k].addEventListener("change",()=>{page=0;draw();});});
const q=root.querySelector(".ct-q");q.addEventListener("input",()=>{page=0;draw();});
const flipped=root.querySelector(".ct-flip");
if(flipped){flipped.addEventListener("change",()=>{page=0;draw();});}
const esc=s=>String(s).replace(/[&<>"]/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;",
 '"':"&quot;"}[c]));
// an id may break after its hyphens and underscores, nowhere else
const brk=s=>esc(s).replace(/([-_])/g,"$1<wbr>");
const short=s=>s.length>%(short)d?esc(s.slice(0,%(short)d))+"…":esc(s);
function rows(){const t=q.value.toLowerCase();return data.filter(r=>
 (!only||only.ids.includes(r.id))&&
 Object.keys(sel).every(k=>!sel[k].value||r[k]===sel[k].value)&&
 (!flipped||!flipped.checked||r.seeds.startsWith("flips"))&&
 (!t||(r.id+" "+r.q+" "+r.r+" "+r.where).toLowerCase().includes(t)));}
function draw(){let rs=rows();if(sortKey){rs=rs.slice().sort((a,b)=>
 String(a[sortKey]).localeCompare(String(b[sortKey]),undefined,{numeric:true})*sortDir);}
 const n=rs.length,pages=Math.max(1,Math.ceil(n/per));page=Math.min(page,pages-1);
 const body=root.querySelector(".ct-live tbody");body.innerHTML="";
 rs.slice(page*per,page*per+per).forEach(r=>{const tr=document.createElement("tr");
  tr.className="ct-row";tr.id="claim-"+r.id;
  // the mark stays with the verdict's first word ("✓ reproduced", "≠ not / comparable")
  tr.innerHTML="<td class='ct-v ct-"+r.v.replace(" ","-")+"'>"+r.m+"\u00a0"+esc(r.v)+"</td>"+
  "<td class='ct-id'><a href='#claim-"+encodeURIComponent(r.id)+"'>"+brk(r.id)+"</a></td>"+
  (%(one)s?"":"<td class='ct-wide'>"+esc(r.chapter)+"</td>")+
  "<td class='ct-wide'>"+esc(r.where)+"</td>"+
  "<td class='ct-q'><span class='ct-clamp'>"+short(r.q)+"</span>"+
  (r.r?"<span class='ct-r' title=\""+esc(r.r)+"\">"+esc(r.r)+"</span>":"")+"</td>"+
  "<td class='ct-val' data-l='paper'><span class='ct-clamp'>"+esc(r.p)+"</span></td>"+
  "<td class='ct-val' data-l='ours'><span class='ct-clamp'>"+esc(r.o)+"</span></td>";
  tr.addEventListener("click",e=>{if(e.target.tagName==="A")return;
   open=(open===r.id)?null:r.id;draw();});body.appendChild(tr);
  if(open===r.id){const d=document.createElement("tr");d.className="ct-detail";
   d.innerHTML="<td colspan='"+(%(one)s?6:7)+"'><b>"+esc(r.q)+"</b><br>paper: "+esc(r.p)+
   " · ours: "+esc(r.o)+(r.tol?" · tolerance "+esc(r.tol):"")+"<br>"+
   (%(one)s?"":"chapter: "+esc(r.chapter)+" · ")+"where: "+esc(r.where)+
   " · kind: "+esc(r.kind)+" · scale: "+esc(r.s)+" · test: "+esc(r.t)+
   (r.r?"<br>reason: "+esc(r.r):"")+
   (r.seeds?"<br>across seeds: "+esc(r.seeds):"")+
   "<br>recompute: <code>"+esc(r.cmd)+"</code></td>";body.appendChild(d);}});
 root.querySelector(".ct-count").textContent=n+" of "+data.length+" claims";
 root.querySelector(".ct-page").textContent="page "+(page+1)+" of "+pages;}
root.querySelectorAll("th[data-k]").forEach(th=>th.addEventListener("click",()=>{
 const k=th.dataset.k;sortDir=(sortKey===k)?-sortDir:1;sortKey=k;draw();}));
root.querySelector(".ct-prev").addEventListener("click",()=>{page=Math.max(0,page-1);draw();});
root.querySelector(".ct-next").addEventListener("click",()=>{page=page+1;draw();});
function showOnly(g){only=g;banner.hidden=!g;if(g){banner.querySelector(".ct-only-text")
 .textContent="Only the "+g.ids.length+" key claims of "+g.id+": "+g.statement+" ";}}
banner.querySelector("button").addEventListener("click",()=>{showOnly(null);page=0;draw();});
function fromHash(){const h=decodeURIComponent(location.hash||"");
 if(h.startsWith("#claim-")){const id=h.slice(7);showOnly(null);q.value=id;open=id;page=0;
  draw();root.scrollIntoView();}
 else if(h.startsWith("#chapter-")&&sel.chapter){showOnly(null);sel.chapter.value=h.slice(9);
  q.value="";
  page=0;draw();root.scrollIntoView();}
 else if(h.startsWith("#conclusion-")&&groups[h.slice(12)]){
  showOnly(groups[h.slice(12)]);q.value="";Object.values(sel).forEach(s=>s.value="");page=0;
  draw();root.scrollIntoView();}}
window.addEventListener("hashchange",fromHash);draw();fromHash();
})();
"""


def _breakable(claim_id: str) -> str:
    """An id, HTML-escaped, that may break after its hyphens and underscores (``<wbr>``)."""
    return re.sub(r"([-_])", r"\1<wbr>", html.escape(claim_id))


def _static_table(records: list[dict], caption: str) -> str:
    """Every claim as a plain table, for a reader without JavaScript and for print: verdict,
    claim, quantity, paper, ours and the reason, in full."""
    esc = html.escape
    body = "".join(
        f'<tr><td class="ct-v ct-{esc(r["v"].replace(" ", "-"))}">{esc(r["m"])} {esc(r["v"])}'
        f'</td><td>{_breakable(r["id"])}</td><td>{esc(r["q"])}</td><td>{esc(r["p"])}</td>'
        f'<td>{esc(r["o"])}</td><td>{esc(r["r"])}</td></tr>' for r in records)
    return ('<div class="ct-static ct-wrap"><table class="ct"><caption style="caption-side: '
            f'top; text-align: left; font-weight: 600">{caption}</caption><thead><tr>'
            "<th>verdict</th><th>claim</th><th>quantity</th><th>paper</th><th>ours</th>"
            f"<th>reason</th></tr></thead><tbody>{body}</tbody></table></div>")


def claims_widget(claims: pd.DataFrame, *, stability: pd.DataFrame | None = None,
                  per_page: int = 25, uid: str = "claims-table", caption: str = "",
                  conclusions: pd.DataFrame | None = None) -> str:
    """The HTML fragment of the claims table (see the module text).

    ``caption`` titles the table (default: "Claims (scale: <the scales of the claims>)").

    ``conclusions`` (rows of :func:`fusionlib.compendium.conclusions.conclusion_verdicts`:
    ``conclusion_id``, ``statement``, ``claim_ids``) gives every conclusion an anchor,
    ``#conclusion-<id>``, that shows only its key claims (a line above the table says so and
    shows all claims again).

    ``stability`` (columns ``claim_id``, ``stability``: "stable", "flips: ...") adds a filter
    for the claims whose verdict changes with the root seed.
    """
    records = _records(claims, stability)
    data = json.dumps(records, ensure_ascii=False).replace("</", "<\\/")
    chapters = sorted(set(claims["experiment"])) if len(claims) else []
    one = len(chapters) <= 1  # a chapter's own table: no paper or chapter filter or column
    anchors = "".join(f'<span id="chapter-{html.escape(c)}"></span>' for c in chapters)
    groups = {}
    if conclusions is not None and len(conclusions):
        for c in conclusions.itertuples():
            groups[c.conclusion_id] = {"id": c.conclusion_id, "statement": c.statement,
                                       "ids": str(c.claim_ids).split()}
            anchors += f'<span id="conclusion-{html.escape(c.conclusion_id)}"></span>'
    groups_json = json.dumps(groups, ensure_ascii=False).replace("</", "<\\/")
    flip = ('<label><input type="checkbox" class="ct-flip"> only claims whose verdict flips '
            'with the seed</label>' if stability is not None and len(stability) else "")
    scales = ", ".join(sorted(set(claims["scale"]))) if len(claims) else "none"
    caption = html.escape(caption or f"Claims (scale: {scales})")
    labels = [("v", "verdict"), ("id", "claim"), ("chapter", "chapter"), ("where", "where"),
              ("q", "quantity · reason"), ("p", "paper"), ("o", "ours")]
    if one:
        labels.remove(("chapter", "chapter"))
    wide = {"chapter", "where"}  # shown only where the table is 1,000 px wide or more
    head = "".join(
        f'<th data-k="{k}" class="ct-h-{k}{" ct-wide" if k in wide else ""}">{t}</th>'
        for k, t in labels)
    filters = "".join(
        f'<label>{t} <select data-f="{k}"><option value="">all</option></select></label>'
        for k, t in (("paper", "paper"), ("chapter", "chapter"), ("v", "verdict"),
                     ("kind", "kind"), ("s", "scale")) if not (one and k in ("paper", "chapter")))
    script = _JS % {"uid": uid, "per_page": per_page, "short": SHORT,
                    "one": "true" if one else "false"}
    return (f"<style>{_CSS}</style><div id=\"{uid}\" class=\"ct-nojs\">{anchors}"
            f"{_static_table(records, caption)}"
            f'<div class="ct-live"><div class="ct-controls">{filters}'
            '<input class="ct-q" type="search" '
            f'placeholder="search id, quantity, reason" aria-label="search claims">{flip}'
            f'<span class="ct-count"></span></div>'
            '<p class="ct-only" hidden><span class="ct-only-text"></span>'
            '<button type="button">show every claim</button></p>'
            f'<div class="ct-wrap"><table class="ct"><caption style="caption-side: top; '
            f'text-align: left; font-weight: 600">{caption}</caption><thead><tr>{head}</tr>'
            f"</thead>"
            f"<tbody></tbody></table></div>"
            f'<div class="ct-pager"><button class="ct-prev" type="button">previous</button>'
            f'<span class="ct-page"></span><button class="ct-next" type="button">next</button>'
            f"<span>(click a row for its details and the command that recomputes it; click a "
            f"column to sort)</span></div></div>"
            f'<script type="application/json" id="{uid}-data">{data}</script>'
            f'<script type="application/json" id="{uid}-groups">{groups_json}</script>'
            f"<script>{script}</script>"
            "</div>")
