"""The fair chapter's comparisons: reductions, the bootstrap of the Table 4/12 statistic."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.compendium.paper import paper_table
from fusionlib.compendium.run import Run
from fusionlib.ptgan.fair.cells import FAIR_CONFIG
from fusionlib.ptgan.fair.report import (
    by_level,
    equivalence_margins,
    fair_reductions,
    lowest_gap_estimate,
    our_table,
    register_smallest_sp,
    shown,
    statistic_estimate,
)


def _scores(n_reps: int, n_sets: int, shift: dict[str, float]) -> pd.DataFrame:
    g = np.random.default_rng(0)
    rows = []
    for method, base in shift.items():
        for rep in range(n_reps):
            for k in range(n_sets):
                rows.append(dict(dataset="adult", rep=rep, method=method, set=k,
                                 classifier="RF", auc=0.9, sp=base + 0.01 * g.random()))
    return pd.DataFrame(rows)


def test_reductions_name_the_departures_and_none_at_paper_scale():
    assert fair_reductions(FAIR_CONFIG["paper"], FAIR_CONFIG["paper"]) == []
    cpu = fair_reductions(FAIR_CONFIG["cpu"], FAIR_CONFIG["paper"])
    assert any("1,500 of the paper's 100,000" in r for r in cpu)
    assert any("1 run(s) x 10 sets instead of 10 x 20" in r for r in cpu)


def test_statistic_has_a_bootstrap_error_over_runs_and_none_with_one_run():
    s = _scores(10, 20, {"FairPTGAN": 0.02})
    est = statistic_estimate(s, "adult", "FairPTGAN", "RF", 0.85)
    pooled = np.sort(s["sp"].to_numpy())[:10]
    assert est.value == pytest.approx(pooled.mean()) and est.n == 10
    assert est.se is not None and 0 < est.se < 0.01
    again = statistic_estimate(s, "adult", "FairPTGAN", "RF", 0.85)
    assert again.se == est.se  # seeded bootstrap
    one = statistic_estimate(_scores(1, 20, {"FairPTGAN": 0.02}), "adult", "FairPTGAN", "RF",
                             0.85)
    assert one.se is None


def test_lowest_gap_is_negative_when_fairptgan_is_lowest():
    s = _scores(10, 20, {"FairPTGAN": 0.01, "FairWGANGP": 0.05, "GeoRepair": 0.03})
    est = lowest_gap_estimate(s, "adult", "RF", 0.85)
    assert est.value == pytest.approx(-0.02, abs=0.003) and est.se < 0.005


def test_margins_are_half_the_gap_to_the_nearest_competitor():
    m = equivalence_margins(paper_table("001", "Table 4"), ("RF", "SVM", "LR"))
    # Adult RF: FairPTGAN 0.064, FairWGANGP 0.083, GeoRepair 0.082 -> half of 0.018
    assert m[("adult", "RF")] == pytest.approx(0.009)


def test_by_level_averages_each_level():
    scores = pd.DataFrame({"method": ["FairPTGAN"] * 3 + ["GeoRepair"],
                           "classifier": ["RF", "RF", "LR", "RF"], "level": [0.5, 0.5, 0.5, 1.0],
                           "auc": [0.8, 0.9, 0.7, 0.1], "sp": [0.1, 0.3, 0.2, 0.9]})
    lv = by_level(scores, "FairPTGAN").set_index("classifier")
    assert lv.loc["RF", "auc"] == pytest.approx(0.85) and lv.loc["RF", "sp"] == pytest.approx(0.2)
    assert lv.loc["LR", "sp"] == pytest.approx(0.2)
    assert len(by_level(scores, "GeoRepair")) == 1


def _three_classifiers(n_reps: int, n_sets: int) -> pd.DataFrame:
    parts = []
    for clf in ("RF", "SVM", "LR"):
        for method, base in (("FairPTGAN", 0.02), ("FairWGANGP", 0.05), ("GeoRepair", 0.08)):
            s = _scores(n_reps, n_sets, {method: base})
            parts.append(s.assign(classifier=clf))
    return pd.concat(parts, ignore_index=True)


def test_our_table_and_its_claims(tmp_path):
    thresholds = {"adult": 0.85, "law_school": 0.65}
    scores = _three_classifiers(3, 5)  # 15 sets per method: enough for the 10 smallest
    table = our_table(scores, "Table 4", thresholds)
    paper = paper_table("001", "Table 4")
    assert list(table["dataset"])[: len(paper)] == list(paper["dataset"])
    adult = table.set_index(["dataset", "method"]).loc[("adult", "FairPTGAN")]
    pooled = np.sort(scores[(scores.method == "FairPTGAN") & (scores.classifier == "RF")]["sp"])
    assert adult["RF ours"] == pytest.approx(pooled[:10].mean())
    assert adult["RF n"] == 10 and adult["threshold"] == 0.85  # the 10 selected
    law = table[table.dataset == "law_school"]
    assert law["RF ours"].isna().all() and (law["threshold"] == 0.65).all()
    assert list(shown(table).columns[:4]) == ["dataset", "method", "threshold", "RF paper"]

    run = Run("fairptgan", scale="cpu", seed=0, results_dir=tmp_path)
    v = register_smallest_sp(run, "Table 4", "T4", table, scores, reduced=None,
                             not_run_reason="no law school data", seed=0)
    claims = run.claims.set_index("claim_id")
    n_compared = len(table[table.method.isin(["FairPTGAN", "FairWGANGP", "GeoRepair"])])
    assert len(v) == len(claims) == n_compared * 3 * 2  # classifiers x (mean, sd)
    assert claims.loc["001-T4-law_school-FairPTGAN-RF-mean", "verdict"] == "not run"
    assert claims.loc["001-T4-law_school-FairPTGAN-RF-mean", "reason"] == "no law school data"
    ours = statistic_estimate(scores, "adult", "FairPTGAN", "RF", 0.85, seed=0)
    assert float(claims.loc["001-T4-adult-FairPTGAN-RF-mean", "ours"]) == pytest.approx(
        ours.value, abs=1e-6)

    run2 = Run("fairptgan", scale="cpu", seed=0, results_dir=tmp_path / "few")
    few = our_table(_three_classifiers(1, 5), "Table 4", thresholds)  # 5 sets: fewer than 10
    register_smallest_sp(run2, "Table 4", "T4", few, _three_classifiers(1, 5), reduced="short",
                         not_run_reason="absent", seed=0)
    row = run2.claims.set_index("claim_id").loc["001-T4-adult-FairPTGAN-RF-mean"]
    assert row["verdict"] == "not comparable"
    assert "short" in row["reason"] and "only 5 synthetic sets reach AUC >= 0.85" in row["reason"]


def test_paper_scores_are_read_only_when_every_adult_cell_is_present(tmp_path):
    """present_paper_scores reads the paper scale's Adult cells from the shard folder (nothing
    computed): None until all are there, a provisional shard not counted; then a cpu chapter's
    Adult claims are decided from them, labelled with scale paper, while the cpu scale's own
    reduction still makes the others "not comparable"."""
    from fusionlib.compendium import cells as C
    from fusionlib.ptgan.fair.cells import FAIR
    from fusionlib.ptgan.fair.report import present_paper_scores

    key = C.code_key(FAIR)
    adult = [c for c in FAIR.cells("paper", 0) if c.config["dataset"] == "adult"]
    assert len(adult) == 4  # 2 methods x 2 blocks of 5 repetitions
    scores = _three_classifiers(10, 20)
    names = {"fairptgan": ("FairPTGAN", "GeoRepair"), "fairwgangp": ("FairWGANGP",)}

    def write(cell, provisional=False):
        reps = cell.config["reps"]
        rows = scores[scores.method.isin(names[cell.config["method"]])
                      & scores.rep.isin(reps)].assign(status="run", reason="", seed=0)
        path = C.shard_path(tmp_path, "fairptgan", "paper", cell.cell_id)
        C.write_shard(path, cell, C.Shard(rows, provisional=provisional), key, scale="paper",
                      seconds=1.0)

    assert present_paper_scores("adult", 0, root=tmp_path) == (None, 0, 4)
    for cell in adult[:3]:
        write(cell)
    write(adult[3], provisional=True)  # e.g. written while the data file was absent
    assert present_paper_scores("adult", 0, root=tmp_path)[1:] == (3, 4)
    write(adult[3])
    got, present, total = present_paper_scores("adult", 0, root=tmp_path)
    assert (present, total) == (4, 4) and sorted(got.rep.unique()) == list(range(10))
    assert len(got) == len(scores)
    # planted fault: a shard of other code (another key) is not read
    stale = C.shard_path(tmp_path, "fairptgan", "paper", adult[0].cell_id)
    C.write_shard(stale, adult[0], C.Shard(scores.head(3)), "0" * 64, scale="paper")
    with pytest.warns(Warning):
        assert present_paper_scores("adult", 0, root=tmp_path)[0] is None

    table = our_table(got, "Table 4", {"adult": 0.85, "law_school": 0.65})
    run = Run("fairptgan", scale="cpu", seed=0, results_dir=tmp_path / "run")
    register_smallest_sp(run, "Table 4", "T4", table, got,
                         reduced={"adult": None, "law_school": "cpu protocol"},
                         not_run_reason="no law school data", seed=0,
                         scales={"adult": "paper"})
    claims = run.claims.set_index("claim_id")
    row = claims.loc["001-T4-adult-FairPTGAN-RF-mean"]
    assert row["scale"] == "paper" and row["verdict"] not in ("not comparable", "not run")
    assert claims.loc["001-T4-law_school-FairPTGAN-RF-mean", "verdict"] == "not run"


def _with_rates(scores: pd.DataFrame, collapsed: dict[str, list[int]]) -> pd.DataFrame:
    """Positive rate 0.24 everywhere except the listed (method, rep)s, whose sets are all 0 and
    whose classifiers therefore score AUC 0.5, SP 0 (what evaluate_set returns then)."""
    out = scores.assign(positive_rate=0.24)
    for method, reps in collapsed.items():
        m = (out["method"] == method) & out["rep"].isin(reps)
        out.loc[m, ["positive_rate", "auc", "sp"]] = [0.0, 0.5, 0.0]
    return out


def test_collapsed_reps_are_those_whose_every_set_is_single_class():
    from fusionlib.ptgan.fair.report import collapse_table, collapsed_reps

    s = _with_rates(_scores(4, 5, {"FairPTGAN": 0.02, "FairWGANGP": 0.05}),
                    {"FairWGANGP": [0, 2]})
    assert collapsed_reps(s, "adult", "FairWGANGP") == [0, 2]
    assert collapsed_reps(s, "adult", "FairPTGAN") == []
    one_set = s.copy()  # one single-class set does not make a collapsed repetition
    one_set.loc[(one_set.method == "FairPTGAN") & (one_set.rep == 1) & (one_set.set == 0),
                "positive_rate"] = 0.0
    assert collapsed_reps(one_set, "adult", "FairPTGAN") == []
    assert collapsed_reps(s.drop(columns="positive_rate"), "adult", "FairWGANGP") == []
    t = collapse_table(s).set_index("method")
    assert t.loc["FairWGANGP", "collapsed"] == 2 and t.loc["FairWGANGP", "which"] == "0, 2"
    assert t.loc["FairPTGAN", "collapsed"] == 0


def test_a_collapsed_baseline_is_not_compared_and_cannot_make_fairptgan_lowest(tmp_path):
    """Planted fault: 9 of 10 FairWGANGP repetitions collapse. Its Table 4 rows turn "not
    comparable"; Figure 7's gap against GeoRepair alone decides "differs" only."""
    from fusionlib.ptgan.fair.report import lowest_gap_reading

    base = _scores(10, 20, {"FairPTGAN": 0.01, "FairWGANGP": 0.05, "GeoRepair": 0.03})
    healthy = _with_rates(base, {})
    read = lowest_gap_reading(healthy, "adult", "RF", 0.85)
    assert read.dropped == () and read.not_comparable is None
    assert read.estimate.value == pytest.approx(-0.02, abs=0.003)

    gone = _with_rates(base, {"FairWGANGP": [0, 1, 2, 3, 5, 6, 7, 8, 9]})
    read = lowest_gap_reading(gone, "adult", "RF", 0.85)  # FairPTGAN below GeoRepair
    assert read.dropped == ("FairWGANGP",) and read.against == ("GeoRepair",)
    assert read.estimate is None and "9 of 10 FairWGANGP repetitions" in read.not_comparable

    above = _with_rates(_scores(10, 20, {"FairPTGAN": 0.05, "FairWGANGP": 0.01,
                                         "GeoRepair": 0.03}),
                        {"FairWGANGP": [0, 1, 2, 3, 5, 6, 7, 8, 9]})
    read = lowest_gap_reading(above, "adult", "RF", 0.85)  # above GeoRepair: above the lowest
    assert read.not_comparable is None and read.estimate.value == pytest.approx(0.02, abs=0.003)

    mine = _with_rates(base, {"FairPTGAN": [4]})
    assert lowest_gap_reading(mine, "adult", "RF", 0.85).estimate is None

    thresholds = {"adult": 0.85, "law_school": 0.65}
    verdicts = {}
    for name, scores in (("healthy", healthy), ("gone", gone)):
        parts = [scores.assign(classifier=c) for c in ("RF", "SVM", "LR")]
        s3 = pd.concat(parts, ignore_index=True)
        run = Run("fairptgan", scale="cpu", seed=0, results_dir=tmp_path / name)
        register_smallest_sp(run, "Table 4", "T4", our_table(s3, "Table 4", thresholds), s3,
                             reduced=None, not_run_reason="absent", seed=0)
        verdicts[name] = run.claims.set_index("claim_id")
    cid = "001-T4-adult-FairWGANGP-RF-mean"
    assert verdicts["healthy"].loc[cid, "verdict"] != "not comparable"
    assert verdicts["gone"].loc[cid, "verdict"] == "not comparable"
    assert "single-class label" in verdicts["gone"].loc[cid, "reason"]
    ok = "001-T4-adult-FairPTGAN-RF-mean"
    assert verdicts["gone"].loc[ok, "verdict"] == verdicts["healthy"].loc[ok, "verdict"]


