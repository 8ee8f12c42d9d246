"""The introduction's generated summary (book/_ext/report.py), without Sphinx."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("report_ext", ROOT / "book" / "_ext" / "report.py")
report = importlib.util.module_from_spec(_spec)
sys.modules["report_ext"] = report
_spec.loader.exec_module(report)


def _row(seed, verdict, statement="s"):
    return {"seed_file": seed, "verdict": verdict, "statement": statement, "reason": "r <x>",
            "ran": "1", "claims": "2"}


def test_summary_counts_per_paper_and_escapes():
    rows = [_row("000", "reproduced"), _row("000", "differs"), _row("001", "not run", "<b>")]
    text = report.conclusions_html(rows, "cpu")
    assert "FusionGAN</b>, 2 main conclusions: " in text and "✓ 1 reproduced" in text
    assert "✗ 1 differs" in text and "&lt;b&gt;" in text
    assert "Fairness testing from separate datasets</b>, 0 main conclusions: none" in text
    # the scale is said once, before the lines, not in each
    assert text.count("<code>cpu</code>") == 1


def test_each_conclusion_shows_its_reason_and_links_to_its_evidence():
    row = {**_row("000", "differs"), "conclusion_id": "000-K1", "chapters": "fusiongan data"}
    text = report.conclusions_html([row, _row("001", "reproduced")], "cpu")
    # the reason is text under the statement, not a tooltip (phones have no hover)
    assert '<span class="rp-why">why: r &lt;x&gt;</span>' in text and "title=" not in text
    assert 'href="executed/scorecard.html#conclusion-000-K1">its 2 key claims</a>' in text
    assert 'href="executed/fusiongan.html#what-we-found">FusionGAN: the technical appendix<' \
        in text and 'href="executed/data.html#what-we-found"' in text
    assert 'id="conclusion-000-K1"' in text
    # one header row per paper instead of a paper column
    assert '<tr class="rp-paper"><th colspan="2">FusionGAN</th></tr>' in text
    # a conclusions file written before the links: no links, the reason still shown
    assert "rp-links" not in report.conclusions_html([_row("000", "differs")], "cpu")


def test_each_conclusion_is_a_card_of_verdict_claims_run_and_statement():
    # book/_static/book.css stacks these on a phone: the verdict and the claims run on one
    # line, the statement at the full width below (the page check measures it)
    text = report.conclusions_html([{**_row("000", "differs"), "conclusion_id": "000-K1"}],
                                   "cpu")
    row = text[text.index('<tr class="rp-row" id="conclusion-000-K1">'):]
    assert row.index('class="rp-v rp-differs"') < row.index('<span class="rp-ran">1 of 2 key '
                                                            "claims run</span>")
    assert row.index("rp-ran") < row.index('<span class="rp-statement">s</span>')
    assert "<style>" not in text  # the styles live in book/_static/book.css


def test_book_css_stacks_the_conclusions_on_a_phone():
    css = (ROOT / "book" / "_static" / "book.css").read_text(encoding="utf-8")
    phone = css[css.index("@media (max-width: 600px)", css.index("table.rp")):]
    assert "table.rp thead { display: none; }" in phone
    assert "display: block" in phone and ".rp-ran { display: inline;" in phone.replace(
        "table.rp td.rp-v .rp-ran", ".rp-ran")


def test_citation_note_comes_from_the_build_provenance():
    text = report.citation_bibtex({"git_commit": "0123456789abcdef-dirty", "scale": "cpu",
                                   "finished_utc": "2026-11-28T02:49:23+00:00"})
    assert "note    = {commit 0123456789ab with uncommitted changes, built at scale cpu on " \
        "2026-11-28}" in text
    assert "year    = {2026}" in text and "<" not in text  # no placeholder left
    clean = report.citation_bibtex({"git_commit": "abc", "scale": "paper"})
    assert "note    = {commit abc, built at scale paper}" in clean


def test_provenance_box_shows_commit_scale_seed_and_versions():
    text = report.provenance_html({"scale": "cpu", "seed": 0, "git_commit": "0123456789abcdef",
                                   "device": "cpu: x86_64", "finished_utc": "2026-11-25",
                                   "versions": {"torch": "2.13.0", "numpy": "2.4.6"}})
    assert "0123456789ab<" in text and "numpy 2.4.6, torch 2.13.0" in text and "cpu" in text
    # scale, commit and date on the line that is always shown; the rest one click away
    summary = text[text.index("<summary>"):text.index("</summary>")]
    assert "cpu" in summary and "0123456789ab" in summary and "2026-11-25" in summary


def test_missing_scorecard_is_an_error_that_says_what_to_run(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "SCORECARD", tmp_path / "nowhere")
    monkeypatch.setattr(report, "REPO", tmp_path)
    with pytest.raises(FileNotFoundError, match="make book"):
        report._read("conclusions.csv")
