"""Joint-distribution estimators of seed 002: learn p(all columns) from two overlapping tables.

Surface shared by the separate-data estimators (scikit-learn-like)::

    model = Estimator(**options).fit(internal, external)
    rows = model.sample(n, seed)              # all columns, values as str
    p = model.joint_proba(complete_rows)      # exact probability of each complete row
    table = model.proba_table(["sex", "income"])   # exact marginal of a few columns

``CTGANBaseline`` is the exception: trained on the complete table, ``fit(data)``, no
probabilities.
"""

from fusionlib.fairtest.estimators.base import JointEstimator
from fusionlib.fairtest.estimators.baselines import (
    CTGAN_DEFAULTS,
    CTGANBaseline,
    CTGANDefaults,
    IndependentModel,
)
from fusionlib.fairtest.estimators.independence import IndependenceGivenOverlap
from fusionlib.fairtest.estimators.latent_nb import (
    LNB_DEFAULTS,
    LatentNaiveBayes,
    LatentNaiveBayesDefaults,
)
from fusionlib.fairtest.estimators.marginal import MarginalPreservation

__all__ = [
    "CTGANBaseline",
    "CTGANDefaults",
    "CTGAN_DEFAULTS",
    "IndependenceGivenOverlap",
    "IndependentModel",
    "JointEstimator",
    "LNB_DEFAULTS",
    "LatentNaiveBayes",
    "LatentNaiveBayesDefaults",
    "MarginalPreservation",
]
