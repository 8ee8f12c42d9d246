"""Definition 1, (A2)-(A4) and Proposition 1's moments (fusionlib.ptgan.theory.assumptions)."""

import math

import numpy as np
import pytest
from torch import nn

from fusionlib.gan.networks import tabular_networks, toy_networks
from fusionlib.ptgan.theory.assumptions import (
    activation_table,
    bounded_support,
    definition1_values,
    identity_witness,
    moment_bracket,
    network_activations,
    witness_value,
)
from fusionlib.ptgan.theory.nets import critic_value, frobenius_norms


def test_definition1_by_hand():
    # real scores (1, 3), fake (0, 2): phi(x) = x gives 2 + (1 - 1) - 1 = 1 = mean real - fake
    v = definition1_values(np.array([1.0, 3.0]), np.array([0.0, 2.0]))
    assert v["nd_objective"] == pytest.approx(1.0) and v["nd_loss"] == pytest.approx(1.0)
    sig = lambda s: 1 / (1 + math.exp(-s))  # noqa: E731
    js = (math.log(sig(1)) + math.log(sig(3))) / 2 + (math.log(1 - sig(0))
                                                       + math.log(1 - sig(2))) / 2
    assert v["js_objective"] == pytest.approx(js) and v["js_loss"] == pytest.approx(js)


def test_activation_table():
    t = activation_table().set_index("activation")
    assert (t.lipschitz <= 1 + 1e-12).all() and t.loc["ReLU", "lipschitz"] == pytest.approx(1.0)
    assert t.loc["ReLU", "homogeneity_gap"] == 0.0
    assert t.loc["lReLU(0.2)", "homogeneity_gap"] < 1e-12
    assert t.loc["Tanh", "homogeneity_gap"] > 1.0  # tanh(10 x) != 10 tanh(x)


def test_network_activations_see_batch_norm():
    g, c = tabular_networks(5, conditional=False, seed=0)
    assert network_activations(g) == {"activations": ["ReLU"], "normalisation": ["BatchNorm1d"]}
    assert network_activations(c)["normalisation"] == []
    tg, _ = toy_networks("small", conditional=False, seed=0)
    assert network_activations(nn.Sequential(tg, nn.LeakyReLU(0.2)))["activations"] == \
        ["LeakyReLU(0.2)", "ReLU"]


def test_bounded_support_by_hand():
    b = bounded_support(np.array([[3.0, 4.0], [0.0, -1.0]]))
    assert b["max_norm"] == pytest.approx(5.0) and b["max_abs"] == 4.0 and b["finite"]


def test_moment_bracket_holds_and_is_tight_for_a_shift():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 2))
    b = moment_bracket(x, x + np.array([2.0, 0.0]))  # a pure shift: W1 = ||shift|| = gap
    assert b["gap"] == pytest.approx(2.0) and b["w1"] == pytest.approx(2.0)
    assert b["gap"] <= b["w1"] <= b["upper"]


def test_identity_witness_computes_x_with_sqrt2_norms():
    w = identity_witness(3)
    x = np.linspace(-2, 2, 9)
    assert np.allclose(critic_value(w, x[:, None]), x)
    assert np.allclose(frobenius_norms(w), math.sqrt(2))
    v = witness_value(np.array([1.0, 3.0]), np.array([0.0, 0.0]))
    assert v["value"] == pytest.approx(2.0)
