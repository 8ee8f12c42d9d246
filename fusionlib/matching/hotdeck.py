"""Hot-deck statistical matching under the conditional independence assumption (CIA).

Seed 000, section G: traditional statistical matching fuses two sources A (variables X, Y) and
B (variables X, Z) by assuming ``p(Y, Z | X) = p(Y | X) p(Z | X)``. The nonparametric way to
do so is *hot-deck* imputation, as in R's StatMatch package: each record of the *recipient*
file receives the Z-values of a record of the *donor* file that is similar on the overlap X.

- ``method="random"`` (StatMatch ``RANDwNND.hotdeck`` without a distance): a donor drawn at
  random within the recipient's *donation class* (the cell of the categorical overlap columns).
- ``method="nnd"`` (StatMatch ``NND.hotdeck``): the nearest donor within the class on the
  numeric overlap columns (standardised by the donor's standard deviations), ties at random.
- ``method="rnd"`` (StatMatch ``RANDwNND.hotdeck`` with ``cut.don="k.dist"``): a donor drawn
  at random among the ``k`` nearest within the class.

Donors are reused (unconstrained matching). Under the CIA the fused file has the right
``p(X, Y, Z)`` as the files grow; when the CIA fails, it has ``p(X) p(Y|X) p(Z|X)`` instead:
in a Gaussian design ``corr(Y, Z) = rho_XY * rho_XZ`` whatever the true ``rho_YZ``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree
from sklearn.base import BaseEstimator

from fusionlib.checks import check_choice, check_positive_int, memory_error_as_input_error
from fusionlib.errors import InvalidInputError, NotFittedError
from fusionlib.matching.validation import (
    check_pair,
    check_shared_categories,
    is_categorical,
    numeric_matrix,
    resolve_roles,
)
from fusionlib.rng import numpy_rng

__all__ = ["HotDeckMatcher", "METHODS"]

#: the hot-deck variants (see the module docstring)
METHODS = ("auto", "random", "nnd", "rnd")


class HotDeckMatcher(BaseEstimator):
    """Statistical matching of two sources by hot-deck imputation (CIA).

    Parameters
    ----------
    method:
        One of :data:`METHODS`; ``"auto"`` is ``"nnd"`` when there are numeric overlap columns
        to match on and ``"random"`` otherwise.
    recipient, donor:
        Source names; default the first and the second source.
    donation_classes:
        Overlap columns matched exactly; default: the non-numeric (or boolean) overlap columns.
    match_on:
        Overlap columns for the distance; default: the other overlap columns (numeric).
    k:
        Number of nearest donors among which ``"rnd"`` draws.
    seed:
        Root seed of the donor draws of :meth:`fit` (named ``seed``, not ``random_state``:
        streams are derived from it by key, :mod:`fusionlib.rng`).

    Attributes
    ----------
    recipient_, donor_, columns_, classes_, match_on_, method_:
        Resolved roles, output columns (the union schema), class and distance columns, method.
    fused_:
        The recipient table completed with donor values (one donor per recipient row, drawn
        with the stream ``seed`` given to :meth:`fit`).
    """

    def __init__(self, method: str = "auto", *, recipient: str | None = None,
                 donor: str | None = None, donation_classes: tuple[str, ...] | None = None,
                 match_on: tuple[str, ...] | None = None, k: int = 5, seed: object = 0) -> None:
        self.method, self.recipient, self.donor = method, recipient, donor
        self.donation_classes, self.match_on, self.k, self.seed = (
            donation_classes, match_on, k, seed)

    # -- fit ------------------------------------------------------------------------------
    def fit(self, sources: object) -> HotDeckMatcher:
        """Check the two sources, resolve roles and columns, index the donors per class."""
        check_choice("method", self.method, METHODS)
        check_positive_int("k", self.k)
        src = check_pair(sources)
        rec, don = resolve_roles(src, self.recipient, self.donor)
        a, b = src[rec], src[don]
        overlap = src.overlap(rec, don)
        classes, match_on = self._split_overlap(a, overlap)
        check_shared_categories(a, b, classes, (rec, don))
        method = self.method if self.method != "auto" else ("nnd" if match_on else "random")
        if method != "random" and not match_on:
            raise InvalidInputError(
                f"method {method!r} needs numeric overlap columns to measure distance, and "
                f"there are none (overlap {list(overlap)}); use method='random'")
        self.recipient_, self.donor_, self.classes_, self.match_on_ = rec, don, classes, match_on
        self.method_, self.columns_ = method, src.columns
        self.donor_only_ = tuple(c for c in b.columns if c not in a.columns)
        self._recipient_table, self._donor_table = a.reset_index(drop=True), b.reset_index(
            drop=True)
        self._index_donors()
        self.fused_ = self._complete(self._recipient_table, numpy_rng(self.seed, "fused"))
        return self

    def _split_overlap(self, a: pd.DataFrame, overlap: tuple[str, ...]
                       ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        for name, cols in (("donation_classes", self.donation_classes),
                           ("match_on", self.match_on)):
            extra = [c for c in (cols or ()) if c not in overlap]
            if extra:
                raise InvalidInputError(
                    f"{name} {extra} are not overlap columns; allowed values are {list(overlap)}")
        classes = (tuple(self.donation_classes) if self.donation_classes is not None
                   else tuple(c for c in overlap if is_categorical(a[c])))
        match_on = (tuple(self.match_on) if self.match_on is not None
                    else tuple(c for c in overlap if c not in classes))
        return classes, match_on

    def _class_keys(self, df: pd.DataFrame) -> pd.Series:
        if not self.classes_:
            return pd.Series(["all"] * len(df), index=df.index)
        return df[list(self.classes_)].astype(str).agg("\x1f".join, axis=1)

    def _index_donors(self) -> None:
        b = self._donor_table
        keys = self._class_keys(b)
        self._groups = {k: np.flatnonzero(keys.to_numpy() == k) for k in pd.unique(keys)}
        missing = sorted(set(self._class_keys(self._recipient_table)) - set(self._groups))
        if missing:
            shown = [m.split("\x1f") for m in missing[:3]]
            raise InvalidInputError(
                f"donation class(es) {shown} of columns {list(self.classes_)} have recipients "
                f"in {self.recipient_!r} but no donor in {self.donor_!r}; merge sparse "
                "categories, use fewer donation_classes, or move a column to match_on")
        self._trees: dict[str, cKDTree] = {}
        if self.method_ != "random":
            x = numeric_matrix(b, self.match_on_, self.donor_)
            sd = x.std(axis=0)
            self._scale = np.where(sd > 0, sd, 1.0)
            for k, rows in self._groups.items():
                self._trees[k] = cKDTree(x[rows] / self._scale)

    # -- matching ---------------------------------------------------------------------------
    def _donor_rows(self, recip: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
        keys = self._class_keys(recip).to_numpy()
        out = np.empty(len(recip), dtype=np.int64)
        xr = (numeric_matrix(recip, self.match_on_, self.recipient_) / self._scale
              if self.method_ != "random" else None)
        for key in pd.unique(keys):
            where = np.flatnonzero(keys == key)
            pool = self._groups[key]
            if self.method_ == "random":
                out[where] = pool[rng.integers(0, len(pool), size=len(where))]
                continue
            kk = min(len(pool), self.k if self.method_ == "rnd" else 2)
            dist, idx = self._trees[key].query(xr[where], k=kk)
            dist = np.asarray(dist).reshape(len(where), kk)
            idx = np.asarray(idx).reshape(len(where), kk)
            if self.method_ == "nnd":
                pick = self._break_ties(self._trees[key], xr[where], dist, idx[:, 0], rng)
            else:
                pick = idx[np.arange(len(where)), rng.integers(0, kk, size=len(where))]
            out[where] = pool[pick]
        return out

    @staticmethod
    def _break_ties(tree: cKDTree, x: np.ndarray, dist: np.ndarray, first: np.ndarray,
                    rng: np.random.Generator) -> np.ndarray:
        """Nearest donor, drawn at random among donors at exactly the nearest distance."""
        pick = first.copy()
        if dist.shape[1] < 2:
            return pick
        radius = dist[:, 0] * (1 + 1e-12) + 1e-12
        for i in np.flatnonzero(dist[:, 1] <= radius):  # only rows with a tie look further
            near = tree.query_ball_point(x[i], r=radius[i])
            pick[i] = near[rng.integers(0, len(near))]
        return pick

    def _complete(self, recip: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
        rows = self._donor_rows(recip, rng)
        out = recip.reset_index(drop=True).copy()
        donor_part = self._donor_table.iloc[rows][list(self.donor_only_)].reset_index(drop=True)
        for c in self.donor_only_:
            out[c] = donor_part[c].to_numpy()
        return out[list(self.columns_)]

    def sample(self, n: int, seed: object = 0) -> pd.DataFrame:
        """``n`` fused records: recipient rows drawn with replacement, each given a donor
        (``seed`` default 0: a fixed, documented stream, so ``sample(n)`` needs no seed)."""
        if not hasattr(self, "fused_"):
            raise NotFittedError("this HotDeckMatcher is not fitted; call fit(sources) first")
        check_positive_int("n", n)
        rng = numpy_rng(seed, "hotdeck", "sample")
        # too many rows: a named error, not numpy's raw MemoryError
        with memory_error_as_input_error(f"sampling n={n:,} rows"):
            rows = rng.integers(0, len(self._recipient_table), size=n)
            return self._complete(self._recipient_table.iloc[rows], rng)
