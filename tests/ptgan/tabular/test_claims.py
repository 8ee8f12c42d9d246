"""Tests of the tabular chapter's paper-beside-ours tables and ranking claims
(fusionlib.ptgan.tabular.claims)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.compendium.paper import paper_table
from fusionlib.compendium.run import Run
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.tabular.claims import (
    discrepancy_readings_claims,
    known_differences,
    paper_side,
    pooled_claims,
    protocol_not_comparable,
    ranking_claims,
    readings_claims,
    shown,
)
from fusionlib.ptgan.tabular.report import COLUMNS, s_t_summary

CLASSIFIERS = list(COLUMNS)


def _scores(offset: float = 0.0) -> pd.DataFrame:
    """Three repetitions of Adult ND: PT+CP at 0.02, 0.03, 0.04 and MP 0.01 above each."""
    rows = []
    for rep, base in enumerate([0.02, 0.03, 0.04]):
        for clf in CLASSIFIERS:
            rows.append(dict(dataset="adult", discrepancy="nd", method="pt+cp", rep=rep,
                             classifier=clf, s_t=base + offset))
            rows.append(dict(dataset="adult", discrepancy="nd", method="mp-1", rep=rep,
                             classifier=clf, s_t=base + offset + 0.01))
    return pd.DataFrame(rows)


def test_why_and_not_comparable():
    known = known_differences({"dataset": "adult"}, "RF")
    assert known.startswith("known differences: ") and "temperature 0.2" in known
    nc = protocol_not_comparable({"adult": ["3 of 10 runs"], "compas": []}, "cpu")
    assert nc({"dataset": "adult"}, "RF") == "protocol at scale cpu: 3 of 10 runs"
    assert nc({"dataset": "compas"}, "RF") is None
    assert nc({"dataset": "german"}, "RF") is None


def test_paper_side_registers_every_cell_of_table3(tmp_path):
    run = Run("ptgan_tabular", scale="cpu", seed=0, results_dir=tmp_path)
    main = _scores()
    missing = {"adult": None, "law_school": "no file", "credit_default": "no file"}
    table, v = paper_side(run, "Table 3", "T3", summary=s_t_summary(main), main=main,
                          missing=missing, reductions={"adult": []})
    paper = paper_table("001", "Table 3")
    assert len(table) == len(paper)
    assert len(v) == len(paper) * len(COLUMNS)  # one claim per row and classifier
    assert set(run.claims["claim_id"].str[:7]) == {"001-T3-"}
    adult = table[(table.dataset == "adult") & (table.method == "PT + CP")].iloc[0]
    assert adult["RF ours"] == pytest.approx(0.03)
    assert adult["RF sd ours"] == pytest.approx(0.01)
    assert adult["runs ours"] == 3
    assert not table[table.dataset != "adult"]["RF verdict"].isin(["reproduced"]).any()
    assert list(shown(table).columns[:4]) == ["dataset", "discrepancy", "method", "RF paper"]
    with pytest.raises(InvalidInputError, match="not a paper_side table"):
        shown(table.drop(columns="runs ours"))


def test_ranking_claims_by_hand(tmp_path):
    run = Run("ptgan_tabular", scale="cpu", seed=0, results_dir=tmp_path)
    main = _scores()
    all_paper = pd.concat([paper_table("001", t) for t in ("Table 3", "Table 10", "Table 11")])
    cfg = {"datasets": ["adult"], "settings": ["pt+cp", "mp-1"], "discrepancies": ["nd"]}
    plan = {"adult": None, "law_school": "no file", "credit_default": None}
    out = ranking_claims(run, "Table 3", "T3", ["nd"], all_paper=all_paper, main=main,
                         plan=plan, cfg=cfg, reductions={"adult": ["3 of 10 runs"]})
    adult = out[out.dataset == "adult"]
    assert len(adult) == len(COLUMNS)
    # PT+CP is 0.01 below MP in every repetition: a difference of exactly -0.01, no spread
    assert np.allclose(adult["ours"].astype(float), -0.01)
    assert (adult["n"].astype(int) == 3).all()
    claims = run.claims.set_index("claim_id")
    assert claims.loc["001-T3-rank-adult-nd-rf", "verdict"] == "not comparable"
    assert "3 of 10 runs" in claims.loc["001-T3-rank-adult-nd-rf", "reason"]
    absent = out[out.dataset == "law_school"]
    assert (absent["verdict"] == "not run").all()
    assert "data absent: no file" in claims.loc["001-T3-rank-law_school-nd-rf", "reason"]
    p = all_paper[(all_paper.dataset == "adult") & (all_paper.method.isin(["pt+cp", "mp-1"]))
                  & (all_paper.discrepancy == "nd")].set_index("method")
    assert adult.iloc[0]["paper"] == round(p.loc["pt+cp", "RF"] - p.loc["mp-1", "RF"], 3)


def _pooled(verdict: str) -> pd.DataFrame:
    return pd.DataFrame([dict(classifier=col, seed="pooled", verdict=verdict)
                         for col in COLUMNS.values()])


def _sens(verdicts: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame([dict(variant=v, classifier=c, verdict=x)
                         for v, x in verdicts.items() for c in COLUMNS],
                        columns=["variant", "classifier", "verdict"])


@pytest.mark.parametrize("pooled, sens, expected", [
    # our reading differs, tau = 1 reproduces: the ordering depends on the unstated choice
    ("differs", {"tau=1": "reproduced"}, "inconclusive"),
    # every reading computed differs
    ("differs", {"tau=0.5": "differs", "tau=1": "differs", "bn=batch": "differs"}, "differs"),
    # our reading differs, the others not computed: partly decided (a missing reading could
    # be the paper's)
    ("differs", {}, "not run"),
    # every reading reproduces
    ("reproduced", {"tau=0.5": "reproduced", "tau=1": "reproduced", "bn=batch": "reproduced"},
     "reproduced"),
    # reproduced on ours alone cannot confirm it while other readings are missing
    ("reproduced", {}, "not run"),
    # the 45,222-row Adult is not a reading: its verdict does not vote
    ("differs", {"data=uci-complete": "reproduced", "tau=0.5": "differs", "tau=1": "differs",
                 "bn=batch": "differs"}, "differs"),
])
def test_readings_claims_decide_over_the_unstated_choices(tmp_path, pooled, sens, expected):
    run = Run("ptgan_tabular", scale="cpu", seed=0, results_dir=tmp_path)
    out = readings_claims(run, _pooled(pooled), _sens(sens))
    assert (out["combined"] == expected).all(), out
    claims = run.claims.set_index("claim_id")
    row = claims.loc["001-T3-readings-adult-nd-rf"]
    assert row["verdict"] == expected and row["kind"] == "result"
    if expected == "inconclusive":
        assert "depends on the unstated choice" in row["reason"]


def test_readings_claims_flip_when_the_methods_are_swapped(tmp_path):
    # planted fault: PT+CP and MP swapped in every reading turns differs into reproduced
    run = Run("ptgan_tabular", scale="cpu", seed=0, results_dir=tmp_path)
    all_differ = {"tau=0.5": "differs", "tau=1": "differs", "bn=batch": "differs"}
    swapped = {k: "reproduced" for k in all_differ}
    assert (readings_claims(run, _pooled("differs"), _sens(all_differ)).combined
            == "differs").all()
    assert (readings_claims(run, _pooled("reproduced"), _sens(swapped)).combined
            == "reproduced").all()


def _jsd(gap: float, scale: str = "paper") -> pd.DataFrame:
    """Three repetitions of Adult JSD from another scale's cells: PT+CP ``gap`` above MP on
    average (gap - 0.002, gap, gap + 0.002)."""
    rows = [dict(dataset="adult", discrepancy="jsd", method=m, rep=rep, classifier=clf,
                 s_t=0.05 + 0.01 * rep + (gap + 0.002 * (rep - 1) if m == "pt+cp" else 0.0),
                 scale=scale)
            for rep in range(3) for clf in CLASSIFIERS for m in ("pt+cp", "mp-1")]
    return pd.DataFrame(rows)


def _rank10(tmp_path, main: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    run = Run("ptgan_tabular", scale="cpu", seed=0, results_dir=tmp_path)
    all_paper = pd.concat([paper_table("001", t) for t in ("Table 3", "Table 10", "Table 11")])
    cfg = {"datasets": ["adult"], "settings": ["pt+cp", "mp-1"], "discrepancies": ["nd"]}
    plan = {"adult": None, "law_school": "no file", "credit_default": "no file"}
    out = ranking_claims(run, "Table 10", "T3", ["nd"], all_paper=all_paper, main=main,
                         plan=plan, cfg=cfg, reductions={"adult": []})
    return out, run.claims.set_index("claim_id")


def test_ranking_claims_read_the_paper_scales_rows_where_present(tmp_path):
    """A cpu chapter's grid has no JSD; the paper scale's JSD cells decide the JSD claims,
    labelled with scale paper. Planted fault: PT+CP above MP flips the verdict to differs."""
    main = _scores().assign(scale="cpu")
    out, claims = _rank10(tmp_path, main)
    jsd = claims.loc["001-T3-rank-adult-jsd-rf"]
    assert jsd["verdict"] == "not run"
    assert "paper scale only" in jsd["reason"] and "make paper-cells" in jsd["reason"]

    below = pd.concat([main, _jsd(-0.01)], ignore_index=True)
    out, claims = _rank10(tmp_path / "b", below)
    jsd = claims.loc["001-T3-rank-adult-jsd-rf"]
    assert jsd["verdict"] == "reproduced" and jsd["scale"] == "paper"
    assert float(jsd["ours"]) == pytest.approx(-0.01)
    pd_rows = claims.loc["001-T3-rank-adult-pd-rf"]  # PD not computed: still not run
    assert pd_rows["verdict"] == "not run" and pd_rows["scale"] == "cpu"

    above = pd.concat([main, _jsd(+0.01)], ignore_index=True)
    _, claims = _rank10(tmp_path / "c", above)
    assert claims.loc["001-T3-rank-adult-jsd-rf", "verdict"] == "differs"


def test_ranking_claims_need_both_methods(tmp_path):
    """One method's cells alone decide nothing (the other's are still missing)."""
    one = _jsd(-0.01)
    main = pd.concat([_scores().assign(scale="cpu"), one[one.method == "pt+cp"]],
                     ignore_index=True)
    _, claims = _rank10(tmp_path, main)
    assert claims.loc["001-T3-rank-adult-jsd-lr", "verdict"] == "not run"
    assert "paper scale only" in claims.loc["001-T3-rank-adult-jsd-lr", "reason"]


def test_paper_rows_are_not_marked_with_this_scales_departures(tmp_path):
    """A cpu scale that departs from the paper's protocol (fewer iterations) marks its own
    rows not comparable, never the rows decided wholly from the paper scale's cells."""
    run = Run("ptgan_tabular", scale="cpu", seed=0, results_dir=tmp_path)
    all_paper = pd.concat([paper_table("001", t) for t in ("Table 3", "Table 10", "Table 11")])
    main = pd.concat([_scores().assign(scale="cpu"), _jsd(-0.01)], ignore_index=True)
    cfg = {"datasets": ["adult"], "settings": ["pt+cp", "mp-1"], "discrepancies": ["nd"]}
    plan = {"adult": None, "law_school": "no file", "credit_default": "no file"}
    red = {"adult": ["1,000 of the paper's 57,000 iterations"]}
    for table in ("Table 3", "Table 10"):
        ranking_claims(run, table, "T3", ["nd"], all_paper=all_paper, main=main, plan=plan,
                       cfg=cfg, reductions=red)
    claims = run.claims.set_index("claim_id")
    assert claims.loc["001-T3-rank-adult-nd-rf", "verdict"] == "not comparable"
    assert claims.loc["001-T3-rank-adult-jsd-rf", "verdict"] == "reproduced"
    nc = protocol_not_comparable(red, "cpu")
    assert nc({"dataset": "adult", "scale": "cpu"}, "RF") and \
        nc({"dataset": "adult", "scale": "paper"}, "RF") is None


