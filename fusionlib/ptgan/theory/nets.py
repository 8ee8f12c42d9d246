"""ReLU critics as the theory of PTGAN sees them (Section 2.1, assumptions (A1)-(A4)).

The paper's critic class is ``D(x) = w_d^T k_{d-1}(W_{d-1} ... k_1(W_1 x))`` with Frobenius-norm
bounds ``||W_l||_F <= M_w(l)`` (A1) and 1-Lipschitz, positively homogeneous activations
(A2, A4). The book's critics (:class:`fusionlib.gan.networks.Critic`) are such networks with
biases; a bias changes no Lipschitz constant, so every bound below uses the weights only, and
the smallest class that contains a trained critic has ``M_w(l) = ||W_l^(t)||_F``.

:func:`layers_of` reads a critic into :class:`Layers` (float64 arrays); :func:`forward` gives
every pre-activation ``B_l`` and post-activation ``A_l`` (``A_0 = x``); :func:`backward` the
derivatives ``delta^l = dD/dB_l`` of the proof of Theorem 1 (SM B.4.1); :func:`loss_gradients`
the gradient of ``L = mean D(real) - mean D(fake)`` with respect to every weight matrix, from
eq. (12). Everything is exact on the two samples given (their empirical measures).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from torch import nn

from fusionlib.errors import InvalidInputError

__all__ = ["Layers", "layers_of", "forward", "backward", "loss_gradients", "frobenius_norms",
           "lipschitz_bounds", "critic_value"]


@dataclass(frozen=True)
class Layers:
    """The weights of a feed-forward critic, ``W_1 .. W_d`` (``W_d`` is ``w_d^T``, one row).

    Attributes
    ----------
    weights:
        ``W_l`` of shape (N_{l+1}, N_l), float64.
    biases:
        ``b_l`` of shape (N_{l+1},) (zeros for a bias-free layer).
    slope:
        Negative slope of every hidden activation (0: ReLU; 0.1, 0.2: leaky ReLU).
    """

    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    slope: float = 0.0

    def __post_init__(self) -> None:
        if not self.weights or len(self.weights) != len(self.biases):
            raise InvalidInputError("Layers needs one bias per weight matrix, at least one layer")
        for a, b in zip(self.weights[:-1], self.weights[1:], strict=True):
            if a.ndim != 2 or b.ndim != 2 or b.shape[1] != a.shape[0]:
                raise InvalidInputError(f"weight shapes do not chain: {a.shape} then {b.shape}")
        if self.weights[-1].shape[0] != 1:
            raise InvalidInputError(f"the last layer must have one output row, got "
                                    f"{self.weights[-1].shape}")

    @property
    def depth(self) -> int:
        """``d``, the number of weight matrices."""
        return len(self.weights)

    def activation(self, b: np.ndarray) -> np.ndarray:
        """The hidden activation applied element-wise."""
        return np.where(b > 0, b, self.slope * b)

    def derivative(self, b: np.ndarray) -> np.ndarray:
        """Its derivative (1 above zero, ``slope`` at and below zero)."""
        return np.where(b > 0, 1.0, self.slope)


def layers_of(critic: nn.Module) -> Layers:
    """The :class:`Layers` of a critic built from ``Linear`` and ``ReLU``/``LeakyReLU`` modules.

    A conditional critic's first layer includes the column that multiplies ``t(alpha)``: its
    input is ``[x, t]``. Other modules (batch norm, convolutions) are refused: the theory's
    class has none.
    """
    net = getattr(critic, "net", critic)
    linears, slopes = [], set()
    for m in net.modules():
        if isinstance(m, nn.Linear):
            linears.append(m)
        elif isinstance(m, nn.LeakyReLU):
            slopes.add(float(m.negative_slope))
        elif isinstance(m, nn.ReLU):
            slopes.add(0.0)
        elif m is not net and not isinstance(m, (nn.Sequential, nn.Identity)) \
                and not type(m).__module__.startswith("torch.nn.utils.parametriz"):
            raise InvalidInputError(
                f"{type(m).__name__} is outside the theory's network class (Linear layers and "
                "one ReLU or leaky ReLU activation); pass an MLP critic")
    if not linears or len(slopes) > 1:
        raise InvalidInputError("need at least one Linear layer and a single activation type, "
                                f"got {len(linears)} layers and slopes {sorted(slopes)}")
    weights = tuple(m.weight.detach().double().cpu().numpy().copy() for m in linears)
    biases = tuple(np.zeros(m.out_features) if m.bias is None
                   else m.bias.detach().double().cpu().numpy().copy() for m in linears)
    return Layers(weights, biases, slopes.pop() if slopes else 0.0)


def _input(layers: Layers, x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    x = x[:, None] if x.ndim == 1 else x
    if x.ndim != 2 or x.shape[1] != layers.weights[0].shape[1]:
        raise InvalidInputError(f"inputs must be (n, {layers.weights[0].shape[1]}), got "
                                f"{x.shape}; a conditional critic takes [x, t(alpha)]")
    return x


def forward(layers: Layers, x: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``(pre, post)``: ``pre[l-1] = B_l`` (n, N_{l+1}) for l = 1..d (``B_d`` is the score) and
    ``post[l] = A_l`` for l = 0..d-1 (``A_0 = x``)."""
    a = _input(layers, x)
    pre, post = [], [a]
    for i, (w, b) in enumerate(zip(layers.weights, layers.biases, strict=True)):
        z = a @ w.T + b
        pre.append(z)
        if i < layers.depth - 1:
            a = layers.activation(z)
            post.append(a)
    return pre, post


