"""PTGAN's Algorithm 3 as a training step of the shared trainer.

:class:`PTGANStep` keeps the one-critic loop of :class:`~fusionlib.gan.adversarial.AdversarialStep`
and changes only what PTGAN changes: tempered minibatches (Algorithm 1), the temperature input
``t(alpha)`` of both networks, the reference noise ``Z^alpha`` and the coherency penalty
(:mod:`fusionlib.ptgan.objectives`). Its configuration is a
:class:`~fusionlib.ptgan.config.GANConfig`, which also describes the paper's baselines
(plain, MP, GP, Mixup) at r = 1.
"""

from __future__ import annotations

import torch

from fusionlib.checks import check_probability
from fusionlib.errors import InvalidInputError
from fusionlib.gan.adversarial import AdversarialStep
from fusionlib.gan.step import Batch
from fusionlib.gan.trainer import Trainer
from fusionlib.ptgan.config import GANConfig
from fusionlib.ptgan.objectives import (
    StepInputs,
    critic_objective,
    draw_step_inputs,
    generator_objective,
)
from fusionlib.ptgan.tempering import reference_noise, temperature

__all__ = ["PTGANStep", "ptgan_trainer"]


class PTGANStep(AdversarialStep):
    """Algorithm 3 of PTGAN for any :class:`GANConfig` (tempered or not)."""

    def __init__(self, config: GANConfig, generator: torch.nn.Module,
                 critic: torch.nn.Module) -> None:
        if not isinstance(config, GANConfig):
            raise InvalidInputError("config must be a GANConfig; use default_config(method)")
        super().__init__(config, generator, critic)

    def prepare(self, data: object, device: str) -> Batch:
        for name, net in (("generator", self.generator), ("critic", self.critic)):
            if getattr(net, "conditional", self.config.conditional) != self.config.conditional:
                raise InvalidInputError(
                    f"{name}.conditional differs from config.conditional="
                    f"{self.config.conditional}; build the networks with the same setting")
        return super().prepare(data, device)

    def draw_inputs(self, data: torch.Tensor, rng: torch.Generator) -> StepInputs:
        return draw_step_inputs(data, self.config, rng)

    def generate(self, inputs: StepInputs) -> torch.Tensor:
        t = inputs.t
        return self.generator(inputs.z, t) if t is not None else self.generator(inputs.z)

    def critic_objective(self, fake, inputs, rng):
        return critic_objective(self.critic, fake, inputs, self.config, rng)

    def generator_objective(self, fake, inputs):
        return generator_objective(self.critic, fake, inputs, self.config)

    @torch.no_grad()
    def sample(self, n: int, rng: torch.Generator, *, alpha: float = 1.0) -> torch.Tensor:
        """``n`` points at level ``alpha`` (1 = the data), in eval mode."""
        check_probability("alpha", alpha)
        cfg = self.config
        if alpha != 1.0 and not cfg.conditional:
            raise InvalidInputError("an unconditional generator only samples at alpha = 1")
        device = next(self.generator.parameters()).device
        a = torch.full((n,), float(alpha), device=device)
        z = reference_noise(n, cfg.latent_dim, rng, alpha=a, interpolated=cfg.interpolated_noise,
                            distribution=cfg.noise, device=device)
        if cfg.conditional:
            return self._eval(lambda: self.generator(z, temperature(a)))
        return self._eval(lambda: self.generator(z))


def ptgan_trainer(config: GANConfig, generator: torch.nn.Module, critic: torch.nn.Module,
                  **options: object) -> Trainer:
    """The shared :class:`~fusionlib.gan.trainer.Trainer` running :class:`PTGANStep`.

    ``options`` are the trainer's (``seed``, ``device``, ``checkpoint_path``, ...).
    """
    return Trainer(PTGANStep(config, generator, critic), **options)
