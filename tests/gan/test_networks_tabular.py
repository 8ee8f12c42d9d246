"""Table 9 networks with the Gumbel-softmax head (seed 001, Appendix D.2.3)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from fusionlib.encoding.tabular import Span
from fusionlib.errors import InvalidInputError
from fusionlib.gan.heads import TabularHead
from fusionlib.gan.networks import tabular_networks

SPANS = (Span("a", "continuous", 0, 1), Span("b", "discrete", 1, 4),
         Span("c", "continuous", 4, 5), Span("d", "discrete", 5, 7))


def _head(seed: int = 0) -> TabularHead:
    return TabularHead(64, SPANS, seed=seed)


def test_table9_layers_and_widths():
    g, c = tabular_networks(7, conditional=True, seed=0, head=_head())
    lin = [m for m in c.net if isinstance(m, nn.Linear)]
    assert [m.out_features for m in lin] == [64] * 7 + [1]
    assert lin[0].in_features == 8  # d_X + t(alpha)
    body = [m for m in g.body if isinstance(m, nn.Linear)]
    assert [m.out_features for m in body] == [64] * 7 and body[0].in_features == 17
    assert sum(isinstance(m, nn.BatchNorm1d) for m in g.body) == 7
    assert isinstance(g.head, TabularHead) and g.stochastic


def test_gumbel_noise_comes_from_the_generator_argument():
    g, _ = tabular_networks(7, conditional=False, seed=0, head=_head())
    g.eval()
    z = torch.rand(50, 16)
    plain1, plain2 = g(z), g(z)
    torch.testing.assert_close(plain1, plain2)  # no generator: the noiseless softmax
    a = g(z, generator=torch.Generator().manual_seed(1))
    b = g(z, generator=torch.Generator().manual_seed(1))
    c = g(z, generator=torch.Generator().manual_seed(2))
    torch.testing.assert_close(a, b)
    assert not torch.allclose(a[:, 1:4], c[:, 1:4])
    torch.testing.assert_close(a[:, [0, 4]], plain1[:, [0, 4]])  # continuous: no noise
    torch.testing.assert_close(a[:, 1:4].sum(1), torch.ones(50))


def test_linear_head_ignores_the_generator_and_mismatch_raises():
    g, _ = tabular_networks(3, conditional=False, seed=0)
    assert not g.stochastic
    z = torch.rand(4, 16)
    torch.testing.assert_close(g(z, generator=torch.Generator().manual_seed(0)), g(z))
    with pytest.raises(InvalidInputError, match="outputs but data_dim"):
        tabular_networks(9, conditional=False, seed=0, head=_head())


def test_same_seed_same_networks():
    g1, c1 = tabular_networks(7, conditional=True, seed=3, head=_head(3))
    g2, c2 = tabular_networks(7, conditional=True, seed=3, head=_head(3))
    g3, _ = tabular_networks(7, conditional=True, seed=4, head=_head(4))
    for p, q in zip(g1.parameters(), g2.parameters(), strict=True):
        torch.testing.assert_close(p, q)
    assert not torch.allclose(g1.head.layers[1].weight, g3.head.layers[1].weight)
    assert all(torch.equal(p, q) for p, q in zip(c1.parameters(), c2.parameters(), strict=True))
