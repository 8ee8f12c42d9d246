"""Tests of the identification chapter's helpers (fusionlib.studies.identification.report)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.compendium.verdicts import Estimate
from fusionlib.errors import InvalidInputError
from fusionlib.matching import frechet_cell_bounds
from fusionlib.studies.identification.report import estimate, lp_range, mean_of, where_in


def test_lp_range_matches_the_frechet_bounds():
    px = np.array([0.3, 0.7])
    py = np.array([[0.2, 0.8], [0.6, 0.4]])
    pz = np.array([[0.5, 0.5], [0.9, 0.1]])
    lower, _, upper = frechet_cell_bounds(px, py, pz)
    for cell in [(0, 0), (0, 1), (1, 0), (1, 1)]:
        lo, hi = lp_range(px, py, pz, cell)
        assert lo == pytest.approx(lower[cell], abs=1e-9)
        assert hi == pytest.approx(upper[cell], abs=1e-9)


def test_lp_range_by_hand_and_bad_input():
    # one x, p(y=0) = 0.6, p(z=0) = 0.7: p(y=0, z=0) ranges over [0.3, 0.6]
    lo, hi = lp_range(np.array([1.0]), np.array([[0.6, 0.4]]), np.array([[0.7, 0.3]]), (0, 0))
    assert (lo, hi) == (pytest.approx(0.3), pytest.approx(0.6))
    with pytest.raises(InvalidInputError, match="outside"):
        lp_range(np.array([1.0]), np.array([[0.6, 0.4]]), np.array([[0.7, 0.3]]), (2, 0))
    with pytest.raises(InvalidInputError, match="one row per x"):
        lp_range(np.array([0.5, 0.5]), np.array([[0.6, 0.4]]), np.array([[0.7, 0.3]]), (0, 0))


ROWS = pd.DataFrame({
    "design": ["a", "a", "a", "a", "b"],
    "method": ["hotdeck", "hotdeck", "fusiongan", "fusiongan", "fusiongan"],
    "learned": [True, True, True, False, False],
    "rho": [0.1, 0.3, 0.5, 0.9, 0.2],
})


def test_estimate_over_seeds_and_learned_fusiongan_seeds():
    e = estimate(ROWS, "a", "hotdeck", "rho")
    assert e.value == pytest.approx(0.2)
    assert e.se == pytest.approx(np.std([0.1, 0.3], ddof=1) / np.sqrt(2))
    one = estimate(ROWS, "a", "fusiongan", "rho")  # the unlearned seed is left out
    assert one.value == pytest.approx(0.5) and one.se is None
    assert estimate(ROWS, "b", "fusiongan", "rho") is None
    assert estimate(ROWS, "c", "hotdeck", "rho") is None


def test_mean_of_reads_the_summary():
    summary = ROWS.groupby(["design", "method"], sort=False)[["rho"]].mean().reset_index()
    assert mean_of(summary, "a", "hotdeck", "rho") == pytest.approx(0.2)


def test_where_in_by_hand():
    t = pd.Series({"rho_lower": -0.5, "rho_upper": 0.5, "rho_truth": 0.4, "rho_cia": 0.0})
    text = where_in("(a)", t, Estimate(0.25, 0.01, 5))
    assert text.startswith("(a): ")
    assert "at 0.75 of the identified interval [-0.50, 0.50]" in text
    assert "0.15 from the truth 0.40, 0.25 from the CIA value 0.00" in text
