import math

import pytest
import torch
from torch import nn

from fusionlib.errors import InvalidInputError
from fusionlib.fusion.networks import FusionGenerator, SourceDiscriminator


def linears(module: nn.Module) -> list[tuple[int, int]]:
    return [(m.in_features, m.out_features) for m in module.modules() if isinstance(m, nn.Linear)]


def test_generator_matches_appendix_a():
    g = FusionGenerator(7)
    assert (g.latent_dim, g.out_dim) == (32, 7)
    assert linears(g) == [(32, 128), (128, 128), (128, 128), (128, 7)]
    kinds = [type(m) for m in g.net]
    assert kinds == [nn.Linear, nn.ReLU] * 3 + [nn.Linear]  # linear output, no activation
    out = g(torch.randn(5, 32))
    assert out.shape == (5, 7)
    assert (out < 0).any()  # unbounded output (no final ReLU / sigmoid)


def test_discriminator_matches_appendix_a():
    d = SourceDiscriminator(3)
    assert d.in_dim == 3
    assert linears(d) == [(3, 128), (128, 128), (128, 64), (64, 1)]
    kinds = [type(m) for m in d.body]
    assert kinds == [nn.Linear, nn.LeakyReLU] * 3 + [nn.Linear]
    assert all(m.negative_slope == 0.2 for m in d.body if isinstance(m, nn.LeakyReLU))
    assert isinstance(d.output, nn.Sigmoid)


def test_discriminator_outputs_probabilities_and_logits():
    d = SourceDiscriminator(2, seed=3)
    x = torch.randn(50, 2) * 100
    p = d(x)
    assert p.shape == (50,)
    assert bool(((p >= 0) & (p <= 1)).all())
    torch.testing.assert_close(p, torch.sigmoid(d.logits(x)))
    assert d.logits(x).shape == (50,)


def test_same_seed_same_init_other_seed_different_and_global_rng_untouched():
    before = torch.get_rng_state()
    a, b, c = FusionGenerator(4, seed=1), FusionGenerator(4, seed=1), FusionGenerator(4, seed=2)
    d1, d2 = SourceDiscriminator(4, seed=1), SourceDiscriminator(4, seed=1)
    assert torch.equal(before, torch.get_rng_state())
    for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(pa, pb)
    for pa, pb in zip(d1.parameters(), d2.parameters(), strict=True):
        assert torch.equal(pa, pb)
    assert not torch.equal(a.net[0].weight, c.net[0].weight)


def test_default_linear_init_law():
    g = FusionGenerator(3, seed=0)
    for m in g.modules():
        if isinstance(m, nn.Linear):
            bound = 1 / math.sqrt(m.in_features)
            largest = float(m.weight.detach().abs().max())
            assert 0.9 * bound < largest <= bound  # uniform on the whole interval


def test_custom_widths():
    g = FusionGenerator(2, latent_dim=8, hidden=16)
    d = SourceDiscriminator(5, hidden=16)
    assert linears(g) == [(8, 16), (16, 16), (16, 16), (16, 2)]
    assert linears(d) == [(5, 16), (16, 16), (16, 8), (8, 1)]


@pytest.mark.parametrize("make", [lambda: FusionGenerator(0), lambda: FusionGenerator(3, hidden=0),
                                  lambda: SourceDiscriminator(0),
                                  lambda: SourceDiscriminator(2, hidden=1.5)])
def test_bad_sizes_raise(make):
    with pytest.raises(InvalidInputError, match="positive integer"):
        make()
