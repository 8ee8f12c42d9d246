import math

import pytest
import torch
from torch import nn

from fusionlib.encoding.tabular import Span
from fusionlib.errors import InvalidInputError
from fusionlib.fusion.networks import FusionGenerator, SourceDiscriminator
from fusionlib.gan.heads import TabularHead
from fusionlib.rng import torch_generator

# g: 3 categories, x continuous, c: 2 categories -> 6 encoded columns
SPANS = (Span("g", "discrete", 0, 3), Span("x", "continuous", 3, 4), Span("c", "discrete", 4, 6))


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


# ---------------------------------------------------------------------- categorical columns
def n_params(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def test_categorical_generator_is_the_body_plus_a_tabular_head():
    g = FusionGenerator(6, latent_dim=8, hidden=16, spans=SPANS, seed=0)
    assert [type(m) for m in g.net] == [nn.Linear, nn.ReLU] * 3
    assert isinstance(g.head, TabularHead) and g.stochastic
    assert (g.head.tau, g.head.hard) == (0.2, True) and g.head.spans == SPANS
    assert linears(g) == [(8, 16), (16, 16), (16, 16), (16, 3), (16, 1), (16, 2)]
    # the per-span output layers hold exactly the parameters of one Linear(16 -> 6)
    assert n_params(g) == n_params(FusionGenerator(6, latent_dim=8, hidden=16))
    # the body is initialised as the Appendix A body of the same seed
    plain = FusionGenerator(6, latent_dim=8, hidden=16, seed=0)
    assert all(torch.equal(a, b) for a, b in zip(g.net.parameters(), plain.net[:6].parameters(),
                                                 strict=True))


def test_categorical_generator_output_and_noise():
    g = FusionGenerator(6, latent_dim=8, hidden=16, spans=SPANS, seed=0)
    z = torch.randn(20, 8, generator=torch_generator(0, "z"))
    out = g(z, generator=torch_generator(0, "gumbel"))
    assert out.shape == (20, 6)
    for a, b in ((0, 3), (4, 6)):
        assert bool(torch.isclose(out[:, a:b].sum(1), torch.ones(20)).all())
        assert set(out[:, a:b].detach().round().unique().tolist()) <= {0.0, 1.0}
    assert torch.equal(out, g(z, generator=torch_generator(0, "gumbel")))
    assert torch.equal(g(z), g(z))  # no generator: the noiseless (deterministic) head
    soft = FusionGenerator(6, latent_dim=8, hidden=16, spans=SPANS, hard=False, tau=0.5)
    assert "tau=0.5" in repr(soft) and "hard=False" in repr(soft)


def test_continuous_spans_only_keep_appendix_a_exactly():
    cont = [Span(c, "continuous", j, j + 1) for j, c in enumerate("abc")]
    g, plain = FusionGenerator(3, spans=cont, seed=1), FusionGenerator(3, seed=1)
    assert g.head is None and not g.stochastic and repr(g) == repr(plain)
    assert all(torch.equal(a, b) for a, b in zip(g.parameters(), plain.parameters(),
                                                 strict=True))
    z = torch.randn(4, 32)
    assert torch.equal(g(z, generator=torch_generator(0, "x")), plain(z))


def test_spans_must_match_out_dim():
    with pytest.raises(InvalidInputError, match="cover 6 output columns but out_dim is 5"):
        FusionGenerator(5, spans=SPANS)
    with pytest.raises(InvalidInputError, match="overlaps"):
        FusionGenerator(6, spans=[*SPANS, Span("y", "continuous", 5, 6)])
