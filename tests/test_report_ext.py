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
    assert "FusionGAN</b>: 2 main conclusions" in text and "✓ 1 reproduced" in text
    assert "✗ 1 differs" in text and "&lt;b&gt;" in text and 'title="r &lt;x&gt;"' in text
    assert "Fairness testing from separate datasets</b>: 0 main conclusions" in text


def test_provenance_box_shows_commit_scale_seed_and_versions():
    text = report.provenance_html({"scale": "cpu", "seed": 0, "git_commit": "0123456789abcdef",
                                   "device": "cpu: x86_64", "finished_utc": "2026-11-25",
                                   "versions": {"torch": "2.13.0", "numpy": "2.4.6"}})
    assert "0123456789ab<" in text and "numpy 2.4.6, torch 2.13.0" in text and "cpu" in text


def test_missing_scorecard_is_an_error_that_says_what_to_run(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "SCORECARD", tmp_path / "nowhere")
    monkeypatch.setattr(report, "REPO", tmp_path)
    with pytest.raises(FileNotFoundError, match="make book"):
        report._read("conclusions.csv")
