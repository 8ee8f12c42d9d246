"""Output heads for tabular generators: linear continuous columns, Gumbel-softmax categories.

:class:`TabularHead` replaces a generator's last linear layer. It maps hidden features
``h`` (n, in_features) to the layout of :class:`~fusionlib.encoding.tabular.TabularEncoder`
(or of any encoding described by the same :class:`~fusionlib.encoding.tabular.Span` objects):

* a continuous span gets its own ``Linear(in_features, width)`` with the identity activation
  (the linear head of PTGAN's Table 9; no tanh, the encoder clips on decoding);
* a discrete span gets its own ``Linear(in_features, n_categories)`` followed by the
  Gumbel-softmax (Jang et al. 2017; Maddison et al. 2017) with temperature ``tau``:
  ``softmax((l + g) / tau)`` with ``g_j = -log(-log u_j)``, ``u_j ~ U(0, 1)``.

Randomness: the Gumbel noise comes only from the :class:`torch.Generator` passed to
:meth:`TabularHead.forward` (one draw of shape (n, total discrete width) per call, taken after the
linear layers), never from torch's global state, so a training step that passes its trainer's
generator stays bitwise resumable. With ``generator=None`` the head adds no noise and returns the
plain tempered softmax ``softmax(l / tau)``: a deterministic output (for evaluation, or for a
caller that decodes with argmax and wants the modal category). To *sample* categories, pass a
generator: the argmax of ``l + g`` is an exact draw from ``Categorical(softmax(l))`` (the
Gumbel-max trick), whatever ``tau``.

``hard=True`` is the straight-through estimator: the forward value of a discrete span is the
one-hot vector of its argmax, the gradient is that of the soft sample.

The head knows nothing about the method that trains it (PTGAN, FusionGAN, ...).
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
import torch.nn.functional as F
from torch import nn

from fusionlib.checks import check_positive, check_positive_int, is_int
from fusionlib.encoding.tabular import Span
from fusionlib.errors import InvalidInputError
from fusionlib.gan.networks import init_parameters

__all__ = ["TabularHead", "KINDS", "check_spans", "gumbel_noise"]

#: the span kinds a head understands
KINDS = ("continuous", "discrete")


def check_spans(spans: Iterable[object]) -> tuple[Span, ...]:
    """``spans`` as a tuple of :class:`Span` sorted by start; they must tile ``[0, width)``.

    Each item needs the attributes ``column``, ``kind`` (``"continuous"`` or ``"discrete"``),
    ``start`` and ``stop`` (ints, ``0 <= start < stop``). Overlaps, gaps and a layout that does
    not start at column 0 raise :class:`~fusionlib.errors.InvalidInputError`.
    """
    if isinstance(spans, (str, bytes)) or not isinstance(spans, Iterable):
        raise InvalidInputError(
            f"spans must be a sequence of Span objects (e.g. TabularEncoder().fit(df).spans_), "
            f"got {type(spans).__name__}")
    out = []
    for s in spans:
        fields = [getattr(s, f, None) for f in ("column", "kind", "start", "stop")]
        column, kind, start, stop = fields
        if any(f is None for f in fields):
            raise InvalidInputError(
                f"every span needs column, kind, start and stop (a Span), got {s!r}")
        if kind not in KINDS:
            raise InvalidInputError(
                f"span {column!r} has kind {kind!r}; choose 'continuous' or 'discrete'")
        if not (is_int(start) and is_int(stop)) or start < 0 or stop <= start:
            raise InvalidInputError(
                f"span {column!r} covers [{start!r}, {stop!r}), out of range: spans need integer "
                "bounds with 0 <= start < stop")
        out.append(Span(str(column), kind, int(start), int(stop)))
    if not out:
        raise InvalidInputError("a tabular head needs at least one span")
    out.sort(key=lambda s: (s.start, s.stop))
    pos = 0
    for s in out:
        if s.start != pos:
            gap = f"leaves a gap [{pos}, {s.start}) before it"
            what = "overlaps the previous span" if s.start < pos else gap
            raise InvalidInputError(
                f"span {s.column!r} [{s.start}, {s.stop}) {what}; spans must tile the output "
                "columns [0, width) without gaps or overlaps")
        pos = s.stop
    return tuple(out)


def gumbel_noise(shape: tuple[int, ...], generator: torch.Generator, *,
                 device: torch.device | str = "cpu",
                 dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Standard Gumbel noise ``-log(-log u)``, ``u ~ U(0, 1)`` drawn from ``generator`` only.

    ``u`` is clamped to the smallest normal float, so the noise is always finite.
    """
    u = torch.rand(shape, generator=generator, device=device, dtype=dtype)
    return -torch.log(-torch.log(u.clamp_min(torch.finfo(dtype).tiny)))


