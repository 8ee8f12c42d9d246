"""Algorithm 3 on tables: :class:`~fusionlib.ptgan.step.PTGANStep` with a Gumbel-softmax head.

:class:`TabularPTGANStep` changes three things of the PTGAN step, and nothing of its loop:

* the generator's Gumbel noise (the [discrete] head of Table 9) is drawn from the trainer's
  generator, so a checkpointed run resumes bitwise, and sampling draws it from the sampling
  stream (the head's noiseless softmax would always decode to the modal category);
* the tempered minibatch may come from a caller's function instead of Algorithm 1 (FairPTGAN's
  Algorithm 2 builds group-mixed minibatches; same signature as
  :func:`~fusionlib.ptgan.tempering.tempered_minibatch`);
* an extra term may be added to the generator loss (FairWGANGP's fairness penalty).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from fusionlib.checks import check_probability
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.config import GANConfig
from fusionlib.ptgan.objectives import StepInputs, draw_step_inputs
from fusionlib.ptgan.step import PTGANStep
from fusionlib.ptgan.tempering import TemperedBatch, reference_noise, temperature

__all__ = ["GeneratorTerm", "MinibatchFn", "TabularPTGANStep"]

#: ``fn(x, batch_size, r, generator) -> TemperedBatch`` (Algorithm 1's signature)
MinibatchFn = Callable[[torch.Tensor, int, float, torch.Generator], TemperedBatch]
#: ``term(fake, inputs) -> 0-d tensor`` added to the generator loss
GeneratorTerm = Callable[[torch.Tensor, StepInputs], torch.Tensor]


class TabularPTGANStep(PTGANStep):
    """PTGAN's step for a generator with a stochastic (Gumbel-softmax) head.

    Parameters
    ----------
    config, generator, critic:
        As for :class:`~fusionlib.ptgan.step.PTGANStep`; ``generator`` is a
        :class:`~fusionlib.gan.networks.Generator` whose ``forward`` takes ``generator=``.
    minibatch:
        Optional replacement of Algorithm 1 (tempered methods only).
    generator_term:
        Optional term added to the generator loss (its weight included).
    """

    def __init__(self, config: GANConfig, generator: torch.nn.Module, critic: torch.nn.Module,
                 *, minibatch: MinibatchFn | None = None,
                 generator_term: GeneratorTerm | None = None) -> None:
        super().__init__(config, generator, critic)
        if minibatch is not None and not config.tempered:
            raise InvalidInputError(
                f"a custom minibatch replaces Algorithm 1, which method {config.method!r} does "
                "not use; use a tempered method (pt+cp, pt+mp, pt+gp)")
        for name, fn in (("minibatch", minibatch), ("generator_term", generator_term)):
            if fn is not None and not callable(fn):
                raise InvalidInputError(f"{name} must be callable, got {type(fn).__name__}")
        self.minibatch, self.generator_term = minibatch, generator_term
        self._rng: torch.Generator | None = None

    def signature(self) -> dict:
        return {**super().signature(), "minibatch": _name(self.minibatch),
                "generator_term": _name(self.generator_term)}

    def draw_inputs(self, data: torch.Tensor, rng: torch.Generator) -> StepInputs:
        self._rng = rng  # the Gumbel draws of this iteration come from the same stream
        if self.minibatch is None:
            return draw_step_inputs(data, self.config, rng)
        cfg = self.config
        tb = self.minibatch(data, cfg.batch_size, cfg.r, rng)
        if not isinstance(tb, TemperedBatch) or tb.q1.shape != (cfg.batch_size, data.shape[1]):
            raise InvalidInputError(
                f"the minibatch function must return a TemperedBatch of {cfg.batch_size} rows "
                f"and {data.shape[1]} columns")
        z = reference_noise(cfg.batch_size, cfg.latent_dim, rng, alpha=tb.alpha1,
                            interpolated=cfg.interpolated_noise, distribution=cfg.noise,
                            device=data.device)
        return StepInputs(real=tb.q1, alpha=tb.alpha1, z=z, tempered=tb,
                          t=temperature(tb.alpha1))

    def generate(self, inputs: StepInputs) -> torch.Tensor:
        return self.generator(inputs.z, inputs.t, generator=self._rng)

    def generator_objective(self, fake, inputs):
        loss = super().generator_objective(fake, inputs)
        if self.generator_term is None:
            return loss
        return loss + self.generator_term(fake, inputs)

    @torch.no_grad()
    def sample(self, n: int, rng: torch.Generator, *, alpha: float = 1.0) -> torch.Tensor:
        """``n`` encoded rows at level ``alpha`` (1 = the data), Gumbel noise from ``rng``."""
        check_probability("alpha", alpha)
        cfg = self.config
        if alpha != 1.0 and not cfg.conditional:
            raise InvalidInputError(
                f"method {cfg.method!r} has no temperature input and samples only at alpha = 1; "
                "use a tempered method (pt+cp) to sample at other levels")
        device = next(self.generator.parameters()).device
        a = torch.full((n,), float(alpha), device=device)
        z = reference_noise(n, cfg.latent_dim, rng, alpha=a, interpolated=cfg.interpolated_noise,
                            distribution=cfg.noise, device=device)
        t = temperature(a) if cfg.conditional else None
        return self._eval(lambda: self.generator(z, t, generator=rng))


def _name(fn: object) -> str | None:
    if fn is None:
        return None
    return getattr(fn, "__qualname__", type(fn).__qualname__)
