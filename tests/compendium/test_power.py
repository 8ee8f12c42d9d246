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


def _registry_entries():
    from fusionlib.compendium.power import Planted
    from fusionlib.compendium.verdicts import categorical

    def ok():
        return categorical(True)

    return [Planted("t1", "theory", "hyp 1", "inst 1", "fault 1", ok, ok),
            Planted("i1", "implementation", "identity", "inst i", "why none flips it"),
            Planted("t2", "theory", "hyp 2", "inst 2", "fault 2", ok, ok)]


def test_a_registry_looks_up_its_entries_and_names_the_known_ids_when_absent():
    import pytest

    from fusionlib.compendium.power import Registry
    from fusionlib.errors import InvalidInputError

    entries = _registry_entries()
    reg = Registry(iter(entries))  # any iterable; kept as a tuple in order
    assert reg.entries == tuple(entries)
    assert list(reg.by_id) == ["t1", "i1", "t2"] and reg.by_id["i1"] is entries[1]
    assert reg.get("t2") is entries[2]
    with pytest.raises(InvalidInputError, match=r"no planted-fault entry for 'nope'; "
                                                r"known: t1, i1, t2"):
        reg.get("nope")
    with pytest.raises(InvalidInputError, match="no planted-fault entry"):
        reg.context("nope")


def test_a_registry_refuses_duplicate_claim_ids_and_foreign_entries():
    import pytest

    from fusionlib.compendium.power import Registry
    from fusionlib.errors import InvalidInputError

    entries = _registry_entries()
    with pytest.raises(InvalidInputError, match=r"claim ids entered twice: i1, t1$"):
        Registry(entries + [entries[1], entries[0]])
    with pytest.raises(InvalidInputError, match="Planted entries"):
        Registry([*entries, ("t3", "theory")])
    assert Registry([]).theory_ids() == [] and Registry([]).table().empty


def test_a_registry_reports_only_its_theory_ids_in_order():
    from fusionlib.compendium.power import Planted, Registry

    reg = Registry(_registry_entries())
    assert reg.theory_ids() == ["t1", "t2"]
    # planted fault: a registry that counted every entry (implementation checks too) as theory
    # would report "i1", which no honest fault can flip
    assert "i1" not in reg.theory_ids()
    assert reg.theory_ids() == [p.claim_id for p in reg.entries if p.kind == "theory"]
    only_impl = Registry([Planted("i", "implementation", "h", "i", "why")])
    assert only_impl.theory_ids() == []
    reg.theory_ids().append("x")  # a fresh list each call: the registry is unchanged
    assert reg.theory_ids() == ["t1", "t2"]


def test_a_registry_table_and_context_match_the_shared_helpers():
    from fusionlib.compendium.power import (
        PLANTED_COLUMNS,
        Registry,
        planted_context,
        planted_table,
    )

    entries = _registry_entries()
    reg = Registry(entries)
    table = reg.table()
    assert list(table.columns) == list(PLANTED_COLUMNS)
    assert list(table["claim_id"]) == ["t1", "i1", "t2"]
    assert list(table["kind"]) == ["theory", "implementation", "theory"]
    pd.testing.assert_frame_equal(table, planted_table(entries))
    assert reg.context("t1") == ("hypothesis: hyp 1; instance: inst 1; planted fault it "
                                 "catches: fault 1")
    assert reg.context("i1") == "implementation check (identity): why none flips it"
    assert all(reg.context(p.claim_id) == planted_context(p) for p in entries)


def test_every_planted_module_is_a_thin_front_of_its_registry():
    import importlib
    import inspect

    import pytest

    from fusionlib.compendium.power import PLANTED_COLUMNS, Planted, Registry
    from fusionlib.errors import InvalidInputError

    for name in ("fusionlib.fusion.planted", "fusionlib.fairtest.planted",
                 "fusionlib.studies.identification.planted", "fusionlib.ptgan.toys.planted",
                 "fusionlib.ptgan.variance.planted", "fusionlib.ptgan.theory.planted"):
        mod = importlib.import_module(name)
        reg = mod.REGISTRY
        assert isinstance(reg, Registry), name
        assert mod.PLANTED is reg.by_id and all(isinstance(p, Planted) for p in reg.entries)
        for fn in ("planted", "theory_ids", "context", "planted_faults"):
            assert inspect.isfunction(getattr(mod, fn)), (name, fn)  # not a bound method
            assert getattr(mod, fn).__doc__, (name, fn)
        first = reg.entries[0].claim_id
        assert mod.planted(first) is reg.by_id[first]
        assert mod.theory_ids() == reg.theory_ids() and mod.theory_ids()
        assert mod.context(first) == reg.context(first)
        assert list(mod.planted_faults().columns) == list(PLANTED_COLUMNS)
        with pytest.raises(InvalidInputError, match="known: "):
            mod.planted("no-such-claim")
