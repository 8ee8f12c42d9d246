"""Theorems 2 and 3 and Lemma 10 (fusionlib.ptgan.theory.rates)."""

import math

import numpy as np
import pytest

from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.theory.rates import (
    BallClass,
    class_supremum,
    fano_constant,
    golowich_constant,
    kl_hypotheses,
    lemma10_bound,
    tempered_pool,
    theorem2_bound,
    theorem2_trace,
    theorem3_constants,
    theorem3_probabilities,
)


def test_class_supremum_is_seeded_and_below_the_lipschitz_bound():
    rng = np.random.default_rng(0)
    u, c = rng.normal(size=(60, 3)), rng.normal(size=60) / 60
    cls = BallClass(3, (8, 8), 1.0)
    a = class_supremum(cls, u, c, 1, steps=40)
    assert a == class_supremum(cls, u, c, 1, steps=40)
    # |sum c_i D(u_i)| <= sum |c_i| |D(u_i)| <= prod M sum |c_i| ||u_i|| (D(0) = 0, 1-Lipschitz)
    assert 0 < a <= cls.norm_product * np.sum(np.abs(c) * np.linalg.norm(u, axis=1))


def test_class_supremum_finds_at_least_a_witness_value():
    # u1 = (1, 0), u2 = (-1, 0), coefficients +1/-1: the network with one unit reading x
    # (W_1 = e1 e1^T, w_2 = e1, both of norm 1) gives D(u1) - D(u2) = 1 - 0, so sup >= 1
    u = np.array([[1.0, 0.0], [-1.0, 0.0]])
    assert class_supremum(BallClass(2, (4,), 1.0), u, np.array([1.0, -1.0]), 0, steps=60) > 0.5


def test_class_supremum_checks_shapes():
    with pytest.raises(InvalidInputError, match="points"):
        class_supremum(BallClass(3), np.zeros((4, 2)), np.zeros(4), 0)


def test_lemma10_simplification_fails_for_shallow_networks():
    # sqrt(2 d log 2) + 1 <= sqrt(3 d) is false for d <= 3 and true from d = 4 on
    assert golowich_constant(3) == pytest.approx(math.sqrt(6 * math.log(2)) + 1)
    assert [golowich_constant(d) <= math.sqrt(3 * d) for d in range(1, 7)] == \
        [False, False, False, True, True, True]
    cls = BallClass(3, (4, 4), 1.0)
    assert lemma10_bound(cls, 2.0, 100, simplified=False) > lemma10_bound(cls, 2.0, 100)


def test_theorem2_bound_by_hand():
    # d = 3, prod M = 1, eta = 0.05: C_UB = 4 sqrt(9) + 2 sqrt(log 20) = 12 + 3.4616
    cls = BallClass(3, (4, 4), 1.0)
    assert theorem2_bound(cls, 2.0, 100) == pytest.approx(
        (12 + 2 * math.sqrt(math.log(20))) * 2.0 / 10.0)


def test_theorem2_trace_stays_below_the_bound():
    pool = tempered_pool(256, 0)
    assert pool.shape == (256, 3) and (pool[:, 2] >= 0).all() and (pool[:, 2] <= 1).all()
    out = theorem2_trace(BallClass(3, (4, 4), 1.0), pool, [16, 64], 1, 0, steps=20)
    assert (out.error <= out.bound_thm2).all() and (out.rademacher > 0).all()


def test_tempered_pool_is_seeded():
    assert np.array_equal(tempered_pool(50, 3), tempered_pool(50, 3))
    assert not np.array_equal(tempered_pool(50, 3), tempered_pool(50, 4))


def test_theorem3_constants_and_fano_by_hand():
    # B_X = 1, M = 1: D(q1, 1) = C_X = sqrt 2, D(q1, 0) = 1/sqrt 2, others 0
    k = theorem3_constants(1.0)
    assert k["witness"]["q1,1"] == pytest.approx(math.sqrt(2))
    assert k["c_lb_proof"] == pytest.approx(math.log(2) * (math.sqrt(2) + 1 / math.sqrt(2)) / 160)
    assert k["c_lb_printed"] == pytest.approx(k["c_lb_proof"])
    half = theorem3_constants(0.5)
    assert half["c_lb_printed"] > half["c_lb_proof"]
    assert fano_constant() == pytest.approx(0.55084, abs=1e-5)
    kl = kl_hypotheses(100)
    assert 0 < kl["half_sum"] <= kl["bound"]


def test_theorem3_probabilities_are_seeded_probabilities():
    a = theorem3_probabilities(100, 300, 1)
    assert a.equals(theorem3_probabilities(100, 300, 1))
    assert not a.equals(theorem3_probabilities(100, 300, 2))
    assert a["prob"].between(0, 1).all() and len(a) == 3


def test_certified_upper_value_is_above_every_network_value():
    from fusionlib.ptgan.theory.rates import class_supremum_upper, class_witness

    rng = np.random.default_rng(2)
    u, c = rng.normal(size=(40, 3)), rng.normal(size=40) / 40
    cls = BallClass(3, (6, 6), 1.0)
    up = class_supremum_upper(cls, u, c)
    assert class_supremum(cls, u, c, 0, steps=30) <= up
    assert 0 < class_witness(cls, u, c) <= up
    # prod M scales the class: radius 2, depth 3 -> 8 times
    assert class_supremum_upper(BallClass(3, (6, 6), 2.0), u, c) == pytest.approx(8 * up)


def test_theorem2_trace_brackets_the_error():
    pool = tempered_pool(128, 1)
    out = theorem2_trace(BallClass(3, (4, 4), 1.0), pool, [16, 32], 1, 0, steps=0)
    assert (out.error <= out.error_upper).all() and (out.rademacher <= out.rademacher_upper).all()
    shifted = theorem2_trace(BallClass(3, (4, 4), 1.0), pool, [16, 32], 1, 0, steps=0,
                             shift=0.5)
    assert (shifted.error_upper > out.error_upper).all()


def test_theorem3_constant_estimators():
    from fusionlib.ptgan.theory.rates import THEOREM3_ESTIMATORS

    assert THEOREM3_ESTIMATORS == ("empirical", "p0", "p1", "p2")
    # p1 sits 2 C_LB / sqrt(n) from p0 and p2 (witness distance), 0 from itself
    p1 = theorem3_probabilities(100, 10, 0, estimator="p1")
    assert p1["prob"].tolist() == [1.0, 0.0, 1.0]
    assert p1.loc[0, "median_distance"] == pytest.approx(2 * p1.loc[0, "threshold"])
    assert theorem3_probabilities(100, 10, 0, estimator="p1", c_lb_factor=3.0)["prob"].max() == 0
    with pytest.raises(InvalidInputError, match="estimator"):
        theorem3_probabilities(100, 10, 0, estimator="mine")
    assert fano_constant(2.0) == pytest.approx(0.5305, abs=1e-4)