def test_paper_side_labels_rows_from_the_paper_scale(tmp_path):
    run = Run("ptgan_tabular", scale="cpu", seed=0, results_dir=tmp_path)
    main = pd.concat([_scores().assign(scale="cpu"), _jsd(-0.01)], ignore_index=True)
    summary = s_t_summary(main).merge(
        main[["dataset", "discrepancy", "method", "scale"]].drop_duplicates(),
        on=["dataset", "discrepancy", "method"], how="left")
    missing = {"adult": None, "law_school": "no file", "credit_default": "no file"}
    table, _ = paper_side(run, "Table 10", "T10", summary=summary, main=main, missing=missing,
                          reductions={"adult": []})
    claims = run.claims.set_index("claim_id")
    jsd = claims[claims.index.str.startswith("001-T10-adult-jsd-")]
    assert len(jsd) and (jsd["scale"] == "paper").all()
    assert (claims[claims.index.str.startswith("001-T10-adult-pd-")]["scale"] == "cpu").all()
    assert shown(table, "cpu").columns[-1] == "scale"  # the rows say where they came from
    assert "scale" not in shown(table, "paper").columns


def test_table10_orderings_are_decided_over_the_readings(tmp_path):
    """Adult JSD: our reading differs, the others are not computed: partly decided ("not
    run"), never "differs" on one reading (the temperature turns ND's ordering around).
    Planted fault: taking the rank claim's verdict as the ordering's gives "differs"."""
    run = Run("ptgan_tabular", scale="cpu", seed=0, results_dir=tmp_path)
    main = pd.concat([_scores().assign(scale="cpu"), _jsd(+0.01)], ignore_index=True)
    all_paper = pd.concat([paper_table("001", t) for t in ("Table 3", "Table 10", "Table 11")])
    cfg = {"datasets": ["adult"], "settings": ["pt+cp", "mp-1"], "discrepancies": ["nd"]}
    plan = {"adult": None, "law_school": "no file", "credit_default": "no file"}
    rank = ranking_claims(run, "Table 10", "T3", ["nd"], all_paper=all_paper, main=main,
                          plan=plan, cfg=cfg, reductions={"adult": []})
    assert (rank[(rank.dataset == "adult") & (rank.discrepancy == "jsd")].verdict
            == "differs").all()
    out = discrepancy_readings_claims(run, rank, ["jsd", "pd"])
    claims = run.claims.set_index("claim_id")
    jsd = claims.loc["001-T10-readings-adult-jsd-rf"]
    assert jsd["verdict"] == "not run" and "partly decided (1 of 4 readings)" in jsd["reason"]
    assert jsd["scale"] == "paper"
    pd_claim = claims.loc["001-T10-readings-adult-pd-rf"]
    assert pd_claim["verdict"] == "not run" and "no reading was computed" in pd_claim["reason"]
    assert len(out) == 2 * len(COLUMNS)


