"""Planted faults of section G (fusionlib.studies.identification.planted): each rule reads
"reproduced" where the statement holds and no longer does under its fault."""

from pathlib import Path

import pytest

from fusionlib.compendium.power import PLANTED_COLUMNS
from fusionlib.studies.identification import planted as ip

CHAPTER = Path(__file__).resolve().parents[3] / "notebooks" / "identification.md"


@pytest.mark.parametrize("claim_id", ip.theory_ids())
def test_the_planted_fault_flips_the_verdict(claim_id):
    p = ip.PLANTED[claim_id]
    honest, faulted = p.honest(), p.faulted()
    assert honest.verdict == "reproduced", (claim_id, honest.reason)
    assert faulted.verdict in ("differs", "inconclusive"), (claim_id, faulted.verdict)


def test_matching_lands_on_the_cia_value_and_the_oracle_on_the_truth():
    nnd, oracle = ip._rho("b_cia_fails", "hotdeck_nnd"), ip._rho("b_cia_fails", "oracle")
    assert nnd.value == pytest.approx(0.36, abs=0.05)
    assert oracle.value == pytest.approx(-0.10, abs=0.05)


def test_every_theory_claim_of_the_chapter_has_an_entry():
    table = ip.planted_faults()
    assert list(table.columns) == list(PLANTED_COLUMNS)
    text = CHAPTER.read_text(encoding="utf-8")
    for cid in table.claim_id:
        assert f'"{cid}"' in text
        assert f'planted("{cid}").kind' in text
