"""Distance to closest record (DCR): a memorisation check for synthetic data.

For every synthetic record ``s``, ``DCR(s) = min_{t in train} |s - t|`` (Euclidean). A generator
that copies its training data gives many DCRs of 0; one that samples from the data distribution
gives DCRs like those of fresh real records. :func:`dcr` reports the per-record distances and
their median, 5th percentile and share of exact copies (``DCR < copy_tol``, default ``1e-8``).

With a **holdout** set (real records from the same population that the generator never saw) it
also reports the same for the distances to the holdout, and the share of synthetic records
strictly closer to a training record than to any holdout record (ties count as not closer). If
synthetic records are exchangeable with the real ones, the nearest of the pooled
``|train| + |holdout|`` records is equally likely to be any of them, so this share is about
``|train| / (|train| + |holdout|)`` (0.5 for equal sizes; returned as ``closer_to_train_expected``);
a clearly larger share signals memorisation.

Distances are exact (:func:`~fusionlib.metrics.coverage.knn_distances`): a copy gives exactly 0.
Encode and scale the columns before calling (the metric is as meaningful as the distance).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fusionlib.checks import check_positive
from fusionlib.metrics.coverage import check_pair, knn_distances

__all__ = ["DEFAULT_COPY_TOL", "DCRResult", "dcr"]

DEFAULT_COPY_TOL = 1e-8


@dataclass(frozen=True)
class DCRResult:
    """Result of :func:`dcr`; the ``holdout_*`` and ``closer_to_train_*`` fields are None
    without a holdout set.

    Attributes
    ----------
    distances : ndarray, shape (m,)
        DCR of each synthetic record to the training set.
    median, p05 : float
        Median and 5th percentile (linear interpolation) of ``distances``.
    copy_share : float
        Share of synthetic records with ``distances < copy_tol``.
    holdout_distances : ndarray, shape (m,), optional
        Distance of each synthetic record to its closest holdout record.
    holdout_median, holdout_p05, holdout_copy_share : float, optional
        The same summaries for ``holdout_distances``.
    closer_to_train_share : float, optional
        Share of synthetic records with ``distances < holdout_distances``.
    closer_to_train_expected : float, optional
        ``|train| / (|train| + |holdout|)``, its value without memorisation.
    """

    distances: np.ndarray
    median: float
    p05: float
    copy_share: float
    holdout_distances: np.ndarray | None = None
    holdout_median: float | None = None
    holdout_p05: float | None = None
    holdout_copy_share: float | None = None
    closer_to_train_share: float | None = None
    closer_to_train_expected: float | None = None


def _summary(dist: np.ndarray, copy_tol: float) -> tuple[float, float, float]:
    median, p05 = np.percentile(dist, [50.0, 5.0])
    return float(median), float(p05), float(np.mean(dist < copy_tol))


def dcr(train: object, synthetic: object, *, holdout: object = None,
        copy_tol: float = DEFAULT_COPY_TOL) -> DCRResult:
    """Distance to closest record of each synthetic record, with summaries.

    Parameters
    ----------
    train : array_like, shape (n, d)
        The generator's training records (numeric, finite).
    synthetic : array_like, shape (m, d)
        Generated records, same ``d`` columns.
    holdout : array_like, shape (h, d), optional
        Real records of the same population not used for training.
    copy_tol : float, default 1e-8
        Distances below it count as exact copies.

    Returns
    -------
    DCRResult

    Examples
    --------
    >>> import numpy as np
    >>> train = np.arange(10.0).reshape(5, 2)
    >>> dcr(train, train[:3]).copy_share
    1.0
    """
    copy_tol = check_positive("copy_tol", copy_tol)
    t, s = check_pair("train", train, "synthetic", synthetic)
    dist = knn_distances(s, t, 1)[0][:, 0]
    result = dict(zip(("median", "p05", "copy_share"), _summary(dist, copy_tol), strict=True))
    if holdout is not None:
        _, h = check_pair("train", t, "holdout", holdout)
        h_dist = knn_distances(s, h, 1)[0][:, 0]
        med, p05, share = _summary(h_dist, copy_tol)
        result.update(holdout_distances=h_dist, holdout_median=med, holdout_p05=p05,
                      holdout_copy_share=share,
                      closer_to_train_share=float(np.mean(dist < h_dist)),
                      closer_to_train_expected=len(t) / (len(t) + len(h)))
    return DCRResult(distances=dist, **result)
