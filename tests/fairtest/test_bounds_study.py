"""Fairness bounds on a seed-002 task (hand-made COMPAS-shaped table) and their cells."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.fairtest.bounds_cells import (
    BOUNDS,
    BOUNDS_CONFIG,
    _restore_infinities,
    _store_infinities,
)
from fusionlib.fairtest.bounds_study import REAL_TRAIN, dataset_bounds
from fusionlib.fairtest.protocol import ProtocolConfig

from .conftest import compas_like


@pytest.fixture(scope="module")
def result():
    cfg = ProtocolConfig(latent_restarts=1, baselines=("Indep",))
    return dataset_bounds("compas", cfg, seed=0, n_grid=9, n_boot=5,
                          table=compas_like(400, 0))


def test_real_training_rows_lie_inside_their_interval(result):
    intervals, points = result
    train = points[points.source == REAL_TRAIN]
    assert len(train) == 2 * 2 * 3  # overlaps x protected attributes x metrics
    assert train["inside"].all()
    assert set(intervals["tables"]) == {"training", "test"}
    ok = intervals.dropna(subset=["lower", "upper"])
    assert (ok["lower"] <= ok["upper"] + 1e-9).all()


def test_each_separation_reports_its_estimator_points(result):
    _, points = result
    igo = points[points.source.str.startswith("Indep-Overlap")]
    assert len(igo) == 12
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
