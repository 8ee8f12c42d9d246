"""Several FusionGAN runs of one architecture trained as one model (a repetition dimension).

R runs of Algorithm B (seeds, or the same seed on other data) are R independent sets of
networks. Stacking their parameters along a leading dimension turns R small matrix products
into one batched product (:class:`StackedLinear`), so R runs cost little more than one on a CPU
where per-call overheads, not multiply-adds, dominate (``benchmarks/bench_fusion.py`` measures
the ratio). Nothing is shared between replicas but the code path:

- **parameters**: replica r's slice ``weight[r]`` is initialised from the unstacked networks of
  :func:`~fusionlib.fusion.step.fusion_step` built on replica r's seed (so replica r starts
  exactly where the unstacked run of its seed starts);
- **losses**: the stacked loss is the *sum* of the R per-replica losses, so the gradient of
  slice r is replica r's gradient (the other replicas' losses do not depend on it);
- **optimiser**: one Adam over the stacked parameters. Adam is elementwise, so one Adam over
  ``(R, ...)`` tensors is R independent Adams (tested; with the fused kernel of
  :class:`~fusionlib.gan.step.OptimizerSpec`, bitwise); the step packs each network's
  parameters into one buffer (:class:`~fusionlib.fusion.flat_adam.FlatAdam`: one kernel call
  per update; equal to per-tensor Adam up to float rounding);
- **one generator pass**: Algorithm B computes ``G(z)`` for the D_k step and again, with the
  same z, for the G step; G does not change in between, so the step computes it once with its
  graph and gives the D_k step a detached copy (same values, one forward pass saved);
- **random draws**: replica r draws its row indices and noise from its own
  :class:`torch.Generator`, the stream the unstacked trainer uses for that seed
  (``torch_generator(train_seed, "train")``), in the unstacked order (rows, then z, per source).

With R = 1 the step is Algorithm B as :class:`~fusionlib.fusion.step.FusionStep` computes it
(batched products instead of ``addmm``: equal up to float rounding, tested). The batched
primitive is :class:`StackedLinear` alone (``torch.baddbmm``), kept self-contained so that it
can be merged with the stacked layers of other experiments.

Scope: the Appendix A networks (continuous columns), BCE loss, ``n_critic`` >= 1, uniform or
weighted real terms, ``weight_sampling``. Categorical heads, conditional generation, DP-SGD and
WGAN-GP stay on the unstacked step.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from fusionlib.errors import InvalidInputError
from fusionlib.fusion.config import FusionConfig
from fusionlib.fusion.flat_adam import FlatAdam
from fusionlib.fusion.networks import FusionGenerator, SourceDiscriminator

__all__ = ["StackedLinear", "StackedMLP", "StackedFusionStep", "stack_linears"]


class StackedLinear(nn.Module):
    """R independent linear layers ``y_r = x_r W_r^T + b_r`` as one batched product.

    Parameters
    ----------
    weight:
        (R, in, out): replica r's weight, transposed (``nn.Linear.weight[r].T``).
    bias:
        (R, out).

    Notes
    -----
    ``forward`` maps ``x`` (R, n, in) to (R, n, out) with one :func:`torch.baddbmm`.
    """

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor) -> None:
        super().__init__()
        if weight.ndim != 3 or bias.shape != (weight.shape[0], weight.shape[2]):
            raise InvalidInputError(f"StackedLinear needs weight (R, in, out) and bias (R, out); "
                                    f"got {tuple(weight.shape)} and {tuple(bias.shape)}")
        self.weight = nn.Parameter(weight.detach().clone().contiguous())
        self.bias = nn.Parameter(bias.detach().clone().unsqueeze(1).contiguous())

    @property
    def replicas(self) -> int:
        return self.weight.shape[0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.baddbmm(self.bias, x, self.weight)

    def extra_repr(self) -> str:
        r, i, o = self.weight.shape
        return f"replicas={r}, in_features={i}, out_features={o}"


def stack_linears(layers: Sequence[nn.Linear]) -> StackedLinear:
    """One :class:`StackedLinear` holding copies of ``layers`` (same shapes), in order."""
    shapes = {tuple(lin.weight.shape) for lin in layers}
    if not layers or len(shapes) != 1:
        raise InvalidInputError(f"stack_linears needs >= 1 linear layers of one shape; got "
                                f"shapes {sorted(shapes)}")
    return StackedLinear(torch.stack([lin.weight.detach().t() for lin in layers]),
                         torch.stack([lin.bias.detach() for lin in layers]))


class StackedMLP(nn.Module):
    """R copies of an MLP of ``nn.Linear`` and elementwise activations, stacked.

    Built from R modules of one architecture (each an ``nn.Sequential`` of Linear and
    activation layers, e.g. the Appendix A networks); ``forward`` maps (R, n, in) to
    (R, n, out). :meth:`unstack` writes replica r's parameters back into an unstacked module.
    """

    def __init__(self, nets: Sequence[nn.Sequential]) -> None:
        super().__init__()
        kinds = [[type(m) for m in net] for net in nets]
        if not nets or any(k != kinds[0] for k in kinds):
            raise InvalidInputError("StackedMLP needs >= 1 networks of one architecture")
        layers = []
        for i, first in enumerate(nets[0]):
            if isinstance(first, nn.Linear):
                layers.append(stack_linears([net[i] for net in nets]))
            elif isinstance(first, nn.ReLU):
                # in place: the batched product before it does not keep its output for the
                # backward pass, and ReLU's backward reads the sign of its result (same values)
                layers.append(nn.ReLU(inplace=True))
            elif isinstance(first, nn.LeakyReLU):
                if first.negative_slope <= 0:
                    raise InvalidInputError("StackedMLP runs LeakyReLU in place, which needs a "
                                            f"positive slope; got {first.negative_slope}")
                layers.append(nn.LeakyReLU(first.negative_slope, inplace=True))
            else:
                raise InvalidInputError(f"StackedMLP stacks Linear, ReLU and LeakyReLU layers, "
                                        f"got {type(first).__name__}")
        self.layers = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)

    @torch.no_grad()
    def unstack(self, r: int, net: nn.Sequential) -> nn.Sequential:
        """Copy replica ``r``'s parameters into ``net`` (same architecture); returns ``net``."""
        for stacked, plain in zip(self.layers, net, strict=True):
            if isinstance(stacked, StackedLinear):
                plain.weight.copy_(stacked.weight[r].t())
                plain.bias.copy_(stacked.bias[r, 0])
        return net


