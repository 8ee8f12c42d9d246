"""Latent Naive Bayes fitted by EM on two overlapping tables (seed 002, 3.1.3, App. A.2-A.3).

    p(x_1, ..., x_d) = sum_k pi_k prod_i p_i(x_i | Z = k).

Each table is a set of rows with some variables missing (the other table's own columns), so
EM runs on both tables at once (Algorithm 1): the E-step computes each row's posterior over Z
from the variables that row has; the M-step sets pi and every p_i(. | k) from soft counts. The
overlap variables collect soft counts from *both* tables (Appendix A.3.5), and pi from all
N_int + N_ext rows (A.3.3).

Vectorisation: identical rows are grouped with their counts, and each table is a sparse
one-hot matrix X (rows x all categories of all variables), so that the E-step is
``X @ log(theta)`` and the M-step is ``X.T @ (counts * posterior)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.special import logsumexp

from fusionlib.checks import is_int
from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.estimators.base import JointEstimator
from fusionlib.fairtest.estimators.validation import EncodedPair, unique_rows
from fusionlib.rng import child, numpy_rng

__all__ = ["LatentNaiveBayes", "LatentNaiveBayesDefaults", "LNB_DEFAULTS"]

_TINY = 1e-300  # keeps log(theta) finite where a category gets no soft count under some k


class EMFit(NamedTuple):
    """One EM run: log mixture weights (K,), log conditionals (D, K), log-likelihood trace."""

    log_pi: np.ndarray
    log_theta: np.ndarray
    history: list[float]

    @property
    def log_likelihood(self) -> float:
        """The final total log-likelihood."""
        return float(self.history[-1])


@dataclass(frozen=True)
class LatentNaiveBayesDefaults:
    """Defaults of :class:`LatentNaiveBayes`.

    n_latent, max_iter, tol, tol_on: the authors' companion code for the same method (K = 3
    latent states, at most 500 EM iterations, stop when the *total* log-likelihood of the data
    changes by < 1e-6 nats in one iteration, random initial tables); the seed itself (App. A.2)
    only requires K > 1. On Adult (~32,000 rows per table) an absolute 1e-6 on the total is a
    very strict rule (a relative change near 3e-12), so some starts run all 500 iterations;
    ``tol_on="mean"`` divides the change by the number of rows instead (a looser, size-free
    rule). n_restarts is ours: EM finds local optima, so we keep the best of several random
    starts.
    """

    n_latent: int = 3
    max_iter: int = 500
    tol: float = 1e-6
    tol_on: str = "total"  # companion code: change of the total log-likelihood
    n_restarts: int = 5
    seed: int = 0


LNB_DEFAULTS = LatentNaiveBayesDefaults()


def _one_hot(codes: np.ndarray, offsets: np.ndarray, n_cols: int) -> sparse.csr_matrix:
    """Sparse one-hot rows: row r has a 1 at offsets[j] + codes[r, j] for each column j."""
    n, d = codes.shape
    indices = (codes + offsets[None, :]).ravel()
    indptr = np.arange(0, n * d + 1, d)
    return sparse.csr_matrix((np.ones(n * d), indices, indptr), shape=(n, n_cols))


@dataclass
class _Data:
    """One table as grouped rows: one-hot X (u x D), its transpose (CSR), row counts w and the
    group of each original row (``inverse``)."""

    X: sparse.csr_matrix
    XT: sparse.csr_matrix
    w: np.ndarray
    inverse: np.ndarray


def _group(codes: np.ndarray, variables: list[int], offsets: np.ndarray, n_cols: int) -> _Data:
    rows, inverse, counts = unique_rows(codes)
    X = _one_hot(rows, offsets[variables], n_cols)
    return _Data(X=X, XT=X.T.tocsr(), w=counts.astype(np.float64), inverse=inverse)


def _logsumexp_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise log-sum-exp of a finite-max (n, K) array and the softmax of each row."""
    top = a.max(axis=1, keepdims=True)
    e = np.exp(a - top)
    total = e.sum(axis=1, keepdims=True)
    return (top + np.log(total)).ravel(), e / total


