"""The tabular chapter's evidence beyond its own grid: label collapse, pooled seeds, sensitivity."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from fusionlib.compendium.verdicts import direction
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.tabular.evidence import (
    label_collapse,
    pooled_difference,
    sensitivity_rows,
    split_variant,
)


def _scores(diffs, method_a="pt+cp", method_b="mp-1", base=0.05):
    rows = []
    for rep, d in enumerate(diffs):
        rows.append(dict(method=method_a, rep=rep, classifier="rf", s_t=base + d))
        rows.append(dict(method=method_b, rep=rep, classifier="rf", s_t=base))
    return pd.DataFrame(rows)


def test_pooled_difference_is_the_mean_of_seed_means_with_block_se():
    # seed 0: differences 1, 3 (mean 2, sd sqrt(2), se 1); seed 1: 2, 2, 5 (mean 3,
    # sd sqrt(3), se 1). Pooled: (2 + 3) / 2 = 2.5, se = sqrt(1 + 1) / 2, df = 5 - 2 = 3
    est, table = pooled_difference({0: _scores([1, 3]), 1: _scores([2, 2, 5])}, "rf")
    assert est.value == pytest.approx(2.5)
    assert est.se == pytest.approx(math.sqrt(2) / 2)
    assert est.n == 5 and est.df == 3
    assert table["median"].tolist() == pytest.approx([2.0, 2.0])


def test_pooled_direction_flips_when_the_methods_are_swapped():
    # a planted fault: the two methods' labels swapped turns "PT+CP below MP" around
    g = np.random.default_rng(0)
    per_seed = {s: _scores(-0.03 + 0.005 * g.standard_normal(10)) for s in range(3)}
    est, _ = pooled_difference(per_seed, "rf")
    assert direction(est, "<0").verdict == "reproduced"
    swapped, _ = pooled_difference(per_seed, "rf", a="mp-1", b="pt+cp")
    assert direction(swapped, "<0").verdict == "differs"


def test_pooled_difference_leaves_out_seeds_without_two_pairs():
    est, table = pooled_difference({0: _scores([0.1]), 1: _scores([])}, "rf")
    assert table.empty and math.isnan(est.value) and est.se is None


def test_label_collapse_flags_a_repetition_far_from_the_data():
    # counted points of 4 evaluation points: 3 and 4. Rep 0 holds 0.24 (the data's), rep 1
    # drops to 0.08: |0.08 - 0.24| = 0.16 > 0.5 * 0.24 = 0.12 -> collapsed
    rows = [dict(method="pt+cp", rep=r, point=p, iteration=10 * p, label_share=s)
            for r, shares in ((0, (0.3, 0.2, 0.25, 0.23)), (1, (0.3, 0.2, 0.08, 0.08)))
            for p, s in zip(range(1, 5), shares, strict=True)]
    out = label_collapse(pd.DataFrame(rows), 0.24, 4).set_index("rep")
    assert out.loc[0, "share_mean"] == pytest.approx(0.24) and not out.loc[0, "collapsed"]
    assert out.loc[1, "collapsed"] and out.loc[1, "share_min"] == pytest.approx(0.08)
    # a wider tolerance accepts it; bad inputs are named
    assert not label_collapse(pd.DataFrame(rows), 0.24, 4, fraction=0.7).collapsed.any()
    with pytest.raises(InvalidInputError, match="data_share"):
        label_collapse(pd.DataFrame(rows), 1.5, 4)


def test_sensitivity_rows_pair_each_choice_separately():
    main = _scores([0.01, 0.03])
    tau = _scores([-0.02, -0.04], "pt+cp tau=1", "mp-1 tau=1")
    out = sensitivity_rows(pd.concat([main, tau]), ["rf"]).set_index("variant")
    assert out.loc["main", "difference"] == pytest.approx(0.02)
    assert out.loc["tau=1", "difference"] == pytest.approx(-0.03)
    assert out.loc["tau=1", "pairs"] == 2 and out.loc["tau=1", "pt+cp n"] == 2
    assert split_variant("mp-1 data=uci-complete") == ("mp-1", "data=uci-complete")


def test_paper_rows_beside_adds_only_the_rows_main_lacks(monkeypatch):
    """The paper scale's main runs of rows the cpu grid lacks, labelled scale paper; the
    rows the cpu grid has, and the sensitivity members, stay out."""
    from fusionlib.ptgan.tabular import evidence

    def row(disc, method):
        return dict(dataset="adult", discrepancy=disc, method=method, rep=0, classifier="rf",
                    s_t=0.05)
    paper = pd.DataFrame([row("nd", "pt+cp"), row("jsd", "pt+cp"), row("jsd", "mp-1"),
                          row("nd", "pt+cp tau=1"), row("nd", "mp-10")])
    missing = ["adult pd pt+cp x10", "adult nd pt+cp tau=0.5 x10", "adult reference",
               "law_school nd mp x10", "adult nd mp x10"]  # the last: main has its rows
    monkeypatch.setattr(evidence, "present_runs",
                        lambda scale, seed=0, root=None: (None, paper, None, None, missing))
    main = pd.DataFrame([row("nd", "pt+cp"), row("nd", "mp-1")]).assign(scale="cpu")
    got, labels = evidence.paper_rows_beside(main)
    pairs = sorted(zip(got.discrepancy, got.method, strict=True))
    assert pairs == [("jsd", "mp-1"), ("jsd", "pt+cp"), ("nd", "mp-10")]
    assert (got["scale"] == "paper").all()
    assert labels == ["adult pd pt+cp x10", "adult reference", "law_school nd mp x10"]
    # nothing at the paper scale: an empty frame with main's columns
    monkeypatch.setattr(evidence, "present_runs",
                        lambda scale, seed=0, root=None: (None, pd.DataFrame(), None, None, []))
    got, labels = evidence.paper_rows_beside(main)
    assert got.empty and list(got.columns).count("scale") == 1 and labels == []
    assert list(got.columns) == list(main.columns)  # main's columns, scale once
