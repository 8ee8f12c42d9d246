"""Stacked layers, networks, the Gumbel head, the generator bank and Adam over stacked tensors."""

from __future__ import annotations

import copy

import pytest
import torch
from numpy.testing import assert_allclose
from torch import nn

from fusionlib.encoding.tabular import Span
from fusionlib.errors import InvalidInputError
from fusionlib.gan.heads import TabularHead
from fusionlib.gan.losses import critic_loss, generator_loss
from fusionlib.gan.networks import Critic, Generator, tabular_networks
from fusionlib.gan.penalties import coherency_penalty, input_gradient, max_penalty
from fusionlib.gan.stacked import (
    GeneratorBank,
    PenaltyReLU,
    StackedBatchNorm1d,
    StackedLinear,
    load_rep_state_dict,
    rep_state_dict,
)
from fusionlib.gan.stacked_heads import StackedTabularHead
from fusionlib.gan.stacked_networks import StackedCritic, StackedGenerator
from fusionlib.rng import torch_generator

SPANS = (Span("a", "continuous", 0, 1), Span("b", "discrete", 1, 4), Span("c", "continuous", 4, 5),
         Span("d", "discrete", 5, 7))


def close(a: torch.Tensor, b: torch.Tensor, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)


def _linears(n: int, seed: int = 0) -> list[nn.Linear]:
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        layer = nn.Linear(5, 3)
        with torch.no_grad():
            layer.weight.copy_(torch.randn(3, 5, generator=g))
            layer.bias.copy_(torch.randn(3, generator=g))
        out.append(layer)
    return out


def _stack(layers, cls):
    stacked = cls.like(layers[0], len(layers))
    for r, layer in enumerate(layers):
        load_rep_state_dict(stacked, r, layer.state_dict())
    return stacked


# ----------------------------------------------------------------------------- generator bank
def test_bank_streams_are_the_seeds_streams_and_never_coincide():
    bank = GeneratorBank.from_seeds([1, 2, 3], "train")
    draws = [torch.rand(8, generator=g) for g in bank]
    for seed, d in zip([1, 2, 3], draws, strict=True):
        assert torch.equal(d, torch.rand(8, generator=torch_generator(seed, "train")))
    assert not torch.equal(draws[0], draws[1]) and not torch.equal(draws[1], draws[2])


def test_bank_state_round_trip_and_bad_state():
    bank = GeneratorBank.from_seeds([4, 5], "x")
    state = bank.get_state()
    first = [torch.rand(3, generator=g) for g in bank]
    bank.set_state(state)
    assert all(torch.equal(a, torch.rand(3, generator=g)) for a, g in zip(first, bank,
                                                                          strict=True))
    with pytest.raises(InvalidInputError, match="2 rows"):
        bank.set_state(state[:1])
    with pytest.raises(InvalidInputError):
        GeneratorBank([])


# ----------------------------------------------------------------------------- layers
def test_stacked_linear_one_repetition_is_bitwise_nn_linear():
    (layer,) = _linears(1)
    stacked = _stack([layer], StackedLinear)
    x = torch.randn(7, 5, generator=torch.Generator().manual_seed(1), requires_grad=True)
    xs = x.detach().clone().unsqueeze(0).requires_grad_(True)
    y, ys = layer(x), stacked(xs)
    assert torch.equal(y, ys[0])
    y.pow(2).sum().backward()
    ys.pow(2).sum().backward()
    assert torch.equal(layer.weight.grad, stacked.weight.grad[0])
    assert torch.equal(x.grad, xs.grad[0])


def test_stacked_linear_repetitions_are_independent_layers():
    layers = _linears(3)
    stacked = _stack(layers, StackedLinear)
    x = torch.randn(3, 6, 5, generator=torch.Generator().manual_seed(2))
    out = stacked(x)
    for r, layer in enumerate(layers):
        close(out[r], layer(x[r]))


def test_stacked_batch_norm_per_repetition_statistics():
    bns = [nn.BatchNorm1d(4) for _ in range(3)]
    for r, bn in enumerate(bns):
        with torch.no_grad():
            bn.weight.fill_(1.0 + r)
            bn.bias.fill_(-r)
    stacked = _stack(bns, StackedBatchNorm1d)
    g = torch.Generator().manual_seed(3)
    for _ in range(3):  # train mode: batch statistics, running statistics updated per repetition
        x = torch.randn(3, 10, 4, generator=g) * torch.tensor([1.0, 5.0, 0.1]).view(3, 1, 1)
        out = stacked(x)
        for r, bn in enumerate(bns):
            close(out[r], bn(x[r]))
    for r, bn in enumerate(bns):
        close(stacked.running_mean[r], bn.running_mean)
        close(stacked.running_var[r], bn.running_var)
        assert int(stacked.num_batches_tracked[r]) == int(bn.num_batches_tracked) == 3
    stacked.eval()
    x = torch.randn(3, 5, 4, generator=g)
    for r, bn in enumerate(bns):
        close(stacked(x)[r], bn.eval()(x[r]))


