"""Stacked training: R repetitions of one small network trained as one model.

The networks of the tabular experiments are tiny (Table 9 of PTGAN: seven dense layers of 64),
so one training iteration is dominated by the fixed cost of each operation rather than by its
arithmetic. R repetitions computed as R separate runs pay that cost R times; stacked, they pay
it once. A stacked module holds the parameters of R networks along a leading *repetition*
dimension and maps inputs of shape (R, n, ...) to outputs (R, n, ...); nothing mixes two
repetitions:

* :class:`StackedLinear` -- one batched matrix product (``baddbmm``) for R linear layers;
* :class:`StackedBatchNorm1d` -- batch statistics, running statistics and affine parameters per
  repetition (one ``batch_norm`` over R x C channels);
* :class:`StackedCritic`, :class:`StackedGenerator` -- the MLPs of
  :mod:`fusionlib.gan.networks`, built from R unstacked networks (so each repetition starts from
  exactly the parameters its separate run would have) and turned back into them
  (:func:`rep_state_dict`);
* :class:`GeneratorBank` -- one :class:`torch.Generator` per repetition, with the
  ``get_state``/``set_state`` of a single generator, so the trainer checkpoints it unchanged.

Losses of a stacked step are computed per repetition (shape (R,)) and *summed*: the gradient of
the sum with respect to repetition r's parameters is the gradient of repetition r's loss, and
Adam is element-wise, so one Adam over the stacked parameters is R independent Adams (tested).

With R = 1 every layer calls the kernels of its unstacked counterpart (``F.linear``,
``F.batch_norm`` on the repetition's slice), so a stacked step with one repetition is bitwise
the unstacked step on CPU; with R > 1 the batched kernels sum in another order and agree with
separate runs to float rounding. The Gumbel-softmax head is in :mod:`fusionlib.gan.stacked_heads`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from fusionlib import rng as rng_mod
from fusionlib.checks import check_positive_int
from fusionlib.errors import InvalidInputError

__all__ = ["GeneratorBank", "PenaltyReLU", "StackedBatchNorm1d", "StackedLinear",
           "load_rep_state_dict", "rep_state_dict", "stack_inputs_t"]


class GeneratorBank:
    """One :class:`torch.Generator` per repetition (the random streams of a stacked step).

    Repetition ``r`` draws only from ``bank[r]``, in the order its separate run would, so the
    random numbers of a stacked run are those of R separate runs with the same seeds.
    ``get_state`` / ``set_state`` stack the R generator states (rows), so a trainer checkpoints
    a bank as it does one generator.
    """

    def __init__(self, generators: Sequence[torch.Generator]) -> None:
        gens = list(generators)
        if not gens or not all(isinstance(g, torch.Generator) for g in gens):
            raise InvalidInputError(
                "a GeneratorBank needs at least one torch.Generator (one per repetition)")
        if len({str(g.device) for g in gens}) > 1:
            raise InvalidInputError("the generators of a bank must share one device")
        self._gens = gens

    @classmethod
    def from_seeds(cls, seeds: Sequence[object], *keys: str | int,
                   device: str = "cpu") -> GeneratorBank:
        """Generators on the streams ``(seed_r, *keys)`` (:func:`fusionlib.rng.torch_generator`)."""
        return cls([rng_mod.torch_generator(s, *keys, device=device) for s in seeds])

    def __len__(self) -> int:
        return len(self._gens)

    def __getitem__(self, r: int) -> torch.Generator:
        return self._gens[r]

    def __iter__(self) -> Iterator[torch.Generator]:
        return iter(self._gens)

    @property
    def device(self) -> torch.device:
        """The generators' device."""
        return self._gens[0].device

    def get_state(self) -> torch.Tensor:
        """The R generator states as rows of one byte tensor."""
        return torch.stack([g.get_state() for g in self._gens])

    def set_state(self, state: torch.Tensor) -> None:
        """Restore the states written by :meth:`get_state`."""
        if state.ndim != 2 or state.shape[0] != len(self._gens):
            raise InvalidInputError(
                f"a bank of {len(self._gens)} generators needs a state of {len(self._gens)} "
                f"rows, got shape {tuple(state.shape)}; the checkpoint is of another run")
        for g, s in zip(self._gens, state, strict=True):
            g.set_state(s.contiguous().clone())


