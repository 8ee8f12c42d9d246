"""Tests of the fairness-testing chapter's claim helpers (fusionlib.fairtest.protocol.claims)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.compendium.paper import side_by_side
from fusionlib.compendium.run import Run
from fusionlib.compendium.verdicts import Estimate
from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.evidence import PAPER_ROUNDING
from fusionlib.fairtest.protocol.claims import (
    ctgan_not_comparable,
    difference_why,
    dm_gap,
    equivalence_margin,
    mean_abs_diff,
    ours_sets,
    paper_and_ours,
    register,
    shown,
)
from fusionlib.fairtest.protocol.report import SCALE_NOTES, difference_reason

KEYS = ["dataset", "method", "overlap"]


def _est(rows):
    return pd.DataFrame([dict(dataset=d, method=me, overlap=o, metric=m, estimate=Estimate(v, se))
                         for d, me, o, m, v, se in rows])


EST = _est([("compas", "IGO", "score", "DM", 0.60, 0.01),
            ("compas", "Latent", "score", "DM", 0.70, 0.03),
            ("compas", "Indep", "", "DM", 0.80, 0.04),
            ("compas", "CTGAN", "", "DM", 0.75, None)])
FIDELITY = pd.DataFrame({"dataset": ["compas"] * 4, "method": ["IGO", "Latent", "Indep", "CTGAN"],
                         "overlap": ["score", "score", "", ""], "DM": [0.6, 0.7, 0.8, 0.75]})


def test_why_defers_to_difference_reason_but_for_indep_cs_dm():
    kw = dict(compas_mi="race 0.01 nats", ctgan_cfg={"compas": {"runs": 3}}, latent_fits=5)
    assert difference_why("Indep", "DM", "compas", scale="cpu", **kw).endswith(
        "the cause is not known")
    assert difference_why("Indep", "DM", "compas", scale="smoke", **kw) == SCALE_NOTES["smoke"]
    assert difference_why("CTGAN", "CS", "compas", scale="cpu", **kw) == difference_reason(
        "CTGAN", "CS", "compas", scale="cpu", compas_mi="race 0.01 nats", ctgan_runs=3,
        latent_fits=5)


def test_margins():
    assert equivalence_margin({}, "DM") == 0.05
    assert equivalence_margin({"KL (race) paper": 0.02}, "KL (race)") == pytest.approx(
        PAPER_ROUNDING + 0.01)
    with pytest.raises(InvalidInputError, match="no equivalence margin"):
        equivalence_margin({}, "AUC")


def test_not_comparable_only_for_a_reduced_ctgan():
    nc = ctgan_not_comparable({"adult": "30 of 300 epochs", "compas": None})
    assert nc({"dataset": "adult", "method": "CTGAN"}, "DM") == "30 of 300 epochs"
    assert nc({"dataset": "adult", "method": "IGO"}, "DM") is None
    assert nc({"dataset": "compas", "method": "CTGAN"}, "DM") is None


def test_paper_and_ours_pairs_the_exact_paper_value_with_our_estimate():
    pair = paper_and_ours(EST, KEYS)
    paper, ours = pair({"dataset": "compas", "method": "IGO", "overlap": "score",
                        "DM paper": 0.65}, "DM")
    assert (paper.value, paper.se) == (0.65, 0.0)
    assert (ours.value, ours.se) == (0.60, 0.01)


def test_register_and_shown(tmp_path):
    run = Run("fairness_testing", scale="cpu", seed=0, results_dir=tmp_path)
    paper = pd.DataFrame({"dataset": ["compas", "compas"], "method": ["IGO", "CTGAN"],
                          "overlap": ["score", ""], "DM": [0.61, 0.70]})
    table = side_by_side(paper, FIDELITY, KEYS, ["DM"])
    seen = []

    def why(method, metric, dataset):
        seen.append((method, metric, dataset))
        return "because"

    v = register(run, table, "T7", "Table 7", ["DM"], est=EST,
                 reduced={"compas": "3 of 300 epochs"}, why=why)
    claims = run.claims
    assert len(v) == len(claims) == 2
    assert set(seen) == {("IGO", "DM", "compas"), ("CTGAN", "DM", "compas")}
    by_method = claims.set_index(claims["claim_id"].str.contains("CTGAN"))
    assert by_method.loc[True, "verdict"] == "not comparable"
    # IGO: 0.60 +- 0.01 against 0.61 within the DM margin 0.05
    assert by_method.loc[False, "verdict"] == "reproduced"
    out = shown(table, ["DM"], KEYS, EST)
    assert list(out.columns[out.columns.get_loc("DM ours"):][:2]) == ["DM ours", "DM se"]
    assert out["DM se"].iloc[0] == 0.01 and np.isnan(out["DM se"].iloc[1])


def test_ours_sets_and_dm_gap_by_hand():
    assert ours_sets(FIDELITY, "compas") == [("IGO", "score"), ("Latent", "score")]
    gap = dm_gap(EST, FIDELITY, "Indep", ["compas"])
    # (0.80 - 0.60 + 0.80 - 0.70) / 2 = 0.15; se: mean of sqrt(.04^2+.01^2), sqrt(.04^2+.03^2)
    assert gap.value == pytest.approx(0.15)
    assert gap.se == pytest.approx((np.hypot(0.04, 0.01) + np.hypot(0.04, 0.03)) / 2)
    assert dm_gap(EST, FIDELITY, "CTGAN", ["compas"]).se is None  # one unknown: unknown
    with pytest.raises(InvalidInputError, match="no synthetic set"):
        dm_gap(EST, FIDELITY, "Indep", ["adult"])


def test_mean_abs_diff_over_our_methods():
    t9 = pd.DataFrame({"dataset": ["adult"] * 3, "metric": ["DI"] * 3,
                       "method": ["IGO", "Latent", "CTGAN"], "abs_diff": [0.1, 0.3, 5.0]})
    assert mean_abs_diff(t9, "abs_diff").loc[("adult", "DI")] == pytest.approx(0.2)
