"""Planted faults of Proposition 5 (fusionlib.ptgan.variance.planted): each rule reads
"reproduced" where the statement holds and no longer does under its fault."""

from pathlib import Path

import pytest

from fusionlib.compendium.power import PLANTED_COLUMNS
from fusionlib.ptgan.variance import planted as vp
from fusionlib.ptgan.variance.linear import paper_condition_holds, reduction_threshold

CHAPTER = Path(__file__).resolve().parents[3] / "notebooks" / "ptgan_variance.md"


@pytest.mark.parametrize("claim_id", vp.theory_ids())
def test_the_planted_fault_flips_the_verdict(claim_id):
    p = vp.PLANTED[claim_id]
    honest, faulted = p.honest(), p.faulted()
    assert honest.verdict == "reproduced", (claim_id, honest.reason)
    assert faulted.verdict in ("differs", "inconclusive"), (claim_id, faulted.verdict)


def test_both_condition_instances_meet_the_printed_condition_and_only_one_the_exact():
    for mu in (1.5, 0.6):
        assert paper_condition_holds(mu**2 + 0.01, 0.01, 0.5)
    assert 1.5**2 + 0.02 >= reduction_threshold(0.5) > 0.6**2 + 0.02


def test_every_theory_claim_of_the_chapter_has_an_entry():
    table = vp.planted_faults()
    assert list(table.columns) == list(PLANTED_COLUMNS)
    text = CHAPTER.read_text(encoding="utf-8")
    assert "planted_faults()" in text
    for cid in table.claim_id:
        assert f'"{cid}"' in text
