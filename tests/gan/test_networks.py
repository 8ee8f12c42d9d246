import pytest
import torch
from torch import nn
from torch.testing import assert_close

from fusionlib.errors import InvalidInputError
from fusionlib.gan.networks import Critic, Generator, tabular_networks, toy_networks


def test_critic_and_generator_shapes():
    c = Critic(3, (8, 8), conditional=True, seed=0)
    g = Generator(4, 3, (8,), conditional=True, seed=0)
    z, t = torch.randn(5, 4), torch.rand(5)
    x = g(z, t)
    assert x.shape == (5, 3)
    assert c(x, t).shape == (5,)


def test_conditional_network_requires_t_and_unconditional_rejects_it():
    with pytest.raises(InvalidInputError, match="temperature"):
        Critic(2, (4,), conditional=True)(torch.zeros(3, 2))
    with pytest.raises(InvalidInputError, match="unconditional"):
        Critic(2, (4,))(torch.zeros(3, 2), torch.zeros(3))


def test_temperature_input_changes_the_output():
    c = Critic(2, (8,), conditional=True, seed=1)
    x = torch.randn(4, 2)
    assert not torch.equal(c(x, torch.zeros(4)), c(x, torch.ones(4)))


def test_same_seed_same_init_other_seed_different():
    a, b, c = (Critic(3, (16, 16), seed=s) for s in (5, 5, 6))
    for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(pa, pb)
    assert not torch.equal(next(a.parameters()), next(c.parameters()))


def test_construction_leaves_global_rng_untouched():
    before = torch.get_rng_state()
    Critic(3, (8,), spectral_norm=True, seed=0)
    Generator(2, 3, (8,), batch_norm=True, seed=0)
    assert torch.equal(before, torch.get_rng_state())


def test_spectral_norm_is_seeded_and_bounds_singular_values():
    a, b = Critic(3, (32, 32), spectral_norm=True, seed=2), Critic(
        3, (32, 32), spectral_norm=True, seed=2)
    x = torch.randn(64, 3)
    for _ in range(20):  # power iterations run in training-mode forward passes
        assert torch.equal(a(x), b(x))
    for layer in a.net:
        if isinstance(layer, nn.Linear):
            sigma = torch.linalg.matrix_norm(layer.weight.detach(), ord=2)
            assert sigma.item() == pytest.approx(1.0, abs=0.05)


def test_default_linear_init_bound():
    c = Critic(100, (64,), seed=0)
    w = c.net[0].weight
    assert w.abs().max().item() <= 1 / 10 + 1e-7  # U(-1/sqrt(fan_in), 1/sqrt(fan_in))


def test_table9_tabular_sizes():
    g, c = tabular_networks(100, conditional=True, seed=0)
    c_linear = [m for m in c.modules() if isinstance(m, nn.Linear)]
    g_linear = [m for m in g.modules() if isinstance(m, nn.Linear)]
    assert [m.out_features for m in c_linear] == [64] * 7 + [1]
    assert c_linear[0].in_features == 101  # 100 columns + t(alpha)
    assert g_linear[0].in_features == 17  # latent 16 + t(alpha)
    assert [m.out_features for m in g_linear] == [64] * 7 + [100]
    assert sum(isinstance(m, nn.BatchNorm1d) for m in g.modules()) == 7


def test_paper_toy_networks_have_four_hidden_layers_of_256():
    g, c = toy_networks("paper", conditional=False, seed=0)
    widths = [m.out_features for m in c.modules() if isinstance(m, nn.Linear)]
    assert widths == [256] * 4 + [1]
    assert g.latent_dim == 4


def test_custom_head_replaces_the_output_layer():
    head = nn.Sequential(nn.Linear(8, 3), nn.Tanh())
    g = Generator(2, 3, (8,), head=head, seed=0)
    out = g(torch.randn(10, 2) * 100)
    assert bool((out.abs() <= 1).all())


def test_bad_sizes_raise():
    with pytest.raises(InvalidInputError, match="hidden"):
        Critic(2, ())
    with pytest.raises(InvalidInputError, match="in_dim"):
        Critic(0, (4,))
    with pytest.raises(InvalidInputError, match="toy network size"):
        toy_networks("huge", conditional=False, seed=0)


def test_generator_body_seeded():
    a, b = Generator(2, 2, (8,), seed=3), Generator(2, 2, (8,), seed=3)
    z = torch.randn(4, 2)
    assert_close(a(z), b(z))
