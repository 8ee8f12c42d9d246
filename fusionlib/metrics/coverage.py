"""Nearest-neighbour coverage of seed 000 (FusionGAN technical appendix, Section E).

The seed defines, for real records ``H`` and synthetic records ``S`` (Euclidean distance ``d``),

    Coverage_k(H, S) = (1/|H|) * sum_{x in H} min_{i=1..k} d(x, S_i^(k)),

where ``S_i^(k)`` is the ``i``-th nearest neighbour of ``x`` in ``S``; lower is better, and "for
k = 1 this reduces to mean nearest-neighbour distance". The minimum over the first ``k`` nearest
neighbours is always the distance to the *first* one, so **the formula as written does not depend
on k**: it equals the mean nearest-neighbour distance for every ``k``. :func:`coverage` therefore
offers three variants, each the mean over real points ``x`` of a per-point distance:

- ``"as_written"`` (the seed's formula): ``d(x, S_1)``, the nearest-neighbour distance. ``k`` is
  validated (``1 <= k <= |S|``) but does not change the value.
- ``"kth"`` (the k-dependent reading most readers expect): ``d(x, S_k)``, the distance to the
  ``k``-th nearest synthetic record.
- ``"mean_k"``: ``(1/k) * sum_{i=1..k} d(x, S_i)``, the mean distance to the ``k`` nearest.

All three are 0 when every real record also occurs in ``S`` (``"as_written"``; the others when
each occurs ``k`` times) and grow when ``S`` is shifted away from ``H``.

Neighbours are found with scikit-learn's :class:`~sklearn.neighbors.NearestNeighbors`, brute
force: its chunked pairwise-distance reduction never holds an ``n x m`` matrix and, in the
10-100 dimensions of tabular data, is far faster than a KD-tree (which degrades to visiting most
leaves). It ranks with the BLAS identity ``|a|^2 + |b|^2 - 2 a.b``, whose rounding can hide an
exact copy (a distance of ``1e-6`` instead of 0), so :func:`knn_distances` fetches one spare
candidate, recomputes every candidate's distance directly as ``sqrt(sum((a - b)^2))`` and
re-sorts: copies give exactly 0. Only neighbours whose distances differ by less than the BLAS
rounding (about ``1e-7`` times the data's scale) may come out in either order.

:func:`check_pair`, :func:`row_distances`, :func:`knn_distances` and
:func:`single_thread_blas` are shared by the other distance metrics
(:mod:`fusionlib.metrics.mmd`, :mod:`fusionlib.metrics.prdc`, :mod:`fusionlib.metrics.privacy`).
"""

from __future__ import annotations

import contextlib
import functools

import numpy as np
from sklearn.neighbors import NearestNeighbors
from threadpoolctl import ThreadpoolController

from fusionlib.checks import check_array, check_choice, check_positive_int
from fusionlib.errors import InvalidInputError

__all__ = [
    "VARIANTS",
    "check_sample",
    "check_pair",
    "check_k",
    "row_distances",
    "single_thread_blas",
    "knn_distances",
    "coverage_distances",
    "coverage",
]

VARIANTS = ("as_written", "kth", "mean_k")
_RECOMPUTE_ROWS = 8192  # query rows per exact-distance recomputation block


def check_sample(name: str, x: object, *, min_rows: int = 1) -> np.ndarray:
    """Return ``x`` as a finite float64 array of shape ``(n, d)``, ``n >= min_rows``, ``d >= 1``.

    Raises :class:`InvalidInputError` for non-numeric data, NaN or inf, a 1-D array (with the
    ``reshape(-1, 1)`` fix), no columns, or fewer than ``min_rows`` rows.
    """
    try:
        ndim = np.ndim(x)
    except (TypeError, ValueError):  # ragged nested lists: check_array says what is wrong
        ndim = 2
    if ndim == 1:
        raise InvalidInputError(
            f"{name} is 1-D (shape {np.shape(x)}); pass an (n, d) array of records, "
            "e.g. x.reshape(-1, 1) for a single feature")
    arr = check_array(name, x, ndim=2, min_rows=1)
    if arr.shape[1] == 0:
        raise InvalidInputError(f"{name} has no columns (shape {arr.shape}); pass >= 1 feature")
    if arr.shape[0] < min_rows:
        raise InvalidInputError(
            f"{name} has {arr.shape[0]} row(s) but at least {min_rows} are needed here; "
            "pass more records")
    return arr