def test_table11_orderings_are_decided_over_the_readings(tmp_path):
    """Adult ND against MP with lambda_MP = 10: our reading is decided ("differs"), MP-10 is
    not trained under the other readings: the readings claim is partly decided ("not run"),
    with the weight in its id. Planted fault: the rank claim alone would decide "differs"."""
    run = Run("ptgan_tabular", scale="cpu", seed=0, results_dir=tmp_path)
    # PT+CP (cpu cells) about 0.02 above MP-10 (paper cells) on each repetition
    main = _jsd(0.02).assign(discrepancy="nd")
    main["method"] = main["method"].replace({"mp-1": "mp-10"})
    main.loc[main.method == "pt+cp", "scale"] = "cpu"
    all_paper = pd.concat([paper_table("001", t) for t in ("Table 3", "Table 10", "Table 11")])
    cfg = {"datasets": ["adult"], "settings": ["pt+cp", "mp-1"], "discrepancies": ["nd"]}
    plan = {"adult": None, "law_school": "no file", "credit_default": "no file"}
    rank = ranking_claims(run, "Table 11", "T11", ["nd"], "mp-10", all_paper=all_paper,
                          main=main, plan=plan, cfg=cfg, reductions={"adult": []})
    mine = rank[(rank.dataset == "adult") & (rank.discrepancy == "nd")]
    assert (mine.verdict == "differs").all()
    out = discrepancy_readings_claims(run, rank, ["nd", "jsd"], other="mp-10",
                                      table_name="Table 11", tag="T11")
    claims = run.claims.set_index("claim_id")
    nd = claims.loc["001-T11-readings-adult-nd-mp-10-rf"]
    assert nd["verdict"] == "not run" and "partly decided (1 of 4 readings)" in nd["reason"]
    assert nd["scale"] == "paper" and nd["where"] == "Table 11"
    assert "10" in nd["quantity"]
    jsd = claims.loc["001-T11-readings-adult-jsd-mp-10-rf"]
    assert "no reading was computed" in jsd["reason"]
    assert set(out["other"]) == {"mp-10"} and len(out) == 2 * len(COLUMNS)


