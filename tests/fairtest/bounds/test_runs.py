"""Fairness bounds on a seed-002 task (hand-made COMPAS-shaped table) and their cells."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.fairtest.bounds.cells import (
    BOUNDS,
    BOUNDS_CONFIG,
    _restore_infinities,
    _store_infinities,
)
from fusionlib.fairtest.bounds.runs import REAL_TRAIN, dataset_bounds
from fusionlib.fairtest.protocol.runs import ProtocolConfig
from tests.fairtest.conftest import compas_like


@pytest.fixture(scope="module")
def result():
    cfg = ProtocolConfig(latent_restarts=1, baselines=("Indep",))
    return dataset_bounds("compas", cfg, seed=0, n_grid=9, n_boot=5,
                          table=compas_like(400, 0))


def test_real_training_rows_lie_inside_their_interval(result):
    intervals, points = result
    train = points[points.source == REAL_TRAIN]
    assert len(train) == 2 * 2 * 4  # overlaps x protected attributes x metrics
    assert train["inside"].all()
    assert set(intervals["tables"]) == {"training", "test"}
    ok = intervals.dropna(subset=["lower", "upper"])
    assert (ok["lower"] <= ok["upper"] + 1e-9).all()


def test_intervals_carry_certified_gaps_and_the_grid_cross_check(result):
    intervals, _ = result
    assert (intervals[["lower_gap", "upper_gap"]].fillna(0) <= 1e-10).all().all()
    prof = intervals[intervals.metric.isin(["EOD", "AOD"])].dropna(subset=["lower"])
    assert len(prof) and (prof.grid_lower >= prof.lower - 1e-9).all()
    assert (prof.grid_upper <= prof.upper + 1e-9).all()


def test_real_test_bootstrap_is_the_shared_bootstrap_plus_dp():
    from fusionlib.fairtest.bounds.runs import _bootstrap
    from fusionlib.metrics.fairness import bootstrap_fairness

    rng = np.random.default_rng(0)
    y, yhat, g = (rng.random(300) < p for p in (0.4, 0.5, 0.6))
    ours = _bootstrap(y, yhat, g, 50, (0, "x"))
    shared = bootstrap_fairness(y, yhat, g, n_boot=50, seed=(0, "x"))
    for m in ("AOD", "DI", "EOD"):
        np.testing.assert_array_equal(ours[m], shared[m].to_numpy())
    assert np.isfinite(ours["DP"]).all() and ours["DP"].std() > 0


def test_each_separation_reports_its_estimator_points(result):
    _, points = result
    igo = points[points.source.str.startswith("Indep-Overlap")]
    assert len(igo) == 16  # 2 overlaps x 2 attributes x 4 metrics
    assert igo["value"].notna().any()


def test_study_is_deterministic():
    cfg = ProtocolConfig(latent_restarts=1, baselines=("Indep",))
    table = compas_like(300, 1)
    a = dataset_bounds("compas", cfg, seed=0, n_grid=5, n_boot=5, table=table)[1]
    b = dataset_bounds("compas", cfg, seed=0, n_grid=5, n_boot=5, table=table)[1]
    c = dataset_bounds("compas", cfg, seed=1, n_grid=5, n_boot=5, table=table)[1]
    pd.testing.assert_frame_equal(a, b)
    assert not a["value"].equals(c["value"])


def test_infinite_bounds_round_trip_through_the_shard_frame():
    df = pd.DataFrame({"metric": ["DI", "AOD"], "lower": [0.5, -0.2], "upper": [np.inf, 0.3]})
    stored = _store_infinities(df)
    assert np.isfinite(stored[["lower", "upper"]].fillna(0)).all().all()
    pd.testing.assert_frame_equal(_restore_infinities(stored), df)


def test_grid_has_one_cell_per_dataset():
    for scale, cfg in BOUNDS_CONFIG.items():
        assert [c.config["dataset"] for c in BOUNDS.cells(scale, 0)] == cfg["datasets"]
