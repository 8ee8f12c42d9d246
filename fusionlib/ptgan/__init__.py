"""PTGAN (seed 001): parallel tempering of GAN training with a coherency penalty.

Modules
-------
config             one frozen configuration per method (paper hyperparameters)
tempering          Algorithm 1 minibatches, t(alpha), reference noise Z / Z^alpha, Mixup points
objectives         the losses of one Algorithm 3 iteration
step               Algorithm 3 as a training step of the shared trainer (``ptgan_trainer``)
toys               8-Gaussian ring, 1-D mixtures, mode metrics
toy_experiments    training runs on the ring and their summary tables (Figures 1, 9, 11)
theory             Proposition 3 closed forms and Monte Carlo check
variance_linear    Proposition 5 (gradient variance of a linear critic)
variance_collapse  the collapsed-generator toy of Figures 2 and 4
variance_training  gradient variance during training and under injected noise (Figures 4, 8)
"""

from fusionlib.ptgan.config import DEFAULTS, METHODS, TABULAR_R, GANConfig, default_config
from fusionlib.ptgan.objectives import (
    StepInputs,
    critic_objective,
    draw_step_inputs,
    generator_objective,
)
from fusionlib.ptgan.step import PTGANStep, ptgan_trainer
from fusionlib.ptgan.tempering import (
    TemperedBatch,
    interpolate,
    mixup_batch,
    reference_noise,
    sample_alpha,
    temperature,
    tempered_minibatch,
)

__all__ = [
    "DEFAULTS", "METHODS", "TABULAR_R", "GANConfig", "PTGANStep", "StepInputs",
    "TemperedBatch", "critic_objective", "default_config", "draw_step_inputs",
    "generator_objective", "interpolate", "mixup_batch", "ptgan_trainer", "reference_noise",
    "sample_alpha", "temperature", "tempered_minibatch",
]