class LatentNaiveBayes(JointEstimator):
    """Latent class model over all columns of two overlapping tables, fitted by EM.

    Parameters
    ----------
    n_latent : int, default 3
        Number K of latent states (>= 1; K = 1 is the independent model with the overlap
        marginal pooled by row counts).
    max_iter : int, default 500
        Maximum EM iterations per restart.
    tol : float, default 1e-6
        Stop when the log-likelihood chosen by ``tol_on`` rises by less than ``tol`` (nats) in
        one iteration.
    tol_on : {"total", "mean"}, default "total"
        ``"total"`` (the companion code's rule): the total log-likelihood
        log p(D_int) + log p(D_ext). ``"mean"``: the same divided by N_int + N_ext, i.e. the
        mean per observed row, which stops much earlier on large tables.
    n_restarts : int, default 5
        Random initialisations; the fit with the highest final log-likelihood is kept.
    seed : int, default 0
        Seed of the random initial tables (Dirichlet(1) draws for pi and every p_i(. | k)).

    Fitted attributes
    -----------------
    weights_ : ndarray, shape (n_latent,)
        pi_k.
    conditionals_ : dict of str -> DataFrame
        p(x_i | k) per column: rows are categories, columns the latent states.
    log_likelihood_ : float
        Final total log-likelihood log p(D_int) + log p(D_ext) (nats) of the kept restart.
    log_likelihood_history_ : ndarray, shape (n_iter_ + 1,)
        Total log-likelihood before the first and after every EM iteration of the kept
        restart (non-decreasing, as EM guarantees).
    n_iter_ : int
        EM iterations (M-steps) of the kept restart.
    """

    def __init__(
        self,
        *,
        n_latent: int = LNB_DEFAULTS.n_latent,
        max_iter: int = LNB_DEFAULTS.max_iter,
        tol: float = LNB_DEFAULTS.tol,
        tol_on: str = LNB_DEFAULTS.tol_on,
        n_restarts: int = LNB_DEFAULTS.n_restarts,
        seed: int = LNB_DEFAULTS.seed,
    ) -> None:
        self.n_latent = n_latent
        self.max_iter = max_iter
        self.tol = tol
        self.tol_on = tol_on
        self.n_restarts = n_restarts
        self.seed = seed

    def _check_params(self) -> None:
        for name in ("n_latent", "max_iter", "n_restarts"):
            value = getattr(self, name)
            if not is_int(value) or value < 1:
                raise InvalidInputError(f"{name} must be an int >= 1, got {value!r}")
        if not (isinstance(self.tol, (int, float)) and self.tol >= 0):
            raise InvalidInputError(f"tol must be a number >= 0, got {self.tol!r}")
        if self.tol_on not in ("total", "mean"):
            raise InvalidInputError(
                f"tol_on must be 'total' (companion code) or 'mean' (per row), got "
                f"{self.tol_on!r}")
        child(self.seed)  # validates the seed

    # -- fitting ---------------------------------------------------------------------------

    def _prepare(self, pair: EncodedPair) -> list[_Data]:
        """The (internal, external) tables as grouped one-hot rows; sets the layout of theta:
        one block of categories per column of ``columns_`` (``_offsets``, ``_sizes``)."""
        sizes = np.array([len(pair.categories[c]) for c in self.columns_])
        self._offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self._sizes = sizes
        where = {c: j for j, c in enumerate(self.columns_)}
        int_vars = [where[c] for c in (*pair.overlap, *pair.internal_only)]
        ext_vars = [where[c] for c in (*pair.overlap, *pair.external_only)]
        n_cols = int(sizes.sum())
        self._block = np.repeat(np.arange(len(sizes)), sizes)  # variable of each category
        return [_group(pair.internal_codes, int_vars, self._offsets, n_cols),
                _group(pair.external_codes, ext_vars, self._offsets, n_cols)]

    def _fit(self, pair: EncodedPair) -> None:
        tables = self._prepare(pair)
        sizes = self._sizes
        rng = numpy_rng(self.seed, "em-init")
        fits = [self._em(tables, rng) for _ in range(self.n_restarts)]
        best = max(fits, key=lambda f: f.log_likelihood)  # the first of equal optima
        self.restart_log_likelihoods_ = np.array([f.log_likelihood for f in fits])
        log_pi, log_theta, history = best.log_pi, best.log_theta, best.history
        self._log_pi, self._log_theta = log_pi, log_theta
        self.weights_ = np.exp(log_pi)
        self.log_likelihood_history_ = np.asarray(history)
        self.log_likelihood_ = float(history[-1])
        self.n_iter_ = len(history) - 1
        self.conditionals_ = {
            c: pd.DataFrame(
                np.exp(log_theta[self._offsets[j] : self._offsets[j] + sizes[j]]),
                index=pd.Index(self.categories_[c], name=c),
                columns=pd.RangeIndex(self.n_latent, name="latent"),
            )
            for j, c in enumerate(self.columns_)
        }

    def _random_start(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        k = self.n_latent
        theta = np.vstack([rng.dirichlet(np.ones(m), size=k).T for m in self._sizes])
        return np.log(rng.dirichlet(np.ones(k))), np.log(np.maximum(theta, _TINY))

    @staticmethod
    def _posteriors(t: _Data, log_pi: np.ndarray, log_theta: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
        """log p(row) and the posterior q(z = k | row) of each grouped row (eqs. 34-35)."""
        return _logsumexp_rows(t.X @ log_theta + log_pi)  # (u, K): log p(row, z = k)

    def _m_step(self, counts: np.ndarray, z_counts: np.ndarray, n_rows: float
                ) -> tuple[np.ndarray, np.ndarray]:
        """log pi and log theta from the soft counts (Appendix A.3.3-A.3.5): each variable's
        block of soft counts normalised per latent state; pi from all N_int + N_ext rows."""
        block_sums = np.add.reduceat(counts, self._offsets, axis=0)[self._block]
        log_theta = np.log(np.maximum(counts / np.maximum(block_sums, _TINY), _TINY))
        return np.log(np.maximum(z_counts / n_rows, _TINY)), log_theta

    def _e_step(self, tables: list[_Data], log_pi: np.ndarray, log_theta: np.ndarray):
        """Total log-likelihood and the soft counts of categories (D x K) and states (K,)."""
        counts = np.zeros_like(log_theta)
        z_counts = np.zeros(self.n_latent)
        loglik = 0.0
        for t in tables:
            norm, post = self._posteriors(t, log_pi, log_theta)
            loglik += float(t.w @ norm)
            resp = post * t.w[:, None]
            counts += t.XT @ resp
            z_counts += resp.sum(axis=0)
        return loglik, counts, z_counts

    def _em(self, tables: list[_Data], rng: np.random.Generator):
        log_pi, log_theta = self._random_start(rng)
        n_rows = sum(t.w.sum() for t in tables)
        scale = n_rows if self.tol_on == "mean" else 1.0
        history: list[float] = []
        for it in range(self.max_iter + 1):
            loglik, counts, z_counts = self._e_step(tables, log_pi, log_theta)
            history.append(loglik)
            converged = it > 0 and (history[-1] - history[-2]) / scale < self.tol
            if converged or it == self.max_iter:
                break
            log_pi, log_theta = self._m_step(counts, z_counts, n_rows)
        return EMFit(log_pi, log_theta, history)

    # -- probabilities and sampling --------------------------------------------------------

    def _log_joint_codes(self, codes: np.ndarray, variables: list[int]) -> np.ndarray:
        """log p(x_S) for rows of codes over the given variables; -inf for unseen values."""
        out = np.full(len(codes), -np.inf)
        ok = (codes >= 0).all(axis=1)
        terms = np.tile(self._log_pi, (int(ok.sum()), 1))
        for j, var in enumerate(variables):
            terms += self._log_theta[self._offsets[var] + codes[ok, j]]
        out[ok] = logsumexp(terms, axis=1)
        return out

    def _joint_proba_codes(self, codes: np.ndarray) -> np.ndarray:
        return np.exp(self._log_joint_codes(codes, list(range(len(self.columns_)))))

    def _proba_table(self, columns: list[str]) -> pd.DataFrame:
        variables = [self.columns_.index(c) for c in columns]
        grids = np.meshgrid(*[np.arange(self._sizes[v]) for v in variables], indexing="ij")
        codes = np.column_stack([g.ravel() for g in grids])
        table = self._decode(codes, columns)
        table["proba"] = np.exp(self._log_joint_codes(codes, variables))
        return table

    def _sample_codes(self, n: int, rng: np.random.Generator) -> np.ndarray:
        z = rng.choice(self.n_latent, size=n, p=self.weights_ / self.weights_.sum())
        out = np.empty((n, len(self.columns_)), dtype=np.int64)
        for j, _ in enumerate(self.columns_):
            block = np.exp(self._log_theta[self._offsets[j] : self._offsets[j] + self._sizes[j]])
            cum = np.cumsum(block / block.sum(axis=0), axis=0)  # (M_j, K)
            u = rng.random(n)
            out[:, j] = np.minimum((u[:, None] >= cum.T[z]).sum(axis=1), self._sizes[j] - 1)
        return out
