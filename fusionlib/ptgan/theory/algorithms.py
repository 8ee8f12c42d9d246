"""Algorithms 1 and 3 of PTGAN (SM C.1) worked by hand beside the implementation.

Each function runs the package's code on a small instance and recomputes every step *as the
algorithm prints it*, in float64 NumPy, from the same random draws:

* :func:`algorithm1_worked` -- Algorithm 1 (minibatch construction): the pairs, ``alpha1``,
  ``alpha2``, ``nu``, ``q1``, ``q2``, ``q~`` and ``alpha~`` of
  :func:`fusionlib.ptgan.tempering.tempered_minibatch`. The draws (row indices and uniforms) are
  replayed from the same generator state; ``alpha1`` follows eq. (7) with the share ``r`` of
  untempered rows held per minibatch (Section 4.1: "r stands for the proportion of data
  instances picked from p_X in minibatches"): the ``(1 - r) n_b`` rows with the smallest
  "keep" draws are tempered.
* :func:`algorithm3_worked` -- one iteration of Algorithm 3 with plain gradient steps (the
  algorithm as printed; the experiments use Adam, SM D): ``L_b``, ``H``, the critic update
  ``w + gamma_D d(L_b - lambda H)/dw``, ``L^G_b`` and the generator update
  ``v - gamma_G dL^G_b/dv``, with the gradients by central finite differences of the printed
  formulas, against :meth:`fusionlib.gan.adversarial.AdversarialStep.iteration` (which
  PTGANStep inherits).
"""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import torch

from fusionlib.ptgan.config import default_config
from fusionlib.ptgan.objectives import draw_step_inputs
from fusionlib.ptgan.step import PTGANStep
from fusionlib.ptgan.tempering import n_tempered, tempered_minibatch
from fusionlib.ptgan.theory.nets import backward, forward, layers_of
from fusionlib.rng import child, torch_generator

__all__ = ["algorithm1_worked", "algorithm3_worked"]


def _t(alpha: np.ndarray) -> np.ndarray:
    return 1.0 - 2.0 * np.abs(alpha - 0.5)


def algorithm1_worked(x: np.ndarray, batch_size: int, r: float, seed: object
                      ) -> tuple[pd.DataFrame, float]:
    """Algorithm 1 by hand beside :func:`~fusionlib.ptgan.tempering.tempered_minibatch`.

    Returns the table of every step (one row per minibatch row) and the largest absolute
    difference between the implementation and the printed formulas.
    """
    data = torch.as_tensor(np.asarray(x, dtype=np.float32))
    tb = tempered_minibatch(data, batch_size, r, torch_generator(seed, "alg1"))
    g = torch_generator(seed, "alg1")  # replay the implementation's draws
    idx = torch.randint(len(data), (2 * batch_size,), generator=g).numpy()
    u = torch.rand(4, batch_size, generator=g).double().numpy()
    k, frac = n_tempered(batch_size, r)
    if frac > 0 and float(torch.rand(1, generator=g)) < frac:
        k += 1
    xs = np.asarray(data, dtype=np.float64)
    xa, xb = xs[idx[:batch_size]], xs[idx[batch_size:]]
    tempered = np.zeros(batch_size, dtype=bool)
    tempered[np.argsort(u[0], kind="stable")[:k]] = True
    a1 = np.where(tempered, u[1], 1.0)
    a2, nu = u[2], u[3]
    q1 = a1[:, None] * xa + (1 - a1[:, None]) * xb
    q2 = a2[:, None] * xa + (1 - a2[:, None]) * xb
    q_t = nu[:, None] * q1 + (1 - nu[:, None]) * q2
    a_t = nu * a1 + (1 - nu) * a2
    steps = pd.DataFrame({"i": range(batch_size), "x index": idx[:batch_size],
                          "x' index": idx[batch_size:], "keep draw": u[0], "tempered": tempered,
                          "alpha1": a1, "alpha2": a2, "nu": nu,
                          **{f"q1[{j}]": q1[:, j] for j in range(xs.shape[1])},
                          **{f"q2[{j}]": q2[:, j] for j in range(xs.shape[1])},
                          **{f"q~[{j}]": q_t[:, j] for j in range(xs.shape[1])},
                          "alpha~": a_t})
    dev = max(float(np.abs(tb.q1.double().numpy() - q1).max()),
              float(np.abs(tb.q2.double().numpy() - q2).max()),
              float(np.abs(tb.q_tilde.double().numpy() - q_t).max()),
              float(np.abs(tb.alpha1.double().numpy() - a1).max()),
              float(np.abs(tb.alpha2.double().numpy() - a2).max()),
              float(np.abs(tb.nu.double().numpy() - nu).max()),
              float(np.abs(tb.alpha_tilde.double().numpy() - a_t).max()))
    return steps, dev


def _critic_np(params: list[np.ndarray], x: np.ndarray) -> np.ndarray:
    w1, b1, w2, b2 = params
    return (np.maximum(x @ w1.T + b1, 0) @ w2.T + b2)[:, 0]