def test_stacked_batch_norm_one_repetition_is_bitwise():
    bn = nn.BatchNorm1d(4)
    stacked = _stack([bn], StackedBatchNorm1d)
    x = torch.randn(10, 4, generator=torch.Generator().manual_seed(4))
    assert torch.equal(stacked(x.unsqueeze(0))[0], bn(x))
    assert torch.equal(stacked.running_var[0], bn.running_var)


def test_penalty_relu_has_relu_values_and_first_and_second_order_gradients():
    x = torch.randn(40, 3, generator=torch.Generator().manual_seed(5))
    w = torch.randn(3, 3, generator=torch.Generator().manual_seed(6))
    grads = []
    for act in (nn.ReLU(), PenaltyReLU()):
        xx = x.clone().requires_grad_(True)
        ww = w.clone().requires_grad_(True)
        out = (act(xx @ ww) ** 2).sum()
        (gx,) = torch.autograd.grad(out, xx, create_graph=True)
        gx.pow(2).sum().backward()  # the double backward of a gradient penalty
        grads.append((act(x @ w), gx.detach(), ww.grad))
    for a, b in zip(*grads, strict=True):
        assert torch.equal(a, b)


def test_penalty_relu_supports_the_forward_mode_coherency_penalty():
    g = torch.Generator().manual_seed(13)
    q, d = torch.randn(30, 3, generator=g), torch.randn(30, 3, generator=g)
    out = {}
    for act in (nn.ReLU(), PenaltyReLU()):
        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(3, 8), act, nn.Linear(8, 1))
        for mode in ("double_backward", "jvp"):
            net.zero_grad()
            p = coherency_penalty(lambda x, net=net: net(x).squeeze(-1), q, d, mode=mode)
            p.backward()
            out[(type(act).__name__, mode)] = (p.detach(), net[0].weight.grad.clone())
    ref = out[("ReLU", "double_backward")]
    for p, grad in out.values():
        close(p, ref[0], rtol=1e-6)
        close(grad, ref[1], rtol=1e-5, atol=1e-8)


# ----------------------------------------------------------------------------- networks
def _nets(seed: int, head: bool = True, tau: float = 0.2):
    h = TabularHead(64, SPANS, tau=tau, seed=seed) if head else None
    return tabular_networks(7, conditional=True, seed=seed, head=h)


def test_networks_round_trip_through_the_stack():
    gens, critics = zip(*[_nets(s) for s in (1, 2, 3)], strict=True)
    sg, sc = StackedGenerator.from_generators(gens), StackedCritic.from_critics(critics)
    for r in range(3):
        for a, b in ((sg.unstacked(r), gens[r]), (sc.unstacked(r), critics[r])):
            sa, sb = a.state_dict(), b.state_dict()
            assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)
        assert rep_state_dict(sc, r).keys() == critics[r].state_dict().keys()


@pytest.mark.parametrize("head", [True, False])
def test_stacked_networks_compute_each_repetitions_network(head):
    gens, critics = zip(*[_nets(s, head) for s in (1, 2, 3)], strict=True)
    sg, sc = StackedGenerator.from_generators(gens), StackedCritic.from_critics(critics)
    g = torch.Generator().manual_seed(7)
    z, t = torch.rand(3, 20, 16, generator=g), torch.rand(3, 20, generator=g)
    x = torch.rand(3, 20, 7, generator=g)
    bank = GeneratorBank.from_seeds([11, 12, 13], "gumbel")
    fake = sg(z, t, generator=bank)
    scores = sc(x, t)
    for r in range(3):
        gr = torch_generator(11 + r, "gumbel")
        close(fake[r], gens[r](z[r], t[r], generator=gr))
        close(scores[r], critics[r](x[r], t[r]))


def test_one_repetition_networks_are_bitwise():
    gen, critic = _nets(4)
    sg, sc = StackedGenerator.from_generators([gen]), StackedCritic.from_critics([critic])
    g = torch.Generator().manual_seed(8)
    z, t, x = torch.rand(1, 9, 16, generator=g), torch.rand(1, 9, generator=g), \
        torch.rand(1, 9, 7, generator=g)
    a = sg(z, t, generator=GeneratorBank.from_seeds([5], "g"))[0]
    assert torch.equal(a, gen(z[0], t[0], generator=torch_generator(5, "g")))
    assert torch.equal(sc(x, t)[0], critic(x[0], t[0]))


def test_stacking_refuses_other_architectures_and_unsupported_layers():
    g1, c1 = _nets(1)
    c_small = Critic(7, (64,) * 3, conditional=True)
    with pytest.raises(InvalidInputError, match="architecture"):
        StackedCritic.from_critics([c1, c_small])
    with pytest.raises(InvalidInputError, match="spectral"):
        StackedCritic.from_critics([Critic(7, (8,), spectral_norm=True)])
    hard = Generator(16, 7, (64,), head=TabularHead(64, SPANS, hard=True))
    with pytest.raises(InvalidInputError, match="hard"):
        StackedGenerator.from_generators([hard])
    with pytest.raises(InvalidInputError):
        StackedCritic.from_critics([])
    with pytest.raises(InvalidInputError, match=r"\(R, n, d\)"):
        StackedCritic.from_critics([c1])(torch.zeros(4, 7))


