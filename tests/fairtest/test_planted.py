"""Planted faults of Appendix A.1 (fusionlib.fairtest.planted): each rule reads "reproduced"
where the statement holds and no longer does under its fault."""

import re
from pathlib import Path

import pytest

from fusionlib.compendium.power import PLANTED_COLUMNS
from fusionlib.fairtest import planted as fp
from fusionlib.fairtest.appendix_a1 import average_advantage, numerical_minimiser, split_study

CHAPTER = Path(__file__).resolve().parents[2] / "notebooks" / "fairness_testing.md"


@pytest.mark.parametrize("claim_id", fp.theory_ids())
def test_the_planted_fault_flips_the_verdict(claim_id):
    p = fp.PLANTED[claim_id]
    honest, faulted = p.honest(), p.faulted()
    assert honest.verdict == "reproduced", (claim_id, honest.reason)
    assert faulted.verdict in ("differs", "inconclusive"), (claim_id, faulted.verdict)


def test_one_entry_per_claim_of_the_chapter():
    table = fp.planted_faults()
    assert list(table.columns) == list(PLANTED_COLUMNS)
    assert len(table) == 12 and set(table.kind) == {"theory"}
    assert fp.claim_id("compas", "violent score", "minimiser") == \
        "002-AA1-compas-violent_score-minimiser"
    text = CHAPTER.read_text(encoding="utf-8")
    # the chapter names its claims and takes their kind from the registry
    assert "from fusionlib.fairtest.planted import" in text and "planted_faults()" in text
    assert len(re.findall(r"a1_planted\(a1_id\(d, o, [^)]*\)\)\.kind", text)) == 3


def test_defaults_keep_the_appendix_check():
    col = fp._column()
    a = numerical_minimiser(col, seed=0)
    assert a == numerical_minimiser(col, seed=0, weight=0.5)
    pd_a, pd_b = split_study(col, n_splits=5, seed=3), split_study(col, n_splits=5, seed=3,
                                                                     bias=1.0)
    assert pd_a.equals(pd_b)


def test_the_biased_second_table_over_represents_the_first_category():
    col = fp._column()
    st = split_study(col, n_splits=20, seed=0, bias=2.0)
    gap, best = average_advantage(st)
    assert best == "p1" and gap.value > 0  # the unbiased table beats the average
    with pytest.raises(ValueError):
        split_study(col, n_splits=5, bias=0.0)
    with pytest.raises(ValueError):
        numerical_minimiser(col, weight=1.5)
