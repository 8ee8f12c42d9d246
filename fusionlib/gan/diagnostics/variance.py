"""Variance of the critic's parameter gradients (PTGAN, seed 001, Sections 2.3.2 and 4.2).

Two quantities appear in the paper and both are implemented here:

* **Per-sample gradient variance** (SM D.1, the y-axis of Figures 2 and 4). For one minibatch of
  ``n_b`` real/fake pairs the per-pair loss is ``L_i = D(x_i) - D(y_i)`` (the paper prints
  ``D(X_i) - G(Z_i)``, an evident typo), its gradient ``g_i = dL_i/dw`` w.r.t. every critic
  parameter is computed, the variance over ``i`` is taken element-wise and summed:
  ``sum_k Var_i(g_{i,k}) = tr Cov_i(g_i)``. We use the unbiased (``n_b - 1``) variance.
* **Minibatch gradient covariance trace** (Propositions 2 and 5): ``tr Cov(dL_b/dw)`` where
  ``L_b`` is the minibatch loss and the covariance is over independent minibatches. For i.i.d.
  pairs it equals the per-sample quantity divided by ``n_b``.

A *critic* here is any :class:`torch.nn.Module`; it is called as ``critic(x)`` when no
temperature is given and as ``critic(x, a)`` (``a`` of shape ``(n,)``) otherwise, which is the
convention of :mod:`fusionlib.gan.networks`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch.func import functional_call, grad, vmap

from fusionlib.errors import InvalidInputError
from fusionlib.gan.diagnostics.ghost import ghost_applicable, ghost_traces
from fusionlib.rng import torch_generator

__all__ = [
    "METHODS",
    "BatchDraw",
    "per_sample_gradients",
    "trace_covariance",
    "critic_gradient_variance",
    "critic_gradient_variances",
    "minibatch_gradient_variance",
    "last_layer_parameter_names",
    "trace_with_error",
]

#: ways to compute per-pair gradient variances (see :func:`critic_gradient_variances`)
METHODS = ("auto", "ghost", "vmap")

#: ``draw(generator) -> (real, fake, real_alpha, fake_alpha)``; the alphas may be ``None``.
BatchDraw = Callable[
    [torch.Generator],
    tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor | None],
]


def _check_pair(real: torch.Tensor, fake: torch.Tensor) -> None:
    for name, t in (("real", real), ("fake", fake)):
        if not isinstance(t, torch.Tensor):
            raise InvalidInputError(
                f"{name} must be a torch.Tensor of shape (n, d), got {type(t).__name__}")
        if t.ndim != 2:
            raise InvalidInputError(
                f"{name} must have shape (n, d); got {tuple(t.shape)} (reshape 1-D data to (n, 1))"
            )
        if not torch.isfinite(t).all():
            raise InvalidInputError(f"{name} contains NaN or inf; clean the samples first")
    if real.shape != fake.shape:
        raise InvalidInputError(
            f"real {tuple(real.shape)} and fake {tuple(fake.shape)} must have the same shape: "
            "the per-sample loss pairs real row i with fake row i (n_b = m_b, Section 2.2.1)"
        )
    if real.shape[0] < 2:
        raise InvalidInputError("need at least 2 pairs to estimate a variance; pass n >= 2 rows")


def last_layer_parameter_names(critic: torch.nn.Module) -> list[str]:
    """Names of the last :class:`torch.nn.Linear` layer's weight (and bias), ``w_d`` in the paper.

    Proposition 2 bounds the gradient covariance of this layer only. A spectral-normalised
    layer's weight is the parameter ``parametrizations.weight.original``.
    """
    last = None
    for name, module in critic.named_modules():
        if isinstance(module, torch.nn.Linear):
            last = name
    if last is None:
        raise InvalidInputError("critic has no nn.Linear layer; pass param_names explicitly")
    prefix = f"{last}." if last else ""
    return [n for n, _ in critic.named_parameters() if n.startswith(prefix)
            and n[len(prefix):] in ("weight", "bias", "parametrizations.weight.original")]


def _select_params(
    critic: torch.nn.Module, param_names: Sequence[str] | None
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    all_params = {k: v.detach() for k, v in critic.named_parameters()}
    names = list(all_params) if param_names is None else list(param_names)
    unknown = [n for n in names if n not in all_params]
    if unknown or not names:
        raise InvalidInputError(
            f"unknown parameter names {unknown}; allowed: {sorted(all_params)}"
        )
    chosen = {k: all_params[k] for k in names}
    frozen = {k: v for k, v in all_params.items() if k not in chosen}
    return chosen, frozen


def _per_sample_grad_dict(
    critic: torch.nn.Module,
    real: torch.Tensor,
    fake: torch.Tensor,
    real_alpha: torch.Tensor | None,
    fake_alpha: torch.Tensor | None,
    param_names: Sequence[str] | None,
) -> dict[str, torch.Tensor]:
    _check_pair(real, fake)
    if (real_alpha is None) != (fake_alpha is None):
        raise InvalidInputError("give both real_alpha and fake_alpha, or neither")
    chosen, frozen = _select_params(critic, param_names)
    with_alpha = real_alpha is not None
    n = real.shape[0]
    ra = real_alpha.reshape(n) if with_alpha else torch.zeros(n)
    fa = fake_alpha.reshape(n) if with_alpha else torch.zeros(n)

    def loss_one(p, x, y, a, b):
        params = {**frozen, **p}
        if with_alpha:
            dx = functional_call(critic, params, (x[None], a[None]))
            dy = functional_call(critic, params, (y[None], b[None]))
        else:
            dx = functional_call(critic, params, (x[None],))
            dy = functional_call(critic, params, (y[None],))
        return (dx - dy).sum()

    grads = vmap(grad(loss_one), in_dims=(None, 0, 0, 0, 0))(chosen, real, fake, ra, fa)
    return {k: g.reshape(n, -1).detach() for k, g in grads.items()}


def per_sample_gradients(
    critic: torch.nn.Module,
    real: torch.Tensor,
    fake: torch.Tensor,
    *,
    real_alpha: torch.Tensor | None = None,
    fake_alpha: torch.Tensor | None = None,
    param_names: Sequence[str] | None = None,
) -> torch.Tensor:
    """Gradients of ``L_i = D(real_i[, a_i]) - D(fake_i[, a'_i])`` for every pair ``i``.

    Parameters
    ----------
    critic:
        The critic ``D``; its parameters are not modified.
    real, fake:
        Tensors of shape ``(n, d)``; row ``i`` of each forms pair ``i``.
    real_alpha, fake_alpha:
        Optional temperature inputs of shape ``(n,)`` passed as the critic's second argument
        (``t(alpha)`` for :class:`fusionlib.gan.networks.Critic`). Give both or neither.
    param_names:
        Parameters to differentiate (default: all), e.g. :func:`last_layer_parameter_names`.

    Returns
    -------
    torch.Tensor
        Shape ``(n, P)``: one flattened gradient per pair, ``P`` the number of chosen entries.
    """
    grads = _per_sample_grad_dict(critic, real, fake, real_alpha, fake_alpha, param_names)
    return torch.cat(list(grads.values()), dim=1)


def critic_gradient_variances(
    critic: torch.nn.Module,
    real: torch.Tensor,
    fake: torch.Tensor,
    groups: dict[str, Sequence[str] | None],
    *,
    real_alpha: torch.Tensor | None = None,
    fake_alpha: torch.Tensor | None = None,
    method: str = "auto",
) -> dict[str, float]:
    """:func:`critic_gradient_variance` for several parameter groups from one gradient pass.

    Parameters
    ----------
    groups:
        Maps a label to parameter names (``None`` = all parameters), e.g.
        ``{"all": None, "last": last_layer_parameter_names(critic)}``.
    method:
        ``"vmap"`` materialises the ``(n, P)`` per-pair gradients (any row-independent critic);
        ``"ghost"`` uses the closed-form per-pair norms of :mod:`fusionlib.gan.diagnostics.ghost`
        (MLP critics of plain ``nn.Linear`` layers, about 100x faster at width 256);
        ``"auto"`` picks ``"ghost"`` when it applies.
    """
    _check_pair(real, fake)
    if (real_alpha is None) != (fake_alpha is None):
        raise InvalidInputError("give both real_alpha and fake_alpha, or neither")
    if method not in METHODS:
        raise InvalidInputError(f"unknown method {method!r}; choose one of {METHODS}")
    use_ghost = method == "ghost" or (method == "auto" and ghost_applicable(critic))
    if use_ghost:
        if not ghost_applicable(critic):
            raise InvalidInputError("method='ghost' needs a critic made of plain nn.Linear layers "
                                    "without batch norm; use method='vmap'")
        traces = ghost_traces(critic, real, fake, real_alpha, fake_alpha)
    else:
        grads = _per_sample_grad_dict(critic, real, fake, real_alpha, fake_alpha, None)
        traces = {k: trace_covariance(g) for k, g in grads.items()}
    out = {}
    for label, names in groups.items():
        keys = list(traces) if names is None else list(names)
        unknown = [k for k in keys if k not in traces]
        if unknown or not keys:
            raise InvalidInputError(f"group {label!r}: unknown parameters {unknown}; "
                                    f"allowed: {sorted(traces)}")
        out[label] = float(sum(traces[k] for k in keys))
    return out


def trace_covariance(samples: torch.Tensor | np.ndarray, *, ddof: int = 1) -> float:
    """``tr Cov`` of the rows of ``samples`` (shape ``(n, P)``): the sum of column variances."""
    arr = torch.as_tensor(samples, dtype=torch.float64)
    if arr.ndim != 2 or arr.shape[0] <= ddof:
        raise InvalidInputError(
            f"samples must have shape (n, P) with n > ddof={ddof}; got {tuple(arr.shape)}"
        )
    return float(arr.var(dim=0, correction=ddof).sum())


def critic_gradient_variance(
    critic: torch.nn.Module,
    real: torch.Tensor,
    fake: torch.Tensor,
    *,
    real_alpha: torch.Tensor | None = None,
    fake_alpha: torch.Tensor | None = None,
    param_names: Sequence[str] | None = None,
    method: str = "auto",
) -> float:
    """The paper's gradient variance (SM D.1): ``sum_k Var_i(dL_i/dw_k)`` over one minibatch.

    See :func:`per_sample_gradients` for the arguments and :func:`critic_gradient_variances`
    for ``method``. Zero when every pair has the same gradient (e.g. ``fake`` equal to
    ``real`` row by row gives ``g_i = 0``); scales with the square of the critic's output scale.
    """
    if param_names is not None:
        _select_params(critic, param_names)  # reject unknown names before any work
    out = critic_gradient_variances(critic, real, fake, {"v": param_names},
                                    real_alpha=real_alpha, fake_alpha=fake_alpha, method=method)
    return out["v"]


def minibatch_gradient_variance(
    critic: torch.nn.Module,
    draw: BatchDraw,
    *,
    n_batches: int,
    seed: int,
    param_names: Sequence[str] | None = None,
) -> tuple[float, float]:
    """Monte Carlo ``tr Cov(dL_b/dw)`` over independent minibatches, with its standard error.

    Parameters
    ----------
    critic:
        The critic; the gradient of ``L_b = mean D(real[, a]) - mean D(fake[, a'])`` is taken by
        autograd at the critic's current parameters for each minibatch.
    draw:
        ``draw(generator) -> (real, fake, real_alpha, fake_alpha)`` draws one minibatch.
    n_batches:
        Number of independent minibatches (>= 2).
    seed:
        Seed of the :class:`torch.Generator` passed to ``draw``.

    Returns
    -------
    (trace, standard_error)
        ``trace = sum_b ||g_b - mean g||^2 / (B - 1)``; its standard error is the standard
        deviation of the terms ``B/(B-1) ||g_b - mean g||^2`` over ``sqrt(B)`` (delta method,
        ignoring the O(1/B) error of the centring).
    """
    if not isinstance(n_batches, int) or n_batches < 2:
        raise InvalidInputError(f"n_batches must be an int >= 2, got {n_batches!r}")
    chosen, _ = _select_params(critic, param_names)
    params = [p for n, p in critic.named_parameters() if n in chosen]
    gen = torch_generator(seed, "minibatches")
    rows = []
    for _ in range(n_batches):
        real, fake, ra, fa = draw(gen)
        _check_pair(real, fake)
        if ra is None:
            loss = critic(real).mean() - critic(fake).mean()
        else:
            loss = critic(real, ra).mean() - critic(fake, fa).mean()
        grads = torch.autograd.grad(loss, params)
        rows.append(torch.cat([g.reshape(-1) for g in grads]).detach())
    return trace_with_error(torch.stack(rows))


def trace_with_error(rows: torch.Tensor) -> tuple[float, float]:
    """``tr Cov`` of ``rows`` (shape ``(B, P)``) and the delta-method standard error."""
    rows = torch.as_tensor(rows, dtype=torch.float64)
    b = rows.shape[0]
    if rows.ndim != 2 or b < 2:
        raise InvalidInputError(f"rows must have shape (B, P) with B >= 2; got {tuple(rows.shape)}")
    terms = ((rows - rows.mean(dim=0)) ** 2).sum(dim=1) * b / (b - 1)
    return float(terms.mean()), float(terms.std(correction=1) / np.sqrt(b))
