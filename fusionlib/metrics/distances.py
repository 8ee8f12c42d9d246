"""Distances between two samples that need no model: the exact 1-Wasserstein distance.

(Kernel and nearest-neighbour distances live in :mod:`fusionlib.metrics.mmd`,
:mod:`fusionlib.metrics.coverage` and :mod:`fusionlib.metrics.prdc`.)
"""

from __future__ import annotations

import numpy as np
import ot

from fusionlib.errors import InvalidInputError

__all__ = ["wasserstein1"]


def wasserstein1(a: np.ndarray, b: np.ndarray) -> float:
    """Exact 1-Wasserstein distance between two empirical distributions (uniform weights).

    ``a`` (n, d) or (n,), ``b`` (m, d) or (m,); Euclidean ground cost; solved with POT's network
    simplex ``ot.emd2``. Cost O(n m) memory: keep n, m at a few thousand.

    Non-finite input: if either sample contains NaN or an infinite entry (a diverged generator),
    the distance is ``inf`` rather than an error, so a training curve records the divergence
    and the run goes on; ``np.log`` of it is ``inf`` too.
    """
    try:
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"samples must be numeric arrays ({exc}); encode text columns "
                                "as numbers first") from None
    a = a[:, None] if a.ndim == 1 else a
    b = b[:, None] if b.ndim == 1 else b
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1] or min(len(a), len(b)) == 0:
        raise InvalidInputError(
            f"samples must be non-empty with equal dimension: {a.shape}, {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return float("inf")
    cost = ot.dist(a, b, metric="euclidean")
    return float(ot.emd2(np.full(len(a), 1.0 / len(a)), np.full(len(b), 1.0 / len(b)), cost,
                         numItermax=10_000_000))
