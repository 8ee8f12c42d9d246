"""FusionGAN's training step: Algorithm B of seed 000 as a step of the shared trainer.

One trainer iteration is the inner loop of Algorithm B over the K sources, in source order. For
source k, with the trainer's generator ``rng`` drawing, in this order, the row indices and the
noise (and, for WGAN-GP, one interpolation draw per critic step):

1. a batch ``x_1..x_B`` of rows of S_k (uniform with replacement; with ``weight_sampling`` rows
   are drawn with probability proportional to w) and their weights ``w_1..w_B``;
2. noise ``z ~ N(0, I)`` (B x latent_dim) and ``x_hat = G(z)``;
3. ``L_Dk = -(1/B) sum_i [w_i log D_k(x_i) + log(1 - D_k(pi_Vk(x_hat_i)))]`` (weights on the
   real term only, as the seed writes it) and one Adam step of D_k (``n_critic`` steps on the same
   batch and noise when n_critic > 1);
4. ``x_hat = G(z)`` again (same z, after the D_k step), ``L_G = -(1/B) sum_i log D_k(pi_Vk(
   x_hat_i))`` (non-saturating) and one Adam step of G with D_k's parameters frozen.

``pi_Vk`` selects source k's columns of the schema (precomputed index tensors). The logs are
computed as ``logsigmoid`` of the discriminator's logits (finite when D saturates).

``loss="wgan-gp"`` (Appendix I, planned extension 1) uses the logit as the critic score:
``L_Dk = mean(D_k(pi(x_hat))) - mean(w_i D_k(x_i)) + gp_weight * GP`` with the WGAN-GP penalty
at random interpolates of the real batch and ``pi_Vk(x_hat)``, and ``L_G = -mean(D_k(pi(x_hat)))``.
The published WGAN-GP settings (Gulrajani et al. 2017) are 5 critic steps and Adam betas (0, 0.9);
FusionGAN's defaults keep n_critic=1 and betas (0.5, 0.999) unless they are set.

Categorical columns (Appendix I, extension 2): a generator with ``stochastic = True`` (Gumbel-
softmax head) is called as ``G(z, generator=rng)``; its Gumbel noise comes from ``rng`` right
after z, and step 4 replays the same noise as step 3 (from a copy of the state), so G steps on
the very records D_k saw; the resume stays bitwise. ``sample`` passes its generator too: the
argmax of a Gumbel-perturbed block is a draw from Categorical(softmax(logits)) (Gumbel-max),
not the modal category of each z.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from fusionlib.checks import check_positive_int, is_int
from fusionlib.errors import InvalidInputError
from fusionlib.fusion.config import FusionConfig, discriminator_loss, generator_loss
from fusionlib.fusion.inputs import check_rows, check_weights
from fusionlib.fusion.networks import FusionGenerator, SourceDiscriminator
from fusionlib.gan.networks import eval_mode
from fusionlib.gan.penalties import gradient_penalty, random_interpolates
from fusionlib.gan.step import Batch, OptimizerSpec, TrainingStep
from fusionlib.rng import child

__all__ = ["FusionStep", "fusion_step"]


class FusionStep(TrainingStep):
    """One generator over the schema V and one discriminator per source (Algorithm B).

    Parameters
    ----------
    config:
        A :class:`FusionConfig`.
    generator:
        Maps noise (n, latent_dim) to records (n, |V|) (a :class:`FusionGenerator`).
    discriminators:
        K modules with ``logits(x)`` (n, |V_k|) -> (n,) (:class:`SourceDiscriminator`).
    indices:
        K sequences: the schema positions of source k's columns, in the column order of its data
        (pi_Vk). Together they must cover every schema column.
    names:
        Source names for error messages (default "0", "1", ...).

    Notes
    -----
    The data of :meth:`prepare` are ``(x_0, w_0, x_1, w_1, ...)``: ``x_k`` (n_k, |V_k|) the rows
    of source k on its own columns, ``w_k`` (n_k,) their weights (None: all 1). Weights are used
    as given (FusionGAN passes weights that sum to n_k, i.e. have mean 1).
    """

    name = "fusiongan"

    def __init__(self, config: FusionConfig, generator: torch.nn.Module,
                 discriminators: Sequence[torch.nn.Module], indices: Sequence[Sequence[int]],
                 *, names: Sequence[str] | None = None) -> None:
        if not isinstance(config, FusionConfig):
            raise InvalidInputError("config must be a FusionConfig, e.g. FusionConfig()")
        self.config, self.generator = config, generator
        self.discriminators = tuple(discriminators)
        self.indices = tuple(tuple(idx) for idx in indices)
        k = len(self.discriminators)
        self.names = tuple(str(n) for n in names) if names is not None else tuple(
            str(i) for i in range(k))
        if k == 0 or len(self.indices) != k or len(self.names) != k:
            raise InvalidInputError(
                f"give one discriminator, one index list and one name per source; got "
                f"{k} discriminators, {len(self.indices)} index lists, {len(self.names)} names")
        self._check_networks()
        self._index = tuple(torch.as_tensor(i, dtype=torch.long) for i in self.indices)
        #: whether G draws noise of its own (a Gumbel-softmax head): G(z, generator=rng)
        self.stochastic = bool(getattr(generator, "stochastic", False))

    def _check_networks(self) -> None:
        out_dim = getattr(self.generator, "out_dim", None)
        latent = getattr(self.generator, "latent_dim", self.config.latent_dim)
        if latent != self.config.latent_dim:
            raise InvalidInputError(f"generator latent_dim {latent} != config latent_dim "
                                    f"{self.config.latent_dim}; build both with the same value")
        for k, (idx, disc, name) in enumerate(zip(self.indices, self.discriminators, self.names,
                                                  strict=True)):
            if not idx:
                raise InvalidInputError(f"source {name!r} has no columns; give every source at "
                                        "least one schema column")
            limit = out_dim if out_dim is not None else math.inf
            if not all(is_int(i) and 0 <= i < limit for i in idx) or len(set(idx)) != len(idx):
                raise InvalidInputError(
                    f"the columns of source {name!r} {list(idx)} must be distinct schema "
                    f"positions in [0, {out_dim}); check the schema of the generator")
            width = getattr(disc, "in_dim", len(idx))
            if width != len(idx):
                raise InvalidInputError(
                    f"discriminator_{k} (source {name!r}) was built for {width} columns but the "
                    f"source has {len(idx)}; build it with in_dim = len(V_k) = {len(idx)}")
        unseen = sorted(set(range(out_dim or 0)) - {i for idx in self.indices for i in idx})
        if unseen:
            raise InvalidInputError(
                f"schema column(s) {unseen} are observed by no source, so nothing trains them; "
                "build the generator with out_dim = the number of observed columns")

    # ------------------------------------------------------------------ trainer contract
    def modules(self) -> dict[str, torch.nn.Module]:
        nets = {f"discriminator_{k}": d for k, d in enumerate(self.discriminators)}
        return {"generator": self.generator, **nets}

    def optimizers(self) -> dict[str, OptimizerSpec]:
        cfg = self.config
        specs = {f"discriminator_{k}": OptimizerSpec((f"discriminator_{k}",), cfg.lr_d, cfg.betas)
                 for k in range(len(self.discriminators))}
        return {"generator": OptimizerSpec(("generator",), cfg.lr_g, cfg.betas), **specs}

    def signature(self) -> dict:
        return {"config": self.config.to_dict(), "indices": [list(i) for i in self.indices],
                "names": list(self.names), "generator": repr(self.generator),
                "discriminators": [repr(d) for d in self.discriminators]}

    def prepare(self, data: object, device: str) -> Batch:
        k = len(self.discriminators)
        if not isinstance(data, (tuple, list)) or len(data) != 2 * k:
            got = f"{len(data)} items" if isinstance(data, (tuple, list)) else type(data).__name__
            raise InvalidInputError(
                f"FusionStep data must be a tuple (x_0, w_0, ..., x_{k - 1}, w_{k - 1}) of "
                f"{2 * k} items (x_k: (n_k, |V_k|) rows of source k, w_k: (n_k,) weights or "
                f"None), got {got}")
        out: list[torch.Tensor] = []
        for j in range(k):
            x = check_rows(self.names[j], j, data[2 * j], len(self.indices[j]),
                           self.config.batch_size)
            w = check_weights(self.names[j], data[2 * j + 1], x.shape[0])
            out += [x.to(device), w.to(device)]
        self._index = tuple(i.to(device) for i in self._index)
        return tuple(out)

    # ------------------------------------------------------------------ one iteration
    def draw_rows(self, n: int, weights: torch.Tensor, rng: torch.Generator) -> torch.Tensor:
        """Indices (B,) of one batch of the n rows of a source, drawn with replacement.

        Uniform by default; proportional to ``weights`` (n,) with ``config.weight_sampling``.
        """
        b = self.config.batch_size
        if self.config.weight_sampling:
            return torch.multinomial(weights, b, replacement=True, generator=rng)
        return torch.randint(n, (b,), generator=rng, device=weights.device)

    def iteration(self, data: Batch, rng: torch.Generator,
                  optimizers: dict[str, torch.optim.Optimizer]) -> dict[str, torch.Tensor]:
        losses: dict[str, torch.Tensor] = {}
        for k in range(len(self.discriminators)):
            losses.update(self._source_update(k, data[2 * k], data[2 * k + 1], rng, optimizers))
        k_all = range(len(self.discriminators))
        for part in ("d_loss", "g_loss"):
            losses[part] = torch.stack([losses[f"{part}_{k}"] for k in k_all]).mean()
        return losses

    def _source_update(self, k: int, x: torch.Tensor, w: torch.Tensor, rng: torch.Generator,
                       optimizers: dict[str, torch.optim.Optimizer]) -> dict[str, torch.Tensor]:
        """Algorithm B's body for source k: n_critic D_k steps, then one G step."""
        cfg, disc, cols = self.config, self.discriminators[k], self._index[k]
        rows = self.draw_rows(x.shape[0], w, rng)
        real, w_b = x[rows], w[rows]
        z = torch.randn(cfg.batch_size, cfg.latent_dim, generator=rng, device=x.device)
        cond = self.conditions(k, real, rng)
        replay = _copy_generator(rng) if self.stochastic else None
        with torch.no_grad():
            fake = self._generate(z, rng, cond).index_select(1, cols)  # x_hat <- G(z), projected
        opt_d = optimizers[f"discriminator_{k}"]
        for _ in range(cfg.n_critic):
            d_loss, penalty = self._critic_objective(disc, real, w_b, fake, rng)
            opt_d.zero_grad(set_to_none=True)
            (d_loss if penalty is None else d_loss + cfg.gp_weight * penalty).backward()
            opt_d.step()
        g_loss = self._generator_update(k, z, replay, optimizers, cond)  # G(z) again, same noise
        out = {f"d_loss_{k}": d_loss.detach(), f"g_loss_{k}": g_loss}
        if penalty is not None:
            out[f"penalty_{k}"] = penalty.detach()
        return out

    def _generator_update(self, k: int, z: torch.Tensor, noise: torch.Generator | None,
                          optimizers: dict[str, torch.optim.Optimizer],
                          cond: torch.Tensor | None = None) -> torch.Tensor:
        """One non-saturating G step against D_k (frozen); returns the detached loss."""
        disc, cols = self.discriminators[k], self._index[k]
        disc.requires_grad_(False)  # no D_k weight-gradients in the generator step
        try:
            fake = self._generate(z, noise, cond).index_select(1, cols)
            g_loss = generator_loss(disc.logits(fake), self.config.loss)
            opt_g = optimizers["generator"]
            opt_g.zero_grad(set_to_none=True)
            g_loss.backward()
            opt_g.step()
        finally:
            disc.requires_grad_(True)
        return g_loss.detach()

    def conditions(self, k: int, real: torch.Tensor, rng: torch.Generator
                   ) -> torch.Tensor | None:
        """The generator's condition for source k's batch: None (unconditional; draws nothing).

        :class:`~fusionlib.fusion.conditional.ConditionalFusionStep` overrides it.
        """
        return None

    def _generate(self, z: torch.Tensor, rng: torch.Generator | None,
                  cond: torch.Tensor | None = None) -> torch.Tensor:
        """G(z) (or G(z, cond)); a stochastic generator also draws its (Gumbel) noise from
        ``rng``."""
        args = (z,) if cond is None else (z, cond)
        return self.generator(*args, generator=rng) if self.stochastic else self.generator(*args)

    def _critic_objective(self, disc: torch.nn.Module, real: torch.Tensor, w: torch.Tensor,
                          fake: torch.Tensor, rng: torch.Generator
                          ) -> tuple[torch.Tensor, torch.Tensor | None]:
        logits = disc.logits(torch.cat([real, fake]))
        b = real.shape[0]
        loss = discriminator_loss(logits[:b], logits[b:], w, self.config.loss)
        if self.config.loss == "bce":
            return loss, None
        return loss, gradient_penalty(disc.logits, random_interpolates(real, fake, rng))

    # ------------------------------------------------------------------ sampling
    @torch.no_grad()
    def sample(self, n: int, rng: torch.Generator, **options: object) -> torch.Tensor:
        """``n`` records G(z), shape (n, |V|), with z ~ N(0, I) (then any Gumbel noise of a
        stochastic generator) from ``rng``, in eval mode."""
        if options:
            raise InvalidInputError(f"unknown sample option(s) {sorted(options)}; FusionGAN "
                                    "samples take none")
        z = self._sample_noise(n, rng)
        return self._generate_eval(z, rng)

    def _sample_noise(self, n: int, rng: torch.Generator) -> torch.Tensor:
        """``z ~ N(0, I)`` (n, latent_dim) from ``rng`` on the generator's device."""
        check_positive_int("n", n)
        device = next(self.generator.parameters()).device
        return torch.randn(n, self.config.latent_dim, generator=rng, device=device)

    def _generate_eval(self, z: torch.Tensor, rng: torch.Generator,
                       cond: torch.Tensor | None = None) -> torch.Tensor:
        """G(z) (or G(z, cond)) in eval mode, the generator's mode restored afterwards."""
        with eval_mode(self.generator):
            return self._generate(z, rng, cond)


