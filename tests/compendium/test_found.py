"""The generated opening of a chapter's "What we found" section."""

from __future__ import annotations

import pandas as pd

from fusionlib.compendium.claims import claims_frame, make_claim
from fusionlib.compendium.found import what_we_found
from fusionlib.compendium.verdicts import Estimate


def _conclusions():
    return pd.DataFrame({
        "conclusion_id": ["001-K8", "001-K9"], "seed_file": ["001", "001"],
        "statement": ["PT+CP gives lower S_T than MP.", "It holds under JSD"],
        "source": ["Table 3", "Table 10"], "claims": ["001-T3-", "001-T10-"],
        "key_claims": ["001-T3-(rank|val)-", "001-T10-"], "exclude": ["", ""],
        "rule": ["all", "all"], "to_decide": ["the paper's protocol", "JSD runs"]})


def _claim(cid, ours, paper=0.02, **kw):
    return make_claim(cid, "001", "Table 3", "S_T", paper, ours, scale="cpu",
                      experiment="ptgan_tabular", **kw)


def test_names_the_decided_key_claims_the_open_ones_and_what_would_decide_them():
    claims = claims_frame([
        _claim("001-T3-val-a", Estimate(0.021, 0.001, n=10), tolerance=0.011),
        _claim("001-T3-val-b", Estimate(0.2, 0.001, n=10), tolerance=0.011),
        _claim("001-T3-val-c", None, not_run="paper scale only"),
        _claim("001-T3-width", 64, paper=64, kind="setting", tolerance=0)])
    text = what_we_found(claims, _conclusions())
    assert text.startswith("This chapter registers 4 claims (✓ 2 reproduced, ✗ 1 differs, "
                           "– 1 not run); 3 of them check")
    assert '<a href="scorecard.html#conclusion-001-K8">001-K8</a>' in text
    assert "*PT+CP gives lower S_T than MP*: 3 of its key claims are here" in text
    # the claim that differs is named first
    assert "Decided: `001-T3-val-b` (differs), `001-T3-val-a` (reproduced)." in text
    assert "Open: – 1 not run; what would decide them: the paper's protocol." in text
    assert "001-K9" not in text  # no key claim here


def test_a_chapter_without_key_claims_says_so_and_one_without_claims_too():
    claims = claims_frame([_claim("001-T3-width", 64, paper=64, kind="setting", tolerance=0)])
    text = what_we_found(claims, _conclusions())
    assert "No conclusion of the papers has a key claim in this chapter" in text
    assert "0 of them check the paper's results or theory" in text
    assert "registers no claims" in what_we_found(claims.iloc[:0], _conclusions())


def test_many_decided_key_claims_are_cut_after_four():
    claims = claims_frame([_claim(f"001-T3-val-{i}", Estimate(0.021, 0.001, n=10),
                                  tolerance=0.011) for i in range(7)])
    text = what_we_found(claims, _conclusions())
    assert "`001-T3-val-3` (reproduced) and 3 more." in text
    assert "Open:" not in text


def test_the_opening_box_links_to_the_glossary_before_any_abbreviation():
    from fusionlib.compendium.summary import GLOSSARY, chapter_summary

    claims = claims_frame([_claim("001-T3-width", 64, paper=64, kind="setting", tolerance=0)])
    box = chapter_summary("ptgan_tabular", claims, "cpu", conclusions=_conclusions())
    link = box.index(f'<a href="{GLOSSARY}">glossary</a>')
    assert link < box.index("PT+CP") and link < box.index("What the paper claims")
