"""Fairness testing from separate datasets (seed 002).

Data (Appendix B, Table 2) and joint-distribution estimators (Section 3.1, Appendix A) live
here; the fidelity metrics, fairness metrics and the experimental protocol are in the
submodules :mod:`fusionlib.fairtest.metrics`, :mod:`fusionlib.fairtest.fairness` and
:mod:`fusionlib.fairtest.protocol` (import them from there).
"""

from fusionlib.fairtest.discretise import DATASETS, VALUES, discretise
from fusionlib.fairtest.estimators import (
    CTGAN_DEFAULTS,
    LNB_DEFAULTS,
    CTGANBaseline,
    CTGANDefaults,
    IndependenceGivenOverlap,
    IndependentModel,
    JointEstimator,
    LatentNaiveBayes,
    LatentNaiveBayesDefaults,
    MarginalPreservation,
)
from fusionlib.fairtest.separation import (
    DATASET_SPECS,
    SEPARATIONS,
    DatasetSpec,
    Separation,
    dataset_spec,
    separate,
    separation,
)

__all__ = [
    "CTGANBaseline",
    "CTGANDefaults",
    "CTGAN_DEFAULTS",
    "DATASETS",
    "DATASET_SPECS",
    "DatasetSpec",
    "IndependenceGivenOverlap",
    "IndependentModel",
    "JointEstimator",
    "LNB_DEFAULTS",
    "LatentNaiveBayes",
    "LatentNaiveBayesDefaults",
    "MarginalPreservation",
    "SEPARATIONS",
    "Separation",
    "VALUES",
    "dataset_spec",
    "discretise",
    "separate",
    "separation",
]