def test_with_a_collapsed_baseline_an_undecided_gap_or_no_baseline_left_is_not_comparable():
    """Only a gap resolved above zero (two-sided 95 %) against the kept baselines decides; a gap
    near zero, or no baseline left, is "not comparable", never "reproduced" or "inconclusive"."""
    from fusionlib.compendium.verdicts import direction
    from fusionlib.ptgan.fair.report import collapse_table, lowest_gap_reading

    g = np.random.default_rng(1)
    rows = []
    for method in ("FairPTGAN", "FairWGANGP", "GeoRepair"):
        for rep in range(10):
            for k in range(20):  # FairPTGAN and GeoRepair from one law: a gap near 0
                rows.append(dict(dataset="adult", rep=rep, method=method, set=k,
                                 classifier="RF", auc=0.9, sp=0.03 + 0.02 * g.random()))
    tie = _with_rates(pd.DataFrame(rows), {"FairWGANGP": [0, 1, 2]})
    gap = lowest_gap_estimate(tie, "adult", "RF", 0.85, baselines=("GeoRepair",))
    assert direction(gap, "<0").verdict != "differs"  # the premise: undecided or below
    read = lowest_gap_reading(tie, "adult", "RF", 0.85)
    assert read.estimate is None and read.dropped == ("FairWGANGP",)
    assert "against GeoRepair alone the gap is" in read.not_comparable

    both = _with_rates(pd.DataFrame(rows), {"FairWGANGP": [0], "GeoRepair": [5]})
    read = lowest_gap_reading(both, "adult", "RF", 0.85)
    assert read.estimate is None and read.against == ()
    assert read.dropped == ("FairWGANGP", "GeoRepair")
    no_rates = collapse_table(pd.DataFrame(rows))  # scores without positive_rate
    assert (no_rates["collapsed"] == 0).all()
