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
    assert (a.cov_norm >= a.rayleigh * (1 - 1e-9)).all()  # Lemma 1, exact on the minibatches
    assert (a.p1_ratio <= 1).all()
    assert a.equals(collapse_checks(SMALL, 1))
    assert not a.cov_norm.equals(collapse_checks(SMALL, 2).cov_norm)
