"""fusionlib: the tested package behind the compendium reproducing FusionGAN, PTGAN and fairness
testing from separate datasets.

Subpackages, floor by floor (a module imports only from its own floor or below; the papers never
import each other; ``tests/test_layers.py`` checks both):

studies      across the papers: the identification study, one benchmark of every generator
fusion       FusionGAN (its technical appendix): synthesizer, weighting, DP, calibration
ptgan        PTGAN: tempering, coherency penalty, toys, variance, tables, FairPTGAN, images
fairtest     fairness testing from separate datasets: joint estimators, protocol, bounds
gan          the shared GAN engine: networks, heads, losses, penalties, training steps, trainer
metrics      shared metrics: fidelity, coverage, MMD, fairness, image scores, privacy
matching     statistical matching (hot-deck) and Frechet/correlation bounds
compendium   Run, claims and verdicts, conclusions, the scorecard, cells, the notebook runner
data         dataset registry, hash-verified provisioning and loaders, ``SourceSet``
encoding     reversible table encodings
errors io rng checks threads   error types, atomic writes, seed streams, input checks, threads
"""

from typing import Any

from fusionlib.errors import (
    DataIntegrityError,
    DataUnavailableError,
    FusionlibError,
    InvalidInputError,
)

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # NotFittedError subclasses scikit-learn's: made on first use (fusionlib.errors)
    if name == "NotFittedError":
        from fusionlib import errors

        return errors.NotFittedError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "DataIntegrityError",
    "DataUnavailableError",
    "FusionlibError",
    "InvalidInputError",
    "NotFittedError",
    "__version__",
]
