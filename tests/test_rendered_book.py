"""The rendered-book checker (tools/check_html.py) on small hand-written pages, no browser; and
the display helpers the chapters use (captioned tables, legible figures)."""

from __future__ import annotations

import importlib.util
import sys
from html import escape as html_escape
from pathlib import Path

import pandas as pd
import pytest

from fusionlib.compendium.run import FIGURE_STYLE, Run, legible

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("check_html", ROOT / "tools" / "check_html.py")
check_html = importlib.util.module_from_spec(_spec)
sys.modules["check_html"] = check_html
_spec.loader.exec_module(check_html)

BANNER = ('<div class="admonition note"><p>Computed at scale <strong><code>smoke</code></strong>'
          " (every code path runs once), base seed 0.</p></div>")
TYPESET = ('<span class="math notranslate nohighlight"><mjx-container class="MathJax">'
           '<mjx-math><mjx-c class="mjx-c1D444"></mjx-c></mjx-math><mjx-assistive-mml>'
           "<math><mi>Q</mi></math></mjx-assistive-mml></mjx-container></span>")
CAPTIONED = ('<div class="cell_output docutils container"><div class="output text_html">'
             "<table><caption>Table 3 (scale: smoke)</caption><tr><td>0.5</td></tr></table>"
             "</div></div>")


def page(body: str) -> str:
    return (f"<html><head><title>t</title><script>var s = '\\\\(x\\\\) $$';</script></head>"
            f"<body><main>{body}</main></body></html>")


CLEAN = page(f"<h1>Chapter</h1>{BANNER}<p>The tempered law {TYPESET} bridges the modes.</p>"
             '<div class="cell_input"><pre>raise ValueError("in code: not an output")\n'
             "x = r'\\(not math\\)'</pre></div>"
             f'<p>Inline <code>\\alpha</code> is code.</p>{CAPTIONED}'
             '<div class="cell_output"><div class="output stream"><pre>standard error 0.01'
             "</pre></div></div>")


def problems(html: str, *, chapter: bool = True, scale: str | None = None) -> list[str]:
    return check_html.check_page(html, "book/executed/x.html", chapter=chapter,
                                 expected_scale=scale)


def test_clean_page_passes():
    assert problems(CLEAN) == []
    assert problems(CLEAN, scale="smoke") == []


def test_raw_tex_after_mathjax_fails():
    raw = page(f"{BANNER}<p>Interpolations "
               '<span class="math notranslate nohighlight">\\(Q^\\alpha\\)</span> of two points'
               '</p><div class="math notranslate nohighlight">\\[\\begin{aligned}x\\end{aligned}'
               "\\]</div>")
    found = problems(raw)
    assert any("raw TeX" in p and "Q^" in p for p in found)
    assert any("2 math element(s) not typeset" in p for p in found)
    assert all(p.startswith("book/executed/x.html: ") for p in found)


@pytest.mark.parametrize("text", ["$$x^2$$", "\\begin{align}", "the \\sqrt{2} term"])
def test_other_raw_tex_forms_fail(text):
    assert any("raw TeX" in p for p in problems(page(f"{BANNER}<p>{text}</p>")))


def test_mathjax_errors_and_undefined_macros_fail():
    merror = page(f'{BANNER}<mjx-container><mjx-merror data-mjx-error="Missing }}">'
                  "<mjx-mtext>Missing close brace</mjx-mtext></mjx-merror></mjx-container>")
    assert any("MathJax error" in p for p in problems(merror))
    undefined = page(f"{BANNER}<span class='math'><mjx-container><mjx-assistive-mml><math>"
                     "<mtext>\\foo</mtext></math></mjx-assistive-mml></mjx-container></span>")
    assert any("undefined TeX macro" in p and "\\foo" in p for p in problems(undefined))


def test_traceback_in_an_output_fails():
    tb = page(f'{BANNER}<div class="cell_output docutils container">'
              '<div class="output traceback highlight-ipythontb"><pre>'
              '<span class="gt">Traceback (most recent call last)</span>\n'
              '  File "x.py"\n<span class="ne">RuntimeError</span>: broken</pre></div></div>')
    found = problems(tb)
    assert any("traceback output block" in p for p in found)
    assert any("error text in a cell output" in p and "Traceback" in p for p in found)