@pytest.mark.parametrize("sens, labelled", [
    ({"tau=1": "reproduced"}, "paper"),  # one other reading computed from paper cells
    ({}, "cpu"),  # no other reading computed: nothing was read from the paper scale
])
def test_readings_claims_name_the_scale_of_the_other_readings(tmp_path, sens, labelled):
    run = Run("ptgan_tabular", scale="cpu", seed=0, results_dir=tmp_path)
    readings_claims(run, _pooled("differs"), _sens(sens), scale="paper")
    row = run.claims.set_index("claim_id").loc["001-T3-readings-adult-nd-rf"]
    assert row["scale"] == labelled


def test_pooled_claims_name_the_scale_of_each_root_seed(tmp_path):
    """Seed 0 from this (cpu) page, seed 1 from the paper scale's cells: the claim is labelled
    paper and names each seed's scale. Planted fault: without ``seed_scales`` (the page's
    former call) it would read as the cpu scale's alone."""
    all_paper = pd.concat([paper_table("001", t) for t in ("Table 3", "Table 10", "Table 11")])
    per_seed = {0: _scores(), 1: _scores(0.01)}
    for seed_scales, labelled in (({1: "paper"}, "paper"), (None, "cpu")):
        run = Run("ptgan_tabular", scale="cpu", seed=0, results_dir=tmp_path)
        out = pooled_claims(run, per_seed, all_paper=all_paper, reductions=[],
                            seed_scales=seed_scales)
        row = run.claims.set_index("claim_id").loc["001-T3-pooled-adult-nd-rf"]
        assert row["scale"] == labelled and int(row["ours_n"]) == 6
        rf = out[out.classifier == "RF"].set_index("seed")["scale"]
        assert rf["0"] == "cpu" and rf["1"] == labelled
        assert rf["pooled"] == ("cpu and paper" if seed_scales else "cpu")