def critic_value(layers: Layers, x: np.ndarray) -> np.ndarray:
    """``D(x)`` (n,)."""
    return forward(layers, x)[0][-1][:, 0]


def backward(layers: Layers, pre: list[np.ndarray]) -> list[np.ndarray]:
    """``delta[l-1] = dD/dB_l`` (n, N_{l+1}) for l = 1..d (``delta^d = 1``), per row."""
    d = layers.depth
    deltas: list[np.ndarray] = [np.ones_like(pre[-1])]
    for k in range(d - 1, 0, -1):  # layers d-1 .. 1
        deltas.append((deltas[-1] @ layers.weights[k]) * layers.derivative(pre[k - 1]))
    return deltas[::-1]


def loss_gradients(layers: Layers, real: np.ndarray, fake: np.ndarray) -> list[np.ndarray]:
    """``dL/dW_l`` for ``L = mean D(real) - mean D(fake)`` (eq. 12), one array per layer."""
    grads = []
    parts = []
    for x in (real, fake):
        pre, post = forward(layers, x)
        parts.append((backward(layers, pre), post))
    (dx, ax), (dg, ag) = parts
    for k in range(layers.depth):
        grads.append(dx[k].T @ ax[k] / len(ax[k]) - dg[k].T @ ag[k] / len(ag[k]))
    return grads


def frobenius_norms(layers: Layers) -> np.ndarray:
    """``||W_l||_F`` for l = 1..d (the smallest (A1) bounds ``M_w(l)`` of this critic)."""
    return np.array([np.linalg.norm(w) for w in layers.weights])


def lipschitz_bounds(layers: Layers) -> dict[str, float]:
    """Upper bounds on the critic's Lipschitz constant in its input (Euclidean norms).

    ``frobenius``: ``prod_l ||W_l||_F prod K`` (the constant of Proposition 1 with
    ``M_w(l) = ||W_l||_F``); ``spectral``: ``prod_l ||W_l||_2 prod K``, tighter. ``K``, the
    activation's Lipschitz constant, is ``max(1, |slope|)``.
    """
    k = max(1.0, abs(layers.slope)) ** (layers.depth - 1)
    return {"frobenius": float(np.prod(frobenius_norms(layers)) * k),
            "spectral": float(np.prod([np.linalg.norm(w, 2) for w in layers.weights]) * k)}
