"""Conditional generation on a group column (seed 000, Appendix I, planned extension 3).

"Allow conditioning on policy scenarios or demographic groups": the generator gets the group
as input, ``G(z, c)`` with ``c`` the one-hot code of a categorical *condition* column, and its
record carries exactly that group. So ``sample`` can produce a chosen group, or chosen group
shares, exactly.

Training (Algorithm B with conditions, as in conditional GANs; Mirza & Osindero 2014, and the
"training-by-sampling" of CTGAN, Xu et al. 2019, without its log-frequency reweighting):

* for a source that observes the condition column, the conditions of a batch are the groups of
  its real rows, so D_k compares real ``(c, x)`` with ``(c, G(z, c))`` for the same groups;
* for a source without it, the conditions are drawn from the pooled group shares of the sources
  that have it (from the trainer's generator, right after z), so D_k sees G's mixture over the
  groups, which should match its marginal.

The generator is :class:`ConditionalGenerator`: the Appendix A network on input ``[z, c]``
(latent_dim + |groups| inputs), with outputs for every encoded column except the condition's
block, into which ``c`` itself is written. Without other categorical columns its output layer is
linear; with them a Gumbel-softmax head covers their blocks.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from fusionlib.checks import check_positive_int
from fusionlib.encoding.tabular import Span
from fusionlib.errors import InvalidInputError
from fusionlib.fusion.config import FusionConfig
from fusionlib.fusion.networks import FusionGenerator, SourceDiscriminator
from fusionlib.fusion.step import FusionStep
from fusionlib.rng import child, numpy_rng

__all__ = ["ConditionalGenerator", "ConditionalFusionStep", "conditional_fusion_step",
           "allocate", "group_codes"]


def _inner_spans(spans: Sequence[Span] | None, cond: Span) -> list[Span] | None:
    """The layout without the condition's block (later blocks shifted left)."""
    if spans is None:
        return None
    width = cond.stop - cond.start
    out = [Span(s.column, s.kind, s.start - (width if s.start >= cond.stop else 0),
                s.stop - (width if s.start >= cond.stop else 0))
           for s in spans if s.column != cond.column]
    return out or None


class ConditionalGenerator(nn.Module):
    """``G(z, c)``: the Appendix A generator on ``[z, c]``, with ``c`` written into its output.

    Parameters
    ----------
    out_dim:
        Encoded width |V| of the schema, the condition's block included.
    condition:
        The :class:`Span` of the condition column (a discrete block of ``stop - start`` groups).
    latent_dim, hidden, tau, hard, seed:
        As :class:`~fusionlib.fusion.networks.FusionGenerator` (``latent_dim`` is the noise
        dimension; the network's input is ``latent_dim + n_groups``).
    spans:
        The encoded layout (None: all continuous but the condition).

    Attributes
    ----------
    inner:
        The :class:`FusionGenerator` producing every encoded column but the condition's block.
    latent_dim, out_dim, n_groups, condition:
        As given (``n_groups`` = width of the condition's block).
    """

    def __init__(self, out_dim: int, condition: Span, *, latent_dim: int = 32,
                 hidden: int = 128, spans: Sequence[Span] | None = None, tau: float = 0.2,
                 hard: bool = True, seed: object = 0) -> None:
        super().__init__()
        check_positive_int("out_dim", out_dim)
        check_positive_int("latent_dim", latent_dim)
        if condition.kind != "discrete" or not 0 <= condition.start < condition.stop <= out_dim:
            raise InvalidInputError(f"the condition must be a discrete block inside [0, "
                                    f"{out_dim}), got {condition}")
        self.condition, self.n_groups = condition, condition.stop - condition.start
        if out_dim == self.n_groups:
            raise InvalidInputError("the condition is the only column; give the sources at "
                                    "least one other column to generate")
        self.inner = FusionGenerator(out_dim - self.n_groups,
                                     latent_dim=latent_dim + self.n_groups, hidden=hidden,
                                     spans=_inner_spans(spans, condition), tau=tau, hard=hard,
                                     seed=seed)
        self.latent_dim, self.out_dim = int(latent_dim), int(out_dim)

    @property
    def stochastic(self) -> bool:
        """Whether ``forward`` draws Gumbel noise from its ``generator`` argument."""
        return self.inner.stochastic

    def forward(self, z: torch.Tensor, cond: torch.Tensor,
                generator: torch.Generator | None = None) -> torch.Tensor:
        """Records (n, out_dim) of the groups ``cond`` (n, n_groups one-hot) from ``z``."""
        h = self.inner(torch.cat([z, cond], dim=1), generator)
        s = self.condition.start
        return torch.cat([h[:, :s], cond, h[:, s:]], dim=1)


