"""Maximum mean discrepancy of seed 000 (FusionGAN technical appendix, Section F).

    MMD^2(P, Q) = E k(x, x') + E k(y, y') - 2 E k(x, y),    k(a, b) = exp(-gamma |a - b|^2),

with ``x, x' ~ P`` (the sample ``x``, ``n`` rows) and ``y, y' ~ Q`` (``y``, ``m`` rows).

Estimators (:func:`mmd`):

- unbiased (U-statistic, default): the within-sample means exclude the diagonal ``i = j``,
  ``sum_{i != j} k(x_i, x_j) / (n (n - 1))`` (likewise for ``y``), so it can be slightly
  negative when ``P = Q``; needs ``n, m >= 2``.
- biased (V-statistic, ``unbiased=False``): the means include the diagonal
  (``k(x_i, x_i) = 1``), ``sum_{i, j} k(x_i, x_j) / n^2``; it is ``>= 0`` and 0 for ``y = x``.

Bandwidth: the median heuristic ``gamma = 1 / (2 * median^2)``, where ``median`` is the median
Euclidean distance ``|z_i - z_j|`` over pairs ``i != j`` of the **pooled** sample ``z = (x, y)``
(``N = n + m`` rows; the seed does not say which sample, pooling is the common choice and keeps
``mmd(x, y) == mmd(y, x)``). Pairs ``(i, j)`` and ``(j, i)`` have the same distance, so the
median over ordered pairs equals that over the ``N (N - 1) / 2`` unordered ones, which
:func:`median_distance` uses when there are at most ``max_pairs`` of them (default
``DEFAULT_MAX_PAIRS`` = 2,000,000, i.e. ``N <= 2000``). For larger samples it takes the median
of ``max_pairs`` ordered pairs ``i != j`` drawn uniformly with replacement from stream
``numpy_rng(seed, "mmd", "median-pairs")``; its standard error is about
``1 / (2 f sqrt(max_pairs))`` for distance density ``f`` at the median, i.e. ~0.02 % relative
for the default on Gaussian data (``benchmarks/bench_metrics.py`` measures it).

Computation: the kernel sums are accumulated in float64 over ``chunk x chunk`` tiles (within
sample: only tiles on or above the diagonal, doubled, which halves the work of the two
within-sample sums), so memory is a few tiles (``8 chunk^2`` bytes each) whatever ``n`` and
``m``. A tile is one BLAS product of augmented rows,
``[2 gamma a, -gamma |a|^2, 1] . [b, 1, -gamma |b|^2] = -gamma |a - b|^2``, exponentiated in
place (rounding can leave an exponent a few ulps above 0 for ``a = b``, a kernel value
``1 + 1e-15``: not clipped, a pass over the tile saved); the data are first centred on the
pooled mean, which leaves distances unchanged and keeps the rounding of that identity small.
``precision="float32"`` computes the tiles (product and exponential) in float32 and sums each
tile in float64: about twice as fast; the kernel values carry relative errors of ~1e-7 that
average out in the sums (relative error of the sums ~1e-9 on Gaussian data; MMD^2 within ~1e-7
absolute of the float64 value in the tests). Tiles run on ``workers`` threads with
BLAS limited to one thread each, and their sums are added in a fixed order, so the value does not
depend on ``workers``; it depends on ``chunk`` only through rounding (~1e-16).
"""

from __future__ import annotations

import contextlib
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import pdist

from fusionlib.checks import check_positive, check_positive_int
from fusionlib.errors import InvalidInputError
from fusionlib.metrics.coverage import check_pair, check_sample, single_thread_blas
from fusionlib.rng import Seed, numpy_rng
from fusionlib.threads import thread_budget

__all__ = ["DEFAULT_MAX_PAIRS", "DEFAULT_CHUNK", "PRECISIONS", "MMDResult", "median_distance",
           "mmd"]

DEFAULT_MAX_PAIRS = 2_000_000
DEFAULT_CHUNK = 512
PRECISIONS = ("float64", "float32")
_PAIR_BLOCK = 1 << 16  # sampled pairs per distance block (10 MiB of differences in d = 20)


@dataclass(frozen=True)
class MMDResult:
    """Result of :func:`mmd`.

    Attributes
    ----------
    mmd2 : float
        The estimate of ``MMD^2`` (the unbiased one can be slightly negative).
    mmd : float
        ``sqrt(max(mmd2, 0))``.
    gamma : float
        The RBF parameter used.
    median : float or None
        The pooled median distance behind ``gamma`` (None when ``gamma`` was given).
    n_pairs_for_median : int
        Pairs the median was taken over (0 when ``gamma`` was given).
    exact_median : bool
        True when the median is over all pairs, False when subsampled or not computed.
    unbiased : bool
        Which estimator ``mmd2`` is.
    """

    mmd2: float
    mmd: float
    gamma: float
    median: float | None
    n_pairs_for_median: int
    exact_median: bool
    unbiased: bool