def test_error_message_printed_in_an_output_fails():
    printed = page(f'{BANNER}<div class="cell_output"><div class="output stream"><pre>'
                   "FileNotFoundError: data/adult.csv</pre></div></div>")
    assert any("FileNotFoundError: " in p for p in problems(printed))
    # the same words in prose or in code are not outputs
    assert problems(page(f"{BANNER}<p>A ValueError: is raised when ...</p>")) == []


def test_chapter_without_scale_label_fails():
    bare = CLEAN.replace(BANNER, "<p>No banner here.</p>")
    assert any("no scale label" in p for p in problems(bare))
    assert problems(bare, chapter=False) == []  # only chapters need the label


def test_chapter_labelled_with_another_scale_fails():
    assert any("built at cpu" in p for p in problems(CLEAN, scale="cpu"))


def test_output_table_without_scale_caption_fails():
    uncaptioned = CLEAN.replace("<caption>Table 3 (scale: smoke)</caption>", "")
    assert any("without the scale in a caption" in p for p in problems(uncaptioned))
    wrong = CLEAN.replace("(scale: smoke)", "(Adult)")
    assert any("without the scale in a caption" in p for p in problems(wrong))


def test_missing_and_undisplayed_images_fail(tmp_path):
    (tmp_path / "_images").mkdir()
    (tmp_path / "_images" / "ok.png").write_bytes(b"\x89PNG")
    (tmp_path / "book").mkdir()
    html = page(f'{BANNER}<img src="../_images/ok.png"><img src="../_images/gone.png">'
                '<img src="data:image/png;base64,AAAA">')
    found = check_html.check_page(html, "book/x.html", tmp_path)
    assert found == ["book/x.html: missing image '../_images/gone.png'"]
    rendered = [{"src": "../_images/ok.png", "width": 0}, {"src": "../_images/gone.png",
                                                          "width": 0}]
    found = check_html.check_page(html, "book/x.html", tmp_path, rendered_images=rendered)
    assert found == ["book/x.html: missing image '../_images/gone.png'",
                     "book/x.html: image not displayed (naturalWidth 0): '../_images/ok.png'"]


def test_requests_to_other_hosts_and_missing_files_are_reported():
    base = "http://127.0.0.1:8000/"
    events = [
        {"method": "Network.requestWillBeSent",
         "params": {"request": {"url": "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex.js"}}},
        {"method": "Network.requestWillBeSent", "params": {"request": {"url": base + "a.css"}}},
        {"method": "Network.responseReceived",
         "params": {"response": {"url": base + "_static/x.woff", "status": 404}}},
        {"method": "Network.responseReceived",
         "params": {"response": {"url": base + "favicon.ico", "status": 404}}},
    ]
    assert check_html.request_problems(events, base) == [
        f"HTTP 404 for {base}_static/x.woff",
        "requests another host (offline it fails): "
        "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex.js",
    ]