class ConditionalFusionStep(FusionStep):
    """Algorithm B with a conditional generator (see the module docstring).

    Parameters as :class:`FusionStep`, with a :class:`ConditionalGenerator`, plus ``shares``:
    the pooled group shares (n_groups,) that the conditions of sources without the condition
    column, and unconditional samples, are drawn from.
    """

    name = "fusiongan-conditional"

    def __init__(self, config: FusionConfig, generator: ConditionalGenerator,
                 discriminators: Sequence[nn.Module], indices: Sequence[Sequence[int]], *,
                 shares: Sequence[float], names: Sequence[str] | None = None) -> None:
        super().__init__(config, generator, discriminators, indices, names=names)
        if not isinstance(generator, ConditionalGenerator):
            raise InvalidInputError("a ConditionalFusionStep needs a ConditionalGenerator")
        p = np.asarray(shares, dtype=np.float64)
        if p.shape != (generator.n_groups,) or not np.isfinite(p).all() or (p < 0).any() \
                or p.sum() <= 0:
            raise InvalidInputError(f"shares must be {generator.n_groups} finite numbers >= 0 "
                                    f"with a positive sum, got {list(shares)}")
        self.shares = torch.as_tensor(p / p.sum(), dtype=torch.float64)
        block = range(generator.condition.start, generator.condition.stop)
        self._local: list[torch.Tensor | None] = []
        for idx in self.indices:
            has = [idx.index(j) for j in block if j in idx]
            if has and len(has) != len(block):
                raise InvalidInputError("a source must observe the whole condition block or none")
            self._local.append(torch.as_tensor(has, dtype=torch.long) if has else None)

    def signature(self) -> dict:
        return {**super().signature(), "shares": self.shares.tolist()}

    def conditions(self, k: int, real: torch.Tensor, rng: torch.Generator) -> torch.Tensor:
        """The real rows' groups if source k observes the condition, else draws from shares."""
        local = self._local[k]
        if local is not None:
            return real.index_select(1, local.to(real.device))
        return self.draw(real.shape[0], rng, real.device)

    def draw(self, n: int, rng: torch.Generator, device: object = "cpu") -> torch.Tensor:
        """``n`` one-hot conditions drawn from the pooled shares (one multinomial draw)."""
        codes = torch.multinomial(self.shares.to(device), n, replacement=True, generator=rng)
        return F.one_hot(codes, self.generator.n_groups).to(torch.float32)

    @torch.no_grad()
    def sample(self, n: int, rng: torch.Generator, **options: object) -> torch.Tensor:
        """``n`` records; option ``codes`` (n,) gives each record's group code (default: drawn
        from the pooled shares after z)."""
        codes = options.pop("codes", None)
        if options:
            raise InvalidInputError(f"unknown sample option(s) {sorted(options)}; conditional "
                                    "FusionGAN samples take codes=")
        z = self._sample_noise(n, rng)
        device = z.device
        if codes is None:
            cond = self.draw(n, rng, device)
        else:
            codes = torch.as_tensor(codes, dtype=torch.long, device=device)
            if codes.shape != (n,) or bool((codes < 0).any()) \
                    or bool((codes >= self.generator.n_groups).any()):
                raise InvalidInputError(f"codes must be {n} group codes in [0, "
                                        f"{self.generator.n_groups})")
            cond = F.one_hot(codes, self.generator.n_groups).to(torch.float32)
        return self._generate_eval(z, rng, cond)


def conditional_fusion_step(config: FusionConfig, out_dim: int,
                            indices: Sequence[Sequence[int]], condition: Span,
                            shares: Sequence[float], *, names: Sequence[str] | None = None,
                            spans: Sequence[Span] | None = None, tau: float = 0.2,
                            hard: bool = True, seed: object = 0) -> ConditionalFusionStep:
    """A :class:`ConditionalFusionStep` with fresh networks (streams as :func:`fusion_step`)."""
    gen = ConditionalGenerator(out_dim, condition, latent_dim=config.latent_dim,
                               hidden=config.hidden, spans=spans, tau=tau, hard=hard, seed=seed)
    discs = [SourceDiscriminator(len(idx), hidden=config.hidden, seed=child(seed, "source", k))
             for k, idx in enumerate(indices)]
    return ConditionalFusionStep(config, gen, discs, indices, shares=shares, names=names)


def allocate(n: int, shares: Sequence[float]) -> np.ndarray:
    """Counts (len(shares),) summing to ``n`` nearest to ``n * shares`` (largest remainder;
    ties to the earlier group): exact whenever ``n * share`` are whole numbers."""
    p = np.asarray(shares, dtype=np.float64)
    raw = n * p / p.sum()
    counts = np.floor(raw + 1e-9).astype(np.int64)
    left = n - int(counts.sum())
    if left > 0:
        order = np.argsort(-(raw - counts), kind="stable")
        counts[order[:left]] += 1
    return counts


def group_codes(categories: Sequence[object], n: int, *, group: object = None,
                shares: object = None, seed: object = 0) -> np.ndarray | None:
    """Group codes (n,) for ``sample``: all ``group``, or ``shares`` met exactly (see
    :func:`allocate`) in an order shuffled on the stream ``(seed, "groups")``; None if neither.

    ``shares`` maps group values to numbers >= 0 (normalised to sum 1; unnamed groups get 0).
    """
    index = {c: i for i, c in enumerate(categories)}
    known = list(categories)
    if group is not None and shares is not None:
        raise InvalidInputError("give group= or shares=, not both")
    if group is not None:
        if group not in index:
            raise InvalidInputError(f"unknown group {group!r}; the condition's groups are "
                                    f"{known}")
        return np.full(n, index[group], dtype=np.int64)
    if shares is None:
        return None
    if not hasattr(shares, "items"):
        raise InvalidInputError(f"shares must be a dict group -> share, e.g. "
                                f"{{{known[0]!r}: 0.5, ...}}, got {type(shares).__name__}")
    p = np.zeros(len(known))
    for g, s in shares.items():
        if g not in index:
            raise InvalidInputError(f"unknown group {g!r} in shares; the condition's groups "
                                    f"are {known}")
        if isinstance(s, bool) or not isinstance(s, (int, float, np.number)) \
                or not np.isfinite(s) or s < 0:
            raise InvalidInputError(f"the share of group {g!r} must be a finite number >= 0, "
                                    f"got {s!r}")
        p[index[g]] = float(s)
    if p.sum() <= 0:
        raise InvalidInputError("shares are all zero; give at least one group a positive share")
    codes = np.repeat(np.arange(len(known)), allocate(n, p))
    return codes[numpy_rng(seed, "groups").permutation(n)]