def _pooled_median(z: np.ndarray, max_pairs: int | None, seed: Seed) -> tuple[float, int, bool]:
    max_pairs = DEFAULT_MAX_PAIRS if max_pairs is None else check_positive_int(
        "max_pairs", max_pairs)
    n = len(z)
    if n < 2:
        raise InvalidInputError(
            f"the pooled sample has {n} record(s); the median distance needs at least 2 records")
    n_all = n * (n - 1) // 2
    if n_all <= max_pairs:
        return float(np.median(pdist(z), overwrite_input=True)), n_all, True
    rng = numpy_rng(seed, "mmd", "median-pairs")
    dist = np.empty(max_pairs)
    for start in range(0, max_pairs, _PAIR_BLOCK):
        size = min(_PAIR_BLOCK, max_pairs - start)
        i = rng.integers(0, n, size)
        j = rng.integers(0, n - 1, size)
        j += j >= i  # uniform over j != i
        diff = z[i] - z[j]
        dist[start:start + size] = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    return float(np.median(dist, overwrite_input=True)), max_pairs, False


def median_distance(x: object, y: object = None, *, max_pairs: int | None = None,
                    seed: Seed = 0) -> float:
    """Median Euclidean distance over pairs ``i != j`` of the pooled sample ``(x, y)``.

    Parameters
    ----------
    x : array_like, shape (n, d)
    y : array_like, shape (m, d), optional
        Pooled with ``x`` when given (same ``d``).
    max_pairs : int, optional
        Exact median over all ``N (N - 1) / 2`` pairs (``N = n + m``) when that is at most
        ``max_pairs``; otherwise the median of ``max_pairs`` pairs drawn uniformly with
        replacement. Default ``DEFAULT_MAX_PAIRS`` (2,000,000: exact up to ``N = 2000``,
        16 MB of distances). The exact path holds ``8 N (N - 1) / 2`` bytes.
    seed : int or tuple
        Root seed of the pair subsample (stream ``"mmd", "median-pairs"``); unused when exact.

    Returns
    -------
    float
    """
    z = _pool(x, y)
    return _pooled_median(z, max_pairs, seed)[0]


def _pool(x: object, y: object) -> np.ndarray:
    if y is None:
        return check_sample("x", x)
    return np.vstack(check_pair("x", x, "y", y))


