"""The ptgan_tabular grid, the Adult preparation and the chapter's summaries."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from fusionlib.compendium.paper import paper_table
from fusionlib.errors import DataUnavailableError, InvalidInputError
from fusionlib.ptgan.tabular import cells as tc
from fusionlib.ptgan.tabular.data import availability, load_tabular
from fusionlib.ptgan.tabular.report import (
    estimates_fn,
    ours_for_paper,
    paired_difference,
    protocol_reductions,
    s_t_from_curves,
    s_t_summary,
    table9_architecture,
)


def test_adult_is_prepared_as_the_seed_says():
    d = load_tabular("adult")
    assert "education" not in d.frame and "fnlwgt" not in d.frame
    assert set(d.frame[d.target].unique()) == {0, 1} and d.target in d.discrete_columns
    assert not d.frame.isna().any().any()


def test_absent_data_say_what_to_provide(monkeypatch):
    def absent(name):
        raise DataUnavailableError(f"dataset {name!r} is not provisioned: place law_school.csv")
    monkeypatch.setattr("fusionlib.data.loaders.load", absent)
    assert "law_school.csv" in availability("law_school")
    with pytest.raises(DataUnavailableError):
        load_tabular("law_school")
    with pytest.raises(InvalidInputError):
        load_tabular("mnist")


def test_grids_per_scale(monkeypatch):
    monkeypatch.setattr(tc, "_available", lambda name: None)
    smoke = tc._grid("smoke", 0)
    assert [c.config["kind"] for c in smoke] == ["reference"] + ["curves"] * 4
    cpu = tc._grid("cpu", 0)
    curves = [c for c in cpu if c.config["kind"] == "curves"]
    # Table 3's Adult ND row at the paper's protocol: two stacked cells of 10 repetitions, on
    # adult.data as the paper counts it, tau 0.2, batch norm with running statistics
    assert [(c.config["group"], len(c.config["members"])) for c in curves] == [("pt+cp", 10),
                                                                             ("mp", 10)]
    assert {c.config["n_iter"] for c in curves} == {57_000}
    assert all(c.config["n_eval"] == 50 for c in curves)
    assert {(c.config["variant"], c.config["bn"]) for c in curves} == {("paper", "running")}
    paper = tc._grid("paper", 0)
    kinds = [c.config["kind"] for c in paper]
    # 3 references + Adult's uci-complete one; 3 data sets x 3 discrepancies x 3 groups; the
    # sensitivity cells: 4 choices x 2 methods (Adult ND)
    assert kinds.count("reference") == 4 and kinds.count("curves") == 27 + 8
    mp = [c for c in paper if c.config.get("group") == "mp"][0]
    assert sorted({m["label"] for m in mp.config["members"]}) == ["mp-1"]
    large = [c for c in paper if c.config.get("group") == "mp-large"][0]
    assert sorted({m["label"] for m in large.config["members"]}) == ["mp-10", "mp-100"]
    assert len(large.config["members"]) == 20
    assert {c.config["n_iter"] for c in paper if c.config["kind"] == "curves"} == \
        {57_000, 35_000, 53_000}
    # every cell of a data set uses the one split, and repetition i has one seed across cells
    adult = [c for c in paper if c.config["dataset"] == "adult"]
    assert len({c.config["split_seed"] for c in adult}) == 1
    rep0 = {m["seed"] for c in adult if c.config["kind"] == "curves"
            for m in c.config["members"] if m["rep"] == 0}
    assert len(rep0) == 1
    # each sensitivity cell changes one choice of the main runs
    sens = {c.config["group"]: c for c in adult if " " in c.config.get("group", "")}
    assert {m["tau"] for m in sens["pt+cp tau=1"].config["members"]} == {1.0}
    assert sens["mp bn=batch"].config["bn"] == "batch"
    assert sens["mp data=uci-complete"].config["variant"] == "uci-complete"
    assert {m["tau"] for m in sens["mp data=uci-complete"].config["members"]} == {tc.TAU}
    monkeypatch.setattr(tc, "_available", lambda n: None if n == "adult" else "absent")
    assert {c.config["dataset"] for c in tc._grid("paper", 0)} == {"adult"}
    assert tc.method_label("mp-10") == "MP (lambda_MP=10)" and tc.method_label("mp-1") == "MP"
    assert tc.method_label("pt+cp tau=0.5") == "PT + CP, tau = 0.5"
    assert tc.method_label("mp-1 bn=batch") == "MP, bn = batch"


def _scores():
    rows = []
    for m, base in (("pt+cp", 0.02), ("mp-1", 0.05)):
        for rep in range(3):
            for c in ("rf", "svm", "lr"):
                rows.append(dict(dataset="adult", discrepancy="nd", method=m, rep=rep,
                                 classifier=c, s_t=base + 0.01 * rep, s_train=0.9))
    return pd.DataFrame(rows)


def test_summary_paper_alignment_and_estimates():
    summary = s_t_summary(_scores())
    row = summary[summary.method == "pt+cp"].iloc[0]
    assert row["RF"] == pytest.approx(0.03) and row["RF sd"] == pytest.approx(0.01)
    assert row["runs"] == 3
    paper = paper_table("001", "Table 3")
    ours = ours_for_paper(paper, summary, {"adult": None, "law_school": "absent file",
                                           "credit_default": "absent file"}, "cpu")
    assert (ours.status == "run").sum() == 2
    assert ours[ours.dataset == "law_school"].reason.str.contains("absent file").all()
    p, o = estimates_fn(_scores(), paper)({"dataset": "adult", "discrepancy": "nd",
                                           "method": "pt+cp"}, "RF")
    # paper: mean 0.022, sd 0.004 over 10 runs; ours: 0.02, 0.03, 0.04 -> mean 0.03, se 0.01/sqrt 3
    assert (p.value, p.se, p.n) == (pytest.approx(0.022), pytest.approx(0.004 / math.sqrt(10)),
                                    10)
    assert (o.value, o.se, o.n) == (pytest.approx(0.03), pytest.approx(0.01 / math.sqrt(3)), 3)


def test_paired_difference_is_per_repetition():
    s = _scores()
    s.loc[(s.method == "mp-1") & (s.rep == 2), "s_t"] = 0.2  # one repetition far off
    est, n = paired_difference(s, "adult", "nd", "rf")
    diffs = [0.02 - 0.05, 0.03 - 0.06, 0.04 - 0.2]
    assert n == 3 and est.value == pytest.approx(np.mean(diffs))
    assert est.se == pytest.approx(np.std(diffs, ddof=1) / math.sqrt(3))
    assert paired_difference(s, "adult", "jsd", "rf")[1] == 0


def test_protocol_reductions_name_what_changes_s_t():
    paper = tc.TABULAR_CONFIG["paper"]
    assert protocol_reductions(tc.TABULAR_CONFIG["cpu"], paper, "adult") == []
    smoke = protocol_reductions(tc.TABULAR_CONFIG["smoke"], paper, "adult")
    assert any("12 of the paper's 57,000" in s for s in smoke)
    assert any("2 evaluation points instead of 50" in s for s in smoke)
    assert any("S_train from 1,000 rows" in s for s in smoke)


def test_s_t_from_curves_uses_the_second_half_and_the_reference():
    rows = [dict(cell_id="r", kind="reference", dataset="adult", classifier="rf", auc=0.9)]
    for rep, aucs in ((0, [0.5, 0.6, 0.8, 0.7]), (1, [0.5, 0.6, 0.8])):  # rep 1 lacks point 4
        rows += [dict(cell_id="c", kind="curves", dataset="adult", discrepancy="nd",
                      group="pt+cp", label="pt+cp", rep=rep, point=k + 1, iteration=k + 1,
                      classifier="rf", auc=a, single_class=False) for k, a in enumerate(aucs)]
    figures = {"r": {}, "c": {"train_s": 2.0, "eval_s": 1.0, "n_iter": 4, "n_members": 2,
                              "diverged": [dict(member=1, label="pt+cp", rep=1, iteration=4)]}}
    curves, scores, runs = s_t_from_curves(pd.DataFrame(rows), figures, 4)
    assert list(scores.rep) == [0]
    assert scores.s_t.iloc[0] == pytest.approx(0.075)  # (0.1 + 0.2) / (4 - 2 + 2)
    assert curves.auc_train.eq(0.9).all()
    assert runs.diverged.iloc[0] == 1 and "rep 1 (iteration 4)" in runs.diverged_members.iloc[0]


def test_paper_tables_are_complete():
    assert len(paper_table("001", "Table 3")) == 6
    assert len(paper_table("001", "Table 10")) == 12
    assert len(paper_table("001", "Table 11")) == 18


def test_table9_architecture_matches_the_paper_rows():
    from fusionlib.encoding.tabular import Span
    from fusionlib.gan.heads import TabularHead
    from fusionlib.gan.networks import tabular_networks

    spans = (Span("a", "continuous", 0, 1), Span("b", "discrete", 1, 3))
    g, c = tabular_networks(3, conditional=True, seed=0, head=TabularHead(64, spans))
    arch = table9_architecture(g, c)
    paper = paper_table("001", "Table 9").merge(arch, on=["network", "part", "quantity"])
    assert len(paper) == 9
    assert (paper["value_x"] == paper["value_y"]).all()


def test_stacked_curves_do_not_depend_on_the_thread_budget(monkeypatch):
    from fusionlib.ptgan.tabular import runs as tr

    data = load_tabular("adult")
    small = type(data)(data.name, data.frame.sample(3_000, random_state=0).reset_index(drop=True),
                       data.target, data.discrete_columns)
    members = [tr.Member("mp-1", i, 100 + i, 1.0) for i in range(2)]
    kw = dict(split_seed=5, n_iter=4, n_eval=2, n_rows=200)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    one = tr.stacked_curves(small, "mp", "nd", members, **kw)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    two = tr.stacked_curves(small, "mp", "nd", members, **kw)
    pd.testing.assert_frame_equal(one.curve, two.curve)
    assert set(one.curve["rep"]) == {0, 1} and len(one.curve) == 2 * 2 * 3


class _Killed(Exception):
    pass


def test_a_killed_stacked_run_resumes_from_its_last_evaluation_point(tmp_path, monkeypatch):
    from fusionlib.ptgan.tabular import runs as tr
    from fusionlib.ptgan.tabular.stacked import StackedTabularPTGAN

    data = load_tabular("adult")
    small = type(data)(data.name, data.frame.sample(2_000, random_state=1).reset_index(drop=True),
                       data.target, data.discrete_columns)
    members = [tr.Member("pt+cp", i, 50 + i, 100.0) for i in range(2)]
    kw = dict(split_seed=2, n_iter=6, n_eval=3, n_rows=150)
    full = tr.stacked_curves(small, "pt+cp", "nd", members, **kw)
    ckpt = tmp_path / "cell.pt"
    fit = StackedTabularPTGAN.fit

    def dies_after_four(self, data, **k):  # the process is killed after iteration 4's save
        def kill(model, iteration):
            k["callback"](model, iteration)
            if iteration == 4:
                raise _Killed
        return fit(self, data, rows=k.get("rows"), callback=kill,
                   callback_at=k["callback_at"])

    monkeypatch.setattr(StackedTabularPTGAN, "fit", dies_after_four)
    with pytest.raises(_Killed):
        tr.stacked_curves(small, "pt+cp", "nd", members, checkpoint=ckpt, **kw)
    monkeypatch.setattr(StackedTabularPTGAN, "fit", fit)
    resumed = tr.stacked_curves(small, "pt+cp", "nd", members, checkpoint=ckpt, **kw)
    assert resumed.resumed_at == 4 and not ckpt.exists()
    pd.testing.assert_frame_equal(resumed.curve, full.curve)