def test_pages_skip_static_and_sources(tmp_path):
    for rel in ("index.html", "book/a.html", "_static/x.html", "_sources/y.html"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("<html></html>")
    assert [p.relative_to(tmp_path).as_posix() for p in check_html.pages_of(tmp_path)] == [
        "book/a.html", "index.html"]


# ----------------------------------------------------------------------------- display helpers


def test_run_table_captions_the_scale_and_hides_a_meaningless_index(tmp_path):
    run = Run("demo", scale="smoke", results_dir=tmp_path)
    df = pd.DataFrame({"method": ["IGO", "<b>"], "KL": [0.123456, float("nan")]})
    html = run.table(df, "Table 8 <ours>").to_html()
    assert "<caption>Table 8 &lt;ours&gt; (scale: smoke)</caption>" in html
    assert ">0.123<" in html and ">–<" in html and "&lt;b&gt;" in html
    assert "row_heading" not in html  # index hidden
    kept = run.table(df.set_index("method"), "T", digits=4, index=True).to_html()
    assert "row_heading" in kept and ">0.1235<" in kept
    page_html = page(BANNER + '<div class="cell_output">' + html + "</div>")
    assert problems(page_html, scale="smoke") == []


def test_legible_raises_small_text_and_keeps_large_text():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context(FIGURE_STYLE):
        fig, ax = plt.subplots(figsize=(16, 4))
        ax.set_xticks([0, 1], ["a", "b"], fontsize=7)
        ax.set_title("small", fontsize=8)
        big = fig.suptitle("big", fontsize=16)
        assert legible(fig, 11, width=8) is fig
    assert list(fig.get_size_inches()) == [8, 2]
    assert ax.title.get_fontsize() == 11 and big.get_fontsize() == 16
    assert all(t.get_fontsize() >= 11 for t in ax.get_xticklabels())
    plt.close(fig)


def test_stray_objects_and_machine_paths_in_outputs_fail():
    def output(text: str) -> str:
        return page(f'{BANNER}<div class="cell_output"><div class="output text_plain"><pre>'
                    f"{text}</pre></div></div>")

    claim = output("Claim(claim_id='001-P3-gap', seed_file='001', where='Proposition 3')")
    assert any("stray object" in p and "Claim(" in p for p in problems(claim))
    path = output("PosixPath('/build/repo/book/executed/.x.partial/t.csv')")
    found = check_html.check_page(path, "book/executed/x.html", chapter=True,
                                  machine_paths=("/build/repo",))
    assert any("stray object" in p for p in found)
    assert any("this machine's path /build/repo" in p for p in found)
    undrawn = output("&lt;Figure size 1200x300 with 3 Axes&gt;")
    assert any("stray object" in p for p in problems(undrawn))
    assert problems(output("wall time 12.8 s at scale smoke")) == []


def test_known_toolchain_js_errors_are_not_reported():
    def error(text: str) -> dict:
        return {"method": "Runtime.exceptionThrown",
                "params": {"exceptionDetails": {"exception": {"description": text}}}}

    events = [error("SyntaxError: Identifier 'THEBE_JS_URL' has already been declared"),
              error("TypeError: MathJax.typeset is not a function\n    at page.js:3")]
    assert check_html.request_problems(events, "http://127.0.0.1:1/") == [
        "JavaScript error: TypeError: MathJax.typeset is not a function"]


def test_redirect_pages_are_recognised():
    html = ('<!DOCTYPE html><html><head><meta http-equiv="Refresh" '
            'content="0; url=book/intro.html" /></head></html>')
    assert check_html.redirect_target(html) == "book/intro.html"
    assert check_html.redirect_target(CLEAN) is None


# ----------------------------------------------------------------------------- the page rules


def _output(text: str, kind: str = "text_plain") -> str:
    return (f'<div class="cell_output docutils container"><div class="output {kind}"><pre>'
            f"{text}</pre></div></div>")


@pytest.mark.parametrize("text", [
    "True", "None", "{'epochs': 10, 'lr': 0.001}", "(0.5, 0.7)", "[1, 2, 3]",
    "Result(mean=0.5, sd=0.1)",
    "Sequential(\n  (0): Linear(in_features=2, out_features=64, bias=True)\n  (1): ReLU()\n)",
    "schema (union): ('x1', 'x2', 'z'); overlap: ('x1',)",
    "claims registered per table: {'Table 1': 112, 'Table 7': 32}",
    "sources identical value for value: True", "PT+CP lower on every seed: False",
    "critic filters [2, 2, 4, 4, 8, 8]",
    "no benchmark result on this machine: run `make bench`", "TODO: the paper-scale numbers",
])
def test_raw_reprs_in_outputs_fail(text):
    found = problems(page(BANNER + _output(html_escape(text))))
    assert any("raw repr in a cell output" in p for p in found), found


def test_printed_torch_module_inside_other_text_fails():
    printed = _output("generator:\nLinear(in_features=32, out_features=128, bias=True)", "stream")
    assert any("printed torch module" in p for p in problems(page(BANNER + printed)))


@pytest.mark.parametrize("text", [
    "wall time 12.8 s at scale smoke", "[1/3] fitted [ok]", "(a) and (b) agree",
    "True positives: 12", "seed 0 (smoke)", "largest |z|: 2.15 (independent alphas)",
    "interval (0.41, 0.59) at 95 %", "range [0.1, 0.9] of alpha", "closer: 0.995; copies 0.000%",
])
def test_sentences_and_progress_lines_are_not_reprs(text):
    assert problems(page(BANNER + _output(text, "stream"))) == []
    assert problems(page(BANNER + _output(text))) == []


def _table(rows: str, caption: str = "T (scale: smoke)") -> str:
    return ('<div class="cell_output docutils container"><div class="output text_html">'
            f"<table><caption>{caption}</caption><thead><tr><th>n</th><th>KL</th></tr></thead>"
            f"<tbody>{rows}</tbody></table></div></div>")


def test_nan_in_an_output_table_fails_and_a_dash_passes():
    nan = _table("<tr><td>3</td><td>nan</td></tr><tr><td>4</td><td>NaN</td></tr>")
    found = problems(page(BANNER + nan))
    assert any("2 table cell(s) in 1 output table(s) show NaN/nan" in p for p in found), found
    dash = _table("<tr><td>3</td><td>–</td></tr><tr><td>4</td><td>0.25</td></tr>")
    assert problems(page(BANNER + dash)) == []


def test_whole_numbers_printed_as_floats_fail():
    floats = _table("<tr><td>32.000</td><td>0.1</td></tr><tr><td>64.000</td><td>0.2</td></tr>")
    found = problems(page(BANNER + floats))
    assert any("whole numbers printed with decimals" in p and "32.000" in p for p in found)
    # shares that happen to be 0 or 1, and integers printed as integers, pass
    fine = _table("<tr><td>32</td><td>1.000</td></tr><tr><td>64</td><td>0.000</td></tr>")
    assert problems(page(BANNER + fine)) == []


def test_machine_path_anywhere_on_a_page_fails():
    api = page('<dl class="py function"><dt class="sig sig-object py">'
               '<span class="sig-name">paper_table</span>(<em>seed</em>, '
               "<em>root=PosixPath('/build/repo/fusionlib/compendium/paper_tables')</em>)</dt>"
               "</dl>")
    found = check_html.check_page(api, "book/api/compendium.html",
                                  machine_paths=("/build/repo",))
    assert found == ["book/api/compendium.html: this machine's path /build/repo appears on the "
                     "page (1x), e.g. \"le(seed, root=PosixPath('/build/repo/fusionlib/"
                     "compendium/pap\""]
    link = page('<p><a href="file:///build/repo/x.csv">the table</a></p>')
    assert check_html.check_page(link, "x.html", machine_paths=("/build/repo",)) != []
    relative = api.replace("/build/repo/", "")
    assert check_html.check_page(relative, "x.html", machine_paths=("/build/repo",)) == []


def test_tables_wider_than_the_column_fail_unless_they_scroll_in_it():
    column = 720.0
    wide = {"width": 1900.0, "column": column, "scroll": None, "caption": "Table 8 (scale: cpu)"}
    found = check_html.wide_table_problems([wide])
    assert found == ["1 table(s) wider than the text column (720 px) outside a scroll box, e.g. "
                     "'Table 8 (scale: cpu)' 1900 px"]
    # a scroll box as wide as the table itself does not help
    assert check_html.wide_table_problems([{**wide, "scroll": 1900.0}]) != []
    assert check_html.wide_table_problems([{**wide, "scroll": column}]) == []
    assert check_html.wide_table_problems([{**wide, "width": column}]) == []
    html = check_html.check_page(page(BANNER), "book/executed/x.html", tables=[wide])
    assert any("wider than the text column" in p for p in html)


def test_figures_shown_too_small_to_read_fail():
    small = {"src": "../_images/a.png", "width": 1600, "shown": 720.0, "output": True}
    found = check_html.small_figure_problems([small])
    assert len(found) == 1 and "13-pt labels at 8.1 px" in found[0]
    assert check_html.small_figure_problems([{**small, "width": 1100}]) == []  # 11.8 px
    assert check_html.small_figure_problems([{**small, "output": False}]) == []  # prose image
    assert check_html.small_figure_problems([{**small, "shown": 0}]) == []  # hidden
    assert check_html.small_figure_problems([small], min_scale=0.4) == []


CODE_CELL = ('<div class="cell docutils container"><div class="cell_input docutils container">'
             "<pre>run = Run(...)</pre></div></div>")
HIDDEN_CELL = '<div class="cell tag_remove-input docutils container">' + _output("x", "stream") \
    + "</div>"
SUMMARY = '<div class="admonition chapter-summary"><p>What this chapter finds.</p></div>'


def test_chapter_without_its_opening_box_fails():
    def check(body: str) -> list[str]:
        return check_html.check_page(page(BANNER + body), "book/executed/x.html", chapter=True,
                                     summary=True)

    assert check(SUMMARY + CODE_CELL) == []
    assert check(HIDDEN_CELL + SUMMARY + CODE_CELL) == []  # no code shown before the box
    assert any("no chapter opening box" in p for p in check(CODE_CELL))
    assert any("after the first code cell" in p for p in check(CODE_CELL + SUMMARY))
    # off for pages that need none (and with --no-summary-check)
    assert check_html.check_page(page(BANNER + CODE_CELL), "book/executed/x.html",
                                 chapter=True) == []


def test_download_links_must_resolve(tmp_path):
    (tmp_path / "_downloads" / "ab12").mkdir(parents=True)
    (tmp_path / "_downloads" / "ab12" / "all_claims.csv").write_text("claim_id\n")
    (tmp_path / "_sources" / "book").mkdir(parents=True)
    (tmp_path / "_sources" / "book" / "x.ipynb").write_text("{}")
    ok = page('<a class="reference download internal" download="" '
              'href="../_downloads/ab12/all_claims.csv">CSV</a>'
              '<a href="../_sources/book/x.ipynb" class="btn btn-download-source-button">x</a>'
              '<a href="other.html">not a download</a>')
    assert check_html.check_page(ok, "book/x.html", tmp_path) == []
    gone = ok.replace("all_claims.csv", "all_claims.json").replace("x.ipynb", "y.ipynb")
    assert check_html.check_page(gone, "book/x.html", tmp_path) == [
        "book/x.html: download link to a missing file '../_downloads/ab12/all_claims.json'",
        "book/x.html: download link to a missing file '../_sources/book/y.ipynb'"]


def test_screens_are_named_by_page_and_tabulated():
    assert check_html.screenshot_name("book/executed/data.html", "390") == \
        "book__executed__data-390.png"
    table = check_html.screens_table([{"page": "book/intro.html", "tables": 3, "wide_tables": 1,
                                       "height_px_1280": 2400, "screens_1280": 3.0,
                                       "height_px_390": 8440, "screens_390": 10.0}])
    assert table.splitlines() == [
        "page,tables,wide_tables,verdict_offscreen,height_px_1280,screens_1280,height_px_390,"
        "screens_390",
        "book/intro.html,3,1,,2400,3.0,8440,10.0"]


def test_run_table_shows_missing_values_written_as_text_as_a_dash(tmp_path):
    run = Run("demo", scale="smoke", results_dir=tmp_path)
    claims = pd.DataFrame({"claim_id": ["a", "b", "c"], "ours": ["0.5", "nan", "NaN"],
                           "note": ["None", [1], "<NA>"], "n": [1.0, float("nan"), 3.0]})
    html = run.table(claims, "Claims")._repr_html_()
    cells = [c for t in check_html.parse_page(html).tables for r in t.body_rows for c in r]
    assert cells == ["a", "0.5", "None", "1", "b", "–", "[1]", "–", "c", "–", "–", "3"]
    assert list(claims["ours"]) == ["0.5", "nan", "NaN"]  # the data are left alone


def test_run_table_displays_in_a_scroll_box(tmp_path):
    from IPython.core.formatters import DisplayFormatter

    run = Run("demo", scale="smoke", results_dir=tmp_path)
    table = run.table(pd.DataFrame({"n": [1, 2], "KL": [0.5, float("nan")]}), "Table 8")
    shown = DisplayFormatter().format(table)[0]["text/html"]
    assert shown.startswith('<div class="table-scroll" style="max-width: 100%; overflow-x: auto;">')
    assert shown.endswith("</table>\n</div>") and shown.count("<table") == 1
    assert "<caption>Table 8 (scale: smoke)</caption>" in shown
    assert table.data is not None and table.to_html() in shown  # the Styler's, delegated
    html = page(BANNER + '<div class="cell_output docutils container"><div class="output '
                f'text_html">{shown}</div></div>')
    assert problems(html, scale="smoke") == []


def test_figures_need_a_description_as_alternative_text():
    def page(alt):
        return (f'<html><body><div class="cell_output"><img src="a.png" alt="{alt}">'
                "</div></body></html>")
    assert check_html.alt_text_problems(check_html.parse_page(page("_images/ab12.png")))
    assert check_html.alt_text_problems(check_html.parse_page(page("")))
    assert check_html.alt_text_problems(check_html.parse_page(page("../../_images/x.png")))
    assert not check_html.alt_text_problems(check_html.parse_page(
        page("Figure: S_T curves. Panel: RF (x: iteration).")))
    # an image outside cell outputs (a logo) is not a figure of the chapter
    assert not check_html.parse_page('<img src="logo.png" alt="logo.png">').output_alts


def test_a_page_wider_than_a_phone_fails_and_names_what_sticks_out():
    assert check_html.phone_width_problems({"width": 390, "sticking_out": []}, 390) == []
    found = check_html.phone_width_problems(
        {"width": 1018.4, "sticking_out": ["fusionlib.compendium.cells.bundle_origin", " "]}, 390)
    assert found == ["laid out 1018 px wide on a 390 px phone screen (the phone zooms the page "
                     "out); it sticks out at 'fusionlib.compendium.cells.bundle_origin': let it "
                     "wrap (book/_static/book.css) or put it in a box that scrolls sideways"]
    # the width alone decides; an unknown culprit is not invented
    assert check_html.phone_width_problems({"width": 500}, 390)[0].endswith(
        "(the phone zooms the page out): let it wrap (book/_static/book.css) or put it in a box "
        "that scrolls sideways")


_PHONE_PAGE = ('<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="viewport" '
               'content="width=device-width, initial-scale=1"><title>t</title>{css}</head>'
               '<body><p>text <code class="docutils literal"><span class="pre">{name}</span>'
               '</code></p><div style="overflow-x: auto"><pre>{name}</pre></div></body></html>')


def test_the_browser_finds_a_long_name_that_widens_the_page_on_a_phone(tmp_path):
    """In a real headless Chromium: an unbreakable inline name widens the page on a 390 px
    phone; the book's stylesheet makes it wrap; a code block scrolling in its box is fine."""
    try:
        check_html.find_browser()
    except check_html.BrowserError as exc:
        pytest.skip(str(exc))
    name = "fusionlib.compendium.cells." + "x" * 80
    css = Path(__file__).resolve().parents[1] / "book" / "_static" / "book.css"
    for sub, style, wide in (("plain", "", True),
                             ("styled", f"<style>{css.read_text()}</style>", False)):
        root = tmp_path / sub
        root.mkdir()
        (root / "page.html").write_text(_PHONE_PAGE.format(css=style, name=name))
        problems, n_pages, _ = check_html.check_book(root, summary_check=False)
        phone = [p for p in problems if "phone screen" in p]
        assert n_pages == 1
        assert bool(phone) is wide, (sub, problems)
        if wide:
            assert "fusionlib.compendium.cells.xxxx" in phone[0]


# ----------------------------------------------------------------------------- issue 33: the
# report a reviewer trusts at a glance

FOUND = ('<section id="what-we-found"><h2>What we found<a class="headerlink" '
         'href="#what-we-found">#</a></h2>{}</section>')
PROSE = "<p>This chapter registers 4 claims.</p>"
SHOWN_CELL = ('<div class="cell docutils container"><div class="cell_input">x = 1</div>'
              "</div>")
GENERATED = ('<div class="cell tag_remove-input docutils container"><div class="cell_output">'
             "<p>This chapter registers 4 claims.</p></div></div>")


def test_a_chapter_without_what_we_found_or_opening_it_with_code_fails():
    def check(body: str) -> list[str]:
        return check_html.check_page(page(BANNER + body), "book/executed/x.html",
                                     chapter=True, found=True)

    assert check(FOUND.format(PROSE + SHOWN_CELL)) == []
    assert check(FOUND.format(GENERATED + SHOWN_CELL)) == []  # a generated sentence is prose
    assert any("no 'What we found' section" in p for p in check("<h2>Claims</h2>" + PROSE))
    assert any("opens with a code cell" in p for p in check(FOUND.format(SHOWN_CELL + PROSE)))
    # "What we found" in bold in the opening box is not the section
    assert any("no 'What we found'" in p for p in check("<p><b>What we found.</b> 3</p>"))
    # off unless asked (the scorecard, --no-summary-check)
    assert check_html.check_page(page(BANNER), "book/executed/x.html", chapter=True) == []


def test_a_verdict_column_beyond_the_first_1280_px_of_its_box_fails():
    near = {"width": 2000, "column": 800, "scroll": 800, "verdict_left": 160, "caption": "A"}
    far = {**near, "verdict_left": 1500, "caption": "Table 9 (scale: cpu)"}
    assert check_html.check_page(page(""), "book/x.html", tables=[near]) == []
    found = check_html.check_page(page(""), "book/x.html", tables=[near, far])
    assert found == ["book/x.html: 1 table(s) with the verdict column beyond the first 1280 px "
                     "of the scroll box, e.g. 'Table 9 (scale: cpu)' at 1500 px: put it first "
                     "(run.table's decisive=True)"]
    assert check_html.check_page(page(""), "book/x.html", tables=[{**near,
                                                                   "verdict_left": None}]) == []


def test_the_glossary_abbreviations_are_read_from_the_glossary_page():
    words = check_html.glossary_abbreviations((ROOT / "book" / "glossary.md").read_text())
    assert {"MMD", "CIA", "PT+CP", "MP", "EOD", "1-TVD", "W1", "TOST", "KL"} <= set(words)
    assert "PTGAN" not in words and "FusionGAN" not in words  # the papers' names
    assert "claim" not in words and "se" not in words  # words, not abbreviations


def test_an_abbreviation_before_any_link_to_the_glossary_is_a_warning():
    rules = sys.modules["page_rules"]
    sidebar = '<nav><a href="glossary.html">Glossary</a> EOD</nav>'

    def warn(body: str) -> list[str]:
        return rules.glossary_problems(
            f"<html><body>{sidebar}<article class='bd-article'>{body}</article></body></html>",
            ["EOD", "PT+CP", "MP", "1-TVD"])

    assert warn('<p>See the <a href="../glossary.html">glossary</a>. EOD and PT+CP.</p>') == []
    found = warn('<p>EOD and PT+CP differ; <a href="glossary.html#ptgan">glossary</a></p>')
    assert found == ["abbreviation(s) EOD, PT+CP used before the first link to the glossary "
                     "(link book/glossary.md first)"]
    assert "with no link" in warn("<p>MP wins.</p>")[0]  # the sidebar's link does not count
    assert warn("<p>MPs, <code>MP</code>, TVD, S-MP.</p>") == []  # whole words in prose only
    assert warn("<p>1-TVD</p>") != [] and warn("<p>X-1-TVD-ish</p>") == []


def test_the_browser_scripts_hold_no_control_characters():
    # a "\b" in a Python string is a backspace: the verdict column's regular expression in the
    # page script then matched nothing and every table read as having no verdict column
    for script in (check_html._PAGE_STATE, check_html._STICKING_OUT, check_html._HEIGHT,
                   check_html._PHONE_LAYOUT):
        assert not any(ord(c) < 32 and c not in "\n\t" for c in script)
    assert r"/\bverdict\b/i" in check_html._PAGE_STATE


# ----------------------------------------------------------------------------- phones


def test_the_introduction_longer_than_six_phone_screens_fails():
    assert check_html.phone_screens_problems("book/intro.html", 5.9) == []
    assert check_html.phone_screens_problems("book/intro.html", 11.7) == [
        "11.7 phone screens long (at most 6): shorten it or fold what a first reading does "
        "not need"]
    # other pages have no limit; a limit can be given
    assert check_html.phone_screens_problems("book/executed/scorecard.html", 30.0) == []
    assert check_html.phone_screens_problems("a.html", 3.0, {"a.html": 2}) != []


def _layout(**kw):
    base = {"title_height": 120, "answer_bottom": 600, "column": 358,
            "rows": [{"id": "conclusion-000-K1", "statement": 358, "ran": True}]}
    return check_html.phone_layout_problems({**base, **kw}, 844)


def test_a_phone_layout_with_cards_and_a_short_title_passes():
    assert _layout() == []
    assert _layout(answer_bottom=None, rows=[]) == []  # a page without the conclusions


def test_a_title_taking_40_percent_of_the_phone_screen_fails():
    found = _layout(title_height=0.4 * 844)
    assert found == ["the page title takes 40% of a phone's first screen (at most 25%): "
                     "shorten it or shrink the heading"]


def test_the_answer_below_the_first_phone_screen_fails():
    assert "below a phone's first screen (844 px)" in _layout(answer_bottom=1200)[0]


def test_conclusion_rows_one_word_per_line_or_without_claims_run_fail():
    # the table of two columns gave the statement 143 of 358 px and pushed "claims run" off
    rows = [{"id": "conclusion-000-K1", "statement": 143, "ran": True},
            {"id": "conclusion-000-K2", "statement": 358, "ran": False}]
    found = _layout(rows=rows)
    assert len(found) == 2
    assert found[0].startswith("1 conclusion row(s) with the statement squeezed below 60% of "
                               "the 358-px column on a phone, e.g. conclusion-000-K1 (143 px)")
    assert found[1] == ("1 conclusion row(s) whose 'key claims run' is off a phone's screen, "
                        "e.g. conclusion-000-K2")


def test_the_browser_measures_the_introductions_conclusions_as_cards_on_a_phone(tmp_path):
    """In a real headless Chromium at 390 px: the introduction's conclusions (book/_ext/report.py)
    as a two-column table squeeze each statement; with the book's stylesheet each is a card
    whose statement has the column's width and whose claims run stay on the screen."""
    try:
        check_html.find_browser()
    except check_html.BrowserError as exc:
        pytest.skip(str(exc))
    spec = importlib.util.spec_from_file_location("report_ext_phone",
                                                  ROOT / "book" / "_ext" / "report.py")
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    statement = ("One generator with one discriminator per source, each seeing only its "
                 "source's columns, learns the joint distribution over the union of the sources")
    rows = [{"seed_file": "000", "verdict": "not comparable", "statement": statement,
             "reason": "all 9 key claims not comparable at this scale", "ran": "9",
             "claims": "9", "conclusion_id": f"000-K{i}"} for i in range(1, 4)]
    body = report.conclusions_html(rows, "smoke")
    css = (ROOT / "book" / "_static" / "book.css").read_text(encoding="utf-8")
    page = ('<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="viewport" '
            'content="width=device-width, initial-scale=1"><title>t</title>{css}</head><body>'
            '<main><h1>Do they hold up?</h1>{body}</main></body></html>')
    for sub, style, squeezed in (("plain", "<style>table.rp td.rp-v{white-space:nowrap}"
                                  "</style>", True),
                                 ("styled", f"<style>{css}</style>", False)):
        root = tmp_path / sub
        root.mkdir()
        (root / "intro.html").write_text(page.format(css=style, body=body))
        problems, _, _ = check_html.check_book(root, summary_check=False)
        rows_found = [p for p in problems if "conclusion row" in p]
        assert bool(rows_found) is squeezed, (sub, problems)


def test_a_cpu_book_may_show_tables_of_the_paper_grid_it_read():
    """A cpu chapter that reads a committed paper grid captions those tables with scale paper:
    allowed in a cpu build, not in a smoke build (no chapter reads a paper grid at smoke)."""
    cpu_banner = BANNER.replace("<code>smoke</code>", "<code>cpu</code>")
    paper_table = CAPTIONED.replace("(scale: smoke)", "(scale: paper)")
    html = page(f"<h1>Chapter</h1>{cpu_banner}{paper_table}")
    assert problems(html, scale="cpu") == []
    smoke = page(f"<h1>Chapter</h1>{BANNER}{paper_table}")
    assert any("without the scale in a caption" in p for p in problems(smoke, scale="smoke"))