def test_readings_claims_take_the_scale_of_the_rank_claims_cells(tmp_path):
    """Our reading decided from this (cpu) scale's own cells: the readings claim says cpu.
    Planted fault: the former rule (paper whenever our reading is decided) would say paper."""
    run = Run("ptgan_tabular", scale="cpu", seed=0, results_dir=tmp_path)
    main = pd.concat([_scores().assign(scale="cpu"), _jsd(+0.01, scale="cpu")],
                     ignore_index=True)
    all_paper = pd.concat([paper_table("001", t) for t in ("Table 3", "Table 10", "Table 11")])
    cfg = {"datasets": ["adult"], "settings": ["pt+cp", "mp-1"], "discrepancies": ["nd", "jsd"]}
    plan = {"adult": None, "law_school": "no file", "credit_default": "no file"}
    rank = ranking_claims(run, "Table 10", "T3", ["nd", "jsd"], all_paper=all_paper, main=main,
                          plan=plan, cfg=cfg, reductions={"adult": []})
    mine = rank[(rank.dataset == "adult") & (rank.discrepancy == "jsd")]
    assert (mine.scale == "cpu").all() and (mine.verdict == "differs").all()
    assert rank[rank.verdict == "not run"].scale.isna().all()
    discrepancy_readings_claims(run, rank, ["jsd"])
    row = run.claims.set_index("claim_id").loc["001-T10-readings-adult-jsd-rf"]
    assert row["scale"] == "cpu" and "partly decided (1 of 4 readings)" in row["reason"]


def test_readings_claims_take_the_scale_of_the_pooled_reading(tmp_path):
    """No other reading computed, but our (pooled) reading drew root seeds from the paper
    scale's cells: the readings claim says paper."""
    run = Run("ptgan_tabular", scale="cpu", seed=0, results_dir=tmp_path)
    pooled = _pooled("differs").assign(scale="cpu and paper")
    readings_claims(run, pooled, _sens({}), scale="paper")
    assert run.claims.set_index("claim_id").loc["001-T3-readings-adult-nd-rf", "scale"] == "paper"
    run2 = Run("ptgan_tabular", scale="cpu", seed=0, results_dir=tmp_path / "b")
    readings_claims(run2, _pooled("differs").assign(scale="cpu"), _sens({}), scale="paper")
    assert run2.claims.set_index("claim_id").loc["001-T3-readings-adult-nd-rf", "scale"] == "cpu"
