"""Fairness testing from separate datasets (seed 002).

Data (Appendix B, Table 2) and joint-distribution estimators (Section 3.1, Appendix A) live
here; the rest is in submodules (import it from there): fidelity metrics
(:mod:`fusionlib.metrics.fidelity`), association measures (:mod:`fusionlib.metrics.association`),
fairness metrics (:mod:`fusionlib.metrics.fairness`), the experimental protocol
(:mod:`fusionlib.fairtest.protocol.runs`), the audited classifier and Table 9
(:mod:`fusionlib.fairtest.audit`) and the notebook's summaries
(:mod:`fusionlib.fairtest.protocol.report`).
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
