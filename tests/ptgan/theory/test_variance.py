"""Proposition 2, Lemmas 1-3 and Remark 3 on the collapse toy (fusionlib.ptgan.theory.variance)."""

import numpy as np
import pytest
import torch
from numpy.testing import assert_allclose

from fusionlib.gan.networks import Critic
from fusionlib.ptgan.theory.variance import (
    CollapseCheck,
    collapse_checks,
    epsilon_root,
    lemma2_parts,
    penultimate,
)

SMALL = CollapseCheck(mu2=1.5, hidden=(8, 8), n_iter=4, check_every=2, n_batches=20,
                      n_big=500)


def test_penultimate_difference_is_the_gradient_of_the_minibatch_loss():
    critic = Critic(1, (8, 8), conditional=True, seed=0)
    g = torch.Generator().manual_seed(0)
    x, y, t = torch.randn(30, 1, generator=g), torch.randn(30, 1, generator=g), torch.zeros(30)
    loss = critic(x, t).mean() - critic(y, t).mean()
    (auto,) = torch.autograd.grad(loss, critic.net[-1].weight)
    mine = (penultimate(critic, x, t) - penultimate(critic, y, t)).mean(0)
    assert_allclose(mine.detach().numpy(), auto[0].numpy(), rtol=1e-5, atol=1e-7)


def test_epsilon_root_by_hand():
    # sorted L: -2, -1, 1, 2, 10; running means -2, -1.5, -0.67, 0, 2: the last mean <= 0 ends
    # at L = 2, so eps = 2 and E[L | L <= 2] = 0
    assert epsilon_root(np.array([10.0, 1.0, -2.0, 2.0, -1.0])) == pytest.approx(2.0)
    assert epsilon_root(np.array([1.0, 2.0])) is None  # every L > 0: no root
    assert epsilon_root(np.array([-1.0, -2.0])) is None  # the root is not positive


def test_lemma2_is_the_law_of_total_variance():
    x = np.random.default_rng(0).normal(size=1000) ** 3
    for eps in (-1.0, 0.0, 0.7):
        parts = lemma2_parts(x, eps)
        assert parts["decomposed"] == pytest.approx(parts["var"], rel=1e-12)


def test_collapse_checks_rows_and_seeding():
    a = collapse_checks(SMALL, 1)
    assert list(a.iteration) == [0, 2, 4]
    for col in ("cov_norm", "prop2_rhs", "rayleigh", "l2_var", "sd_lb_16", "var_diff_0.5",
                "bias_0.99", "p1_ratio"):
        assert col in a
    # Lemma 1, exact on the minibatches (the full-sample top eigenvalue)
    assert (a.cov_norm_full >= a.rayleigh * (1 - 1e-9)).all()
    assert (a.p1_ratio <= 1 + 1e-9).all() and (a.p1_ratio > 0.99).all()  # a ridge attains W1
    assert a.equals(collapse_checks(SMALL, 1))
    assert not a.cov_norm.equals(collapse_checks(SMALL, 2).cov_norm)


def test_split_top_eigenvalue_is_a_lower_estimate():
    from fusionlib.ptgan.theory.variance import full_top_eigenvalue, split_top_eigenvalue

    rng = np.random.default_rng(1)
    scale = np.sqrt(np.r_[2.0, np.full(9, 0.5)])  # ||Cov||_2 = 2
    values = [split_top_eigenvalue(rng.normal(size=(300, 10)) * scale)[0] for _ in range(30)]
    assert np.mean(values) <= 2.0 * 1.02
    assert np.mean(values) > 1.7  # the eigenvector is found: the estimate is not trivial
    top, se = full_top_eigenvalue(rng.normal(size=(300, 10)) * scale)
    assert top > 0 and se > 0


def test_unbiased_squared_norm_by_hand():
    from fusionlib.ptgan.theory.variance import unbiased_sq_norm

    d = np.array([[1.0, 0.0], [3.0, 0.0], [2.0, 0.0]])
    # pairs k != l: 1*3 + 1*2 + 3*2 = 11, twice over 3*2 = 6 ordered pairs: 22 / 6
    u, loo = unbiased_sq_norm(d)
    assert u == pytest.approx(22 / 6)
    assert loo == pytest.approx([6.0, 2.0, 3.0])  # the products of the remaining pairs
    rng = np.random.default_rng(0)
    noise = [unbiased_sq_norm(rng.normal(size=(50, 5)))[0] for _ in range(200)]
    assert abs(np.mean(noise)) < 0.02  # no upward bias where the mean is 0


def test_minibatch_spreads_shrink_as_one_over_sqrt_nb():
    from fusionlib.ptgan.theory.variance import minibatch_spreads

    rng = np.random.default_rng(0)
    sp = minibatch_spreads(lambda n: rng.normal(size=n), (16, 256), 400)
    assert sp["sd_lb_16"] / sp["sd_lb_256"] == pytest.approx(4.0, rel=0.15)
    assert sp["iqr_lb_16"] / sp["iqr_lb_256"] == pytest.approx(4.0, rel=0.2)


def test_remark3_terms_bias_vanishes_for_a_generator_equal_to_the_data():
    from fusionlib.ptgan.theory.planted import _r3_terms

    collapsed, covered = _r3_terms("collapsed"), _r3_terms("data")
    assert collapsed["bias2_diff"] > 5 * collapsed["bias2_diff_se"]
    assert abs(covered["bias2_diff"]) < 3 * covered["bias2_diff_se"]
    assert collapsed["bias_1"] == 0.0 and collapsed["var_diff_1"] == 0.0
