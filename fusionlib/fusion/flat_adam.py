"""Adam over one flat buffer: the stacked step's optimiser without per-tensor overhead.

``torch.optim.Adam(fused=True)`` over the eight parameter tensors of a stacked network spends
more time in its Python bookkeeping (parameter groups, per-tensor state, step counters, device
grouping) than in its kernel (``benchmarks/bench_fusion.py`` profiles it). :class:`FlatAdam`
moves the parameters and their gradients into two contiguous buffers once and makes every
parameter a view into the first; a step gathers the gradients into the second with one
``torch.cat`` and makes one call of the same fused kernel (``torch._fused_adam_``) on one
tensor.

Numerics: Adam is elementwise and the kernel is the one ``Adam(fused=True)`` calls, with the
same hyper-parameters and step counter, so a parameter's update is the same formula; results
equal ``torch.optim.Adam(fused=True)``'s up to float rounding (the kernel's vector loop and its
scalar tail may contract multiply-adds differently; a tensor whose length is not a multiple of
the vector width is split differently in one buffer than alone). Tested against it.

Contract: the parameters keep their identity (``nn.Parameter`` objects, now views into
:attr:`flat`); autograd writes ``.grad`` as usual (a fresh tensor after :meth:`zero_grad`, which
sets it to None). Unlike ``torch.optim.Adam``, which skips a parameter without a gradient, a step
needs every parameter's gradient (the stacked networks use every parameter) and says so if one
is missing. Code that assigns ``p.data`` afresh after construction detaches that parameter from
the buffer; :meth:`step` refuses to run then.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

from fusionlib.errors import InvalidInputError

__all__ = ["FlatAdam"]


class FlatAdam:
    """Adam (Kingma & Ba, no weight decay, no AMSGrad) over parameters packed in one buffer.

    Parameters
    ----------
    params:
        Parameters of one dtype on the CPU; each becomes a view into :attr:`flat`.
    lr, betas, eps:
        As for :class:`torch.optim.Adam`.
    """

    def __init__(self, params: Iterable[torch.nn.Parameter], lr: float,
                 betas: tuple[float, float], eps: float = 1e-8) -> None:
        self.params = list(params)
        if not self.params:
            raise InvalidInputError("FlatAdam needs at least one parameter")
        dtypes = {p.dtype for p in self.params}
        devices = {p.device.type for p in self.params}
        if len(dtypes) != 1 or devices != {"cpu"}:
            raise InvalidInputError(f"FlatAdam packs CPU parameters of one dtype; got dtypes "
                                    f"{sorted(map(str, dtypes))} on {sorted(devices)}")
        if not 0.0 <= betas[0] < 1.0 or not 0.0 <= betas[1] < 1.0 or lr <= 0:
            raise InvalidInputError(f"FlatAdam needs lr > 0 and betas in [0, 1); got lr={lr}, "
                                    f"betas={betas}")
        dtype, n = self.params[0].dtype, sum(p.numel() for p in self.params)
        self.flat = torch.empty(n, dtype=dtype)
        self.grad = torch.zeros(n, dtype=dtype)  # the gradients, gathered at each step
        offset = 0
        with torch.no_grad():
            for p in self.params:
                k = p.numel()
                self.flat[offset:offset + k].copy_(p.detach().reshape(-1))
                p.data = self.flat[offset:offset + k].view_as(p)
                p.grad = None
                offset += k
        self._ptrs = [p.data_ptr() for p in self.params]
        self.exp_avg = torch.zeros(n, dtype=dtype)
        self.exp_avg_sq = torch.zeros(n, dtype=dtype)
        self.steps = torch.zeros((), dtype=torch.float32)  # as Adam's state["step"]
        self.lr, self.eps = float(lr), float(eps)
        self.betas = (float(betas[0]), float(betas[1]))

    def zero_grad(self, set_to_none: bool = True) -> None:  # noqa: ARG002 - Adam's signature
        """Forget the gradients (``.grad = None``; ``set_to_none`` is accepted and ignored)."""
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        """One Adam update of every parameter (one fused kernel call)."""
        grads = [p.grad for p in self.params]
        if any(g is None for g in grads):
            missing = [i for i, g in enumerate(grads) if g is None]
            raise InvalidInputError(f"FlatAdam steps every parameter, but parameters {missing} "
                                    "have no gradient (call backward first; use torch.optim.Adam "
                                    "for networks with unused parameters)")
        if [p.data_ptr() for p in self.params] != self._ptrs:
            raise InvalidInputError("a parameter of FlatAdam was re-assigned (p.data) after "
                                    "construction; build a new FlatAdam over it")
        torch.cat([g.reshape(-1) for g in grads], out=self.grad)
        self.steps.add_(1)
        torch._fused_adam_([self.flat], [self.grad], [self.exp_avg], [self.exp_avg_sq], [],
                           [self.steps], amsgrad=False, lr=self.lr, beta1=self.betas[0],
                           beta2=self.betas[1], weight_decay=0.0, eps=self.eps,
                           maximize=False)