class StackedLinear(nn.Module):
    """R linear layers ``y_r = x_r W_r^T + b_r``: (R, n, in) -> (R, n, out).

    ``weight`` is (R, out, in) and ``bias`` (R, out): row r is ``nn.Linear``'s weight and bias.
    """

    def __init__(self, n_reps: int, in_features: int, out_features: int) -> None:
        super().__init__()
        for name, v in (("n_reps", n_reps), ("in_features", in_features),
                        ("out_features", out_features)):
            check_positive_int(name, v)
        self.in_features, self.out_features = in_features, out_features
        self.weight = nn.Parameter(torch.zeros(n_reps, out_features, in_features))
        self.bias = nn.Parameter(torch.zeros(n_reps, out_features))

    @classmethod
    def like(cls, layer: nn.Module, n_reps: int) -> StackedLinear:
        """An (uninitialised) stacked version of the ``nn.Linear`` ``layer``."""
        if not isinstance(layer, nn.Linear) or hasattr(layer, "parametrizations") \
                or layer.bias is None:
            raise InvalidInputError(
                f"only plain nn.Linear layers with a bias can be stacked, got {layer!r} "
                "(spectral norm is not supported)")
        return cls(n_reps, layer.in_features, layer.out_features)

    def extra_repr(self) -> str:
        return (f"n_reps={self.weight.shape[0]}, in_features={self.in_features}, "
                f"out_features={self.out_features}")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(R, n, in) -> (R, n, out)."""
        if self.weight.shape[0] == 1:  # the unstacked kernel (bitwise nn.Linear)
            return F.linear(x[0], self.weight[0], self.bias[0]).unsqueeze(0)
        return torch.baddbmm(self.bias.unsqueeze(1), x, self.weight.transpose(1, 2))


class StackedBatchNorm1d(nn.Module):
    """R batch-norm layers (``nn.BatchNorm1d`` per repetition): (R, n, C) -> (R, n, C).

    Batch statistics are taken per repetition over its n rows; running statistics, affine
    parameters and ``num_batches_tracked`` have a leading repetition dimension.
    """

    def __init__(self, n_reps: int, num_features: int, *, eps: float = 1e-5,
                 momentum: float = 0.1) -> None:
        super().__init__()
        check_positive_int("n_reps", n_reps)
        check_positive_int("num_features", num_features)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.weight = nn.Parameter(torch.ones(n_reps, num_features))
        self.bias = nn.Parameter(torch.zeros(n_reps, num_features))
        self.register_buffer("running_mean", torch.zeros(n_reps, num_features))
        self.register_buffer("running_var", torch.ones(n_reps, num_features))
        self.register_buffer("num_batches_tracked", torch.zeros(n_reps, dtype=torch.long))

    @classmethod
    def like(cls, layer: nn.Module, n_reps: int) -> StackedBatchNorm1d:
        """A stacked version of the ``nn.BatchNorm1d`` ``layer`` (same eps and momentum)."""
        if not isinstance(layer, nn.BatchNorm1d) or not layer.affine \
                or not layer.track_running_stats or layer.momentum is None:
            raise InvalidInputError(
                f"only affine nn.BatchNorm1d layers with running statistics and a momentum can "
                f"be stacked, got {layer!r}")
        return cls(n_reps, layer.num_features, eps=layer.eps, momentum=layer.momentum)

    def extra_repr(self) -> str:
        return (f"n_reps={self.weight.shape[0]}, num_features={self.num_features}, "
                f"eps={self.eps}, momentum={self.momentum}")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(R, n, C) -> (R, n, C), normalised per repetition and channel."""
        if self.training:
            self.num_batches_tracked.add_(1)
        n_reps, n, c = x.shape
        if n_reps == 1:  # the unstacked kernel on the repetition's slices (bitwise BatchNorm1d)
            return F.batch_norm(x[0], self.running_mean[0], self.running_var[0], self.weight[0],
                                self.bias[0], self.training, self.momentum,
                                self.eps).unsqueeze(0)
        flat = x.transpose(0, 1).reshape(n, n_reps * c)  # channel (r, c): one batch_norm call
        out = F.batch_norm(flat, self.running_mean.view(-1), self.running_var.view(-1),
                           self.weight.view(-1), self.bias.view(-1), self.training,
                           self.momentum, self.eps)
        return out.view(n, n_reps, c).transpose(0, 1)