def _check_replicas(generators: Sequence[FusionGenerator],
                    discriminators: Sequence[Sequence[SourceDiscriminator]]) -> None:
    if not generators or len(discriminators) != len(generators):
        raise InvalidInputError(f"give one generator and one list of K discriminators per "
                                f"replica; got {len(generators)} generators and "
                                f"{len(discriminators)} lists")
    if any(g.head is not None for g in generators):
        raise InvalidInputError("the stacked step covers the Appendix A networks (continuous "
                                "columns); train categorical models with FusionGAN")
    if len({len(d) for d in discriminators}) != 1:
        raise InvalidInputError("every replica needs the same number K of discriminators")


class StackedFusionStep:
    """Algorithm B for R replicas at once (see the module docstring).

    Parameters
    ----------
    config:
        The :class:`~fusionlib.fusion.config.FusionConfig` shared by every replica (BCE loss).
    generators, discriminators:
        Replica r's unstacked generator and its K discriminators (e.g. from
        :func:`~fusionlib.fusion.step.fusion_step` on replica r's seed); copied, not kept.
    indices:
        K sequences: the schema positions of source k's columns (the same for every replica).
    """

    def __init__(self, config: FusionConfig, generators: Sequence[FusionGenerator],
                 discriminators: Sequence[Sequence[SourceDiscriminator]],
                 indices: Sequence[Sequence[int]]) -> None:
        if config.loss != "bce":
            raise InvalidInputError(f"the stacked step trains the BCE loss of Algorithm B; got "
                                    f"loss={config.loss!r} (use FusionGAN for WGAN-GP)")
        _check_replicas(generators, discriminators)
        self.config, self.replicas = config, len(generators)
        self.generator = StackedMLP([g.net for g in generators])
        k = len(discriminators[0])
        self.discriminators = nn.ModuleList(
            StackedMLP([d[j].body for d in discriminators]) for j in range(k))
        self.index = tuple(torch.as_tensor(list(i), dtype=torch.long) for i in indices)
        if len(self.index) != k:
            raise InvalidInputError(f"{k} discriminators but {len(self.index)} index lists")
        self.out_dim = generators[0].out_dim

    def optimizers(self) -> dict[str, FlatAdam]:
        """One Adam for G and one per D_k over the stacked parameters (one flat buffer each)."""
        cfg = self.config
        opts = {"generator": _adam(self.generator.parameters(), cfg.lr_g, cfg.betas)}
        for j, d in enumerate(self.discriminators):
            opts[f"discriminator_{j}"] = _adam(d.parameters(), cfg.lr_d, cfg.betas)
        return opts

    def draw(self, n: int, weights: torch.Tensor, z_shape: tuple[int, int],
             rngs: Sequence[torch.Generator]) -> tuple[torch.Tensor, torch.Tensor]:
        """Row indices (R, B) and noise (R, B, L): replica r's rows, then its z, from rng r."""
        b = self.config.batch_size
        rows, zs = [], []
        for r, g in enumerate(rngs):
            if self.config.weight_sampling:
                rows.append(torch.multinomial(weights[r], b, replacement=True, generator=g))
            else:
                rows.append(torch.randint(n, (b,), generator=g))
            zs.append(torch.randn(*z_shape, generator=g))
        return torch.stack(rows), torch.stack(zs)

    def iteration(self, data: Sequence[torch.Tensor], rngs: Sequence[torch.Generator],
                  optimizers: dict[str, torch.optim.Optimizer]) -> dict[str, torch.Tensor]:
        """One trainer iteration for every replica; returns losses (R,) per source and part."""
        if len(rngs) != self.replicas:
            raise InvalidInputError(f"give one generator per replica ({self.replicas}), got "
                                    f"{len(rngs)}")
        losses = {}
        for k in range(len(self.discriminators)):
            d_loss, g_loss = self._source_update(k, data[2 * k], data[2 * k + 1], rngs,
                                                 optimizers)
            losses[f"d_loss_{k}"], losses[f"g_loss_{k}"] = d_loss, g_loss
        return losses

    def _source_update(self, k: int, x: torch.Tensor, w: torch.Tensor,
                       rngs: Sequence[torch.Generator],
                       optimizers: dict[str, torch.optim.Optimizer]
                       ) -> tuple[torch.Tensor, torch.Tensor]:
        cfg, disc, cols = self.config, self.discriminators[k], self.index[k]
        rows, z = self.draw(x.shape[1], w, (cfg.batch_size, cfg.latent_dim), rngs)
        pick = torch.arange(self.replicas).unsqueeze(1)
        real, w_b = x[pick, rows], w[pick, rows]
        # G(z) once, with its graph: the D_k step does not change G, so the G step's G(z) (same
        # z, same parameters) is this very tensor; the D_k step sees it detached
        fake = self.generator(z).index_select(2, cols)
        opt_d, b = optimizers[f"discriminator_{k}"], cfg.batch_size
        for _ in range(cfg.n_critic):
            logits = disc(torch.cat([real, fake.detach()], dim=1)).squeeze(2)
            d_loss = (-(w_b * F.logsigmoid(logits[:, :b])).mean(dim=1)
                      - F.logsigmoid(-logits[:, b:]).mean(dim=1))
            opt_d.zero_grad(set_to_none=True)
            d_loss.sum().backward()
            opt_d.step()
        disc.requires_grad_(False)
        try:
            g_loss = -F.logsigmoid(disc(fake).squeeze(2)).mean(dim=1)
            opt_g = optimizers["generator"]
            opt_g.zero_grad(set_to_none=True)
            g_loss.sum().backward()
            opt_g.step()
        finally:
            disc.requires_grad_(True)
        return d_loss.detach(), g_loss.detach()

    @torch.no_grad()
    def sample(self, n: int, rngs: Sequence[torch.Generator]) -> torch.Tensor:
        """(R, n, |V|) records: replica r's ``G_r(z)`` with z ~ N(0, I) from ``rngs[r]``."""
        z = torch.stack([torch.randn(n, self.config.latent_dim, generator=g) for g in rngs])
        return self.generator(z)

    def unstacked_generator(self, r: int, seed: object = 0) -> FusionGenerator:
        """Replica ``r``'s generator as a plain :class:`FusionGenerator` (a copy)."""
        g = FusionGenerator(self.out_dim, latent_dim=self.config.latent_dim,
                            hidden=self.config.hidden, seed=seed)
        self.generator.unstack(r, g.net)
        return g


def _adam(params, lr: float, betas: tuple[float, float]) -> FlatAdam:
    # Adam as fusionlib.gan.step.OptimizerSpec.build makes it (fused kernel, elementwise,
    # deterministic on CPU) over one flat buffer: one kernel call per step instead of Adam's
    # per-tensor bookkeeping (a replica's update equals the unstacked run's up to rounding)
    return FlatAdam(params, lr=float(lr), betas=(float(betas[0]), float(betas[1])))
