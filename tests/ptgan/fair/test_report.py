"""The fair chapter's comparisons: reductions, the bootstrap of the Table 4/12 statistic."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.compendium.paper import paper_table
from fusionlib.ptgan.fair.cells import FAIR_CONFIG
from fusionlib.ptgan.fair.report import (
    equivalence_margins,
    fair_reductions,
    lowest_gap_estimate,
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
