"""PTGAN engine (seed 001): losses, penalties, tempering, networks, trainer and toy problems.

Modules
-------
losses           pure GAN losses of critic outputs (Wasserstein-type, JS, Pearson chi-square)
penalties        MP (Lipschitz GAN), GP (WGAN-GP), R1 and the PTGAN coherency penalty (eq. 8)
tempering        Algorithm 1 minibatches, t(alpha), reference noise Z / Z^alpha, Mixup points
networks         MLP generator and critic (optional temperature input, batch / spectral norm)
config           one frozen default configuration per method (paper hyperparameters)
objectives       the losses of one Algorithm 3 iteration
trainer          the Algorithm 3 loop (checkpoints, resume, callbacks, threads)
toys             8-Gaussian ring, 1-D mixtures, mode metrics, exact 1-Wasserstein distance
theory           Proposition 3 closed forms and Monte Carlo check
toy_experiments  training runs on the ring and their summary tables
"""

from fusionlib.gan.config import DEFAULTS, METHODS, TABULAR_R, GANConfig, default_config
from fusionlib.gan.losses import LOSSES, critic_loss, generator_loss, soft_label_bce
from fusionlib.gan.networks import Critic, Generator, tabular_networks, toy_networks
from fusionlib.gan.objectives import (
    StepInputs,
    critic_objective,
    draw_step_inputs,
    generator_objective,
)
from fusionlib.gan.penalties import (
    PENALTIES,
    coherency_penalty,
    gradient_penalty,
    input_gradient,
    max_penalty,
    r1_penalty,
    random_interpolates,
)
from fusionlib.gan.tempering import (
    TemperedBatch,
    interpolate,
    mixup_batch,
    reference_noise,
    sample_alpha,
    temperature,
    tempered_minibatch,
)
from fusionlib.gan.trainer import GANTrainer

__all__ = [
    "DEFAULTS",
    "LOSSES",
    "METHODS",
    "PENALTIES",
    "TABULAR_R",
    "Critic",
    "GANConfig",
    "GANTrainer",
    "Generator",
    "StepInputs",
    "TemperedBatch",
    "coherency_penalty",
    "critic_loss",
    "critic_objective",
    "default_config",
    "draw_step_inputs",
    "generator_loss",
    "generator_objective",
    "gradient_penalty",
    "input_gradient",
    "interpolate",
    "max_penalty",
    "mixup_batch",
    "r1_penalty",
    "random_interpolates",
    "reference_noise",
    "sample_alpha",
    "soft_label_bce",
    "tabular_networks",
    "temperature",
    "tempered_minibatch",
    "toy_networks",
]
