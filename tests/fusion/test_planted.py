"""Planted faults of the FusionGAN chapter: every theory claim's rule reads "reproduced" on its
honest instance and no longer does under its fault (fusionlib.fusion.planted)."""

import re
from pathlib import Path

import numpy as np
import pytest

from fusionlib.compendium.power import PLANTED_COLUMNS
from fusionlib.fusion import planted as fp

CHAPTER = Path(__file__).resolve().parents[2] / "notebooks" / "fusiongan.md"


@pytest.mark.parametrize("claim_id", fp.theory_ids())
def test_the_planted_fault_flips_the_verdict(claim_id):
    p = fp.PLANTED[claim_id]
    honest, faulted = p.honest(), p.faulted()
    assert honest.verdict == "reproduced", (claim_id, honest.reason)
    assert faulted.verdict in ("differs", "inconclusive"), (claim_id, faulted.verdict)


def test_every_theory_or_implementation_claim_of_sections_e_f_h_has_an_entry():
    text = CHAPTER.read_text(encoding="utf-8")
    assert "planted_faults" in text
    for cid in fp.PLANTED:
        stem = re.sub(r"-(K|n|d|h|x10|x0\.1)$", "-", cid)
        assert cid in text or stem in text, cid


def test_the_table_has_one_row_per_entry_and_texts():
    table = fp.planted_faults()
    assert list(table.columns) == list(PLANTED_COLUMNS)
    assert len(table) == len(fp.PLANTED) == 13
    assert (table[["hypothesis", "instance", "fault"]].map(len) > 5).all().all()
    assert set(fp.theory_ids()) == {"000-E-grows-with-distance", "000-F-grows-with-shift",
                                    "000-F-median-scale-x10", "000-F-median-scale-x0.1",
                                    "000-H-count-K", "000-H-count-d", "000-H-count-h"}
    assert fp.context("000-H-count-n").startswith("implementation check")


def test_the_chapter_sweeps_give_the_exponents_the_chapter_reports():
    # the count at section A's widths: near 1 in K, near 0 in d, near 2 in h
    assert fp.count_exponent("K", (2, 4, 8)) == pytest.approx(0.985, abs=0.005)
    assert fp.count_exponent("d", (10, 20, 40, 80)) == pytest.approx(0.087, abs=0.005)
    assert fp.count_exponent("h", (32, 64, 128, 256)) == pytest.approx(1.85, abs=0.005)


def test_a_fixed_narrow_bandwidth_does_not_hide_a_mean_shift():
    # why the fault of 000-F-grows-with-shift is the standardisation, not the bandwidth
    from fusionlib.metrics.mmd import mmd

    real, _ = fp._tables()
    g = mmd(real, real[::-1]).gamma
    grow = [mmd(real, real[::-1] + s, gamma=100 * g).mmd2 for s in fp.SHIFTS]
    assert np.all(np.diff(grow) > 0)


def test_perfect_coverage_is_zero_for_any_set_that_contains_the_records():
    # the implementation check: min distance to a superset of the records is 0
    from fusionlib.metrics.coverage import coverage

    real, synth = fp._tables(50, 3)
    assert coverage(real, np.vstack([synth, real])) == 0.0
