"""The ptgan_tabular grid, the Adult preparation and the chapter's summaries."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from fusionlib.compendium.paper import paper_table
from fusionlib.errors import DataUnavailableError, InvalidInputError
from fusionlib.ptgan import tabular_cells as tc
from fusionlib.ptgan.tabular_data import availability, load_tabular
from fusionlib.ptgan.tabular_report import (
    ours_for_paper,
    s_t_summary,
    table9_architecture,
    tolerance_fn,
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
    assert [c.config["method"] for c in smoke] == ["pt+cp", "mp-1"]
    paper = tc._grid("paper", 0)
    assert len(paper) == 3 * 3 * 4 * 10
    assert {c.config["n_iter"] for c in paper} == {57_000, 35_000, 53_000}
    monkeypatch.setattr(tc, "_available", lambda n: None if n == "adult" else "absent")
    assert {c.config["dataset"] for c in tc._grid("paper", 0)} == {"adult"}
    assert tc.method_label("mp-10") == "MP (lambda_MP=10)" and tc.method_label("mp-1") == "MP"


def _scores():
    rows = []
    for m, base in (("pt+cp", 0.02), ("mp-1", 0.05)):
        for rep in range(3):
            for c in ("rf", "svm", "lr"):
                rows.append(dict(dataset="adult", discrepancy="nd", method=m, rep=rep,
                                 classifier=c, s_t=base + 0.01 * rep, s_train=0.9,
                                 train_s=1.0, eval_s=0.1))
    return pd.DataFrame(rows)


def test_summary_and_paper_alignment():
    summary = s_t_summary(_scores())
    row = summary[summary.method == "pt+cp"].iloc[0]
    assert row["RF"] == pytest.approx(0.03) and row["RF sd"] == pytest.approx(0.01)
    assert row["runs"] == 3
    paper = paper_table("001", "Table 3")
    ours = ours_for_paper(paper, summary, {"adult": None, "law_school": "absent file",
                                           "credit_default": "absent file"}, "cpu")
    assert (ours.status == "run").sum() == 2
    assert ours[ours.dataset == "law_school"].reason.str.contains("absent file").all()
    tol = tolerance_fn(ours, paper)
    r = {"dataset": "adult", "discrepancy": "nd", "method": "pt+cp"}
    # paper sd 0.004 (Table 3, Adult PT+CP RF), 10 runs; ours 3 runs: 2 * 0.004 * sqrt(1/10 + 1/3)
    assert tol(r, "RF") == pytest.approx(max(2 * 0.004 * math.sqrt(0.1 + 1 / 3), 0.005))
    r_mp = {"dataset": "adult", "discrepancy": "nd", "method": "mp-1"}
    assert tol(r_mp, "RF") == pytest.approx(2 * 0.029 * math.sqrt(0.1 + 1 / 3))


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
