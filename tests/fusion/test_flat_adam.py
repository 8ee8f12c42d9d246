"""FlatAdam: torch's fused Adam over one packed buffer (oracle: torch.optim.Adam(fused=True))."""

from __future__ import annotations

import copy

import pytest
import torch

from fusionlib.errors import InvalidInputError
from fusionlib.fusion.flat_adam import FlatAdam


def _net(seed: int) -> torch.nn.Sequential:
    torch.manual_seed(seed)
    # odd sizes: tensors that do not fill the kernel's vector width
    return torch.nn.Sequential(torch.nn.Linear(3, 37), torch.nn.LeakyReLU(0.2),
                               torch.nn.Linear(37, 5), torch.nn.ReLU(), torch.nn.Linear(5, 1))


def _gap(a: torch.nn.Module, b: torch.nn.Module) -> float:
    """The largest absolute difference between two networks' parameters."""
    with torch.no_grad():
        return max(float((p - q).abs().max()) for p, q in zip(a.parameters(), b.parameters(),
                                                              strict=True))


def _train(net: torch.nn.Module, opt, steps: int = 60, seed: int = 1) -> None:
    gen = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        x = torch.randn(16, 3, generator=gen)
        opt.zero_grad(set_to_none=True)
        (net(x) ** 2).mean().backward()
        opt.step()


@pytest.mark.parametrize("betas", [(0.5, 0.999), (0.9, 0.99)])
def test_equals_torch_fused_adam_up_to_rounding(betas):
    a, b = _net(0), _net(0)
    _train(a, torch.optim.Adam(a.parameters(), lr=1e-2, betas=betas, fused=True))
    _train(b, FlatAdam(b.parameters(), lr=1e-2, betas=betas))
    assert _gap(a, _net(0)) > 1e-2  # the parameters really moved
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        torch.testing.assert_close(q, p, rtol=1e-5, atol=1e-6)


def test_a_wrong_beta_is_caught_by_the_oracle():
    # the planted fault: the same optimiser with beta1 0.9 instead of 0.5 drifts from Adam's
    a, b = _net(0), _net(0)
    _train(a, torch.optim.Adam(a.parameters(), lr=1e-2, betas=(0.5, 0.999), fused=True))
    _train(b, FlatAdam(b.parameters(), lr=1e-2, betas=(0.9, 0.999)))
    assert _gap(a, b) > 1e-4


def test_parameters_become_views_and_keep_their_values():
    net = _net(3)
    before = copy.deepcopy(net)
    ids = [id(p) for p in net.parameters()]
    opt = FlatAdam(net.parameters(), lr=1e-3, betas=(0.5, 0.999))
    assert [id(p) for p in net.parameters()] == ids
    for p, q in zip(net.parameters(), before.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=0, atol=0)
    assert sum(p.numel() for p in net.parameters()) == opt.flat.numel()
    with torch.no_grad():
        next(net.parameters()).add_(1.0)
    assert float(opt.flat[0]) == pytest.approx(float(next(before.parameters()).detach()[0, 0]) + 1)


def test_same_seed_same_result_other_seed_other_result():
    nets = [_net(0) for _ in range(3)]
    for net, seed in zip(nets, (1, 1, 2), strict=True):
        _train(net, FlatAdam(net.parameters(), lr=1e-2, betas=(0.5, 0.999)), seed=seed)
    p0, p1, p2 = (next(n.parameters()) for n in nets)
    assert torch.equal(p0, p1) and not torch.equal(p0, p2)


def test_a_reassigned_parameter_is_refused():
    net = _net(0)
    opt = FlatAdam(net.parameters(), lr=1e-3, betas=(0.5, 0.999))
    net(torch.zeros(1, 3))[0, 0].backward()
    first = next(net.parameters())
    first.data = first.data.clone()
    with pytest.raises(InvalidInputError, match="re-assigned"):
        opt.step()


def test_a_missing_gradient_is_named():
    net = _net(0)
    opt = FlatAdam(net.parameters(), lr=1e-3, betas=(0.5, 0.999))
    with pytest.raises(InvalidInputError, match=r"parameters \[0, 1, 2, 3, 4, 5\] have no"):
        opt.step()
    net(torch.zeros(1, 3))[0, 0].backward()
    opt.step()
    assert float(opt.steps) == 1


def test_bad_input_is_named():
    with pytest.raises(InvalidInputError, match="at least one"):
        FlatAdam([], lr=1e-3, betas=(0.5, 0.999))
    mixed = [torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(2).double())]
    with pytest.raises(InvalidInputError, match="one dtype"):
        FlatAdam(mixed, lr=1e-3, betas=(0.5, 0.999))
    with pytest.raises(InvalidInputError, match="betas"):
        FlatAdam(_net(0).parameters(), lr=1e-3, betas=(1.0, 0.999))
