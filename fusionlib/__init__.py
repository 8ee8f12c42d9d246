"""fusionlib: the tested package behind the data-fusion / PTGAN / fairness-testing compendium.

Subpackages
-----------
data        dataset registry, hash-verified provisioning and loaders
encoding    reversible table encodings (PTGAN tabular encoding)
experiment  the ``Run`` object notebooks use: scales, results, provenance, claims
claims      the reproduction-scorecard table
fairtest    joint-distribution estimators and metrics of seed 002
gan         PTGAN engine (losses, penalties, tempering, trainer) of seed 001
"""

from fusionlib.errors import (
    DataIntegrityError,
    DataUnavailableError,
    FusionlibError,
    InvalidInputError,
    NotFittedError,
)

__version__ = "0.1.0"

__all__ = [
    "DataIntegrityError",
    "DataUnavailableError",
    "FusionlibError",
    "InvalidInputError",
    "NotFittedError",
    "__version__",
]