class _ReLUFirstOrder(torch.autograd.Function):
    """ReLU whose backward depends on the incoming gradient only (through the saved mask)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        y = x.clamp_min(0.0)
        ctx.save_for_backward(y)
        ctx.save_for_forward(y)
        return y

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        (y,) = ctx.saved_tensors
        return torch.ops.aten.threshold_backward(grad, y.detach(), 0)

    @staticmethod
    def jvp(ctx, tangent: torch.Tensor) -> torch.Tensor:
        (y,) = ctx.saved_tensors  # forward mode (the coherency penalty's "jvp" mode)
        return torch.ops.aten.threshold_backward(tangent, y.detach(), 0)


class PenaltyReLU(nn.ReLU):
    """``nn.ReLU`` for critics trained with gradient penalties (same values and gradients).

    A gradient penalty differentiates the critic's input gradient again (double backward).
    ReLU's second derivative is zero, and autograd's ReLU backward returns it as a tensor of
    zeros that is then propagated through the whole forward graph of the penalty points (two
    batched matrix products per layer that only add zeros). This ReLU's backward depends on the
    incoming gradient only, so that pass is skipped; the values and gradients are unchanged
    (about 10 % of a stacked PT+CP iteration, ``benchmarks/bench_ptgan_tabular.py``).
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ReLUFirstOrder.apply(x)


def stack_inputs_t(x: torch.Tensor, t: torch.Tensor | None, conditional: bool) -> torch.Tensor:
    """``x`` (R, n, d) with the temperature feature ``t`` (R, n) appended as a last column."""
    if x.ndim != 3:
        raise InvalidInputError(
            f"a stacked network takes inputs of shape (R, n, d), got {tuple(x.shape)}")
    if not conditional:
        if t is not None:
            raise InvalidInputError("this network is unconditional; call it without t")
        return x
    if t is None or t.shape != x.shape[:2]:
        raise InvalidInputError(
            f"a conditional stacked network needs t of shape {tuple(x.shape[:2])}, got "
            f"{None if t is None else tuple(t.shape)}; pass t=temperature(alpha)")
    return torch.cat([x, t.unsqueeze(-1).to(x.dtype)], dim=-1)


def rep_state_dict(module: nn.Module, r: int) -> dict[str, torch.Tensor]:
    """The state dict of repetition ``r`` in the layout of the unstacked module.

    Every stacked tensor contributes its slice ``[r]`` (a copy) under the same name: the stacked
    modules keep the names and the partition into tensors of their unstacked counterparts.
    """
    return {k: v.detach()[r].clone() for k, v in module.state_dict().items()}


@torch.no_grad()
def load_rep_state_dict(module: nn.Module, r: int, state: dict[str, torch.Tensor]) -> None:
    """Copy an unstacked module's ``state`` into repetition ``r`` of ``module`` (in place).

    The names and shapes must be those of :func:`rep_state_dict` (else an error says which).
    """
    mine = module.state_dict(keep_vars=True)
    if set(state) != set(mine):
        raise InvalidInputError(
            f"the state does not fit the stacked module: missing {sorted(set(mine) - set(state))}"
            f", unexpected {sorted(set(state) - set(mine))}; stack networks built with the same "
            "architecture")
    for name, v in mine.items():
        src = state[name]
        if tuple(src.shape) != tuple(v.shape[1:]):
            raise InvalidInputError(
                f"{name}: shape {tuple(src.shape)} does not fit {tuple(v.shape[1:])}; stack "
                "networks of the same architecture")
        v.data[r].copy_(src)