def _generator_np(params: list[np.ndarray], z: np.ndarray) -> np.ndarray:
    v1, c1, v2, c2 = params
    return np.maximum(z @ v1.T + c1, 0) @ v2.T + c2


def _input_grad(params: list[np.ndarray], x: np.ndarray) -> np.ndarray:
    from fusionlib.ptgan.theory.nets import Layers

    layers = Layers((params[0], params[2]), (params[1], params[3]))
    pre, _ = forward(layers, x)
    return backward(layers, pre)[0] @ params[0]  # dD/dx = delta^1 W_1, per row


def _fd(fn, params: list[np.ndarray], h: float = 1e-6) -> list[np.ndarray]:
    grads = []
    for p in params:
        g = np.zeros_like(p)
        for i in np.ndindex(p.shape):
            old = p[i]
            p[i] = old + h
            up = fn(params)
            p[i] = old - h
            down = fn(params)
            p[i] = old
            g[i] = (up - down) / (2 * h)
        grads.append(g)
    return grads


def _params(module: torch.nn.Module) -> list[np.ndarray]:
    return [p.detach().double().numpy().copy() for p in module.parameters()]


def algorithm3_worked(data: np.ndarray, seed: object, *, batch_size: int = 4, r: float = 0.5,
                      lam: float = 100.0, gamma: float = 0.01) -> dict:
    """One iteration of Algorithm 3 (plain gradient steps) by hand and by the implementation.

    The networks are one-hidden-layer ReLU MLPs of width 3 (critic ``[x, t] -> 1``, generator
    ``[z, t] -> 2`` with a 2-dimensional uniform ``Z^alpha``). Returns the printed quantities
    (``L_b``, ``H``, ``L^G_b``) by hand and by the implementation, and the largest absolute
    differences of the updated critic and generator parameters (``critic_dev``,
    ``generator_dev``) and of the losses (``loss_dev``).
    """
    from fusionlib.gan.networks import Critic, Generator

    cfg = default_config("pt+cp", r=r, batch_size=batch_size, penalty_weight=lam,
                         latent_dim=2, lr_d=gamma, lr_g=gamma)
    critic = Critic(2, (3,), conditional=True, seed=child(seed, "critic"))
    gen = Generator(2, 2, (3,), conditional=True, seed=child(seed, "generator"))
    w0, v0 = _params(critic), _params(gen)
    step = PTGANStep(cfg, gen, critic)
    x = torch.as_tensor(np.asarray(data, dtype=np.float32))
    inputs = draw_step_inputs(x, cfg, torch_generator(seed, "alg3"))  # replayed draws
    tb = inputs.tempered
    opt = {"critic": torch.optim.SGD(critic.parameters(), lr=gamma),
           "generator": torch.optim.SGD(gen.parameters(), lr=gamma)}
    out = step.iteration((x,), torch_generator(seed, "alg3"), opt)
    a1, at = (tb.alpha1.double().numpy(), tb.alpha_tilde.double().numpy())
    q1, q2, qt = (t.double().numpy() for t in (tb.q1, tb.q2, tb.q_tilde))
    zin = np.column_stack([inputs.z.double().numpy(), _t(a1)])

    def fake(v):
        return np.column_stack([_generator_np(v, zin), _t(a1)])

    def loss_b(w):
        return (_critic_np(w, np.column_stack([q1, _t(a1)])).mean()
                - _critic_np(w, fake(v0)).mean())

    def penalty(w):
        grad = _input_grad(w, np.column_stack([qt, _t(at)]))[:, :2]
        return float((((grad * (q1 - q2)).sum(1)) ** 2).mean())

    w_new = [p + gamma * g for p, g in zip(
        w0, _fd(lambda w: loss_b(w) - lam * penalty(w), copy.deepcopy(w0)), strict=True)]
    v_new = [p - gamma * g for p, g in zip(
        v0, _fd(lambda v: -_critic_np(w_new, fake(v)).mean(), copy.deepcopy(v0)), strict=True)]
    by_hand = {"L_b": loss_b(w0), "H": penalty(w0), "L^G_b": -_critic_np(w_new, fake(v0)).mean()}
    by_code = {"L_b": -float(out["d_loss"]), "H": float(out["penalty"]),
               "L^G_b": float(out["g_loss"])}
    return {"by_hand": by_hand, "by_code": by_code,
            "loss_dev": max(abs(by_hand[k] - by_code[k]) for k in by_hand),
            "critic_dev": max(float(np.abs(a - b).max())
                              for a, b in zip(_params(critic), w_new, strict=True)),
            "generator_dev": max(float(np.abs(a - b).max())
                                 for a, b in zip(_params(gen), v_new, strict=True)),
            "critic_step": max(float(np.abs(a - b).max()) for a, b in zip(w_new, w0, strict=True)),
            "generator_step": max(float(np.abs(a - b).max())
                                  for a, b in zip(v_new, v0, strict=True)),
            "layers": len(layers_of(critic).weights)}
