"""The contract between the one trainer and a training method: a :class:`TrainingStep`.

The :class:`~fusionlib.gan.trainer.Trainer` owns everything that is the same for every method:
the loop, the optimisers, callbacks, the progress bar, checkpoints and bitwise resume, torch
threads, the device, and the check for non-finite losses. A method supplies a step that says

- which modules it trains (:meth:`TrainingStep.modules`) and with which optimiser settings
  (:meth:`TrainingStep.optimizers`);
- what its data look like (:meth:`TrainingStep.prepare`: validation and conversion, once);
- what one iteration does (:meth:`TrainingStep.iteration`), drawing every random number from the
  trainer's generator, so that a checkpointed generator state makes the resume bitwise;
- how it draws samples (:meth:`TrainingStep.sample`).

PTGAN's Algorithm 3 (:mod:`fusionlib.ptgan.step`), the plain GAN / WGAN-GP / Lipschitz-GAN steps
(:mod:`fusionlib.gan.adversarial`) and FusionGAN's K-critic step (:mod:`fusionlib.fusion.step`)
are such steps. A *stacked* step trains R repetitions as one model
(:mod:`fusionlib.gan.stacked`): it has an attribute ``n_reps``, receives a
:class:`~fusionlib.gan.stacked.GeneratorBank` (one generator per repetition) instead of one
generator, and returns losses of shape (R,)
(:class:`fusionlib.ptgan.stacked_step.StackedPTGANStep`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import torch

from fusionlib.checks import check_positive
from fusionlib.errors import InvalidInputError

__all__ = ["OptimizerSpec", "TrainingStep", "Batch"]

#: What a step trains on: a tuple of tensors (one data matrix, or K source matrices and weights).
Batch = tuple[torch.Tensor, ...]


@dataclass(frozen=True)
class OptimizerSpec:
    """One Adam optimiser over the parameters of the named modules.

    Attributes
    ----------
    modules: names (keys of :meth:`TrainingStep.modules`) whose parameters it updates.
    lr: learning rate (finite, > 0).
    betas: Adam's (beta1, beta2), each in [0, 1).
    """

    modules: tuple[str, ...]
    lr: float
    betas: tuple[float, float] = (0.0, 0.9)

    def __post_init__(self) -> None:
        check_positive("lr", self.lr)
        if len(self.betas) != 2 or not all(0.0 <= float(b) < 1.0 for b in self.betas):
            raise InvalidInputError(f"betas must be two numbers in [0, 1), got {self.betas}")
        if not self.modules:
            raise InvalidInputError("an optimiser needs at least one module name")

    def build(self, modules: dict[str, torch.nn.Module]) -> torch.optim.Adam:
        """The Adam optimiser over ``modules[name]`` for every name in :attr:`modules`."""
        unknown = [m for m in self.modules if m not in modules]
        if unknown:
            raise InvalidInputError(
                f"optimiser refers to unknown module(s) {unknown}; known: {sorted(modules)}")
        params = [p for m in self.modules for p in modules[m].parameters()]
        # the fused kernel is about 3x faster than the per-tensor loop for small MLPs
        # (benchmarks/bench_ptgan.py) and is deterministic on CPU
        return torch.optim.Adam(params, lr=float(self.lr),
                                betas=(float(self.betas[0]), float(self.betas[1])), fused=True)


class TrainingStep(ABC):
    """A training method as the trainer sees it (see the module docstring).

    Subclasses keep their networks as attributes and return them from :meth:`modules`.
    """

    #: label shown on the progress bar
    name: str = "step"

    @abstractmethod
    def modules(self) -> dict[str, torch.nn.Module]:
        """Every trained module by name (their states are checkpointed)."""

    @abstractmethod
    def optimizers(self) -> dict[str, OptimizerSpec]:
        """One optimiser specification per name (e.g. ``generator``, ``critic_0``)."""

    def signature(self) -> dict:
        """Hyperparameters that must match to resume a checkpoint (plain, comparable values)."""
        return {name: repr(m) for name, m in self.modules().items()}

    @abstractmethod
    def prepare(self, data: object, device: str) -> Batch:
        """Validate ``data`` once and return it as a tuple of tensors on ``device``.

        Raise :class:`~fusionlib.errors.InvalidInputError` naming the problem and the fix
        (wrong width for the networks, NaN, too few rows for one batch, ...).
        """

    @abstractmethod
    def iteration(self, data: Batch, rng: torch.Generator,
                  optimizers: dict[str, torch.optim.Optimizer]) -> dict[str, torch.Tensor]:
        """Run one iteration; return its losses as detached 0-d tensors (checked for NaN)."""

    @abstractmethod
    def sample(self, n: int, rng: torch.Generator, **options: object) -> torch.Tensor:
        """Draw ``n`` samples with ``rng`` (never the training generator)."""
