"""Definition 1, assumptions (A2)-(A4) and Proposition 1's moment bounds, checked on instances.

* :func:`definition1_values` -- the neural distance's objective (Definition 1) with
  ``phi(x) = x`` and with ``phi = log`` of a sigmoid output, against the package's critic losses.
* :func:`activation_table` -- (A2) the Lipschitz constant and (A4) the positive homogeneity of
  the activations the paper names, measured on a grid.
* :func:`network_activations` -- the activations and other non-linear modules of a network
  (what (A2)/(A4) say about each of the book's networks).
* :func:`bounded_support` -- (A3) the largest norm of a data matrix or noise sample.
* :func:`moment_bracket` -- Proposition 1's second statement, ``||mu1 - mu2|| <= W1 <=
  sqrt(tr Cov X + tr Cov Y + ||mu1 - mu2||^2)``, on two samples (their empirical measures).
* :func:`identity_witness` -- the ReLU network ``relu(x) - relu(-x)`` that shows
  ``omega_D = 0`` on the two-Gaussian example (Proposition 1's lower bound is attained).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from torch import nn

from fusionlib.gan.losses import critic_loss
from fusionlib.ptgan.theory.distances import exact_w1
from fusionlib.ptgan.theory.nets import Layers, critic_value, frobenius_norms

__all__ = ["ACTIVATIONS", "definition1_values", "activation_table", "network_activations",
           "bounded_support", "moment_bracket", "moment_pairs", "identity_witness",
           "witness_value"]

#: the activations the paper names (Section 2.1) and the ones the book's networks use
ACTIVATIONS: dict[str, nn.Module] = {"ReLU": nn.ReLU(), "lReLU(0.1)": nn.LeakyReLU(0.1),
                                     "lReLU(0.2)": nn.LeakyReLU(0.2), "Tanh": nn.Tanh()}


def definition1_values(real_scores: np.ndarray, fake_scores: np.ndarray) -> dict:
    """Definition 1's objective ``E phi(D(X)) + E phi(1 - D(G(Z)))`` and the package's losses.

    ``phi(x) = x``: the objective minus 1 is ``E D(X) - E D(G)`` (eq. 1), which should equal
    minus the Wasserstein critic loss. ``phi = log`` with a sigmoid output ``s``:
    ``E log s(D(X)) + E log(1 - s(D(G)))``, which should equal minus the JS critic loss.
    """
    r, f = (np.asarray(v, dtype=np.float64) for v in (real_scores, fake_scores))
    sig = 1.0 / (1.0 + np.exp(-np.concatenate([r, f])))
    sr, sf = sig[: len(r)], sig[len(r):]
    tr, tf = torch.as_tensor(r), torch.as_tensor(f)
    return {"nd_objective": float(r.mean() + (1.0 - f).mean() - 1.0),
            "nd_loss": -float(critic_loss(tr, tf, "wasserstein")),
            "js_objective": float(np.log(sr).mean() + np.log(1.0 - sf).mean()),
            "js_loss": -float(critic_loss(tr, tf, "js"))}


def activation_table(grid: np.ndarray | None = None, scales=(0.0, 0.5, 2.0, 10.0)
                     ) -> pd.DataFrame:
    """Per activation: the largest slope ``|k(x) - k(y)| / |x - y|`` between neighbours of a
    fine grid ((A2): at most 1) and ``max |k(c x) - c k(x)|`` over ``c >= 0`` ((A4): 0)."""
    x = np.linspace(-8, 8, 160_001) if grid is None else np.asarray(grid, dtype=np.float64)
    xt = torch.as_tensor(x)
    rows = []
    for name, fn in ACTIVATIONS.items():
        y = fn(xt).double().numpy()
        slope = float(np.max(np.abs(np.diff(y)) / np.diff(x)))
        hom = max(float((fn(c * xt) - c * fn(xt)).abs().max()) for c in scales)
        rows.append({"activation": name, "lipschitz": slope, "homogeneity_gap": hom})
    return pd.DataFrame(rows)


_ELEMENTWISE = (nn.ReLU, nn.LeakyReLU, nn.Tanh, nn.Sigmoid)
_NORMS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.LayerNorm)


def network_activations(net: nn.Module) -> dict:
    """The non-linear modules of ``net``: element-wise activations by type, normalisation
    layers, and any ``forward``-level operation the module list cannot show (a ``tanh``
    output or a Gumbel-softmax head are reported by the caller)."""
    acts, norms = set(), set()
    for m in net.modules():
        if isinstance(m, _ELEMENTWISE):
            acts.add(type(m).__name__ + (f"({m.negative_slope:g})"
                                         if isinstance(m, nn.LeakyReLU) else ""))
        elif isinstance(m, _NORMS):
            norms.add(type(m).__name__)
    return {"activations": sorted(acts), "normalisation": sorted(norms)}


def bounded_support(x: np.ndarray) -> dict:
    """(A3) on a sample: the largest Euclidean norm ``B`` and the largest absolute entry."""
    x = np.asarray(x, dtype=np.float64)
    x = x[:, None] if x.ndim == 1 else x.reshape(len(x), -1)
    return {"rows": len(x), "dim": x.shape[1], "max_norm": float(np.linalg.norm(x, axis=1).max()),
            "max_abs": float(np.abs(x).max()), "finite": bool(np.isfinite(x).all())}


def moment_bracket(x: np.ndarray, y: np.ndarray) -> dict:
    """``||mean x - mean y||``, exact W1 and ``sqrt(tr Cov x + tr Cov y + ||mean gap||^2)`` of
    the two empirical measures (the bound of Proposition 1's proof: W1 <= W2 <= the root mean
    square distance under the independent coupling)."""
    x, y = (np.asarray(v, dtype=np.float64) for v in (x, y))
    x, y = (v[:, None] if v.ndim == 1 else v for v in (x, y))
    gap = float(np.linalg.norm(x.mean(0) - y.mean(0)))
    upper = float(np.sqrt(x.var(0).sum() + y.var(0).sum() + gap**2))
    return {"gap": gap, "w1": exact_w1(x, y), "upper": upper}


def moment_pairs(n: int, seed: object, *, dims=(1, 2), shifts=(0.5, 1.5, 3.0, 6.0),
                 sds=(0.1, 0.5, 1.0), ratio: float = 1.5) -> pd.DataFrame:
    """:func:`moment_bracket` on pairs of Gaussian samples (``n`` points each): ``N(0, sd^2 I)``
    against ``N(shift e_1, (ratio sd)^2 I)``, for every dimension, shift and sd. The pairs with a
    large shift against a small sd make both sides nearly tight (W1 close to the mean gap and to
    the root mean square distance), so a constant off by 2 on either side is caught."""
    from fusionlib.rng import numpy_rng

    rng = numpy_rng(seed, "p1", "moments")
    rows = []
    for dim in dims:
        for shift in shifts:
            for sd in sds:
                mu = np.zeros(dim)
                mu[0] = shift
                x, y = rng.normal(0, sd, (n, dim)), mu + rng.normal(0, ratio * sd, (n, dim))
                rows.append({"dim": dim, "shift": shift, "sd": sd, **moment_bracket(x, y)})
    return pd.DataFrame(rows)


def identity_witness(depth: int = 2) -> Layers:
    """The bias-free ReLU network computing ``x`` on the real line with ``depth`` layers:
    ``[relu(x), relu(-x)]``, identity hidden layers, output ``[1, -1]``; every layer has
    Frobenius norm ``sqrt(2)``, so any class with ``M_w(l) >= sqrt(2)`` contains it."""
    weights = [np.array([[1.0], [-1.0]])] + [np.eye(2)] * (depth - 2) + [np.array([[1.0, -1.0]])]
    return Layers(tuple(weights), tuple(np.zeros(w.shape[0]) for w in weights))


def witness_value(x: np.ndarray, y: np.ndarray, depth: int = 2) -> dict:
    """``E D(x) - E D(y)`` of :func:`identity_witness` (one-dimensional samples), its standard
    error, and the witness's Frobenius norms."""
    w = identity_witness(depth)
    dx, dy = critic_value(w, np.asarray(x)[:, None]), critic_value(w, np.asarray(y)[:, None])
    return {"value": float(dx.mean() - dy.mean()),
            "se": float(np.sqrt(dx.var(ddof=1) / len(dx) + dy.var(ddof=1) / len(dy))),
            "norms": frobenius_norms(w).tolist()}


