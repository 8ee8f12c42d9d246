"""The scorecard's claims table: one self-contained HTML fragment with the claims as JSON."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

from fusionlib.compendium.claims import claims_frame, make_claim
from fusionlib.compendium.claims_table import claims_widget, recompute_command
from fusionlib.compendium.verdicts import Estimate


def _claims():
    return claims_frame([
        make_claim("001-T3-a", "001", "Table 3", "S_T </script><b>", 0.02,
                   Estimate(0.05, 0.01, n=10), scale="cpu", experiment="ptgan_tabular",
                   tolerance=0.01),
        make_claim("000-C-latent", "000", "Section C", "latent", 32, 32, scale="cpu",
                   experiment="fusiongan", tolerance=0, kind="setting"),
    ])


def _data(html_text, uid="claims-table"):
    m = re.search(rf'<script type="application/json" id="{uid}-data">(.*?)</script>',
                  html_text, re.S)
    return json.loads(m.group(1))


def test_records_carry_values_with_uncertainty_and_the_command():
    html_text = claims_widget(_claims())
    rows = {r["id"]: r for r in _data(html_text)}
    assert rows["001-T3-a"]["o"] == "0.05 ± 0.01 (n=10)" and rows["001-T3-a"]["p"] == "0.02"
    assert rows["000-C-latent"]["paper"] == "FusionGAN" and rows["000-C-latent"]["m"] == "✓"
    assert rows["001-T3-a"]["cmd"] == recompute_command("001-T3-a") == "make claim ID=001-T3-a"


def test_text_cannot_close_the_script_and_chapters_get_anchors():
    html_text = claims_widget(_claims())
    # the claims' JSON, the conclusions' JSON and the code; the quantity is escaped
    assert html_text.count("</script>") == 3
    assert 'id="chapter-ptgan_tabular"' in html_text and 'id="chapter-fusiongan"' in html_text


def test_stability_adds_the_flip_filter():
    stab = pd.DataFrame({"claim_id": ["001-T3-a", "000-C-latent"],
                         "stability": ["flips: differs at seed 1", "stable"]})
    html_text = claims_widget(_claims(), stability=stab)
    assert "class=\"ct-flip\"" in html_text
    assert {r["id"]: r["seeds"] for r in _data(html_text)}["001-T3-a"].startswith("flips")
    assert "class=\"ct-flip\"" not in claims_widget(_claims())


def test_conclusions_get_anchors_that_show_only_their_key_claims():
    conclusions = pd.DataFrame({"conclusion_id": ["001-K6"], "statement": ["PT+CP </script>"],
                                "claim_ids": ["001-T3-a"]})
    html_text = claims_widget(_claims(), conclusions=conclusions)
    assert 'id="conclusion-001-K6"' in html_text
    m = re.search(r'<script type="application/json" id="claims-table-groups">(.*?)</script>',
                  html_text, re.S)
    groups = json.loads(m.group(1))
    assert groups["001-K6"]["ids"] == ["001-T3-a"]
    assert groups["001-K6"]["statement"] == "PT+CP </script>"  # escaped in the page
    assert html_text.count("</script>") == 3
    assert '#conclusion-' in html_text and 'class="ct-only" hidden' in html_text
    assert json.loads(re.search(r'id="claims-table-groups">(.*?)</script>',
                                claims_widget(_claims()), re.S).group(1)) == {}


def test_standard_errors_show_two_significant_figures_and_infinity_its_sign():
    frame = _claims()
    frame.loc[0, "paper_se"] = "0.00126491"
    frame.loc[1, "ours"] = "inf"
    rows = {r["id"]: r for r in _data(claims_widget(frame))}
    assert rows["001-T3-a"]["p"] == "0.02 ± 0.0013"
    assert rows["000-C-latent"]["o"].startswith("∞")


def test_every_claim_is_also_a_plain_table_without_javascript_and_in_print():
    html_text = claims_widget(_claims())
    static = html_text[html_text.index('<div class="ct-static'):html_text.index('class="ct-live"')]
    # both claims in full, escaped, verdict first
    assert static.count("<tr><td class=\"ct-v") == 2
    assert "S_T &lt;/script&gt;&lt;b&gt;" in static and "0.05 ± 0.01 (n=10)" in static
    assert static.index("<th>verdict</th>") < static.index("<th>claim</th>")
    # shown while the root says no script ran (the script removes the class) and in print
    assert 'id="claims-table" class="ct-nojs"' in html_text
    assert 'root.classList.remove("ct-nojs")' in html_text
    assert "@media print{.ct-live{display:none!important}.ct-static{display:block!important}}" \
        in html_text
    # the script draws its pages into the live table, never into the static one before it
    assert 'root.querySelector(".ct-live tbody")' in html_text
    assert 'root.querySelector("tbody")' not in html_text


def test_a_chapters_own_table_has_no_paper_or_chapter_filter_or_column():
    one = claims_widget(_claims().iloc[:1])
    assert 'data-f="chapter"' not in one and 'data-f="paper"' not in one
    assert 'data-k="chapter"' not in one and 'data-f="v"' in one
    both = claims_widget(_claims())
    assert 'data-f="chapter"' in both and 'data-k="chapter"' in both


def test_rows_keep_the_reason_on_one_line_and_ids_break_only_after_their_hyphens():
    html_text = claims_widget(_claims())
    # the reason is a one-line span inside the quantity's cell; the full text in the details
    assert "<span class='ct-r' title=" in html_text and '"<br>reason: "+esc(r.r)' in html_text
    # the live table's columns are fixed (the theme lays output tables out automatically)
    assert ".ct-live table.ct{table-layout:fixed!important}" in html_text
    # chapter and 'where' only on a table 1,000 px wide or more; both are in the details
    assert 'class="ct-h-where ct-wide"' in html_text and 'class="ct-h-chapter ct-wide"' in html_text
    assert "@container (max-width:999px){table.ct .ct-wide{display:none}}" in html_text
    assert '" · where: "' not in html_text and '"where: "+esc(r.where)' in html_text
    # the plain table breaks an id after its hyphens and underscores only
    static = html_text[html_text.index('<div class="ct-static'):html_text.index('class="ct-live"')]
    assert "<td>001-<wbr>T3-<wbr>a</td>" in static and "<td>000-<wbr>C-<wbr>latent</td>" in static


def _check_html():
    """tools/check_html.py (the book's page check and its headless Chromium), as a module."""
    path = Path(__file__).resolve().parents[2] / "tools" / "check_html.py"
    if "check_html" not in sys.modules:
        spec = importlib.util.spec_from_file_location("check_html", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["check_html"] = module
        spec.loader.exec_module(module)
    return sys.modules["check_html"]


def _many_claims(n: int = 30) -> pd.DataFrame:
    """Claims as long as the book's longest: 60-character ids, 170-character quantities and
    500-character reasons."""
    reason = "smoke scale: every code path runs once, numbers carry no evidence " * 8
    return claims_frame([
        make_claim(f"001-T11-rank-credit_default-jsd-mp-10-lr-repetition-{i:03d}", "001",
                   "Table 11", "credit_default, JSD, LR: S_T(PT+CP) - S_T(MP (lambda_MP=10)) < 0 "
                   "per repetition (PTGAN better), over the ten repetitions of the paper's grid",
                   0.02, Estimate(0.05, 0.01, n=10), scale="cpu",
                   experiment="ptgan_tabular" if i % 2 else "fusiongan", tolerance=0.01,
                   reason=reason)
        for i in range(n)])


def test_in_a_browser_the_table_fits_a_688_px_column_with_short_rows(tmp_path):
    """In a real headless Chromium: at 1280 px the claims fill a 688-px text column (the book's)
    and no wider, in rows of at most 100 px on average; at 390 px each claim is a card within
    the phone's column."""
    check_html = _check_html()
    try:
        browser = check_html.find_browser()
    except check_html.BrowserError as exc:
        pytest.skip(str(exc))
    widget = claims_widget(_many_claims())
    page = ('<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="viewport" '
            'content="width=device-width, initial-scale=1"><title>t</title></head><body>'
            f'<article class="bd-article" style="max-width:688px;margin:0 auto">{widget}'
            "</article></body></html>")
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    measure = """(() => { const t = document.querySelector(".ct-live table");
      const rows = [...t.querySelectorAll("tr.ct-row")].map(r => r.getBoundingClientRect().height);
      return {table: t.getBoundingClientRect().width, rows: rows.length,
              column: document.querySelector("article").getBoundingClientRect().width,
              mean: rows.reduce((a, b) => a + b, 0) / rows.length, max: Math.max(...rows)}; })()"""
    chromium = check_html.Chromium(browser)
    try:
        chromium.open((tmp_path / "page.html").as_uri(), screen=(1280, 800, False))
        wide = chromium.evaluate(measure)
        chromium.open((tmp_path / "page.html").as_uri(), screen=(390, 844, True))
        phone = chromium.evaluate(measure)
    finally:
        chromium.close()
    assert wide["rows"] == 25 and wide["column"] == pytest.approx(688)
    assert wide["table"] <= wide["column"] + 1, wide
    assert wide["mean"] <= 100 and wide["max"] <= 130, wide
    assert phone["table"] <= phone["column"] + 1, phone
    assert phone["mean"] <= 160, phone
