"""Sections E and F of the FusionGAN appendix: what the metrics are said to do, computed."""

import numpy as np
import pytest

from fusionlib.errors import InvalidInputError
from fusionlib.fusion.metric_checks import (
    coverage_by_distance,
    mmd_by_scale,
    strictly_increasing,
)
from fusionlib.metrics.coverage import coverage


def _data(n=200, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.normal(size=(n, d))


def test_coverage_is_zero_for_the_real_records_and_grows_as_they_move_away():
    real, _ = _data()
    cov = coverage_by_distance(real, real, [0.0, 0.5, 1.0, 2.0, 4.0])
    assert cov[0] == 0.0 and strictly_increasing(cov)
    # each record's shifted twin is at the distance moved: the nearest is no farther
    assert 40.0 < coverage_by_distance(real, real, [50.0])[0] <= 50.0


def test_coverage_by_distance_moves_along_the_given_direction():
    real, synth = _data()
    u = np.array([0.0, 3.0, 0.0])
    out = coverage_by_distance(real, synth, [0.0, 2.0], direction=u)
    assert out[0] == pytest.approx(coverage(real, synth))
    assert out[1] == pytest.approx(coverage(real, synth + [0.0, 2.0, 0.0]))
    with pytest.raises(InvalidInputError, match="direction"):
        coverage_by_distance(real, synth, [1.0], direction=[0, 0, 0])
    with pytest.raises(InvalidInputError, match="distances"):
        coverage_by_distance(real, synth, [-1.0])


def test_mmd_with_the_median_heuristic_does_not_depend_on_the_unit():
    real, synth = _data()
    out = mmd_by_scale(real, synth + 0.3, (1.0, 10.0, 0.1))
    assert out[10.0] == pytest.approx(out[1.0], rel=1e-9, abs=1e-12)
    assert out[0.1] == pytest.approx(out[1.0], rel=1e-9, abs=1e-12)
    assert out[1.0] > 0.0
    with pytest.raises(InvalidInputError):
        mmd_by_scale(real, synth, (0.0,))


def test_strictly_increasing():
    assert strictly_increasing([0.0, 1.0, 3.0])
    assert not strictly_increasing([0.0, 1.0, 1.0])
    assert not strictly_increasing([1.0])
    assert not strictly_increasing([0.0, np.nan])