def _copy_generator(rng: torch.Generator) -> torch.Generator:
    """A new generator on ``rng``'s device in ``rng``'s current state (``rng`` is untouched)."""
    copy = torch.Generator(device=rng.device)
    copy.set_state(rng.get_state())
    return copy


def fusion_step(config: FusionConfig, out_dim: int, indices: Sequence[Sequence[int]], *,
                names: Sequence[str] | None = None, spans: Sequence[object] | None = None,
                tau: float = 0.2, hard: bool = True, seed: object = 0) -> FusionStep:
    """A :class:`FusionStep` with freshly initialised Appendix A networks.

    The generator is initialised on ``child(seed, "generator")`` and discriminator k on
    ``child(seed, "source", k, "discriminator")``, so no two networks share a stream. ``spans``
    (the encoded layout, with ``tau`` and ``hard``) gives the generator a Gumbel-softmax head
    when one of them is discrete (:class:`FusionGenerator`); ``out_dim`` and ``indices`` then
    count encoded columns.
    """
    gen = FusionGenerator(out_dim, latent_dim=config.latent_dim, hidden=config.hidden,
                          spans=spans, tau=tau, hard=hard, seed=seed)
    discs = [SourceDiscriminator(len(idx), hidden=config.hidden, seed=child(seed, "source", k))
             for k, idx in enumerate(indices)]
    return FusionStep(config, gen, discs, indices, names=names)
