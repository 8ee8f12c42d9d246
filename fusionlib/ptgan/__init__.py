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
tabular            the tabular PTGAN synthesizer of Table 9 (``TabularPTGAN``), its step and data
stacked_step       Algorithm 3 for R repetitions trained as one stacked model
tabular_stacked    R repetitions of ``TabularPTGAN`` as one model (``StackedTabularPTGAN``)
tabular_runs       the S_T protocol's runs: S_train per split, stacked curves
utility            the S_T protocol of section 5.1 (Tables 3, 10, 11)
fair               Algorithm 2 (FairPTGAN's group-mixed minibatches)
fair_baselines     FairWGANGP's fairness penalty and value-space geometric repair
fair_eval          AUC / SP of downstream classifiers, Pareto fronts, Tables 4 and 12 statistic
fair_report        what the fair chapter compares (reductions, bootstrap over runs, margins)
images             the image runs of Tables 1, 7, 8 and Figures 5, 6 (Table 5 networks)
image_panels       the sample panels of Figures 12-17 and their diversity
theory_*           Section 2-4's statements checked on instances: networks as the theory sees them
                   (theory_nets), Proposition 1 / Lemma 4 / Theorem 1 (theory_bounds), Proposition
                   2 and Lemmas 1-3 (theory_variance), checks along ring runs (theory_training),
                   Theorems 2-3 (theory_rates), Lemmas 6-8 and Proposition 4 (theory_approx),
                   Algorithms 1 and 3 by hand (theory_algorithms), Definition 1 and (A1)-(A4)
                   (theory_assumptions), summaries (theory_report)
*_cells            the grid's experiments (found by name by fusionlib.compendium.cells)
"""

from fusionlib.ptgan.config import DEFAULTS, METHODS, TABULAR_R, GANConfig, default_config
from fusionlib.ptgan.fair import FAIR_R, GroupMixing, group_mixed_minibatch
from fusionlib.ptgan.fair_baselines import FairnessPenalty, geometric_repair
from fusionlib.ptgan.image_step import ImagePTGANStep, ImageRunConfig
from fusionlib.ptgan.images import train_image_run
from fusionlib.ptgan.objectives import (
    StepInputs,
    critic_objective,
    draw_step_inputs,
    generator_objective,
)
from fusionlib.ptgan.stacked_step import StackedPTGANStep
from fusionlib.ptgan.step import PTGANStep, ptgan_trainer
from fusionlib.ptgan.tabular import DISCREPANCIES, TabularPTGAN, tabular_config
from fusionlib.ptgan.tabular_stacked import StackedTabularPTGAN
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
    "DISCREPANCIES", "FAIR_R", "FairnessPenalty", "GroupMixing", "ImagePTGANStep",
    "ImageRunConfig", "train_image_run", "StackedPTGANStep", "StackedTabularPTGAN", "TabularPTGAN",
    "geometric_repair", "group_mixed_minibatch", "tabular_config",
    "DEFAULTS", "METHODS", "TABULAR_R", "GANConfig", "PTGANStep", "StepInputs",
    "TemperedBatch", "critic_objective", "default_config", "draw_step_inputs",
    "generator_objective", "interpolate", "mixup_batch", "ptgan_trainer", "reference_noise",
    "sample_alpha", "temperature", "tempered_minibatch",
]
