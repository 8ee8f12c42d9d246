"""Tests of precision, recall, density and coverage (fusionlib.metrics.prdc)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from fusionlib.errors import InvalidInputError
from fusionlib.metrics.prdc import PRDC, knn_radii, prdc


def _oracle(real: np.ndarray, fake: np.ndarray, k: int) -> PRDC:
    """Dense brute force, as the authors' ``prdc`` package: full distance matrices, open balls."""
    real_radii = np.sort(cdist(real, real), axis=1)[:, k]  # column 0 is the point itself
    fake_radii = np.sort(cdist(fake, fake), axis=1)[:, k]
    d = cdist(real, fake)
    in_real_ball = d < real_radii[:, None]
    return PRDC(precision=in_real_ball.any(axis=0).mean(),
                recall=(d < fake_radii[None, :]).any(axis=1).mean(),
                density=in_real_ball.sum() / (k * len(fake)),
                coverage=(d.min(axis=1) < real_radii).mean())


def _sample(n: int, d: int, seed: int, shift: float = 0.0, scale: float = 1.0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, d)) * scale + shift


@pytest.mark.parametrize("k", [1, 2, 5, 10])
@pytest.mark.parametrize("chunk", [13, 2048])
def test_matches_dense_oracle(k, chunk):
    real, fake = _sample(300, 4, 0), _sample(220, 4, 1, shift=0.3, scale=1.3)
    got, want = prdc(real, fake, k, chunk=chunk), _oracle(real, fake, k)
    for field in ("precision", "recall", "density", "coverage"):
        assert getattr(got, field) == pytest.approx(getattr(want, field), abs=1e-15), field


def test_identity_gives_one_exactly():
    """Open balls: X_i's ball holds itself and its k - 1 nearer neighbours, so density is 1."""
    real = _sample(500, 6, 2, shift=100.0)
    assert prdc(real, real.copy()) == PRDC(1.0, 1.0, 1.0, 1.0)


def test_far_apart_sets_give_zero():
    assert prdc(_sample(200, 3, 3), _sample(150, 3, 4, shift=50.0)) == PRDC(0.0, 0.0, 0.0, 0.0)


def test_closed_form_on_a_line():
    """Real 0..9, fake 1.5..10.5, k = 1: every radius is 1 (nearest other point)."""
    real = np.arange(10.0)[:, None]
    res = prdc(real, real + 1.5, k=1)
    # fakes 1.5..8.5 lie 0.5 from two reals, 9.5 from one, 10.5 from none (1.5 away)
    assert res.precision == 0.9 and res.density == pytest.approx((8 * 2 + 1) / 10)
    # real 0 is 1.5 from the nearest fake: outside every fake ball, and its ball is empty
    assert res.recall == 0.9 and res.coverage == 0.9


def test_precision_and_recall_swap_with_the_roles():
    a, b = _sample(300, 3, 5), _sample(250, 3, 6, shift=0.5, scale=0.6)
    ab, ba = prdc(a, b, 4), prdc(b, a, 4)
    assert ab.precision == ba.recall and ab.recall == ba.precision


def test_fidelity_falls_with_a_shift():
    real = _sample(400, 3, 7)
    runs = [prdc(real, _sample(400, 3, 8, shift=s)) for s in (0.0, 0.5, 1.0, 2.0)]
    for field in ("precision", "recall", "density", "coverage"):
        values = [getattr(r, field) for r in runs]
        assert all(a > b for a, b in zip(values, values[1:], strict=False)), field


def test_knn_radii_is_the_kth_other_neighbour():
    x = np.array([[0.0], [1.0], [3.0], [7.0]])
    np.testing.assert_array_equal(knn_radii(x, 1), [1.0, 1.0, 2.0, 4.0])
    np.testing.assert_array_equal(knn_radii(x, 3), [7.0, 6.0, 4.0, 7.0])


def test_duplicates_count_as_other_records():
    x = np.array([[0.0], [0.0], [2.0]])
    np.testing.assert_array_equal(knn_radii(x, 1), [0.0, 0.0, 2.0])


@pytest.mark.parametrize(("real", "fake", "kwargs", "match"), [
    (np.zeros((9, 2)), np.zeros((9, 3)), {}, "same feature columns"),
    (np.full((9, 2), np.nan), np.zeros((9, 2)), {}, "NaN or infinite"),
    (np.zeros((9, 2)), np.full((9, 2), np.inf), {}, "NaN or infinite"),
    (np.zeros((5, 2)), np.zeros((9, 2)), {}, "k=5 exceeds the 4 other real records"),
    (np.zeros((9, 2)), np.zeros((3, 2)), {"k": 3}, "k=3 exceeds the 2 other fake records"),
    (np.zeros((9, 2)), np.zeros((9, 2)), {"k": 0}, "positive integer"),
    (np.zeros((9, 2)), np.zeros((9, 2)), {"chunk": 0}, "chunk must be a positive integer"),
    (np.zeros((0, 2)), np.zeros((9, 2)), {}, "at least 1 row"),
    ([["a"]] * 9, np.zeros((9, 1)), {}, "numeric"),
])
def test_bad_input_raises(real, fake, kwargs, match):
    with pytest.raises(InvalidInputError, match=match):
        prdc(real, fake, **kwargs)
