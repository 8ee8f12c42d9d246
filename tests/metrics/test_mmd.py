"""Tests of the RBF-kernel MMD of seed 000, Section F (fusionlib.metrics.mmd)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.distance import cdist, pdist

from fusionlib.errors import InvalidInputError
from fusionlib.metrics.mmd import MMDResult, median_distance, mmd


def _sample(n: int, d: int, seed: int, shift: float = 0.0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, d)) + shift


def _dense_mmd2(x: np.ndarray, y: np.ndarray, gamma: float, unbiased: bool) -> float:
    """Oracle: the three full kernel matrices."""
    kxx, kyy, kxy = (np.exp(-gamma * cdist(a, b, "sqeuclidean")) for a, b in
                     ((x, x), (y, y), (x, y)))
    n, m = len(x), len(y)
    if unbiased:
        return ((kxx.sum() - np.trace(kxx)) / (n * (n - 1))
                + (kyy.sum() - np.trace(kyy)) / (m * (m - 1)) - 2 * kxy.mean())
    return kxx.mean() + kyy.mean() - 2 * kxy.mean()


def _dense_median(z: np.ndarray) -> float:
    """Oracle: median over all ordered pairs i != j."""
    d = cdist(z, z)
    return float(np.median(d[~np.eye(len(z), dtype=bool)]))


def _gaussian_mmd2(mu1: float, mu2: float, s: float, gamma: float) -> float:
    """Population MMD^2 of N(mu1, s^2) and N(mu2, s^2), kernel exp(-gamma d^2).

    x - x' ~ N(0, 2 s^2) and E exp(-gamma Z^2) = exp(-gamma mu^2 / c) / sqrt(c) for
    Z ~ N(mu, v), c = 1 + 2 gamma v; with v = 2 s^2 the three terms give
    2 / sqrt(1 + 4 gamma s^2) * (1 - exp(-gamma (mu1 - mu2)^2 / (1 + 4 gamma s^2))).
    """
    c = 1 + 4 * gamma * s**2
    return 2 / math.sqrt(c) * (1 - math.exp(-gamma * (mu1 - mu2) ** 2 / c))


def _mean_kernel(t: np.ndarray, mu: float, s: float, gamma: float) -> np.ndarray:
    """E_{x ~ N(mu, s^2)} exp(-gamma (t - x)^2) (the same Gaussian integral, v = s^2)."""
    c = 1 + 2 * gamma * s**2
    return np.exp(-gamma * (t - mu) ** 2 / c) / math.sqrt(c)


# ---------------------------------------------------------------- oracle and closed forms
@pytest.mark.parametrize("unbiased", [True, False])
@pytest.mark.parametrize("chunk", [1, 7, 64, 1024])
def test_matches_dense_kernel_matrices(unbiased, chunk):
    x, y = _sample(150, 4, 0, shift=3.0), _sample(90, 4, 1, shift=3.4)
    res = mmd(x, y, gamma=0.2, unbiased=unbiased, chunk=chunk)
    assert res.mmd2 == pytest.approx(_dense_mmd2(x, y, 0.2, unbiased), abs=1e-12)


@pytest.mark.parametrize("unbiased", [True, False])
@pytest.mark.parametrize("chunk", [7, 512])
def test_float32_tiles_match_the_dense_oracle(unbiased, chunk):
    x, y = _sample(400, 20, 30), _sample(300, 20, 31, shift=0.1)
    res = mmd(x, y, unbiased=unbiased, chunk=chunk, precision="float32")
    exact = mmd(x, y, unbiased=unbiased, chunk=chunk)
    assert res.gamma == exact.gamma
    assert res.mmd2 == pytest.approx(_dense_mmd2(x, y, res.gamma, unbiased), abs=1e-7)
    assert res.mmd2 != exact.mmd2  # a different computation, not the float64 path


def test_float32_identity_and_shift():
    x = _sample(500, 5, 32)
    assert abs(mmd(x, x, unbiased=False, precision="float32").mmd2) < 1e-7
    grow = [mmd(x, x[::-1] + s, gamma=0.1, precision="float32").mmd2 for s in (0, 0.2, 0.5)]
    assert grow[0] < grow[1] < grow[2]


def test_median_heuristic_matches_dense_oracle():
    x, y = _sample(120, 3, 2), _sample(80, 3, 3, shift=0.5)
    z = np.vstack([x, y])
    med = _dense_median(z)
    assert median_distance(x, y) == pytest.approx(med, rel=1e-14)
    res = mmd(x, y)
    assert res.exact_median and res.n_pairs_for_median == 200 * 199 // 2
    assert res.median == pytest.approx(med, rel=1e-14)
    assert res.gamma == pytest.approx(1 / (2 * med**2), rel=1e-13)
    assert res.mmd2 == pytest.approx(_dense_mmd2(x, y, res.gamma, True), abs=1e-12)
    assert res.mmd == pytest.approx(math.sqrt(res.mmd2), rel=1e-14)


def test_chunked_equals_unchunked():
    x, y = _sample(2000, 6, 4), _sample(1500, 6, 5, shift=0.2)
    whole = mmd(x, y, gamma=0.05, chunk=4096).mmd2
    for chunk in (256, 1000):
        assert abs(mmd(x, y, gamma=0.05, chunk=chunk).mmd2 - whole) < 1e-10


def test_result_does_not_depend_on_workers():
    x, y = _sample(700, 5, 23), _sample(600, 5, 24, shift=0.1)
    assert mmd(x, y, chunk=300, workers=1) == mmd(x, y, chunk=300, workers=3)


def test_closed_form_two_gaussians():
    """Large-sample estimate vs the population value, within 5 standard errors.

    The unbiased estimator's standard error is, to first order (Hoeffding projection),
    sqrt(4/n Var[phi_P(X) - phi_Q(X)] + 4/m Var[phi_Q(Y) - phi_P(Y)]) with
    phi_P(t) = E_{x ~ P} k(t, x); phi is closed-form and the variances are taken over 10^6 draws.
    """
    mu1, mu2, s, gamma, n = 0.0, 1.0, 1.0, 0.5, 6000
    x = np.random.default_rng(6).normal(mu1, s, size=(n, 1))
    y = np.random.default_rng(7).normal(mu2, s, size=(n, 1))
    rng = np.random.default_rng(8)
    tx, ty = rng.normal(mu1, s, 10**6), rng.normal(mu2, s, 10**6)
    var_x = np.var(_mean_kernel(tx, mu1, s, gamma) - _mean_kernel(tx, mu2, s, gamma))
    var_y = np.var(_mean_kernel(ty, mu2, s, gamma) - _mean_kernel(ty, mu1, s, gamma))
    se = math.sqrt(4 * var_x / n + 4 * var_y / n)  # 0.0068 here
    target = _gaussian_mmd2(mu1, mu2, s, gamma)  # 0.1773
    assert abs(mmd(x, y, gamma=gamma).mmd2 - target) < 5 * se
    assert abs(mmd(x, y, gamma=gamma, unbiased=False).mmd2 - target) < 5 * se + 2 / n


def test_closed_form_formula_by_quadrature():
    """Each term E k(a, b) is E exp(-gamma Z^2) with Z = a - b ~ N(mu_a - mu_b, 2 s^2)."""
    from scipy import integrate
    from scipy.stats import norm

    mu1, mu2, s, gamma = 0.3, -0.4, 0.7, 2.0

    def mean_k(delta: float) -> float:
        sd = math.sqrt(2) * s
        f = lambda z: np.exp(-gamma * z**2) * norm.pdf(z, delta, sd)  # noqa: E731
        return integrate.quad(f, delta - 12 * sd, delta + 12 * sd, epsabs=1e-13)[0]

    value = 2 * mean_k(0.0) - 2 * mean_k(mu1 - mu2)
    assert value == pytest.approx(_gaussian_mmd2(mu1, mu2, s, gamma), abs=1e-10)


# ---------------------------------------------------------------- properties
def test_biased_identity_is_zero():
    x = _sample(500, 5, 9, shift=10.0)
    res = mmd(x, x, unbiased=False)
    assert abs(res.mmd2) < 1e-12 and res.mmd < 1e-6 and not res.unbiased


def test_unbiased_identity_is_slightly_negative_as_expected():
    """mmd_u(x, x) = 2 (A - n (n - 1)) / (n^2 (n - 1)) with A = sum_{i != j} k(x_i, x_j) <= n(n-1):
    the U-statistic subtracts the within-sample diagonal but not the cross one."""
    x = _sample(300, 3, 10)
    res = mmd(x, x)
    kxx = np.exp(-res.gamma * cdist(x, x, "sqeuclidean"))
    a, n = kxx.sum() - len(x), len(x)
    assert res.mmd2 == pytest.approx(2 * (a - n * (n - 1)) / (n**2 * (n - 1)), abs=1e-12)
    assert -2 / n <= res.mmd2 < 0 and res.mmd == 0.0


def test_symmetric():
    x, y = _sample(400, 3, 11), _sample(300, 3, 12, shift=0.4)
    a, b = mmd(x, y), mmd(y, x)
    assert a.gamma == b.gamma and a.mmd2 == pytest.approx(b.mmd2, abs=1e-14)


@pytest.mark.parametrize("gamma", [None, 0.1])
def test_grows_with_a_mean_shift(gamma):
    x = _sample(600, 4, 13)
    values = [mmd(x, _sample(600, 4, 14, shift=s), gamma=gamma).mmd2 for s in (0, 0.3, 0.7, 1.5)]
    assert all(a < b for a, b in zip(values, values[1:], strict=False))
    assert abs(values[0]) < 0.01


# ---------------------------------------------------------------- median subsample
def test_median_subsample_error_at_10000_points():
    z = _sample(10_000, 5, 15)
    exact = median_distance(z, max_pairs=10_000 * 9_999 // 2)  # all 49,995,000 pairs
    approx = median_distance(z)  # default: 2,000,000 sampled pairs
    assert abs(approx - exact) / exact < 0.02  # measured ~1e-4 (benchmarks/bench_metrics.py)


def test_median_exact_path_ignores_seed():
    z = _sample(200, 3, 16)
    assert median_distance(z, seed=0) == median_distance(z, seed=1) == pytest.approx(
        float(np.median(pdist(z))), rel=1e-15)


def test_median_subsample_is_deterministic_per_seed():
    x, y = _sample(300, 3, 17), _sample(300, 3, 18)
    a = median_distance(x, y, max_pairs=5000, seed=3)
    assert a == median_distance(x, y, max_pairs=5000, seed=3)
    assert a != median_distance(x, y, max_pairs=5000, seed=4)
    assert a == pytest.approx(median_distance(x, y), rel=0.05)


def test_mmd_with_subsampled_median_is_deterministic_per_seed():
    x, y = _sample(300, 3, 19), _sample(300, 3, 20, shift=0.3)
    a = mmd(x, y, max_pairs=5000, seed=(0, "run", 1))
    assert not a.exact_median and a.n_pairs_for_median == 5000
    assert a == mmd(x, y, max_pairs=5000, seed=(0, "run", 1))
    b = mmd(x, y, max_pairs=5000, seed=(0, "run", 2))
    assert b.gamma != a.gamma and b.mmd2 != a.mmd2


def test_given_gamma_skips_the_median():
    res = mmd(_sample(20, 2, 21), _sample(20, 2, 22), gamma=0.3)
    assert isinstance(res, MMDResult)
    assert (res.gamma, res.median, res.n_pairs_for_median, res.exact_median) == (
        0.3, None, 0, False)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(("x", "y", "kwargs", "match"), [
    (np.zeros((3, 2)), np.zeros((3, 3)), {}, "same feature columns"),
    (np.array([[0.0, np.nan], [1, 1]]), np.ones((3, 2)), {}, "NaN or infinite"),
    (np.ones((3, 2)), np.array([[0.0, -np.inf], [1, 1]]), {}, "NaN or infinite"),
    (np.ones((1, 2)), np.ones((3, 2)), {"gamma": 1.0}, "at least 2 are needed"),
    (np.zeros((0, 2)), np.ones((3, 2)), {}, "at least 1 row"),
    ([["a", "b"], ["c", "d"]], np.ones((3, 2)), {}, "numeric"),
    (np.ones(3), np.ones(3), {}, "reshape"),
    (np.zeros((5, 2)), np.zeros((5, 2)), {}, "median pairwise distance is 0"),
    (np.eye(3), np.eye(3), {"gamma": 0.0}, "gamma must be > 0"),
    (np.eye(3), np.eye(3), {"gamma": float("nan")}, "gamma must be a finite number"),
    (np.eye(3), np.eye(3), {"chunk": 0}, "chunk must be a positive integer"),
    (np.eye(3), np.eye(3), {"max_pairs": 0}, "max_pairs must be a positive integer"),
    (np.eye(3), np.eye(3), {"unbiased": "yes"}, "unbiased must be True or False"),
    (np.eye(3), np.eye(3), {"workers": 0}, "workers must be a positive integer"),
    (np.eye(3), np.eye(3), {"precision": "float16"}, "precision must be one of"),
    (np.eye(3), np.eye(3), {"max_pairs": 2, "seed": -1}, "root seed"),
])
def test_bad_input_raises(x, y, kwargs, match):
    with pytest.raises(InvalidInputError, match=match):
        mmd(x, y, **kwargs)


def test_biased_accepts_single_rows_but_median_needs_two_records():
    assert mmd(np.zeros((1, 2)), np.ones((1, 2)), unbiased=False).mmd2 == pytest.approx(
        2 * (1 - math.exp(-0.5)))  # median = sqrt(2), gamma = 1/4, d^2 = 2
    with pytest.raises(InvalidInputError, match="at least 2 records"):
        median_distance(np.zeros((1, 2)))
