"""The scorecard's claims table: one self-contained HTML fragment with the claims as JSON."""

from __future__ import annotations

import json
import re

import pandas as pd

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
