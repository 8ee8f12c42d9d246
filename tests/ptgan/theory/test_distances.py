"""Exact distances of the theory checks (fusionlib.ptgan.theory.distances)."""

import math

import numpy as np
import pytest
from scipy import stats

from fusionlib.metrics.distances import wasserstein1
from fusionlib.ptgan.theory.distances import (
    exact_w1,
    lipschitz_sup,
    one_dimensional,
    w1_laws,
    w1_normals,
)


def test_exact_w1_uses_the_one_dimensional_solution_and_agrees_with_pot():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=200), rng.normal(1.0, 2.0, size=150)
    zero_x, zero_y = np.zeros((200, 1)), np.zeros((150, 1))
    a, b = np.hstack([x[:, None], zero_x]), np.hstack([y[:, None], zero_y])
    assert one_dimensional(a, b) == 0
    assert exact_w1(a, b) == pytest.approx(wasserstein1(a, b), rel=1e-9)
    assert exact_w1(x, y) == pytest.approx(stats.wasserstein_distance(x, y))
    two = rng.normal(size=(50, 2))
    assert one_dimensional(two, two + 1) is None
    assert exact_w1(two, two + np.array([3.0, 4.0])) == pytest.approx(5.0)
    assert exact_w1(np.array([0.0, np.inf]), np.array([1.0, 2.0])) == math.inf


def test_w1_of_two_normals_by_the_quantile_integral():
    # equal sds: a shift, W1 = |mu1 - mu2|
    assert w1_normals(1.5, 0.1, -1.5, 0.1) == pytest.approx(3.0, abs=1e-9)
    # unequal sds: E|3 + s Z| with s = 3 (the folded normal mean), the quantiles cross
    s = 3.0
    folded = s * math.sqrt(2 / math.pi) * math.exp(-9 / (2 * s * s)) + 3 * (
        1 - 2 * stats.norm.cdf(-3 / s))
    assert w1_normals(1.5, 0.1, -1.5, 3.1) == pytest.approx(folded, rel=1e-6)
    assert w1_laws(lambda u: u, lambda u: 2 * u) == pytest.approx(0.5)


def test_lipschitz_sup_by_hand():
    # +1 at x = 2 and -1 at x = -1: sup f(2) - f(-1) over 1-Lipschitz f is 3
    assert lipschitz_sup(np.array([[2.0], [-1.0]]), np.array([1.0, -1.0])) == pytest.approx(3.0)
    # an unbalanced coefficient is sent to the origin, where f vanishes: sup f(2) = 2
    assert lipschitz_sup(np.array([[2.0], [5.0]]), np.array([1.0, 0.0])) == pytest.approx(2.0)
    # in two dimensions (POT): the same as the distance between the points
    pts = np.array([[3.0, 0.0], [0.0, 4.0]])
    assert lipschitz_sup(pts, np.array([1.0, -1.0])) == pytest.approx(5.0)
    assert lipschitz_sup(pts, np.zeros(2)) == 0.0
