"""Tests of the FusionGAN sample-weighting strategies (seed 000, appendix section D)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.neighbors import KernelDensity

from fusionlib.errors import InvalidInputError
from fusionlib.fusion import density
from fusionlib.fusion.weighting import (
    cluster_weights,
    compute_weights,
    density_weights,
    log_kde_at_points,
    uniform_weights,
)


def mixture(n: int, d: int, seed: int = 0, components: int = 4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    means = rng.normal(0.0, 3.0, (components, d))
    return means[rng.integers(0, components, n)] + rng.normal(size=(n, d))


def oracle_density_weights(x, h=0.5, eps=1e-8, q=0.99):
    """Dense, direct transcription of section D (no log space, no tiling)."""
    n, d = x.shape
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    sq = ((z[:, None, :] - z[None, :, :]) ** 2).sum(axis=-1)
    p = np.exp(-sq / (2 * h * h)).sum(axis=1) / n * (2 * np.pi * h * h) ** (-d / 2)
    unclipped = 1.0 / (p + eps)
    cap = np.quantile(unclipped, q)
    clipped = np.minimum(unclipped, cap)
    return clipped * n / clipped.sum(), unclipped, cap


# ----------------------------------------------------------------------------- uniform


def test_uniform_is_ones():
    w = uniform_weights(np.zeros((5, 3)))
    assert w.shape == (5,) and w.dtype == np.float64
    assert np.array_equal(w, np.ones(5))


# ----------------------------------------------------------------------------- cluster


def test_cluster_hand_worked_example():
    # Two obvious clusters: sizes 2 and 6, n = 8, k = 2.
    # w = n / (|c| k): small cluster 8 / (2 * 2) = 2, large cluster 8 / (6 * 2) = 2/3.
    # Totals: 2 * 2 = 4 and 6 * 2/3 = 4, both n / k = 4; sum 8 = n.
    small = [[0.0, 0.0], [0.0, 1.0]]
    large = [[100.0, 100.0], [100.0, 101.0], [101.0, 100.0], [101.0, 101.0],
             [100.5, 100.5], [100.2, 100.8]]
    x = np.array(small + large)
    for standardize in (True, False):
        w = cluster_weights(x, k=2, standardize=standardize)
        np.testing.assert_allclose(w, [2, 2] + [2 / 3] * 6, rtol=1e-12)
        assert math.isclose(w.sum(), 8.0, rel_tol=1e-12)


@pytest.mark.parametrize("k", [1, 5, 20])
def test_cluster_each_cluster_gets_n_over_k(k):
    x = mixture(600, 5)
    w, labels = cluster_weights(x, k=k, return_labels=True)
    assert labels.shape == (600,) and set(np.unique(labels)) == set(range(k))
    totals = np.bincount(labels, weights=w, minlength=k)
    np.testing.assert_allclose(totals, 600 / k, rtol=1e-12)
    assert math.isclose(w.sum(), 600.0, rel_tol=1e-12)


def test_cluster_determinism_and_other_seed():
    x = mixture(400, 4)
    a = cluster_weights(x, k=7, seed=3, n_init=1)
    b = cluster_weights(x, k=7, seed=3, n_init=1)
    assert np.array_equal(a, b)
    c = cluster_weights(x, k=7, seed=4, n_init=1)  # may or may not equal a: only check it runs
    assert c.shape == (400,) and math.isclose(c.sum(), 400.0, rel_tol=1e-12)
    assert math.isclose(cluster_weights(x, k=7, seed=(3, "rep", 1)).sum(), 400.0, rel_tol=1e-12)


def test_cluster_standardize_changes_clusters_when_a_column_has_big_units():
    rng = np.random.default_rng(1)
    group = np.repeat([0, 1], [30, 90])
    signal = group * 10.0 + rng.normal(0.0, 0.3, 120)  # two tight groups, unit scale
    noise = rng.normal(0.0, 1.0, 120) * 1000.0  # structureless, large units
    x = np.column_stack([signal, noise])
    # standardised, the groups' split removes all of column 0's variance, a split of the
    # normal column 2/pi of its variance: the global optimum is the groups (n_init=10 finds it)
    w_std, lab_std = cluster_weights(x, k=2, n_init=10, return_labels=True)
    _, lab_raw = cluster_weights(x, k=2, n_init=10, standardize=False, return_labels=True)

    def same_partition(a, b):
        return np.array_equal(a, b) or np.array_equal(a, 1 - b)

    assert same_partition(lab_std, group)
    assert not same_partition(lab_raw, group)  # raw k-means splits the large-unit column
    np.testing.assert_allclose(w_std, np.where(group == 0, 120 / 60, 120 / 180))
    # standardised clustering does not depend on the units of a column
    np.testing.assert_allclose(cluster_weights(x * [1.0, 1e-3], k=2, n_init=10), w_std)


def test_cluster_constant_column_and_single_row():
    x = mixture(100, 3)
    x_const = np.column_stack([x, np.full(100, 0.1)])
    w = cluster_weights(x_const, k=4)
    assert np.isfinite(w).all() and math.isclose(w.sum(), 100.0, rel_tol=1e-12)
    assert np.array_equal(cluster_weights([[1.0, 2.0]], k=1), [1.0])


def test_cluster_k_larger_than_n_names_both_numbers():
    with pytest.raises(InvalidInputError, match=r"k=20.*only 8 rows"):
        cluster_weights(np.arange(16.0).reshape(8, 2))


def test_cluster_fewer_distinct_points_than_k():
    x = np.repeat([[0.0, 0.0], [1.0, 1.0], [2.0, 5.0]], 10, axis=0)  # 30 rows, 3 distinct
    with pytest.raises(InvalidInputError, match=r"only 3 distinct rows.*k=4"):
        cluster_weights(x, k=4)
    w = cluster_weights(x, k=3)
    np.testing.assert_allclose(w, 1.0)  # 30 / (10 * 3)


# ----------------------------------------------------------------------------- density


def test_density_matches_dense_oracle():
    x = mixture(50, 3, seed=2)
    expected, _, _ = oracle_density_weights(x)
    w = density_weights(x)
    np.testing.assert_allclose(w, expected, rtol=1e-10)
    assert math.isclose(w.sum(), 50.0, rel_tol=1e-12)


def test_density_eps_is_on_the_normalised_density_scale():
    # d = 8, h = 0.5: K_h(0) / n = (pi/2)^-4 / 50 = 3.3e-3, so eps = 1e-3 changes the weights;
    # this checks the (2 pi h^2)^(-d/2) / n normalisation of p_hat against the oracle.
    x = mixture(50, 8, seed=3)
    for eps in (1e-3, 0.0):
        expected, _, _ = oracle_density_weights(x, eps=eps, q=0.9)
        np.testing.assert_allclose(density_weights(x, eps=eps, clip_quantile=0.9), expected,
                                   rtol=1e-10)


def test_density_clipping_relationship():
    x = mixture(300, 4, seed=4)
    expected, unclipped, cap = oracle_density_weights(x)
    w = density_weights(x)
    np.testing.assert_allclose(w, expected, rtol=1e-10)
    # Before normalisation no weight exceeds the 99th percentile of the unclipped weights:
    # w = min(u, cap) * n / S with S = sum(min(u, cap)); undo the scale and compare to cap.
    scale = len(x) / np.minimum(unclipped, cap).sum()
    assert (w / scale <= cap * (1 + 1e-12)).all()
    n_capped = int((unclipped > cap).sum())
    assert n_capped == 3  # 300 * 1% rows lie above the 99th percentile (linear interpolation)
    np.testing.assert_allclose(np.sort(w)[-n_capped:], cap * scale, rtol=1e-12)
    # the same relationship from the public API alone: clip_quantile=1 gives unclipped weights
    w1 = density_weights(x, clip_quantile=1.0)
    capped = np.minimum(w1, np.quantile(w1, 0.99))
    np.testing.assert_allclose(w, capped * len(x) / capped.sum(), rtol=1e-12)


def test_density_rare_points_get_larger_weights():
    rng = np.random.default_rng(5)
    blob = rng.normal(0.0, 0.1, (100, 2))
    rare = np.array([[3.0, 3.0], [-3.0, 3.0], [3.0, -3.0]])
    w = density_weights(np.vstack([blob, rare]))
    assert w[100:].min() > w[:100].max()
    assert math.isclose(w.sum(), 103.0, rel_tol=1e-12)


def test_density_constant_column_is_ignored():
    x = mixture(60, 3, seed=6)
    x_const = np.column_stack([x, np.full(60, 0.1)])
    w = density_weights(x_const, eps=0.0)
    assert np.isfinite(w).all()
    # a constant column stays 0 after centring: distances, hence weights (eps = 0), unchanged
    np.testing.assert_allclose(w, density_weights(x, eps=0.0), rtol=1e-10)


def test_density_is_unit_invariant_and_deterministic():
    x = mixture(80, 3, seed=7)
    w = density_weights(x)
    np.testing.assert_allclose(density_weights(x * [1e3, 1.0, 1e-2] + 7.0), w, rtol=1e-8)
    assert np.array_equal(density_weights(x), w)


def test_density_single_row_and_log_space_extremes():
    assert np.array_equal(density_weights([[1.0, 2.0]]), [1.0])
    # d = 5000: log p_hat ~ -1130, exp would underflow to 0 and 1/p_hat overflow; log space
    # keeps the weights finite (all rows are isolated, so they are equal).
    x = np.random.default_rng(8).normal(size=(10, 5000))
    for eps in (0.0, 1e-8):
        np.testing.assert_allclose(density_weights(x, eps=eps), 1.0, rtol=1e-9)
    assert log_kde_at_points(x).max() < -1000


def test_log_kde_matches_sklearn_and_tree_bound():
    z = np.random.default_rng(9).normal(size=(300, 4))
    exact = log_kde_at_points(z, bandwidth=0.5, method="exact")
    reference = KernelDensity(bandwidth=0.5).fit(z).score_samples(z)  # rtol=0: exact
    np.testing.assert_allclose(exact, reference, atol=1e-10)
    tree = log_kde_at_points(z, bandwidth=0.5, method="tree", tree_rtol=1e-4)
    assert np.abs(np.expm1(tree - exact)).max() <= 1e-4 * (1 + 1e-6)
    # the tree method serves the other kernels ("auto" picks it)
    tophat = density_weights(z, kernel="tophat")
    assert np.isfinite(tophat).all() and math.isclose(tophat.sum(), 300.0, rel_tol=1e-12)


# ----------------------------------------------------------------------------- dispatch


def test_compute_weights_dispatches():
    x = mixture(120, 3, seed=10)
    assert np.array_equal(compute_weights(x, "uniform"), np.ones(120))
    assert np.array_equal(compute_weights(x, "cluster", seed=3, k=4, n_init=2),
                          cluster_weights(x, k=4, seed=3, n_init=2))
    assert np.array_equal(compute_weights(x, "density", bandwidth=1.0, seed=3),
                          density_weights(x, bandwidth=1.0))
    for strategy in ("uniform", "cluster", "density"):
        kwargs = {"k": 5} if strategy == "cluster" else {}
        w = compute_weights(x, strategy, **kwargs)
        assert w.shape == (120,) and math.isclose(w.sum(), 120.0, rel_tol=1e-12)


# ----------------------------------------------------------------------------- bad input

BAD_ARRAYS = {
    "nan": np.array([[0.0, np.nan], [1.0, 2.0]]),
    "inf": np.array([[0.0, np.inf], [1.0, 2.0]]),
    "one-d": np.arange(5.0),
    "empty": np.zeros((0, 3)),
    "text": np.array([["a", "b"], ["c", "d"]]),
}


@pytest.mark.parametrize("strategy", ["uniform", "cluster", "density"])
@pytest.mark.parametrize("bad", sorted(BAD_ARRAYS))
def test_bad_arrays_rejected(strategy, bad):
    kwargs = {"k": 1} if strategy == "cluster" else {}
    with pytest.raises(InvalidInputError):
        compute_weights(BAD_ARRAYS[bad], strategy, **kwargs)


@pytest.mark.parametrize("strategy, options, match", [
    ("median", {}, "unknown strategy"),
    ("density", {"bandwith": 0.5}, "unknown density option"),
    ("uniform", {"k": 3}, "unknown uniform option"),
    ("cluster", {"return_labels": True}, "unknown cluster option"),
    ("cluster", {"k": 0}, "k must be a positive integer"),
    ("cluster", {"k": 2.5}, "k must be a positive integer"),
    ("cluster", {"n_init": 0}, "n_init"),
    ("density", {"bandwidth": -0.5}, "bandwidth must be > 0"),
    ("density", {"bandwidth": 0.0}, "bandwidth must be > 0"),
    ("density", {"eps": -1e-8}, "eps must be >= 0"),
    ("density", {"clip_quantile": 0.0}, r"clip_quantile must be a number in \(0, 1\]"),
    ("density", {"clip_quantile": -0.1}, r"\(0, 1\]"),
    ("density", {"clip_quantile": 1.5}, r"\(0, 1\]"),
    ("density", {"clip_quantile": float("nan")}, r"\(0, 1\]"),
    ("density", {"clip_quantile": "high"}, r"\(0, 1\]"),
    ("density", {"kernel": "triangle"}, "unknown kernel"),
    ("density", {"method": "fast"}, "unknown method"),
    ("density", {"kernel": "tophat", "method": "exact"}, "only kernel='gaussian'"),
    ("density", {"tree_rtol": -1.0}, "tree_rtol"),
])
def test_bad_options_rejected(strategy, options, match):
    with pytest.raises(InvalidInputError, match=match):
        compute_weights(mixture(30, 2), strategy, **options)


def test_bad_seed_rejected():
    with pytest.raises(InvalidInputError, match="root seed"):
        cluster_weights(mixture(30, 2), k=2, seed=-1)


@pytest.mark.parametrize("rows, cols", [(3, 7), (5, 5), (7, 3), (1, 1), (4, 100)])
def test_exact_kde_tiling_covers_every_pair_once(monkeypatch, rows, cols):
    monkeypatch.setattr(density, "_ROWS", rows)
    monkeypatch.setattr(density, "_COLS", cols)
    for n in (1, 2, 13, 29):
        z = np.random.default_rng(n).normal(size=(n, 3))
        reference = KernelDensity(bandwidth=0.5).fit(z).score_samples(z)
        np.testing.assert_allclose(log_kde_at_points(z, method="exact"), reference, atol=1e-12)


@pytest.mark.parametrize("strategy, options", [
    ("uniform", {}), ("cluster", {}), ("cluster", {"k": 3, "standardize": False}),
    ("density", {}), ("density", {"clip_quantile": 1.0, "eps": 0.0}),
    ("density", {"bandwidth": 1.0, "kernel": "epanechnikov"})])
def test_weights_at_the_training_rows_are_the_training_weights(strategy, options):
    from fusionlib.fusion.weighting import weights_at

    rng = np.random.default_rng(4)
    x = np.vstack([rng.normal(0, 1, (200, 3)), rng.normal(5, 1, (20, 3))])
    x[:, 2] = 1.0  # a constant column stays out of distances in both functions
    np.testing.assert_allclose(weights_at(x, x, strategy, seed=7, **options),
                               compute_weights(x, strategy, seed=7, **options), rtol=1e-6)


def test_weights_at_new_rows_follow_the_training_function():
    """A new row of the rare mode gets the rare training rows' weight (cluster: its cluster's;
    density: near theirs), a far row at most the clip value; the KDE at new points matches a
    brute-force sum."""
    from scipy.special import logsumexp

    from fusionlib.fusion.density import log_kde_of_sample_at
    from fusionlib.fusion.weighting import weights_at

    rng = np.random.default_rng(5)
    x = np.vstack([rng.normal(0, 1, (300, 2)), rng.normal(6, 0.5, (30, 2))])
    new = np.array([[6.0, 6.0], [0.0, 0.0], [40.0, 40.0]])
    wc = weights_at(x, new, "cluster", seed=1, k=2)
    train_c = compute_weights(x, "cluster", seed=1, k=2)
    assert wc[0] == pytest.approx(train_c[300:].mean()) and wc[1] == pytest.approx(
        train_c[:300].mean())
    wd, train_d = weights_at(x, new, "density"), compute_weights(x, "density")
    assert wd[0] > 5 * wd[1] and wd[2] == pytest.approx(train_d.max())
    z = (x - x.mean(0)) / x.std(0)
    q = (new - x.mean(0)) / x.std(0)
    d2 = ((q[:, None, :] - z[None]) ** 2).sum(-1)
    brute = logsumexp(-d2 / (2 * 0.25), axis=1) - np.log(len(z)) - np.log(2 * np.pi * 0.25)
    np.testing.assert_allclose(log_kde_of_sample_at(z, q), brute, rtol=1e-10)
    with pytest.raises(InvalidInputError, match="columns"):
        weights_at(x, new[:, :1], "density")