class TabularHead(nn.Module):
    """Per-span output layers: linear for continuous spans, Gumbel-softmax for discrete ones.

    Parameters
    ----------
    in_features:
        Width of the hidden features the head receives.
    spans:
        :class:`~fusionlib.encoding.tabular.Span` objects (e.g. ``TabularEncoder.spans_``)
        that tile the output columns ``[0, out_features)``; given in any order.
    tau:
        Gumbel-softmax temperature (> 0); small values give nearly one-hot outputs.
    hard:
        Straight-through estimator: one-hot forward values, soft gradients.
    seed:
        Seed of the initialisation (:func:`fusionlib.gan.networks.init_parameters`).

    Attributes
    ----------
    spans:
        The spans, sorted by start.
    layers:
        One ``nn.Linear(in_features, stop - start)`` per span, in span order.
    in_features, out_features, tau, hard:
        As given (``out_features`` is the stop of the last span).
    """

    def __init__(self, in_features: int, spans: Iterable[object], *, tau: float = 0.2,
                 hard: bool = False, seed: object = 0) -> None:
        super().__init__()
        check_positive_int("in_features", in_features)
        self.tau = check_positive("tau", tau)
        if not isinstance(hard, bool):
            raise InvalidInputError(f"hard must be True or False, got {hard!r}")
        self.spans = check_spans(spans)
        self.in_features, self.hard = int(in_features), hard
        self.out_features = self.spans[-1].stop
        self.layers = nn.ModuleList(
            nn.utils.skip_init(nn.Linear, self.in_features, s.stop - s.start) for s in self.spans)
        self._discrete = tuple(i for i, s in enumerate(self.spans) if s.kind == "discrete")
        self.discrete_width = sum(self.spans[i].stop - self.spans[i].start
                                  for i in self._discrete)
        init_parameters(self, seed)

    @property
    def stochastic(self) -> bool:
        """Whether ``forward`` draws Gumbel noise from ``generator`` (a discrete span exists)."""
        return self.discrete_width > 0

    def extra_repr(self) -> str:
        layout = ", ".join(f"{s.column}:{s.kind[0]}[{s.start}:{s.stop}]" for s in self.spans)
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"tau={self.tau}, hard={self.hard}, spans=({layout})")

    def forward(self, h: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """Outputs (n, out_features) from hidden features ``h`` (n, in_features).

        ``generator``: source of the Gumbel noise (one draw of shape (n, discrete_width)); None
        gives the deterministic ``softmax(logits / tau)`` on every discrete span.
        """
        if h.ndim != 2 or h.shape[1] != self.in_features:
            raise InvalidInputError(
                f"the head takes hidden features of shape (n, {self.in_features}), got "
                f"{tuple(h.shape)}")
        parts = [layer(h) for layer in self.layers]
        noise = None
        if generator is not None and self.discrete_width:
            noise = gumbel_noise((h.shape[0], self.discrete_width), generator,
                                 device=h.device, dtype=parts[0].dtype)
        offset = 0
        for i in self._discrete:
            width = parts[i].shape[1]
            logits = parts[i] if noise is None else parts[i] + noise[:, offset:offset + width]
            parts[i] = self._activate(logits)
            offset += width
        return torch.cat(parts, dim=1)

    def _activate(self, logits: torch.Tensor) -> torch.Tensor:
        soft = F.softmax(logits / self.tau, dim=1)
        if not self.hard:
            return soft
        one_hot = F.one_hot(soft.argmax(dim=1), soft.shape[1]).to(soft.dtype)
        return one_hot - soft.detach() + soft  # straight through: one-hot value, soft gradient
