import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from fusionlib.encoding.tabular import Span, TabularEncoder
from fusionlib.errors import InvalidInputError
from fusionlib.gan.heads import TabularHead, check_spans, gumbel_noise
from fusionlib.gan.networks import Generator
from fusionlib.rng import torch_generator

# x continuous, g discrete (3 levels), y continuous, c discrete (2 levels)
SPANS = (Span("x", "continuous", 0, 1), Span("g", "discrete", 1, 4),
         Span("y", "continuous", 4, 5), Span("c", "discrete", 5, 7))
DISCRETE = [(1, 4), (5, 7)]


def hidden(n=64, width=16, seed=0):
    return torch.randn(n, width, generator=torch_generator(seed, "h"))


def head(**kw):
    return TabularHead(16, SPANS, **kw)


def test_shapes_and_layers_per_span():
    hd = head()
    out = hd(hidden())
    assert out.shape == (64, 7) and hd.out_features == 7 and hd.discrete_width == 5
    assert [(m.in_features, m.out_features) for m in hd.layers] == [(16, 1), (16, 3), (16, 1),
                                                                     (16, 2)]
    assert "tau=0.2" in repr(hd) and "hard=False" in repr(hd)


@pytest.mark.parametrize("gen_seed", [None, 3])
def test_soft_blocks_are_distributions(gen_seed):
    g = None if gen_seed is None else torch_generator(gen_seed, "gumbel")
    out = head()(hidden(), generator=g)
    for a, b in DISCRETE:
        block = out[:, a:b]
        torch.testing.assert_close(block.sum(1), torch.ones(64))
        assert bool((block >= 0).all() and (block <= 1).all())
        assert bool(((block > 1e-3) & (block < 1 - 1e-3)).any())  # soft, not one-hot


def test_hard_blocks_are_one_hot():
    out = head(hard=True)(hidden(), generator=torch_generator(0, "gumbel"))
    for a, b in DISCRETE:
        block = out[:, a:b]
        ones = torch.isclose(block, torch.ones(()), atol=1e-6)
        zeros = torch.isclose(block, torch.zeros(()), atol=1e-6)
        assert bool((ones | zeros).all()) and bool((ones.sum(1) == 1).all())


def test_continuous_spans_are_linear_and_noise_free():
    hd, h = head(), hidden()
    for g in (None, torch_generator(0, "gumbel"), torch_generator(1, "gumbel")):
        out = hd(h, generator=g)
        for i, col in ((0, 0), (2, 4)):
            layer = hd.layers[i]
            torch.testing.assert_close(out[:, col:col + 1], h @ layer.weight.T + layer.bias)
    # affine in h: no tanh or other activation
    h2 = hidden(seed=1)
    mid = hd(0.5 * h + 0.5 * h2)[:, [0, 4]]
    torch.testing.assert_close(mid, 0.5 * hd(h)[:, [0, 4]] + 0.5 * hd(h2)[:, [0, 4]])
    assert float(hd(10 * h)[:, [0, 4]].detach().abs().max()) > 1.0  # not bounded to [-1, 1]


def test_without_generator_the_output_is_the_tempered_softmax():
    hd, h = head(tau=0.5), hidden()
    out = hd(h)
    torch.testing.assert_close(out[:, 1:4], F.softmax(hd.layers[1](h) / 0.5, dim=1))
    assert torch.equal(out, hd(h))


def test_same_generator_seed_same_output_other_seed_different_global_rng_untouched():
    hd, h = head(), hidden()
    before = torch.get_rng_state()
    a = hd(h, generator=torch_generator(5, "gumbel"))
    b = hd(h, generator=torch_generator(5, "gumbel"))
    c = hd(h, generator=torch_generator(6, "gumbel"))
    assert torch.equal(before, torch.get_rng_state())
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert not torch.equal(a, hd(h))  # the noise changes the discrete blocks


def test_same_seed_same_init_other_seed_different():
    before = torch.get_rng_state()
    a, b, c = head(seed=1), head(seed=1), head(seed=2)
    assert torch.equal(before, torch.get_rng_state())
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    assert not torch.equal(a.layers[1].weight, c.layers[1].weight)
    bound = 1 / math.sqrt(16)
    assert all(float(p.detach().abs().max()) <= bound for p in a.parameters())


