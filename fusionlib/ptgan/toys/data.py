"""Toy distributions of the PTGAN paper and the metrics used on them.

* the 8-Gaussian ring of Figure 1 (radius 1.5, per-coordinate variance 0.01);
* 1-D Gaussian mixtures and their tempered versions ``Q^alpha`` (Figure 3);
* mode coverage and the share of high-quality samples (thresholds documented below);
* the 1-Wasserstein distance between two samples (exact optimal transport via POT ``ot.emd2``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fusionlib.errors import InvalidInputError
from fusionlib.rng import numpy_rng

__all__ = [
    "mode_metrics",
    "ring_centers",
    "sample_mixture_1d",
    "sample_ring",
    "tempered_sample",
]

RING_RADIUS = 1.5
RING_VARIANCE = 0.01


def ring_centers(n_modes: int = 8, radius: float = RING_RADIUS) -> np.ndarray:
    """Means of the ring's components, (n_modes, 2), at angles 2 pi k / n_modes."""
    if n_modes < 1 or radius <= 0:
        raise InvalidInputError(f"need n_modes >= 1 and radius > 0, got {n_modes}, {radius}")
    angle = 2.0 * np.pi * np.arange(n_modes) / n_modes
    return radius * np.column_stack([np.cos(angle), np.sin(angle)])


def sample_ring(n: int, seed: int, *, n_modes: int = 8, radius: float = RING_RADIUS,
                variance: float = RING_VARIANCE) -> np.ndarray:
    """``n`` points (n, 2) from the equal-weight ring mixture N(mu_k, variance * I)."""
    if n < 1 or variance < 0:
        raise InvalidInputError(f"need n >= 1 and variance >= 0, got n={n}, variance={variance}")
    rng = numpy_rng(seed, "ring")
    k = rng.integers(n_modes, size=n)
    return ring_centers(n_modes, radius)[k] + np.sqrt(variance) * rng.standard_normal((n, 2))


def sample_mixture_1d(n: int, seed: int, *, means: Sequence[float] = (-3.0, 3.0),
                      sd: float = 0.1) -> np.ndarray:
    """``n`` draws (n,) from the equal-weight mixture of N(mean_k, sd^2)."""
    if n < 1 or sd < 0 or len(means) < 1:
        raise InvalidInputError("need n >= 1, sd >= 0 and at least one mean")
    rng = numpy_rng(seed, "mixture")
    k = rng.integers(len(means), size=n)
    return np.asarray(means, dtype=float)[k] + sd * rng.standard_normal(n)


def tempered_sample(x: np.ndarray, n: int, seed: int, *, alpha: float | None = None) -> np.ndarray:
    """``n`` draws of ``Q^alpha = alpha X1 + (1 - alpha) X2`` (eq. 5) from the rows of ``x``.

    X1 and X2 are independent uniform draws (with replacement) from ``x``; ``alpha`` is fixed if
    given, else alpha ~ U(0, 1) per draw (as in Figure 3).
    """
    x = np.asarray(x, dtype=float)
    if x.ndim not in (1, 2) or x.shape[0] < 1:
        raise InvalidInputError(f"x must be (N,) or (N, d) with N >= 1, got {x.shape}")
    if alpha is not None and not 0.0 <= alpha <= 1.0:
        raise InvalidInputError(f"alpha must lie in [0, 1], got {alpha}")
    rng = numpy_rng(seed, "tempered")
    i, j = rng.integers(x.shape[0], size=(2, n))
    a = np.full(n, alpha) if alpha is not None else rng.uniform(size=n)
    a = a.reshape((n,) + (1,) * (x.ndim - 1))
    return a * x[i] + (1.0 - a) * x[j]


def mode_metrics(samples: np.ndarray, centers: np.ndarray, sd: float, *, n_sd: float = 3.0,
                 min_share: float = 0.01) -> dict:
    """Mode coverage and sample quality on a Gaussian-mixture toy.

    A sample is *high quality* when it lies within ``n_sd`` standard deviations (Euclidean
    distance ``n_sd * sd``) of its nearest mode; for an isotropic 2-D Gaussian 98.9% of the
    mass lies within 3 sd of its mean (1 - exp(-4.5)). A mode is *covered* when at least
    ``min_share`` of all samples are high-quality samples assigned to it (default 1%, i.e. 8% of
    the 12.5% a perfect generator puts on each of 8 modes), so that a few stray points do not
    count as capturing a mode.

    Returns
    -------
    dict with ``modes_covered`` (int), ``n_modes``, ``high_quality_share`` (in [0, 1]) and
    ``counts`` (high-quality samples per mode, list of ints).
    """
    samples, centers = np.asarray(samples, dtype=float), np.asarray(centers, dtype=float)
    if samples.ndim != 2 or centers.ndim != 2 or samples.shape[1] != centers.shape[1]:
        raise InvalidInputError(
            f"samples {samples.shape} and centers {centers.shape} must be (n, d) and (k, d)")
    if sd <= 0 or not 0.0 <= min_share <= 1.0 or samples.shape[0] == 0:
        raise InvalidInputError("need sd > 0, min_share in [0, 1] and at least one sample")
    dist = np.linalg.norm(samples[:, None, :] - centers[None, :, :], axis=2)
    nearest, d_min = dist.argmin(axis=1), dist.min(axis=1)
    good = np.isfinite(d_min) & (d_min <= n_sd * sd)
    counts = np.bincount(nearest[good], minlength=centers.shape[0])
    return {
        "modes_covered": int((counts >= min_share * samples.shape[0]).sum()),
        "n_modes": int(centers.shape[0]),
        "high_quality_share": float(good.mean()),
        "counts": counts.tolist(),
    }
