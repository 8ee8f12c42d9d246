"""The shared GAN engine: losses, penalties, networks, noise, one trainer, training steps.

Modules
-------
losses       pure GAN losses of critic outputs (Wasserstein-type, JS, Pearson chi-square)
penalties    MP (Lipschitz GAN), GP (WGAN-GP), R1 and the coherency penalty (pure functions)
networks     MLP generator and critic (optional temperature input, batch / spectral norm)
cnn          the CNN critic and generator of PTGAN Tables 5 and 6 (32, 64, 256 px)
heads        output heads: linear for continuous spans, Gumbel-softmax per categorical span
noise        generator input noise laws
step         the TrainingStep contract between a method and the trainer
trainer      the one training loop (optimisers, callbacks, checkpoints, resume, threads, device)
stacked      R repetitions as one model: batched linear and batch-norm layers, a generator bank
stacked_networks / stacked_heads  stacked critics, generators and Gumbel-softmax heads
adversarial  one-critic steps: plain GAN, WGAN-GP, Lipschitz GAN (max penalty)
diagnostics  per-pair gradient variance of a critic (vmap and closed-form ghost norms)

Methods of a paper (PTGAN's tempering, FusionGAN's K critics) are steps in their paper's package.
"""

from fusionlib.gan.adversarial import (
    STEP_DEFAULTS,
    AdversarialConfig,
    AdversarialStep,
    adversarial_config,
)
from fusionlib.gan.cnn import CNNCritic, CNNGenerator, cnn_networks
from fusionlib.gan.cnn_specs import layer_table
from fusionlib.gan.heads import TabularHead
from fusionlib.gan.losses import LOSSES, critic_loss, generator_loss, soft_label_bce
from fusionlib.gan.networks import Critic, Generator, eval_mode, tabular_networks, toy_networks
from fusionlib.gan.noise import NOISE_DISTRIBUTIONS, base_noise
from fusionlib.gan.penalties import (
    PENALTIES,
    coherency_penalty,
    gradient_penalty,
    input_gradient,
    max_penalty,
    r1_penalty,
    random_interpolates,
)
from fusionlib.gan.stacked import GeneratorBank, PenaltyReLU
from fusionlib.gan.stacked_networks import StackedCritic, StackedGenerator
from fusionlib.gan.step import OptimizerSpec, TrainingStep
from fusionlib.gan.trainer import Trainer

__all__ = [
    "LOSSES", "NOISE_DISTRIBUTIONS", "PENALTIES", "STEP_DEFAULTS", "AdversarialConfig",
    "AdversarialStep", "CNNCritic", "CNNGenerator", "Critic", "Generator", "GeneratorBank",
    "OptimizerSpec", "PenaltyReLU", "StackedCritic", "StackedGenerator",
    "TabularHead", "Trainer", "TrainingStep", "adversarial_config", "base_noise", "cnn_networks",
    "layer_table", "coherency_penalty", "critic_loss", "eval_mode", "generator_loss",
    "gradient_penalty", "input_gradient", "max_penalty", "r1_penalty", "random_interpolates",
    "soft_label_bce", "tabular_networks", "toy_networks",
]
