"""The power score: a planted fault re-decides each counted claim from its row."""

from __future__ import annotations

import pandas as pd

from fusionlib.compendium.power import claim_power, power_summary
from fusionlib.compendium.verdicts import Estimate, compare, direction


def _row(cid, kind="result", paper="0.5", paper_se="0.0", paper_n="", ours="0.5",
         ours_se="0.01", ours_n="10", tolerance="0.05", test=None, verdict="reproduced",
         stated="", quantity="", seed_file="001"):
    return dict(claim_id=cid, seed_file=seed_file, kind=kind, paper=paper, paper_se=paper_se,
                paper_n=paper_n, ours=ours, ours_se=ours_se, ours_n=ours_n,
                tolerance=tolerance, verdict=verdict, test=test, stated=stated,
                quantity=quantity)


def _test_of(decision):
    return decision.test


def test_a_tight_comparison_flips_when_the_paper_value_is_doubled():
    test = _test_of(compare(Estimate.exact(0.5), Estimate(0.5, 0.01, n=10), 0.05))
    out = claim_power(pd.DataFrame([_row("a", test=test)])).iloc[0]
    assert out.rule == "compare" and out.verdict == "reproduced"
    assert out.faulted != "reproduced" and out.flips


def test_a_comparison_without_spread_has_no_power():
    test = _test_of(compare(Estimate.exact(0.5), Estimate(0.5, None), 0.05))
    out = claim_power(pd.DataFrame([_row("a", ours_se="", ours_n="1", test=test,
                                         verdict="inconclusive")])).iloc[0]
    # "no interval": neither rule could decide it, with or without the fault
    assert not out.flips and out.fault == ""


def test_a_direction_flips_when_the_methods_are_swapped():
    est = Estimate(-0.03, 0.005, n=10)
    test = _test_of(direction(est, "<0"))
    out = claim_power(pd.DataFrame([_row("d", paper="-0.02", ours="-0.03", ours_se="0.005",
                                         test=test)])).iloc[0]
    assert out.rule == "direction" and out.verdict == "reproduced"
    assert out.faulted == "differs" and out.flips
    # a direction too uncertain to decide stays inconclusive either way: no power
    wide = _test_of(direction(Estimate(-0.03, 0.5, n=10), "<0"))
    out = claim_power(pd.DataFrame([_row("d", paper="< 0", ours="-0.03", ours_se="0.5",
                                         test=wide, verdict="inconclusive")])).iloc[0]
    assert not out.flips


def test_a_claim_with_its_own_tested_fault_counts_and_others_do_not():
    rows = pd.DataFrame([
        _row("t", kind="theory", ours="x", test="certified bound"),
        _row("s", kind="setting", test="exact values: |gap| <= tolerance"),
        _row("e", kind="implementation", test="exact values: |gap| <= tolerance"),
        _row("n", verdict="not run", test=""),
        _row("stated", kind="result", stated="True", test="stated"),
    ])
    out = claim_power(rows, {"t": "bound halved -> differs"}).set_index("claim_id")
    assert list(out.index) == ["t", "stated"]  # only counted kinds that ran
    assert out.loc["t", "flips"] and out.loc["t", "fault"].startswith("bound halved")
    assert not out.loc["stated", "flips"]


def test_power_summary_counts_per_paper():
    test = _test_of(compare(Estimate.exact(0.5), Estimate(0.5, 0.01, n=10), 0.05))
    rows = pd.DataFrame([_row("a", test=test), _row("b", test="stated", stated="True"),
                         _row("c", test=test, seed_file="002")])
    summary = power_summary(rows, claim_power(rows)).set_index("seed_file")
    assert summary.loc["001", "counted claims run"] == 2
    assert summary.loc["001", "fault flips"] == 1 and summary.loc["002", "share"] == 1.0


def test_fault_texts_join_the_theory_rows_of_every_registry_once():
    import pytest

    from fusionlib.compendium.power import Planted, fault_texts, planted_table
    from fusionlib.compendium.verdicts import categorical

    def ok():
        return categorical(True)

    a = planted_table([Planted("t1", "theory", "h", "i", "f1", ok, ok),
                       Planted("i1", "implementation", "h", "i", "why")])
    b = planted_table([Planted("t2", "theory", "h", "i", "f2", ok, ok)])
    assert fault_texts(a, b) == {"t1": "f1", "t2": "f2"}
    with pytest.raises(ValueError, match="two registries"):
        fault_texts(a, a)
    with pytest.raises(ValueError, match="twice"):
        planted_table([Planted("t1", "theory", "h", "i", "f", ok, ok)] * 2)
    with pytest.raises(ValueError, match="builders"):
        Planted("t3", "theory", "h", "i", "f")
    with pytest.raises(ValueError, match="kind"):
        Planted("t4", "result", "h", "i", "f")


def test_every_theory_claim_of_the_last_build_has_a_planted_fault():
    # the scorecard's registries cover every claim the chapters count as theory
    from pathlib import Path

    from fusionlib.compendium.power import fault_texts
    from fusionlib.fairtest.planted import planted_faults as f002
    from fusionlib.fusion.planted import planted_faults as f000
    from fusionlib.ptgan.theory.planted import planted_faults as f001t
    from fusionlib.ptgan.toys.planted import planted_faults as f001p3
    from fusionlib.ptgan.variance.planted import planted_faults as f001p5
    from fusionlib.studies.identification.planted import planted_faults as fid

    tables = [f000(), fid(), f001t(), f001p3(), f001p5(), f002()]
    texts = fault_texts(*tables)
    kinds = pd.concat(tables).set_index("claim_id")["kind"]
    assert len(texts) == int((kinds == "theory").sum())
    for cid in ("000-H-count-n", "000-H-slope-h", "000-E-perfect-coverage"):
        assert kinds[cid] == "implementation"
    built = Path(__file__).resolve().parents[2] / "book" / "executed" / "scorecard" / \
        "all_claims.csv"
    if built.is_file():
        claims = pd.read_csv(built, dtype=str)
        theory = claims[claims["kind"] == "theory"]
        # a claim still marked theory in an older build is one the registries now demote
        missing = set(theory["claim_id"]) - set(texts) - set(kinds[kinds != "theory"].index)
        assert not missing, sorted(missing)


def test_a_claim_decided_over_readings_flips_when_the_methods_are_swapped():
    from fusionlib.compendium.power import parse_readings
    from fusionlib.compendium.verdicts import across_readings

    def row(cid, verdicts):
        pairs = [(f"tau={t}, running", v) for t, v in zip((0.2, 0.5, 1), verdicts, strict=True)]
        d = across_readings(pairs)
        return dict(claim_id=cid, seed_file="001", kind="result", verdict=d.verdict,
                    test=d.test, stated="False", paper="< 0", tolerance="",
                    ours="; ".join(f"{r}: {v}" for r, v in pairs))

    claims = pd.DataFrame([row("all-differ", ["differs"] * 3),
                           row("mixed", ["differs", "reproduced", "differs"])])
    power = claim_power(claims).set_index("claim_id")
    assert power.loc["all-differ", "rule"] == "across readings"
    assert power.loc["all-differ", "faulted"] == "reproduced" and power.loc["all-differ", "flips"]
    # a verdict that already says "depends on the choice" cannot be flipped by a swap
    assert power.loc["mixed", "verdict"] == "inconclusive" and not power.loc["mixed", "flips"]
    assert parse_readings("not a list") is None
    assert parse_readings("a, b: differs; c: not run") == [("a, b", "differs"), ("c", "not run")]
