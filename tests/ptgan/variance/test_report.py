"""Tests of the gradient-variance chapter's report helpers (fusionlib.ptgan.variance.report)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from fusionlib.compendium.run import Run
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.variance.linear import prop5_closed_form
from fusionlib.ptgan.variance.report import (
    identity_claim,
    left_mode,
    prop5_table,
    said,
    sd_phrase,
    span,
    two_modes,
)


def test_samplers_draw_the_modes():
    g = torch.Generator().manual_seed(0)
    x = two_modes(2.0, sd=0.01)(400, g)
    assert x.shape == (400, 1)
    assert torch.all((x - 2.0).abs().lt(0.1) | (x + 2.0).abs().lt(0.1))
    assert 100 < int((x > 0).sum()) < 300  # both modes drawn
    y = left_mode(2.0, sd=0.01)(50, torch.Generator().manual_seed(0))
    assert y.shape == (50, 1) and torch.all((y + 2.0).abs() < 0.1)


def test_prop5_table_rows_and_closed_forms():
    table, results = prop5_table(1.5, [0.0, 0.5], ["independent", "shared"], 0, 50)
    assert list(zip(table["pairing"], table["r"], strict=True)) == [
        ("independent", 0.0), ("independent", 0.5), ("shared", 0.0), ("shared", 0.5)]
    assert [r.pairing for r in results] == list(table["pairing"])
    for row in table.to_dict("records"):
        cf = prop5_closed_form(1.5**2 + 0.01, 0.01, row["r"], 10, 10, pairing=row["pairing"])
        assert row["closed form (tempered)"] == pytest.approx(cf["tempered"])
        assert row["closed form (r = 1)"] == pytest.approx(cf["untempered"])
    again, _ = prop5_table(1.5, [0.0, 0.5], ["independent", "shared"], 0, 50)
    pd.testing.assert_frame_equal(table, again)  # seeded


def test_identity_claim_registers_one_claim_per_pairing(tmp_path):
    run = Run("ptgan_variance", scale="cpu", seed=0, results_dir=tmp_path)
    _, results = prop5_table(1.5, [0.5], ["independent", "shared"], 0, 20)
    d = identity_claim(run, "001-P5-identity", results, "shared", "extension", 20)
    claims = run.claims
    assert list(claims["claim_id"]) == ["001-P5-identity"]
    assert claims["verdict"].iloc[0] == d.verdict
    assert "shared temperatures, r in {0.5}" in claims["quantity"].iloc[0]
    with pytest.raises(InvalidInputError, match="pairing"):
        identity_claim(run, "x", results, "other", "theory", 20)


def test_span_by_hand():
    assert span([1.0, 2.5, np.nan]) == "1.00 to 2.50"
    assert span([1.001, 1.004]) == "1.00"
    assert span([0.1234, 0.5], ".3f") == "0.123 to 0.500"


def test_sd_phrase_compares_spreads():
    late = pd.DataFrame([[0.0, 2.0], [0.0, 4.0]], index=[0.0, 0.1])
    assert sd_phrase(late, 0.1) == ("with more spread across runs (sd of late log W1 2.00 times "
                                    "that at sigma = 0)")
    assert "no more" in sd_phrase(pd.DataFrame([[0.0, 4.0], [0.0, 2.0]], index=[0.0, 0.1]), 0.1)
    assert sd_phrase(late[[0]], 0.1) == "with a single run, so no spread to compare"


def test_said_reads_the_verdict():
    claims = pd.DataFrame({"claim_id": ["a", "b"], "verdict": ["reproduced", "differs"]})
    assert said(claims, "b") == "*differs*"
    with pytest.raises(InvalidInputError, match="no claim"):
        said(claims, "c")
