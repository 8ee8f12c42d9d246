"""Proposition 1, Lemma 4 and Theorem 1 checks (fusionlib.ptgan.theory.nets / .bounds)."""

import numpy as np
import pytest
import torch
from numpy.testing import assert_allclose
from torch import nn

from fusionlib.errors import InvalidInputError
from fusionlib.gan.networks import Critic
from fusionlib.ptgan.theory.bounds import (
    empirical_w1,
    lemma4_ratios,
    neural_distance_bracket,
    theorem1_ratios,
)
from fusionlib.ptgan.theory.nets import (
    Layers,
    critic_value,
    frobenius_norms,
    layers_of,
    lipschitz_bounds,
    loss_gradients,
)


def _samples(seed=0, n=300, d=2):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), 0.4 * rng.normal(size=(n, d)) + 1.0


@pytest.mark.parametrize("conditional", [False, True])
def test_layers_reproduce_the_critic_in_float64(conditional):
    critic = Critic(2, (8, 8), conditional=conditional, seed=3).double()
    layers = layers_of(critic)
    x = np.random.default_rng(1).normal(size=(50, 3 if conditional else 2))
    xt = torch.as_tensor(x)
    ref = critic(xt[:, :2], xt[:, 2]) if conditional else critic(xt)
    assert_allclose(critic_value(layers, x), ref.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_loss_gradients_equal_autograd():
    critic = Critic(2, (8, 8), seed=2).double()
    x, y = _samples()
    loss = critic(torch.as_tensor(x)).mean() - critic(torch.as_tensor(y)).mean()
    weights = [m.weight for m in critic.net if isinstance(m, nn.Linear)]
    auto = torch.autograd.grad(loss, weights)
    for a, b in zip(auto, loss_gradients(layers_of(critic), x, y), strict=True):
        assert_allclose(b, a.numpy(), rtol=1e-10, atol=1e-12)


def test_layers_refuse_batch_norm():
    net = nn.Sequential(nn.Linear(2, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1))
    with pytest.raises(InvalidInputError, match="BatchNorm1d"):
        layers_of(net)


def test_spectral_bound_is_tighter_and_holds_on_pairs():
    layers = layers_of(Critic(2, (16, 16), seed=4))
    b = lipschitz_bounds(layers)
    assert b["spectral"] <= b["frobenius"]
    x, y = _samples(5, 500)
    gaps = np.abs(critic_value(layers, x) - critic_value(layers, y))
    assert (gaps <= b["spectral"] * np.linalg.norm(x - y, axis=1) + 1e-12).all()


def test_bracket_holds_on_a_critic_and_its_samples():
    layers = layers_of(Critic(2, (16, 16), seed=6))
    x, y = _samples(7)
    br = neural_distance_bracket(layers, x, y)
    assert br["lower"] >= abs(br["critic"])
    assert br["upper"] == pytest.approx(np.prod(frobenius_norms(layers)) * empirical_w1(x, y))
    assert br["ratio"] <= 1.0


def test_bracket_check_fails_on_a_broken_input():
    # W1 taken between the wrong samples (the real sample with itself): the bound collapses to
    # 0 while a network of the class still separates the two samples -> ratio above 1
    layers = layers_of(Critic(2, (16, 16), seed=6))
    x, y = _samples(7)
    br = neural_distance_bracket(layers, x, y, w1=empirical_w1(x, x) + 1e-6)
    assert br["ratio"] > 1.0


def test_theorem1_and_lemma4_hold_on_a_random_relu_critic():
    layers = layers_of(Critic(3, (12, 10), seed=8))
    x, y = _samples(9, 400, 3)
    br = neural_distance_bracket(layers, x, y)
    t1 = theorem1_ratios(layers, x, y, d_upper=br["upper"], d_lower=br["lower"])
    assert list(t1.layer) == [1, 2, 3]
    assert t1.entries.tolist() == [12 * 3, 10 * 12, 10]
    assert (t1.violations == 0).all() and (t1.max_ratio <= 1).all()
    l4 = lemma4_ratios(layers, x, y, d_upper=br["upper"])
    assert (l4.violations == 0).all()


def test_theorem1_last_layer_by_hand():
    # l = d: |dL/dw_d,r| = |mean A_{d-1,r}(X) - mean A_{d-1,r}(G)|, bound d_D / M_w(d)
    w1 = np.array([[1.0, 0.0], [0.0, 1.0]])
    w2 = np.array([[3.0, 4.0]])  # ||w_d|| = 5
    layers = Layers((w1, w2), (np.zeros(2), np.zeros(1)))
    x = np.array([[1.0, 2.0], [3.0, 0.0]])  # mean relu: (2, 1)
    y = np.array([[0.0, 0.0], [1.0, 1.0]])  # mean relu: (0.5, 0.5)
    # gradient of w_d: (1.5, 0.5); with d_D = 5: ratios 1.5 / 1 and 0.5 / 1 -> max 1.5
    t1 = theorem1_ratios(layers, x, y, d_upper=5.0)
    assert t1.loc[t1.layer == 2, "max_ratio"].item() == pytest.approx(1.5)
    assert t1.loc[t1.layer == 2, "violations"].item() == 1


def test_theorem1_check_fails_on_a_broken_input():
    # a distance bound of 0 (and d_TV = 0) cannot carry a non-zero gradient
    layers = layers_of(Critic(2, (6, 6), seed=1))
    x, y = _samples(2)
    t1 = theorem1_ratios(layers, x, y, d_upper=0.0, tv=0.0)
    assert t1.violations.sum() > 0


def test_theorem1_refuses_leaky_relu_and_too_many_paths():
    leaky = Layers((np.ones((2, 2)), np.ones((1, 2))), (np.zeros(2), np.zeros(1)), slope=0.1)
    with pytest.raises(InvalidInputError, match="ReLU"):
        theorem1_ratios(leaky, np.ones((3, 2)), np.zeros((3, 2)), d_upper=1.0)
    big = layers_of(Critic(2, (8, 80, 80), seed=0))
    with pytest.raises(InvalidInputError, match="MAX_PATHS"):
        theorem1_ratios(big, np.ones((3, 2)), np.zeros((3, 2)), d_upper=1.0)


def test_ridge_witness_attains_w1_for_a_dominated_pair_and_is_below_it_otherwise():
    from fusionlib.ptgan.theory.bounds import ridge_witness

    rng = np.random.default_rng(0)
    x = np.where(rng.random(400) < 0.5, -1.5, 1.5) + 0.1 * rng.normal(size=400)
    y = -1.5 + 0.1 * rng.normal(size=400)
    assert ridge_witness(x, y) == pytest.approx(empirical_w1(x, y), rel=1e-9)
    a, b = _samples(3, 200)
    assert 0 < ridge_witness(a, b) <= empirical_w1(a, b) * (1 + 1e-12)


def test_bracket_is_tight_on_the_collapse_toy_and_a_halved_bound_fails():
    from fusionlib.ptgan.theory.planted import _collapse_instance

    layers, real, fake = _collapse_instance(300)
    br = neural_distance_bracket(layers, real, fake)
    assert br["ridge"] == br["lower"] and 0.999 < br["ratio"] <= 1 + 1e-9
    assert br["nodes"] >= 0 and br["lower"] >= abs(br["critic"])


def test_theorem1_right_side_factor():
    layers = layers_of(Critic(2, (6, 6), seed=1))
    x, y = _samples(2)
    full = theorem1_ratios(layers, x, y, d_upper=5.0)
    tenth = theorem1_ratios(layers, x, y, d_upper=5.0, rhs_factor=0.1)
    assert_allclose(tenth.max_ratio, 10 * full.max_ratio)
