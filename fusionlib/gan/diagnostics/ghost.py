"""Fast per-pair gradient variance for MLP critics, without materialising per-pair gradients.

For a plain :class:`torch.nn.Linear` layer with input rows ``a`` and back-propagated output
gradients ``delta``, the gradient of the pair loss ``L_i = D(x_i) - D(y_i)`` w.r.t. the weight is
``g_i = delta_{x_i} a_{x_i}^T + delta_{y_i} a_{y_i}^T`` (the minus sign of the fake term is
inside ``delta_{y_i}``), so

    ||g_i||^2 = |delta_x|^2 |a_x|^2 + |delta_y|^2 |a_y|^2 + 2 (delta_x . delta_y)(a_x . a_y)

("ghost norms"), and ``tr Cov_i(g_i) = (sum_i ||g_i||^2 - n ||mean g||^2) / (n - 1)``. One forward
and one backward pass over the ``2n`` rows give every layer's value. This is exact when rows do
not interact (no batch norm in the critic); the tests compare it with the ``vmap`` reference.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["ghost_applicable", "ghost_traces"]


def _plain_linears(critic: nn.Module) -> dict[str, nn.Linear]:
    return {name: m for name, m in critic.named_modules()
            if type(m) is nn.Linear and not hasattr(m, "parametrizations")}


def ghost_applicable(critic: nn.Module) -> bool:
    """True when every parameter sits in a plain ``nn.Linear`` and nothing mixes rows."""
    if any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in critic.modules()):
        return False
    covered = set()
    for name, m in _plain_linears(critic).items():
        prefix = f"{name}." if name else ""
        covered.update(prefix + p for p, _ in m.named_parameters(recurse=False))
    return covered == {n for n, _ in critic.named_parameters()}


def _pair_trace(gx: torch.Tensor, gy: torch.Tensor, ax: torch.Tensor | None,
                ay: torch.Tensor | None) -> float:
    """tr Cov_i of per-pair gradients ``gx_i ax_i^T + gy_i ay_i^T`` (bias: ``ax = ay = None``)."""
    n = gx.shape[0]
    if ax is None:
        g = gx + gy
        return float(((g - g.mean(0)) ** 2).sum() / (n - 1))
    sq = ((gx * gx).sum(1) * (ax * ax).sum(1) + (gy * gy).sum(1) * (ay * ay).sum(1)
          + 2.0 * (gx * gy).sum(1) * (ax * ay).sum(1))
    mean = (gx.T @ ax + gy.T @ ay) / n
    return float((sq.sum() - n * (mean * mean).sum()) / (n - 1))


def ghost_traces(
    critic: nn.Module,
    real: torch.Tensor,
    fake: torch.Tensor,
    real_alpha: torch.Tensor | None,
    fake_alpha: torch.Tensor | None,
) -> dict[str, float]:
    """Per-parameter ``tr Cov_i(dL_i/dparam)`` for every parameter of an MLP critic.

    Inputs are validated by the caller
    (:func:`fusionlib.gan.diagnostics.variance.critic_gradient_variances`).
    The critic's ``.grad`` fields are not touched.
    """
    n = real.shape[0]
    store: dict[str, list[torch.Tensor]] = {}
    handles = []

    def keep(name: str):
        def hook(module, inputs, output):
            store[name] = [inputs[0].detach()]
            output.register_hook(lambda g: store[name].append(g.detach()))
        return hook

    linears = _plain_linears(critic)
    for name, m in linears.items():
        handles.append(m.register_forward_hook(keep(name)))
    try:
        x = torch.cat([real, fake])
        with torch.enable_grad():
            if real_alpha is None:
                score = critic(x)
            else:
                score = critic(x, torch.cat([real_alpha.reshape(n), fake_alpha.reshape(n)]))
            score = score.reshape(2 * n)
            loss = score[:n].sum() - score[n:].sum()
            torch.autograd.grad(loss, [p for p in critic.parameters()], allow_unused=True)
    finally:
        for h in handles:
            h.remove()
    out: dict[str, float] = {}
    for name, m in linears.items():
        a, g = (t.double() for t in store[name])
        prefix = f"{name}." if name else ""
        out[prefix + "weight"] = _pair_trace(g[:n], g[n:], a[:n], a[n:])
        if m.bias is not None:
            out[prefix + "bias"] = _pair_trace(g[:n], g[n:], None, None)
    return out