def check_pair(name_a: str, a: object, name_b: str, b: object, *, min_a: int = 1,
               min_b: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Check two samples with :func:`check_sample` and that they have the same columns."""
    a_arr = check_sample(name_a, a, min_rows=min_a)
    b_arr = check_sample(name_b, b, min_rows=min_b)
    if a_arr.shape[1] != b_arr.shape[1]:
        raise InvalidInputError(
            f"{name_a} has {a_arr.shape[1]} columns but {name_b} has {b_arr.shape[1]}; pass the "
            "same feature columns, encoded the same way and in the same order, to both")
    return a_arr, b_arr


def check_k(k: object, n_reference: int, reference: str, *, others: bool = False) -> int:
    """Return ``k`` if it is an int with ``1 <= k <= n_reference`` (``< n_reference`` if
    ``others``: the ``k``-th nearest *other* record of the same set), else raise."""
    k = check_positive_int("k", k)
    limit = n_reference - 1 if others else n_reference
    if k > limit:
        what = f"other {reference} records" if others else f"{reference} rows"
        raise InvalidInputError(
            f"k={k} exceeds the {limit} {what}; choose k <= {limit} or pass more {reference} "
            "records")
    return k


def row_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Euclidean distances ``sqrt(sum((a - b)^2))`` of paired rows, shapes ``(n, d)`` -> ``(n,)``.

    Computed directly (no BLAS identity), so identical rows give exactly 0.
    """
    diff = a - b
    return np.sqrt(np.einsum("ij,ij->i", diff, diff))


def single_thread_blas() -> contextlib.AbstractContextManager:
    """Context limiting BLAS to one thread, for loops of small matrix products.

    BLAS threads spinning between many small products cost up to 5x on a busy machine
    (measured for the tiles of :mod:`~fusionlib.metrics.mmd` and :mod:`~fusionlib.metrics.prdc`).
    Uses threadpoolctl (public API; one controller per process, made on first use, as
    scikit-learn's KMeans keeps one: finding the loaded libraries is the slow part).
    """
    return _threadpool_controller().limit(limits=1, user_api="blas")


@functools.lru_cache(maxsize=1)
def _threadpool_controller() -> ThreadpoolController:
    return ThreadpoolController()


def knn_distances(query: np.ndarray, reference: np.ndarray,
                  k: int) -> tuple[np.ndarray, np.ndarray]:
    """Distances and indices of the ``k`` nearest ``reference`` rows of every ``query`` row.

    Parameters
    ----------
    query : ndarray, shape (n, d)
    reference : ndarray, shape (m, d)
        Validated float64 arrays (see :func:`check_pair`).
    k : int
        ``1 <= k <= m``.

    Returns
    -------
    dist : ndarray, shape (n, k)
        Exact Euclidean distances, ascending along each row.
    idx : ndarray, shape (n, k)
        The matching row indices into ``reference``.
    """
    n_cand = min(k + 1, len(reference))
    nn = NearestNeighbors(n_neighbors=n_cand, algorithm="brute").fit(reference)
    _, cand = nn.kneighbors(query)
    dist = np.empty((len(query), k))
    idx = np.empty((len(query), k), dtype=np.intp)
    for start in range(0, len(query), _RECOMPUTE_ROWS):
        rows = slice(start, start + _RECOMPUTE_ROWS)
        c = cand[rows]
        q = np.repeat(query[rows], n_cand, axis=0)
        d = row_distances(q, reference[c.ravel()]).reshape(c.shape)
        order = np.argsort(d, axis=1, kind="stable")[:, :k]
        dist[rows] = np.take_along_axis(d, order, axis=1)
        idx[rows] = np.take_along_axis(c, order, axis=1)
    return dist, idx


def coverage_distances(real: object, synthetic: object, k: int = 1,
                       variant: str = "as_written") -> np.ndarray:
    """Per-real-record distances whose mean is :func:`coverage`.

    Parameters
    ----------
    real : array_like, shape (n, d)
        The real records ``H`` (numeric, finite).
    synthetic : array_like, shape (m, d)
        The synthetic records ``S``, same ``d`` columns.
    k : int, default 1
        Number of nearest synthetic neighbours, ``1 <= k <= m``.
    variant : {"as_written", "kth", "mean_k"}
        See the module docstring; ``"as_written"`` ignores ``k`` beyond validating it.

    Returns
    -------
    ndarray, shape (n,)
        ``d(x, S_1)``, ``d(x, S_k)`` or ``mean_{i<=k} d(x, S_i)`` for every real ``x``.
    """
    check_choice("variant", variant, VARIANTS)
    h, s = check_pair("real", real, "synthetic", synthetic)
    k = check_k(k, len(s), "synthetic")
    if variant == "as_written":  # min over the first k neighbours = the first neighbour
        return knn_distances(h, s, 1)[0][:, 0]
    dist = knn_distances(h, s, k)[0]
    return dist[:, k - 1] if variant == "kth" else dist.mean(axis=1)


def coverage(real: object, synthetic: object, k: int = 1, variant: str = "as_written") -> float:
    """Coverage of seed 000, Section E: mean distance from real records to synthetic ones.

    Lower is better; 0 when every real record has a synthetic copy (``"as_written"``).

    Parameters
    ----------
    real : array_like, shape (n, d)
    synthetic : array_like, shape (m, d)
    k : int, default 1
        ``1 <= k <= m``. The seed's formula (``variant="as_written"``) does not depend on it.
    variant : {"as_written", "kth", "mean_k"}
        ``"as_written"``: mean nearest-neighbour distance (the seed's formula, any ``k``);
        ``"kth"``: mean distance to the ``k``-th nearest; ``"mean_k"``: mean over real records
        of the mean distance to the ``k`` nearest.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> h = np.zeros((3, 2)); s = np.array([[3.0, 4.0], [6.0, 8.0]])
    >>> coverage(h, s, k=2), coverage(h, s, k=2, variant="kth")
    (5.0, 10.0)
    """
    return float(coverage_distances(real, synthetic, k, variant).mean())
