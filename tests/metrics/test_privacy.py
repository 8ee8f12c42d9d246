"""Tests of the distance to closest record (fusionlib.metrics.privacy)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from fusionlib.errors import InvalidInputError
from fusionlib.metrics.privacy import DCRResult, dcr


def _sample(n: int, d: int, seed: int, shift: float = 0.0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, d)) + shift


def test_copies_of_train_give_zero_and_copy_share_one():
    train = _sample(400, 8, 0, shift=1e3)  # large norms: BLAS rounding must not hide copies
    res = dcr(train, train[::-1])
    assert np.all(res.distances == 0.0)
    assert (res.median, res.p05, res.copy_share) == (0.0, 0.0, 1.0)
    assert res.holdout_distances is None and res.closer_to_train_share is None


def test_matches_dense_oracle_with_holdout():
    train, holdout, syn = _sample(200, 3, 1), _sample(150, 3, 2), _sample(120, 3, 3, shift=0.2)
    syn[:30] = train[:30]  # 30 copies
    res = dcr(train, syn, holdout=holdout)
    d_train, d_hold = cdist(syn, train).min(axis=1), cdist(syn, holdout).min(axis=1)
    np.testing.assert_allclose(res.distances, d_train, rtol=1e-13)
    np.testing.assert_allclose(res.holdout_distances, d_hold, rtol=1e-13)
    assert res.median == pytest.approx(np.median(d_train), rel=1e-13)
    assert res.p05 == pytest.approx(np.percentile(d_train, 5), rel=1e-13)
    assert res.holdout_median == pytest.approx(np.median(d_hold), rel=1e-13)
    assert res.holdout_p05 == pytest.approx(np.percentile(d_hold, 5), rel=1e-13)
    assert res.copy_share == 30 / 120 and res.holdout_copy_share == 0.0
    assert res.closer_to_train_share == np.mean(d_train < d_hold)
    assert res.closer_to_train_expected == 200 / 350


def test_shifted_grid_gives_the_shift_norm():
    axis = np.arange(5.0)
    grid = np.array(list(itertools.product(axis, axis)))
    res = dcr(grid, grid + [0.3, -0.4])
    np.testing.assert_allclose(res.distances, 0.5, rtol=1e-14)
    assert res.copy_share == 0.0


@pytest.mark.parametrize(("n_train", "n_holdout"), [(1500, 1500), (1500, 500)])
def test_fresh_samples_are_as_close_to_holdout_as_to_train(n_train, n_holdout):
    """Exchangeable records: the nearest of train + holdout is in train w.p. n_t / (n_t + n_h).

    1000 synthetic records give a binomial standard error <= 0.016; 0.06 is ~4 of them.
    """
    train, holdout = _sample(n_train, 4, 4), _sample(n_holdout, 4, 5)
    res = dcr(train, _sample(1000, 4, 6), holdout=holdout)
    assert res.closer_to_train_expected == n_train / (n_train + n_holdout)
    assert abs(res.closer_to_train_share - res.closer_to_train_expected) < 0.06
    assert res.copy_share == 0.0


def test_memorising_generator_is_closer_to_train():
    train, holdout = _sample(1000, 4, 7), _sample(1000, 4, 8)
    noisy_copies = train[:800] + 0.01 * _sample(800, 4, 9)
    res = dcr(train, noisy_copies, holdout=holdout)
    assert res.closer_to_train_share > 0.95 and res.median < res.holdout_median


def test_copy_tolerance():
    train = np.zeros((1, 2))
    res = dcr(train, [[0.0, 1e-9], [0.0, 1e-3]], copy_tol=1e-6)
    assert isinstance(res, DCRResult) and res.copy_share == 0.5


@pytest.mark.parametrize(("train", "syn", "kwargs", "match"), [
    (np.zeros((3, 2)), np.zeros((3, 3)), {}, "same feature columns"),
    (np.zeros((3, 2)), np.zeros((3, 2)), {"holdout": np.zeros((3, 4))}, "same feature columns"),
    (np.full((3, 2), np.nan), np.zeros((3, 2)), {}, "NaN or infinite"),
    (np.zeros((3, 2)), np.zeros((3, 2)), {"holdout": [[np.inf, 0.0]]}, "NaN or infinite"),
    (np.zeros((0, 2)), np.zeros((3, 2)), {}, "at least 1 row"),
    (np.zeros((3, 2)), np.zeros((0, 2)), {}, "at least 1 row"),
    (np.zeros((3, 2)), np.zeros((3, 2)), {"holdout": np.zeros((0, 2))}, "at least 1 row"),
    (np.zeros((3, 2)), [["x", "y"]], {}, "numeric"),
    (np.zeros((3, 2)), np.zeros((3, 2)), {"copy_tol": 0.0}, "copy_tol must be > 0"),
])
def test_bad_input_raises(train, syn, kwargs, match):
    with pytest.raises(InvalidInputError, match=match):
        dcr(train, syn, **kwargs)