@pytest.mark.parametrize("hard", [False, True])
def test_gradient_flows_through_the_sample(hard):
    hd = head(hard=hard)
    h = hidden().requires_grad_(True)
    out = hd(h, generator=torch_generator(0, "gumbel"))
    weights = torch.randn(7, generator=torch_generator(0, "w"))
    (out * weights).sum().backward()
    for layer in hd.layers:
        grad = layer.weight.grad
        assert grad is not None and bool(torch.isfinite(grad).all()) and float(grad.abs().sum()) > 0
    assert float(h.grad.abs().sum()) > 0


def test_straight_through_gradient_is_the_soft_gradient():
    soft, hard = head(seed=4), head(seed=4, hard=True)
    h = hidden()
    weights = torch.randn(7, generator=torch_generator(0, "w"))
    for hd in (soft, hard):
        (hd(h, generator=torch_generator(0, "gumbel")) * weights).sum().backward()
    for a, b in zip(soft.layers, hard.layers, strict=True):
        torch.testing.assert_close(a.weight.grad, b.weight.grad)


def test_gumbel_max_draws_categories_with_softmax_probabilities():
    logits = torch.tensor([1.0, 0.0, -1.0])
    noise = gumbel_noise((40000, 3), torch_generator(0, "gm"))
    assert bool(torch.isfinite(noise).all())
    shares = torch.bincount((logits + noise).argmax(1), minlength=3) / 40000
    torch.testing.assert_close(shares, F.softmax(logits, 0), atol=0.01, rtol=0)


def test_spans_of_a_tabular_encoder_and_as_a_generator_head():
    df = pd.DataFrame({"x": np.linspace(0, 1, 20), "g": ["u", "v", "w", "u"] * 5})
    enc = TabularEncoder(discrete_columns=["g"]).fit(df)
    hd = TabularHead(8, enc.spans_, seed=0)
    gen = Generator(4, enc.n_features_out_, (8,), head=hd, seed=0)
    out = gen(torch.randn(10, 4, generator=torch_generator(0, "z"))).detach().numpy()
    decoded = enc.inverse_transform(out)
    assert list(decoded.columns) == ["x", "g"] and set(decoded["g"]) <= {"u", "v", "w"}


def test_spans_are_accepted_in_any_order_and_duck_typed():
    shuffled = [SPANS[2], SPANS[0], SPANS[3], SPANS[1]]
    assert check_spans(shuffled) == SPANS
    plain = [SimpleNamespace(column=s.column, kind=s.kind, start=s.start, stop=s.stop)
             for s in SPANS]
    assert check_spans(plain) == SPANS
    h = hidden()
    torch.testing.assert_close(TabularHead(16, shuffled, seed=0)(h), head(seed=0)(h))


@pytest.mark.parametrize("tau", [0, -0.5, float("nan"), float("inf"), "0.2", None])
def test_tau_must_be_positive(tau):
    with pytest.raises(InvalidInputError, match="tau"):
        head(tau=tau)


@pytest.mark.parametrize("spans, match", [
    ([Span("a", "continuous", 0, 1), Span("b", "discrete", 0, 3)], "overlaps"),
    ([Span("a", "continuous", 0, 1), Span("b", "discrete", 2, 4)], r"gap \[1, 2\)"),
    ([Span("a", "discrete", 1, 3)], r"gap \[0, 1\)"),
    ([Span("a", "discrete", -1, 2)], "out of range"),
    ([Span("a", "discrete", 2, 2)], "out of range"),
    ([Span("a", "discrete", 0, 2.5)], "out of range"),
    ([Span("a", "ordinal", 0, 2)], "kind 'ordinal'"),
    ([], "at least one span"),
    ([(0, 1)], "column, kind, start and stop"),
    ("x", "sequence of Span"),
])
def test_bad_spans_raise(spans, match):
    with pytest.raises(InvalidInputError, match=match):
        TabularHead(16, spans)


def test_other_bad_arguments():
    with pytest.raises(InvalidInputError, match="in_features"):
        TabularHead(0, SPANS)
    with pytest.raises(InvalidInputError, match="hard"):
        head(hard=1)
    with pytest.raises(InvalidInputError, match=r"shape \(n, 16\)"):
        head()(torch.zeros(3, 8))