# ----------------------------------------------------------------------------- Gumbel head
def test_stacked_head_groups_spans_by_width_and_matches_the_head_with_large_logits():
    spans = (Span("a", "discrete", 0, 3), Span("b", "continuous", 3, 4),
             Span("c", "discrete", 4, 7), Span("d", "discrete", 7, 9))
    heads = [TabularHead(8, spans, seed=s) for s in (1, 2)]
    stacked = StackedTabularHead.like(heads)
    assert stacked.groups == ((2, 1), (3, 2))  # one softmax for both spans of width 3
    for r, h in enumerate(heads):
        load_rep_state_dict(stacked, r, h.state_dict())
    hidden = 30 * torch.randn(2, 5, 8, generator=torch.Generator().manual_seed(9))
    bank = GeneratorBank.from_seeds([3, 4], "g")
    out = stacked(hidden, bank)
    for r, h in enumerate(heads):
        close(out[r], h(hidden[r], torch_generator(3 + r, "g")), atol=1e-6)


def test_stacked_head_temperatures_per_repetition():
    heads = [TabularHead(64, SPANS, tau=tau, seed=s) for s, tau in ((1, 0.2), (2, 1.0))]
    stacked = StackedTabularHead.like(heads)
    for r, h in enumerate(heads):
        load_rep_state_dict(stacked, r, h.state_dict())
    hidden = torch.randn(2, 6, 64, generator=torch.Generator().manual_seed(10))
    out = stacked(hidden)  # no generator: the deterministic softmax(logits / tau)
    for r, h in enumerate(heads):
        close(out[r], h(hidden[r]))
    assert stacked.taus == (0.2, 1.0)


# ----------------------------------------------------------------------------- losses, Adam
def test_losses_and_penalties_give_one_value_per_repetition():
    g = torch.Generator().manual_seed(11)
    real, fake = torch.randn(3, 8, generator=g), torch.randn(3, 8, generator=g)
    for kind in ("wasserstein", "js", "pearson"):
        per = critic_loss(real, fake, kind)
        assert per.shape == (3,)
        for r in range(3):
            assert torch.equal(per[r], critic_loss(real[r], fake[r], kind))
            assert torch.equal(generator_loss(fake, kind)[r], generator_loss(fake[r], kind))
    critic = StackedCritic.from_critics([_nets(s)[1] for s in (1, 2)])
    pts, d = torch.randn(2, 10, 7, generator=g), torch.randn(2, 10, 7, generator=g)
    t = torch.rand(2, 10, generator=g)
    mp, cp = max_penalty(critic, pts, t), coherency_penalty(critic, pts, d, t)
    for r in range(2):
        one = critic.unstacked(r)
        close(mp[r], max_penalty(one, pts[r], t[r]))
        close(cp[r], coherency_penalty(one, pts[r], d[r], t[r]))
        close(input_gradient(critic, pts, t)[r], input_gradient(one, pts[r], t[r]))


def test_one_adam_over_stacked_parameters_is_independent_adams():
    g = torch.Generator().manual_seed(12)
    stacked = nn.Parameter(torch.randn(3, 17, 5, generator=g))
    singles = [nn.Parameter(stacked.detach()[r].clone()) for r in range(3)]
    opt = torch.optim.Adam([stacked], lr=1e-2, betas=(0.0, 0.9), fused=True)
    opts = [torch.optim.Adam([p], lr=1e-2, betas=(0.0, 0.9), fused=True) for p in singles]
    for _ in range(20):
        grads = torch.randn(3, 17, 5, generator=g) * torch.tensor([1e-6, 1.0, 1e3]).view(3, 1, 1)
        stacked.grad = grads.clone()
        opt.step()
        for r, (p, o) in enumerate(zip(singles, opts, strict=True)):
            p.grad = grads[r].clone()
            o.step()
    for r, p in enumerate(singles):  # element-wise: the repetitions' scales do not interact
        close(stacked.detach()[r], p.detach(), rtol=1e-6, atol=1e-7)


def test_rep_state_dict_is_a_copy_and_load_checks_names():
    critic = _nets(1)[1]
    sc = StackedCritic.from_critics([critic, copy.deepcopy(critic)])
    sd = rep_state_dict(sc, 0)
    sd["net.0.weight"].zero_()
    assert not torch.equal(sc.net[0].weight[0], sd["net.0.weight"])
    with pytest.raises(InvalidInputError, match="missing"):
        load_rep_state_dict(sc, 0, {"net.0.weight": sd["net.0.weight"]})