def _factors(a: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """``L(a)``, ``R(a)``, shape ``(n, d + 2)``: ``L(a)_i . R(b)_j = -gamma |a_i - b_j|^2``."""
    sq = gamma * np.einsum("ij,ij->i", a, a)[:, None]
    one = np.ones_like(sq)
    return np.hstack([2.0 * gamma * a, -sq, one]), np.hstack([a, one, -sq])


def _tile_sum(task: tuple[np.ndarray, np.ndarray, bool]) -> float:
    """``sum_{i, j} exp(L_i . R_j)`` of one tile (without its diagonal if the flag is set)."""
    left, right, skip_diagonal = task
    k = left @ right.T  # -gamma |a_i - b_j|^2, in the factors' dtype
    np.exp(k, out=k)
    total = float(k.sum(dtype=np.float64))
    return total - float(np.trace(k, dtype=np.float64)) if skip_diagonal else total


def _tiles(a: np.ndarray, b: np.ndarray | None, gamma: float, chunk: int,
           dtype: type = np.float64) -> list[tuple]:
    """(weight, task) per tile of ``sum k(a_i, b_j)``; for ``b=None`` the within-``a`` sum over
    ``i != j``: tiles on the diagonal without it, tiles above it doubled. The factors are
    computed in float64, then cast to ``dtype``."""
    left, right = (f.astype(dtype, copy=False) for f in _factors(a, gamma))
    if b is not None:
        right = _factors(b, gamma)[1].astype(dtype, copy=False)
        return [(1.0, (left[i:i + chunk], right[j:j + chunk], False))
                for i in range(0, len(a), chunk) for j in range(0, len(b), chunk)]
    return [(1.0 if i == j else 2.0, (left[i:i + chunk], right[j:j + chunk], i == j))
            for i in range(0, len(a), chunk) for j in range(i, len(a), chunk)]


def _kernel_sums(a: np.ndarray, b: np.ndarray, gamma: float, chunk: int,
                 workers: int, dtype: type = np.float64) -> tuple[float, float, float]:
    """``(sum_{i != j} k(a_i, a_j), sum_{i != j} k(b_i, b_j), sum_{i, j} k(a_i, b_j))``.

    Tiles run on ``workers`` threads (NumPy and BLAS release the GIL); the sums add the tile
    sums in a fixed order, so the result does not depend on ``workers``."""
    groups = [_tiles(a, None, gamma, chunk, dtype), _tiles(b, None, gamma, chunk, dtype),
              _tiles(a, b, gamma, chunk, dtype)]
    sums = []
    with single_thread_blas(), contextlib.ExitStack() as stack:
        pool = stack.enter_context(ThreadPoolExecutor(workers)) if workers > 1 else None
        run = pool.map if pool else map
        for group in groups:
            values = run(_tile_sum, [task for _, task in group])
            sums.append(sum((w * v for (w, _), v in zip(group, values, strict=True)), 0.0))
    return sums[0], sums[1], sums[2]


def mmd(x: object, y: object, *, gamma: float | None = None, unbiased: bool = True,
        chunk: int = DEFAULT_CHUNK, seed: Seed = 0, max_pairs: int | None = None,
        workers: int | None = None, precision: str = "float64") -> MMDResult:
    """Squared MMD between samples ``x`` and ``y`` with an RBF kernel (seed 000, Section F).

    Parameters
    ----------
    x : array_like, shape (n, d)
    y : array_like, shape (m, d)
        Numeric, finite, same ``d``; ``n, m >= 2`` for the unbiased estimator.
    gamma : float, optional
        Kernel ``exp(-gamma |a - b|^2)``; default the median heuristic
        ``1 / (2 median^2)`` over the pooled sample (see :func:`median_distance`).
    unbiased : bool, default True
        U-statistic (diagonal excluded) or V-statistic (included; 0 for ``y = x``).
    chunk : int, default 512
        Tile side; memory is ``O(chunk^2)``, the value does not depend on it beyond rounding.
    seed : int or tuple
        Seed of the median's pair subsample (only used when that is subsampled).
    max_pairs : int, optional
        Passed to :func:`median_distance`.
    workers : int, optional
        Threads computing tiles (default :func:`fusionlib.threads.thread_budget`: the job's
        ``OMP_NUM_THREADS`` under a scheduler, else every core); the result is the same for
        every value.
    precision : {"float64", "float32"}, default "float64"
        Arithmetic of the kernel tiles (sums always in float64); float32 is about twice as
        fast, at relative errors ~1e-7 per kernel value (see the module docstring).

    Returns
    -------
    MMDResult

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(size=(200, 3))
    >>> mmd(x, x, unbiased=False).mmd2 < 1e-12
    True
    """
    if not isinstance(unbiased, bool | np.bool_):
        raise InvalidInputError(f"unbiased must be True or False, got {unbiased!r}")
    min_rows = 2 if unbiased else 1
    a, b = check_pair("x", x, "y", y, min_a=min_rows, min_b=min_rows)
    chunk = check_positive_int("chunk", chunk)
    if precision not in PRECISIONS:
        raise InvalidInputError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    workers = thread_budget() if workers is None else check_positive_int("workers", workers)
    median, n_pairs, exact = None, 0, False
    if gamma is None:
        median, n_pairs, exact = _pooled_median(np.vstack([a, b]), max_pairs, seed)
        if median == 0.0:
            raise InvalidInputError(
                "the median pairwise distance is 0 (over half of the pooled records coincide), "
                "so the median heuristic has no bandwidth; pass gamma explicitly")
        gamma = 1.0 / (2.0 * median**2)
    gamma = check_positive("gamma", gamma)
    centre = (a.sum(axis=0) + b.sum(axis=0)) / (len(a) + len(b))
    a, b = a - centre, b - centre
    n, m = len(a), len(b)
    sxx, syy, sxy = _kernel_sums(a, b, gamma, chunk, workers,
                                 np.float32 if precision == "float32" else np.float64)
    if unbiased:
        mmd2 = sxx / (n * (n - 1)) + syy / (m * (m - 1)) - 2.0 * sxy / (n * m)
    else:
        mmd2 = (sxx + n) / n**2 + (syy + m) / m**2 - 2.0 * sxy / (n * m)
    return MMDResult(mmd2=float(mmd2), mmd=math.sqrt(max(mmd2, 0.0)), gamma=gamma,
                     median=median, n_pairs_for_median=n_pairs, exact_median=exact,
                     unbiased=bool(unbiased))
