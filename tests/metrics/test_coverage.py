"""Tests of the nearest-neighbour coverage of seed 000, Section E (fusionlib.metrics.coverage)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from fusionlib.errors import InvalidInputError
from fusionlib.metrics.coverage import (
    VARIANTS,
    coverage,
    coverage_distances,
    knn_distances,
    single_thread_blas,
)


def _oracle(real: np.ndarray, synthetic: np.ndarray, k: int, variant: str) -> np.ndarray:
    """Dense brute force: every real-synthetic distance, sorted per real record."""
    d = np.sort(cdist(real, synthetic), axis=1)[:, :k]
    if variant == "as_written":  # the seed's min over the first k neighbours, literally
        return d.min(axis=1)
    return d[:, k - 1] if variant == "kth" else d.mean(axis=1)


def _sample(n: int, d: int, seed: int, shift: float = 0.0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, d)) + shift


@pytest.mark.parametrize(("variant", "k"), list(itertools.product(VARIANTS, (1, 2, 5, 40))))
def test_matches_dense_brute_force(variant, k):
    real, syn = _sample(120, 4, 0), _sample(40, 4, 1, shift=0.3)
    np.testing.assert_allclose(coverage_distances(real, syn, k, variant),
                               _oracle(real, syn, k, variant), rtol=1e-12, atol=1e-12)
    assert coverage(real, syn, k, variant) == pytest.approx(
        _oracle(real, syn, k, variant).mean(), rel=1e-12)


def test_seed_formula_does_not_depend_on_k():
    real, syn = _sample(200, 3, 2), _sample(150, 3, 3)
    values = [coverage(real, syn, k) for k in (1, 2, 7, 150)]
    assert values == [values[0]] * 4
    assert values[0] == coverage(real, syn, 1, "kth") == coverage(real, syn, 1, "mean_k")


@pytest.mark.parametrize("k", [1, 3])
def test_identity_gives_zero(k):
    real = _sample(300, 5, 4, shift=1e3)  # large norms: copies must still give exactly 0
    assert coverage(real, real, k) == 0.0
    assert coverage(real, np.repeat(real, k, axis=0), k, "kth") == 0.0


def test_shifted_grid_gives_the_shift_norm():
    axis = np.arange(6.0)
    grid = np.array(list(itertools.product(axis, axis, axis)))
    shift = np.array([0.1, -0.2, 0.15])  # shorter than half the spacing: the copy is nearest
    assert coverage(grid, grid + shift, k=4) == pytest.approx(np.linalg.norm(shift), rel=1e-12)


def test_closed_form_example():
    real = np.zeros((3, 2))
    syn = np.array([[3.0, 4.0], [6.0, 8.0]])
    assert coverage(real, syn, 2) == 5.0
    assert coverage(real, syn, 2, "kth") == 10.0
    assert coverage(real, syn, 2, "mean_k") == 7.5


@pytest.mark.parametrize("variant", VARIANTS)
def test_grows_with_a_shift(variant):
    real = _sample(500, 3, 5)
    values = [coverage(real, _sample(500, 3, 6, shift=s), 3, variant) for s in (0, 1, 2, 4)]
    assert all(a < b for a, b in itertools.pairwise(values))


def test_variants_are_ordered():
    real, syn = _sample(200, 3, 7), _sample(100, 3, 8)
    as_written, mean_k, kth = (coverage(real, syn, 5, v) for v in ("as_written", "mean_k", "kth"))
    assert as_written < mean_k < kth


def test_knn_distances_are_sorted_and_exact():
    ref = _sample(50, 3, 9, shift=500.0)
    query = np.vstack([ref[:10], _sample(10, 3, 10, shift=500.0)])
    dist, idx = knn_distances(query, ref, 4)
    assert dist.shape == idx.shape == (20, 4)
    assert np.all(np.diff(dist, axis=1) >= 0)
    assert np.all(dist[:10, 0] == 0.0) and np.array_equal(idx[:10, 0], np.arange(10))
    np.testing.assert_allclose(dist, np.linalg.norm(query[:, None] - ref[idx], axis=2), rtol=1e-14)


def test_single_thread_blas_limits_and_restores():
    import threadpoolctl

    def blas_threads() -> list[int]:
        return [m["num_threads"] for m in threadpoolctl.threadpool_info()
                if m["user_api"] == "blas"]

    before = blas_threads()
    with single_thread_blas():
        assert all(n == 1 for n in blas_threads())
    assert blas_threads() == before


def test_accepts_lists_and_ints():
    assert coverage([[0, 0], [1, 1]], [[0, 0]]) == pytest.approx(np.sqrt(2) / 2)


@pytest.mark.parametrize(("real", "syn", "kwargs", "match"), [
    (np.zeros((3, 2)), np.zeros((3, 3)), {}, "same feature columns"),
    (np.full((3, 2), np.nan), np.zeros((3, 2)), {}, "NaN or infinite"),
    (np.zeros((3, 2)), np.array([[0.0, np.inf]]), {}, "NaN or infinite"),
    (np.zeros((3, 2)), np.zeros((2, 2)), {"k": 3}, "k=3 exceeds the 2 synthetic rows"),
    (np.zeros((3, 2)), np.zeros((2, 2)), {"k": 0}, "positive integer"),
    (np.zeros((3, 2)), np.zeros((2, 2)), {"k": 1.5}, "positive integer"),
    (np.zeros((0, 2)), np.zeros((2, 2)), {}, "at least 1 row"),
    (np.zeros((3, 2)), np.zeros((0, 2)), {}, "at least 1 row"),
    (np.zeros((3, 0)), np.zeros((3, 0)), {}, "no columns"),
    ([["a", "b"]], np.zeros((2, 2)), {}, "numeric"),
    (np.zeros(3), np.zeros((2, 1)), {}, "reshape"),
    (np.zeros((3, 2)), np.zeros((2, 2)), {"variant": "kth-nn"}, "unknown variant"),
])
def test_bad_input_raises(real, syn, kwargs, match):
    with pytest.raises(InvalidInputError, match=match):
        coverage(real, syn, **kwargs)
