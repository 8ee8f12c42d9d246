import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.stats import wasserstein_distance

from fusionlib.errors import InvalidInputError
from fusionlib.metrics.distances import wasserstein1
from fusionlib.ptgan.toys.data import (
    mode_metrics,
    ring_centers,
    sample_mixture_1d,
    sample_ring,
    tempered_sample,
)

CENTERS = ring_centers()


def test_ring_centers_on_circle_of_radius_1_5():
    assert CENTERS.shape == (8, 2)
    assert_allclose(np.linalg.norm(CENTERS, axis=1), 1.5)
    assert_allclose(CENTERS[2], [0.0, 1.5], atol=1e-12)  # angle pi/2


def test_ring_sample_law():
    x = sample_ring(40_000, seed=0)
    k = np.linalg.norm(x[:, None] - CENTERS[None], axis=2).argmin(axis=1)
    resid = x - CENTERS[k]
    # per-coordinate variance 0.01 (sd 0.1); mode shares 1/8 (sd sqrt(7/64/40000) ~ 0.0017)
    assert_allclose(resid.var(axis=0), [0.01, 0.01], rtol=0.05)
    assert_allclose(np.bincount(k) / len(x), np.full(8, 1 / 8), atol=0.007)


def test_samplers_are_seeded():
    assert np.array_equal(sample_ring(10, 1), sample_ring(10, 1))
    assert not np.array_equal(sample_ring(10, 1), sample_ring(10, 2))
    assert np.array_equal(sample_mixture_1d(10, 1), sample_mixture_1d(10, 1))
    assert not np.array_equal(sample_mixture_1d(10, 1), sample_mixture_1d(10, 2))
    assert not np.array_equal(tempered_sample(CENTERS, 10, 1), tempered_sample(CENTERS, 10, 2))


def test_tempered_sample_stays_in_convex_hull_and_alpha_one_returns_data():
    x = sample_mixture_1d(1000, 0, means=(-3, 3), sd=0.1)
    q = tempered_sample(x, 5000, 1)
    assert q.min() >= x.min() and q.max() <= x.max()
    assert np.isin(tempered_sample(x, 50, 2, alpha=1.0), x).all()


def test_mode_metrics_perfect_generator():
    m = mode_metrics(np.repeat(CENTERS, 10, axis=0), CENTERS, sd=0.1)
    assert m["modes_covered"] == 8 and m["high_quality_share"] == 1.0
    assert m["counts"] == [10] * 8


def test_mode_metrics_collapsed_and_off_manifold_generators():
    collapsed = np.repeat(CENTERS[:1], 100, axis=0)
    assert mode_metrics(collapsed, CENTERS, sd=0.1)["modes_covered"] == 1
    far = np.zeros((50, 2))  # the origin is 1.5 = 15 sd from every mode
    m = mode_metrics(far, CENTERS, sd=0.1)
    assert m["modes_covered"] == 0 and m["high_quality_share"] == 0.0


def test_mode_metrics_thresholds_by_hand():
    # 100 samples: 60 at mode 0, 1 at mode 1, 39 at distance 0.35 (> 3 sd = 0.3) from mode 2
    off = CENTERS[2] + np.array([0.35, 0.0])
    s = np.vstack([np.repeat(CENTERS[:1], 60, 0), CENTERS[1:2], np.repeat(off[None], 39, 0)])
    m = mode_metrics(s, CENTERS, sd=0.1)
    # high quality: 60 + 1 = 61 of 100. Covered needs >= 1% of 100 = 1 high-quality sample:
    # mode 0 (60) and mode 1 (1) -> 2 modes; with min_share 2% (2 samples) only mode 0
    assert m["high_quality_share"] == pytest.approx(0.61)
    assert m["modes_covered"] == 2
    assert mode_metrics(s, CENTERS, sd=0.1, min_share=0.02)["modes_covered"] == 1


def test_mode_metrics_bad_input_raises():
    with pytest.raises(InvalidInputError, match="sd > 0"):
        mode_metrics(CENTERS, CENTERS, sd=0.0)
    with pytest.raises(InvalidInputError, match=r"\(n, d\)"):
        mode_metrics(np.zeros(5), CENTERS, sd=0.1)


def test_wasserstein1_identity_symmetry_and_shift():
    a = sample_ring(200, 0)
    assert wasserstein1(a, a) == pytest.approx(0.0, abs=1e-12)
    b = sample_ring(150, 1)
    assert wasserstein1(a, b) == pytest.approx(wasserstein1(b, a), rel=1e-9)
    assert wasserstein1(a, a + np.array([0.3, 0.4])) == pytest.approx(0.5, rel=1e-9)


def test_wasserstein1_hand_value_and_independent_1d_implementation():
    # {(0,0),(1,0)} to {(0,1),(1,1)}: move each point up by 1 -> W1 = 1
    assert wasserstein1(np.array([[0.0, 0], [1, 0]]), np.array([[0.0, 1], [1, 1]])) == \
        pytest.approx(1.0)
    x, y = sample_mixture_1d(300, 0), sample_mixture_1d(200, 1, means=(0.0, 4.0))
    assert wasserstein1(x, y) == pytest.approx(wasserstein_distance(x, y), rel=1e-8)


def test_wasserstein1_grows_with_shift():
    a = sample_ring(100, 0)
    values = [wasserstein1(a, a + s) for s in (0.1, 0.5, 1.0)]
    assert values == sorted(values)


def test_wasserstein1_dimension_mismatch_raises():
    with pytest.raises(InvalidInputError, match="equal dimension"):
        wasserstein1(np.zeros((3, 2)), np.zeros((3, 3)))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_wasserstein1_of_non_finite_sample_is_infinite(bad):
    a = sample_ring(20, 0)
    b = a.copy()
    b[3, 1] = bad
    assert wasserstein1(a, b) == np.inf
    assert wasserstein1(b, a) == np.inf


@pytest.mark.parametrize("a", ["abc", [["a", "b"]], [[1.0, None, "x"]]])
def test_wasserstein1_text_input_is_an_input_error(a):
    with pytest.raises(InvalidInputError, match="numeric"):
        wasserstein1(a, np.zeros((3, 2)))
    assert wasserstein1([[np.nan, 0.0]], np.zeros((3, 2))) == np.inf  # divergence stays inf
