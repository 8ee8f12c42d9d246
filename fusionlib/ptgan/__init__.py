"""PTGAN (seed 001): parallel tempering of GAN training with a coherency penalty.

The method
----------
config             one frozen configuration per method (paper hyperparameters)
tempering          Algorithm 1 minibatches, t(alpha), reference noise Z / Z^alpha, Mixup points
objectives         the losses of one Algorithm 3 iteration
step               Algorithm 3 as a training step of the shared trainer (``ptgan_trainer``)
stacked_step       Algorithm 3 for R repetitions trained as one stacked model
utility            the S_T protocol of section 5.1 (Tables 3, 10, 11)
evidence           estimates and combined verdicts for the claims of the PTGAN chapters

The experiments (one subpackage each, with the same rooms: ``data`` what it reads, ``model`` /
``step`` what it trains, ``runs`` one run, ``cells`` the grid, ``report`` what the chapter shows;
only the rooms an experiment has, plus named extra modules)
-------------------------------------------------------------------------------------------
toys               the 8-Gaussian ring (Figures 1, 9, 11): data, runs, cells
variance           gradient variance (Figures 2, 4, 8; Proposition 5): collapse, linear, runs,
                   cells
tabular            PTGAN on tables (Tables 3, 9, 10, 11): data, model (``TabularPTGAN``), step,
                   stacked (``StackedTabularPTGAN``), runs, cells, report
fair               FairPTGAN (Algorithm 2; Tables 4, 12, Figure 7): mixing, baselines,
                   evaluation, runs, cells, report
images             the image runs (Tables 1, 2, 7, 8; Figures 5, 6, 12-17): step, runs, cells,
                   report, panels
theory             Sections 2-4's statements checked on instances: moments (Proposition 3), nets,
                   bounds, variance, rates, approx, algorithms, assumptions, runs, cells, report
"""

from fusionlib.ptgan.config import DEFAULTS, METHODS, TABULAR_R, GANConfig, default_config
from fusionlib.ptgan.fair.baselines import FairnessPenalty, geometric_repair
from fusionlib.ptgan.fair.mixing import FAIR_R, GroupMixing, group_mixed_minibatch
from fusionlib.ptgan.images.runs import train_image_run
from fusionlib.ptgan.images.step import ImagePTGANStep, ImageRunConfig
from fusionlib.ptgan.objectives import (
    StepInputs,
    critic_objective,
    draw_step_inputs,
    generator_objective,
)
from fusionlib.ptgan.stacked_step import StackedPTGANStep
from fusionlib.ptgan.step import PTGANStep, ptgan_trainer
from fusionlib.ptgan.tabular.model import DISCREPANCIES, TabularPTGAN, tabular_config
from fusionlib.ptgan.tabular.stacked import StackedTabularPTGAN
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
