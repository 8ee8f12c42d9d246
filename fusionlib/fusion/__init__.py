"""FusionGAN (seed 000): one generator, one discriminator per data source.

Modules
-------
networks     the section A generator and per-source discriminator
step         Algorithm B as a training step of the shared trainer (FusionConfig: section C)
inputs       checks of the rows and weights a step receives
conditional  conditional generation on a group column (section I, extension 3)
synthesizer  ``FusionGAN``: ``fit(sources)`` / ``sample(n, seed)`` over a SourceSet
scaling      pooled per-column standardisation across sources
weighting    section D: uniform, cluster and density weights
complexity   section H: multiply-add counts and timing of the real step
encoding     the schema's encoding: pooled standardisation and one-hot blocks (categorical columns)
density      kernel density at the sample points (density weights)
calibration  calibration of record weights to external aggregate targets (raking, linear);
             calibration_targets (parsing, residuals) and calibration_solvers (raking, GREG)
dp           DP-SGD discriminators; dp_accountant (RDP accountant), dp_gradients (per-sample
             gradients, clipping)
evaluation   scoring against real records with the shared metrics (sections E, F, I)
mixture      the chapter's experiment ``fusiongan`` on the simulated mixture: data (the
             Gaussian-mixture sources with a known truth), runs, extensions (section I),
             cells, report
"""

from fusionlib.fusion.config import FusionConfig
from fusionlib.fusion.step import FusionStep, fusion_step
from fusionlib.fusion.synthesizer import FusionGAN
from fusionlib.fusion.weighting import compute_weights

__all__ = ["FusionConfig", "FusionGAN", "FusionStep", "compute_weights", "fusion_step"]
