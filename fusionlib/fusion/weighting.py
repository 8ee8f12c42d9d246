"""Sample-weighting strategies of FusionGAN (seed 000, technical appendix, section D).

Three strategies give every training row ``x`` a weight ``w(x)``; all return a float64 array of
shape ``(n,)`` that sums to ``n`` (so the mean weight is 1 and a weighted loss keeps the scale of
an unweighted one):

* :func:`uniform_weights` -- ``w(x) = 1``.
* :func:`cluster_weights` -- k-means with ``k`` clusters, ``w(x) = n / (|c(x)| k)``: every
  cluster receives the same total weight ``n / k``, so small clusters are up-weighted.
* :func:`density_weights` -- Gaussian kernel density ``p_hat`` on standardised features,
  ``w(x) = 1 / (p_hat(x) + eps)``, clipped at the 99th percentile, normalised to sum ``n``.

:func:`compute_weights` dispatches on a strategy name and rejects unknown options;
:func:`weights_at` evaluates the weighting function fitted on the training rows at other rows
(the held-out rows of a weighted run's convergence check), on the training weights' scale.

Examples
--------
>>> import numpy as np
>>> x = np.array([[0.0], [0.1], [10.0], [10.1], [10.2], [10.3]])
>>> cluster_weights(x, k=2).round(3).tolist()  # sizes 2 and 4: 6/(2*2) and 6/(4*2)
[1.5, 1.5, 0.75, 0.75, 0.75, 0.75]
>>> round(float(density_weights(x).sum()), 9)
6.0
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.cluster import KMeans

from fusionlib.checks import (
    check_array,
    check_choice,
    check_options,
    check_positive,
    check_positive_int,
)
from fusionlib.errors import InvalidInputError
from fusionlib.fusion.density import (
    DENSITY_METHODS,
    KERNELS,
    log_kde_at_points,
    log_kde_of_sample_at,
)
from fusionlib.rng import seed_int

__all__ = [
    "STRATEGIES", "KERNELS", "DENSITY_METHODS", "uniform_weights", "cluster_weights",
    "density_weights", "log_kde_at_points", "weights_from_log_density", "compute_weights",
    "weights_at",
]

#: Strategy names accepted by :func:`compute_weights`.
STRATEGIES = ("uniform", "cluster", "density")
_OPTIONS = {
    "uniform": (),
    "cluster": ("k", "standardize", "n_init"),
    "density": ("bandwidth", "eps", "clip_quantile", "kernel", "method", "tree_rtol"),
}


def _standardize(x: np.ndarray) -> np.ndarray:
    """Centre every column and divide by its population standard deviation (ddof=0); see
    :func:`_standardizer`."""
    return _standardizer(x)(x)


def _standardizer(x: np.ndarray):
    """The standardisation of ``x``'s columns, as a function applicable to other rows:
    centre every column and divide by its population standard deviation (ddof=0).

    A constant column (max == min) is left at exactly 0 after centring instead of being divided
    by 0 (or by a rounding-noise standard deviation, which would blow noise up to unit scale).
    """
    mean = x.mean(axis=0)
    z = x - mean
    constant = np.ptp(x, axis=0) == 0
    z[:, constant] = 0.0
    scale = z.std(axis=0)
    scale[constant] = 1.0

    def apply(rows: np.ndarray) -> np.ndarray:
        out = rows - mean
        out[:, constant] = 0.0
        return out / scale

    return apply


def uniform_weights(x: object) -> np.ndarray:
    """Uniform weights ``w(x) = 1`` (section D, strategy 1).

    Parameters
    ----------
    x : array-like of shape (n, d)
        Training rows; checked like the other strategies (2-D, numeric, finite, n >= 1).

    Returns
    -------
    ndarray of shape (n,)
        Ones (float64); they sum to ``n``.
    """
    arr = check_array("x", x)
    return np.ones(arr.shape[0])


def _check_enough_distinct(z: np.ndarray, k: int) -> None:
    n = z.shape[0]
    if k > n:
        raise InvalidInputError(
            f"cluster weighting needs at least k samples: k={k} clusters but x has only {n} "
            f"rows; pass k <= {n} or use more data")
    distinct = np.unique(z, axis=0).shape[0]
    if distinct < k:
        raise InvalidInputError(
            f"x has only {distinct} distinct rows, fewer than k={k} clusters, so k-means "
            f"would leave clusters empty and the weights would not sum to n; pass k <= {distinct}")


def cluster_weights(x: object, *, k: int = 20, standardize: bool = True, seed=0,
                    n_init: int = 1, return_labels: bool = False):
    """Cluster-based weights ``w(x) = n / (|c(x)| * k)`` from k-means (section D, strategy 2).

    Every cluster gets total weight ``|c| * n / (|c| k) = n / k``, so the weights sum to ``n``
    exactly when no cluster is empty (checked: with fewer than ``k`` distinct rows an error is
    raised instead of reducing ``k``, because a silently smaller ``k`` changes the method).

    Parameters
    ----------
    x : array-like of shape (n, d)
        Training rows (numeric, finite), ``n >= k``.
    k : int, default 20
        Number of clusters (the seed's value).
    standardize : bool, default True
        Run k-means on columns scaled to zero mean and unit variance (constant columns become
        0). The seed does not say; the origin project clustered the *raw* data
        (``standardize=False`` reproduces it) while its KDE used standardised data. The default
        is True because on raw data the Euclidean distance, hence the clusters and the weights,
        are dominated by the column with the largest units (re-expressing a column in grams
        instead of kilograms would change the weights); standardising makes the weights
        invariant to per-column units and consistent with :func:`density_weights`.
    seed : int or tuple, default 0
        Root seed; k-means initialisation uses stream ``seed_int(seed, "kmeans")``.
    n_init : int, default 1
        k-means++ restarts (the lowest inertia is kept). 1 is scikit-learn's own default for
        k-means++ (``n_init="auto"``, since 1.4); ~0.25 s at n = 50,000, d = 20 on 2 cores,
        10 restarts take ~2 s. More restarts lower the inertia but do not remove the seed
        dependence of the weights when the data have no 20 well-separated clusters: on a
        10-component mixture (n = 20,000, d = 20) the mean |w_seed_a - w_seed_b| was 0.2-0.4
        for n_init = 1, 3 and 10 alike. Where that matters, compare or average several seeds.
    return_labels : bool, default False
        Also return the cluster label of every row.

    Returns
    -------
    weights : ndarray of shape (n,)
        Positive float64 weights summing to ``n``.
    labels : ndarray of shape (n,), only if ``return_labels``
        Cluster index in ``0 .. k-1`` of every row.
    """
    arr = check_array("x", x)
    _, _, labels, sizes = _clusters(arr, k=k, standardize=standardize, seed=seed, n_init=n_init)
    weights = arr.shape[0] / (sizes[labels] * float(len(sizes)))
    return (weights, labels) if return_labels else weights


def _clusters(arr: np.ndarray, *, k: object = 20, standardize: bool = True, seed=0,
              n_init: object = 1):
    """The k-means of :func:`cluster_weights` on ``arr``: (fitted model, the standardisation
    applied to rows, labels, cluster sizes)."""
    k = check_positive_int("k", k)
    n_init = check_positive_int("n_init", n_init)
    scale = _standardizer(arr) if standardize else (lambda rows: rows)
    z = scale(arr)
    _check_enough_distinct(z, k)
    km = KMeans(n_clusters=k, n_init=n_init, random_state=seed_int(seed, "kmeans"))
    labels = km.fit_predict(z)
    sizes = np.bincount(labels, minlength=k)
    if (sizes == 0).any():  # k-means relocates empty clusters; this guards the sum-to-n claim
        raise InvalidInputError(
            f"k-means left {int((sizes == 0).sum())} of k={k} clusters empty; pass a smaller k")
    return km, scale, labels, sizes


def _check_clip_quantile(q: object) -> float:
    message = (f"clip_quantile must be a number in (0, 1] (1 disables clipping), got {q!r}; "
               "the seed uses 0.99")
    try:
        value = check_positive("clip_quantile", q)
    except InvalidInputError:
        raise InvalidInputError(message) from None
    if value > 1.0:
        raise InvalidInputError(message)
    return value


def density_weights(x: object, *, bandwidth: float = 0.5, eps: float = 1e-8,
                    clip_quantile: float = 0.99, kernel: str = "gaussian", method: str = "auto",
                    tree_rtol: float = 1e-4) -> np.ndarray:
    """Density-based weights ``w(x) = 1 / (p_hat(x) + eps)`` (section D, strategy 3).

    Steps (as in the seed): 1. standardise every column to zero mean and unit variance (a
    constant column stays 0 after centring, so it adds nothing to distances and makes no NaN);
    2. kernel density estimate with bandwidth ``h`` on the standardised rows, evaluated at
    every row including itself (:func:`log_kde_at_points`); 3. ``w = 1 / (p_hat + eps)``;
    4. upper clip at the ``clip_quantile`` quantile (``np.quantile``, linear interpolation) of
    the unclipped ``w``; 5. rescale to sum ``n``. The function is deterministic (no seed).

    Numerics. ``p_hat`` is the *normalised* density, so ``eps`` is on the same scale. The self
    term bounds it below: ``p_hat(x_i) >= (2 pi h^2)^(-d/2) / n``, so no division by zero can
    occur and ``eps`` acts only as a cap ``w <= 1/eps``. That bound depends strongly on ``d``:
    with h = 0.5, ``(pi/2)^(-d/2)`` is 0.011 at d = 20, so an isolated point at n = 50,000 has
    ``p_hat ~ 2.2e-7`` and eps = 1e-8 lowers its weight by ~4%; at d = 40 the bound is
    ``1.2e-4 / n = 2.4e-9 < eps`` and eps dominates, flattening the weights of all sparse
    points. Everything is computed in log space: ``log w = -logaddexp(log p_hat, log eps)``,
    then ``w`` is formed relative to its maximum (``exp(log w - max)``, in (0, 1]) before
    clipping and rescaling, which are both scale-free, so no step can overflow or underflow
    to inf/0 even when ``p_hat`` is far below the float64 range.

    Parameters
    ----------
    x : array-like of shape (n, d)
        Training rows (numeric, finite, n >= 1).
    bandwidth : float, default 0.5
        Kernel bandwidth ``h`` in standardised units (the seed's value).
    eps : float, default 1e-8
        Added to ``p_hat``; must be >= 0. The seed gives no value; 1e-8 is the conventional
        choice. ``eps=0`` is safe here (see Numerics) and gives pure inverse-density weights.
    clip_quantile : float, default 0.99
        Quantile at which the weights are clipped from above, in (0, 1]; 1 disables clipping.
    kernel, method, tree_rtol
        See :func:`log_kde_at_points`; the default (``"auto"`` -> ``"exact"`` for the Gaussian
        kernel) computes the KDE exactly.

    Returns
    -------
    ndarray of shape (n,)
        Positive float64 weights summing to ``n``; larger for rows in sparse regions.
    """
    arr = check_array("x", x)
    eps = check_positive("eps", eps, allow_zero=True)
    clip_quantile = _check_clip_quantile(clip_quantile)
    log_p = log_kde_at_points(_standardize(arr), bandwidth=bandwidth, kernel=kernel,
                              method=method, tree_rtol=tree_rtol)
    return weights_from_log_density(log_p, eps=eps, clip_quantile=clip_quantile)


def weights_from_log_density(log_p: object, *, eps: float = 1e-8,
                             clip_quantile: float = 0.99) -> np.ndarray:
    """Steps 3-5 of the density strategy, from ``log p_hat`` at every row.

    ``w = 1 / (exp(log_p) + eps)``, clipped from above at the ``clip_quantile`` quantile of the
    unclipped ``w``, rescaled to sum ``n``; computed in log space (see :func:`density_weights`).

    Parameters
    ----------
    log_p : array-like of shape (n,)
        Log density at every row (finite), e.g. from :func:`log_kde_at_points`.
    eps : float, default 1e-8
        Added to the density, >= 0.
    clip_quantile : float, default 0.99
        In (0, 1]; 1 disables clipping.

    Returns
    -------
    ndarray of shape (n,)
        Positive float64 weights summing to ``n``.
    """
    log_p = check_array("log_p", log_p, ndim=1)
    eps = check_positive("eps", eps, allow_zero=True)
    clip_quantile = _check_clip_quantile(clip_quantile)
    log_w = -np.logaddexp(log_p, math.log(eps)) if eps > 0 else -log_p
    w = np.exp(log_w - log_w.max())  # in (0, 1]: no overflow; the scale cancels below
    np.minimum(w, np.quantile(w, clip_quantile), out=w)
    return w * (log_p.shape[0] / w.sum())


def compute_weights(x: object, strategy: str, *, seed=0, **options) -> np.ndarray:
    """Weights of ``strategy`` ("uniform", "cluster" or "density") for the rows of ``x``.

    Parameters
    ----------
    x : array-like of shape (n, d)
    strategy : str
        One of :data:`STRATEGIES`.
    seed : int or tuple, default 0
        Root seed, used by the stochastic strategy ("cluster"); the others are deterministic.
    **options
        Keyword arguments of the strategy's function (e.g. ``k=10`` for "cluster",
        ``bandwidth=1.0`` for "density"); an unknown option raises instead of being ignored.
        (``return_labels`` is not accepted: call :func:`cluster_weights` for labels.)

    Returns
    -------
    ndarray of shape (n,)
        Weights summing to ``n``.
    """
    check_choice("strategy", strategy, STRATEGIES)
    check_options(strategy, options, _OPTIONS[strategy])
    if strategy == "uniform":
        return uniform_weights(x)
    if strategy == "cluster":
        return cluster_weights(x, seed=seed, **options)
    return density_weights(x, **options)


def weights_at(x: object, points: object, strategy: str, *, seed=0, **options) -> np.ndarray:
    """The weighting function of ``strategy`` fitted on the training rows ``x``, at ``points``.

    :func:`compute_weights` gives every *training* row its weight; a weighted FusionGAN run
    aims at the law of the training rows reweighted by them, and its held-out check must
    compare the generator with held-out rows reweighted by the *same function*. This function
    evaluates it at other rows, on the scale of the training weights:

    - ``"uniform"``: 1;
    - ``"cluster"``: the k-means of :func:`cluster_weights` (fitted on ``x`` exactly as there:
      same standardisation by ``x``'s columns, same seed), a point gets ``n / (|c| k)`` of the
      training cluster ``c`` nearest to it;
    - ``"density"``: ``1 / (p_hat(point) + eps)`` with ``p_hat`` the kernel density of the
      standardised training rows (:func:`~fusionlib.fusion.density.log_kde_of_sample_at`),
      clipped at the training weights' clip value and rescaled by the training weights'
      factor.

    With ``points = x`` it returns :func:`compute_weights` ``(x, strategy, ...)`` (up to
    rounding; tested).

    Parameters
    ----------
    x : array-like of shape (n, d)
        Training rows (what :func:`compute_weights` was given).
    points : array-like of shape (m, d)
        Rows to weigh, on the same columns.
    strategy : str
        One of :data:`STRATEGIES`.
    seed, **options
        As in :func:`compute_weights`.

    Returns
    -------
    ndarray of shape (m,)
        Positive float64 weights (they need not sum to ``m``).
    """
    check_choice("strategy", strategy, STRATEGIES)
    check_options(strategy, options, _OPTIONS[strategy])
    arr, pts = check_array("x", x), check_array("points", points)
    if pts.shape[1] != arr.shape[1]:
        raise InvalidInputError(f"points has {pts.shape[1]} columns, x has {arr.shape[1]}; "
                                "give points on the training rows' columns")
    if strategy == "uniform":
        return np.ones(pts.shape[0])
    n = arr.shape[0]
    if strategy == "cluster":
        km, scale, _, sizes = _clusters(arr, seed=seed, **options)
        return n / (sizes[km.predict(scale(pts))] * float(len(sizes)))
    eps = check_positive("eps", options.get("eps", 1e-8), allow_zero=True)
    q = _check_clip_quantile(options.get("clip_quantile", 0.99))
    kde = {o: options[o] for o in ("bandwidth", "kernel", "method", "tree_rtol") if o in options}
    scale = _standardizer(arr)
    z = scale(arr)

    def log_w(log_p: np.ndarray) -> np.ndarray:
        return -np.logaddexp(log_p, math.log(eps)) if eps > 0 else -log_p

    train = log_w(log_kde_at_points(z, **kde))
    top = train.max()
    w = np.exp(train - top)
    clip = float(np.quantile(w, q))
    factor = n / np.minimum(w, clip).sum()
    at = log_w(log_kde_of_sample_at(z, scale(pts), **kde))
    return np.exp(np.minimum(at - top, math.log(clip))) * factor
