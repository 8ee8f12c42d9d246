"""The Gumbel-softmax output head of R stacked generators (:class:`StackedTabularHead`).

It is :class:`~fusionlib.gan.heads.TabularHead` with a leading repetition dimension: repetition
r maps hidden features (n, in) to the span layout with its own linear outputs, and the Gumbel
noise of its discrete spans comes from ``bank[r]`` (one draw of shape (n, discrete width) per
call, after the linear outputs, as in the unstacked head), so repetition r draws the numbers its
separate run would.

For R > 1 the per-span linear layers are one batched product over all output columns, and the
Gumbel-softmax runs once per distinct span *width*: the discrete columns are gathered so that
the spans of one width form a (R, n, spans, width) block, and one native softmax serves them all
(Adult's 11 discrete spans have 7 widths). The Gumbel transform of the R uniform draws is one
vectorised computation. The span layers stay separate parameters (as in the unstacked
head), so a repetition's state dict and its Adam update are the unstacked head's. With R = 1 the
head runs the unstacked head's operations span by span, so it is bitwise the unstacked head.
The straight-through variant (``hard=True``) is not stacked.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from fusionlib.checks import check_positive, check_positive_int
from fusionlib.errors import InvalidInputError
from fusionlib.gan.heads import TabularHead, check_spans, gumbel_noise
from fusionlib.gan.stacked import StackedLinear

__all__ = ["StackedTabularHead"]


class StackedTabularHead(nn.Module):
    """R tabular heads: linear continuous spans, Gumbel-softmax discrete spans.

    Parameters
    ----------
    n_reps:
        Number of repetitions R.
    in_features:
        Width of the hidden features.
    spans:
        The spans of the layout (as for :class:`~fusionlib.gan.heads.TabularHead`).
    tau:
        Gumbel-softmax temperature: one for every repetition, or R of them (an ablation over
        the temperature trained as one model).

    Attributes
    ----------
    layers:
        One :class:`~fusionlib.gan.stacked.StackedLinear` per span, in span order (the
        ``layers`` of the unstacked head, so a repetition's state dict is the unstacked head's).
    """

    def __init__(self, n_reps: int, in_features: int, spans: Iterable[object], *,
                 tau: float | Sequence[float] = 0.2) -> None:
        super().__init__()
        check_positive_int("n_reps", n_reps)
        check_positive_int("in_features", in_features)
        taus = [tau] * n_reps if isinstance(tau, (int, float)) else list(tau)
        if len(taus) != n_reps:
            raise InvalidInputError(f"tau needs one temperature or {n_reps}, got {len(taus)}")
        self.taus = tuple(check_positive("tau", t) for t in taus)
        self.spans = check_spans(spans)
        self.in_features, self.out_features = int(in_features), self.spans[-1].stop
        self.n_reps = int(n_reps)
        self.layers = nn.ModuleList(StackedLinear(n_reps, self.in_features, s.stop - s.start)
                                    for s in self.spans)
        disc = [s for s in self.spans if s.kind == "discrete"]
        self.discrete_width = sum(s.stop - s.start for s in disc)
        # the discrete columns grouped by span width; ``_noise_order``: their positions in the
        # Gumbel draw (which runs over the discrete columns in span order, as in TabularHead)
        offsets = dict(zip((s.column for s in disc),
                           [sum(x.stop - x.start for x in disc[:i]) for i in range(len(disc))],
                           strict=True))
        self.groups = tuple(sorted({(s.stop - s.start, sum(x.stop - x.start == s.stop - s.start
                                                           for x in disc)) for s in disc}))
        order = [s for w, _ in self.groups for s in disc if s.stop - s.start == w]
        cols = [c for s in order for c in range(s.start, s.stop)]
        noise = [offsets[s.column] + i for s in order for i in range(s.stop - s.start)]
        self.register_buffer("_columns", torch.tensor(cols, dtype=torch.long), persistent=False)
        self.register_buffer("_noise_order", torch.tensor(noise, dtype=torch.long),
                             persistent=False)
        self.register_buffer("_tau", torch.tensor(self.taus).view(n_reps, 1, 1), persistent=False)

    @classmethod
    def like(cls, heads: Sequence[nn.Module]) -> StackedTabularHead:
        """An (uninitialised) stack of the :class:`TabularHead` objects ``heads`` (one layout;
        their temperatures may differ)."""
        heads = list(heads)
        if not all(isinstance(h, TabularHead) for h in heads):
            raise InvalidInputError(
                f"expected TabularHead objects, got {[type(h).__name__ for h in heads]}")
        first = heads[0]
        if any(h.spans != first.spans or h.in_features != first.in_features for h in heads):
            raise InvalidInputError("the heads to stack have different layouts; build them from "
                                    "the same encoding")
        if any(h.hard for h in heads):
            raise InvalidInputError(
                "the straight-through head (hard=True) is not stacked; train it unstacked or "
                "use hard=False")
        return cls(len(heads), first.in_features, first.spans, tau=[h.tau for h in heads])

    @property
    def stochastic(self) -> bool:
        """Whether ``forward`` draws Gumbel noise (a discrete span exists)."""
        return self.discrete_width > 0

    def extra_repr(self) -> str:
        layout = ", ".join(f"{s.column}:{s.kind[0]}[{s.start}:{s.stop}]" for s in self.spans)
        return (f"n_reps={self.n_reps}, in_features={self.in_features}, "
                f"out_features={self.out_features}, tau={list(self.taus)}, spans=({layout})")

    # ------------------------------------------------------------------ forward
    def forward(self, h: torch.Tensor, generator: object | None = None) -> torch.Tensor:
        """Outputs (R, n, out_features) from hidden features ``h`` (R, n, in_features).

        ``generator``: a :class:`~fusionlib.gan.stacked.GeneratorBank` of R generators (the
        Gumbel noise of repetition r comes from ``generator[r]``), or None for the
        deterministic ``softmax(logits / tau)``.
        """
        n_reps = self.n_reps
        if h.ndim != 3 or h.shape[0] != n_reps or h.shape[2] != self.in_features:
            raise InvalidInputError(
                f"the head takes hidden features of shape ({n_reps}, n, {self.in_features}), "
                f"got {tuple(h.shape)}")
        if generator is not None and len(generator) != n_reps:
            raise InvalidInputError(
                f"{n_reps} repetitions need a bank of {n_reps} generators, got {len(generator)}")
        if n_reps == 1:
            return self._single(h[0], None if generator is None else generator[0]).unsqueeze(0)
        # every span's layer in one batched product (the layers are kept apart so that each
        # repetition's state dict and Adam partition are those of the unstacked head)
        weight = torch.cat([layer.weight for layer in self.layers], dim=1)
        bias = torch.cat([layer.bias for layer in self.layers], dim=1)
        logits = torch.baddbmm(bias.unsqueeze(1), h, weight.transpose(1, 2))
        if not self.discrete_width:
            return logits
        d = logits.index_select(-1, self._columns)  # grouped by span width
        if generator is not None:
            d = d + self._gumbel(h.shape[1], generator, d.dtype).index_select(-1,
                                                                              self._noise_order)
        d = d / self._tau
        parts, start = [], 0
        for width, count in self.groups:  # one softmax per width over all its spans
            block = d[..., start:start + width * count]
            parts.append(torch.softmax(block.unflatten(-1, (count, width)), dim=-1).flatten(-2))
            start += width * count
        return logits.index_copy(-1, self._columns, torch.cat(parts, dim=-1))

    def _gumbel(self, n: int, bank, dtype: torch.dtype) -> torch.Tensor:
        # gumbel_noise's draws (one (n, discrete width) uniform per repetition, from its own
        # generator) and transform, vectorised over the repetitions
        u = torch.stack([torch.rand((n, self.discrete_width), generator=g, device=g.device,
                                    dtype=dtype) for g in bank])
        return -torch.log(-torch.log(u.clamp_min(torch.finfo(dtype).tiny)))

    def _single(self, h: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
        # the unstacked TabularHead.forward, span by span, on repetition 0's parameters
        parts = [F.linear(h, layer.weight[0], layer.bias[0]) for layer in self.layers]
        noise = None
        if generator is not None and self.discrete_width:
            noise = gumbel_noise((h.shape[0], self.discrete_width), generator,
                                 device=h.device, dtype=parts[0].dtype)
        offset = 0
        for i, s in enumerate(self.spans):
            if s.kind != "discrete":
                continue
            width = s.stop - s.start
            logits = parts[i] if noise is None else parts[i] + noise[:, offset:offset + width]
            parts[i] = F.softmax(logits / self.taus[0], dim=1)
            offset += width
        return torch.cat(parts, dim=1)
