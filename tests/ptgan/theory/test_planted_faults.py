"""Planted faults: every theory claim's rule reads "reproduced" on its honest instance and no
longer does on the instance that breaks the statement (fusionlib.ptgan.theory.planted)."""

import re
from pathlib import Path

import numpy as np
import pytest

from fusionlib.compendium.verdicts import KINDS
from fusionlib.ptgan.theory import checks
from fusionlib.ptgan.theory.planted import PLANTED, context, planted_faults, theory_ids
from fusionlib.ptgan.theory.variance import full_top_eigenvalue, split_top_eigenvalue

CHAPTER = Path(__file__).resolve().parents[3] / "notebooks" / "ptgan_theory.md"


@pytest.mark.parametrize("claim_id", theory_ids())
def test_the_planted_fault_flips_the_verdict(claim_id):
    p = PLANTED[claim_id]
    honest, faulted = p.honest(), p.faulted()
    assert honest.verdict == "reproduced", (claim_id, honest.reason)
    assert faulted.verdict in ("differs", "inconclusive"), (claim_id, faulted.verdict)


def test_every_claim_of_the_chapter_has_an_entry_and_every_entry_a_claim():
    text = CHAPTER.read_text(encoding="utf-8")
    ids = set(re.findall(r'"(001-[A-Za-z0-9-]+)"', text))
    settings = {"001-A2-critics", "001-A4-generators"}  # kind "setting", not theory checks
    assert ids - settings == set(PLANTED)


def test_entries_are_complete():
    table = planted_faults()
    assert list(table.columns) == ["claim_id", "kind", "hypothesis", "instance", "fault"]
    assert set(table.kind) <= {"theory", "implementation"} <= set(KINDS)
    assert (table[["hypothesis", "instance", "fault"]].map(len) > 5).all().all()
    for p in PLANTED.values():
        assert (p.honest is not None) == (p.kind == "theory"), p.claim_id
        assert (p.faulted is not None) == (p.kind == "theory"), p.claim_id
    assert "planted fault it catches" in context("001-P1-moments")
    assert context("001-L1-rayleigh").startswith("implementation check")


def test_the_full_sample_top_eigenvalue_passes_a_violated_bound_and_the_split_does_not():
    # many directions, few draws: noise lifts the sample's top eigenvalue above the truth (1)
    rng = np.random.default_rng(3)
    grads = rng.normal(size=(200, 128)) * np.sqrt(np.r_[1.0, np.full(127, 0.6)])
    bound = 1.2  # ||Cov||_2 = 1: the bound is violated by 20 %
    full, full_se = full_top_eigenvalue(grads)
    assert full > 1.5
    assert checks.lower_bound_decision([full], [full_se], [bound], ["x"], "P2").verdict == \
        "reproduced"
    split, split_se, _ = split_top_eigenvalue(grads)
    assert split < 1.0
    assert checks.lower_bound_decision([split], [split_se], [bound], ["x"], "P2").verdict != \
        "reproduced"


def test_lemma1_cannot_fail_on_random_matrices():
    # the implementation check: a Rayleigh quotient never exceeds the top eigenvalue
    rng = np.random.default_rng(0)
    for _ in range(200):
        a = rng.normal(size=(6, 6))
        cov, w = a @ a.T, rng.normal(size=6)
        assert w @ cov @ w / (w @ w) <= np.linalg.eigvalsh(cov)[-1] * (1 + 1e-12)
