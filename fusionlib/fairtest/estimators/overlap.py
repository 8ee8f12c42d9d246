"""Models of the form p(o) * p_hat(x_int | o) * p_hat(x_ext | o) (seed 002, Sections 3.1.1-3.1.2).

Independence Given Overlap and Marginal Preservation differ only in the overlap distribution
p(o); both take each side's conditional straight from its table. The conditionals are the
*whole-table* conditionals of each side's own columns given the overlap, stored sparsely as
the observed combinations with their counts (never as a product of cardinalities), so that
sampling is: draw o, then draw one observed row of each side among the rows with that o.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.estimators.base import JointEstimator
from fusionlib.fairtest.estimators.validation import EncodedPair, unique_rows

__all__ = ["OverlapFactorisation", "SideTable"]


def lookup(table: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Row index of each ``query`` row in ``table`` (rows unique), -1 where absent.

    Parameters
    ----------
    table : ndarray of int, shape (u, w)
    query : ndarray of int, shape (m, w)
    """
    index = pd.MultiIndex.from_arrays(list(table.T))
    return index.get_indexer(pd.MultiIndex.from_arrays(list(query.T)))


@dataclass(frozen=True)
class SideTable:
    """Sparse conditional table p_hat(own columns | overlap combination) of one side.

    Attributes
    ----------
    keys : ndarray of int64, shape (u,)
        Overlap-combination index of each observed (o, own) combination, sorted.
    own : ndarray of int64, shape (u, d_own)
        Codes of the side's own columns for each observed combination.
    counts : ndarray of float64, shape (u,)
        Number of rows with that combination.
    totals : ndarray of float64, shape (n_combos,)
        Rows with each overlap combination (0 where the side never shows it).
    start : ndarray of int64, shape (n_combos,)
        First position of each overlap combination in ``keys``.
    """

    keys: np.ndarray
    own: np.ndarray
    counts: np.ndarray
    totals: np.ndarray
    start: np.ndarray

    @classmethod
    def build(cls, keys: np.ndarray, own: np.ndarray, n_combos: int) -> SideTable:
        rows, _, counts = unique_rows(np.column_stack([keys, own]))
        ukeys = rows[:, 0].copy()
        counts = counts.astype(np.float64)
        return cls(
            keys=ukeys,
            own=rows[:, 1:].copy(),
            counts=counts,
            totals=np.bincount(ukeys, weights=counts, minlength=n_combos),
            start=np.searchsorted(ukeys, np.arange(n_combos)),
        )

    @property
    def conditional(self) -> np.ndarray:
        """p_hat(own | o) of each stored combination, shape (u,)."""
        return self.counts / self.totals[self.keys]

    def sample(self, keys: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Draw own-column codes given overlap keys (inverse CDF within each key's block)."""
        cum = np.cumsum(self.counts)
        before = np.concatenate([[0.0], cum])[self.start]
        target = before[keys] + rng.random(len(keys)) * self.totals[keys]
        idx = np.searchsorted(cum, target, side="right")
        last = self.start + np.bincount(self.keys, minlength=len(self.totals)) - 1
        idx = np.clip(idx, self.start[keys], last[keys])
        return self.own[idx]

    def proba(self, keys: np.ndarray, own: np.ndarray) -> np.ndarray:
        """p_hat(own | o) for query rows; 0 for unseen combinations."""
        pos = lookup(np.column_stack([self.keys, self.own]), np.column_stack([keys, own]))
        out = np.zeros(len(keys))
        found = pos >= 0
        out[found] = self.conditional[pos[found]]
        return out


class OverlapFactorisation(JointEstimator):
    """Base of the p(o) p_hat(x_int | o) p_hat(x_ext | o) family; subclasses choose p(o).

    Fitted attributes: ``overlap_combinations_`` (DataFrame of the overlap combinations seen
    in either table), ``overlap_proba_`` (p(o) of each, shape (n_combos,)), and the base
    attributes of :class:`JointEstimator`.
    """

    def _overlap_weights(self, p_internal: np.ndarray, p_external: np.ndarray) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover

    def _fit(self, pair: EncodedPair) -> None:
        k = len(pair.overlap)
        combos, inverse, _ = unique_rows(
            np.vstack([pair.internal_codes[:, :k], pair.external_codes[:, :k]])
        )
        n_int = len(pair.internal_codes)
        key_int, key_ext = inverse[:n_int], inverse[n_int:]
        self._int = SideTable.build(key_int, pair.internal_codes[:, k:], len(combos))
        self._ext = SideTable.build(key_ext, pair.external_codes[:, k:], len(combos))
        weights = self._overlap_weights(
            self._int.totals / self._int.totals.sum(), self._ext.totals / self._ext.totals.sum()
        )
        self._check_support(combos, weights, pair.overlap)
        self._combos = combos
        self.overlap_proba_ = weights
        self.overlap_combinations_ = self._decode(combos, pair.overlap)

    def _check_support(self, combos, weights, overlap) -> None:
        for name, side in (("internal", self._int), ("external", self._ext)):
            bad = np.flatnonzero((weights > 0) & (side.totals == 0))
            if len(bad):
                shown = self._decode(combos[bad[:5]], overlap).to_dict("records")
                raise InvalidInputError(
                    f"overlap combinations {shown} (of {len(bad)}) need rows in the {name} "
                    f"table but it has none, so p({name} columns | overlap) is undefined "
                    "there; merge rare categories of the overlap columns or drop those rows"
                )

    def _positions(self) -> tuple[list[int], list[int], list[int]]:
        """Output positions of the overlap, internal-only and external-only columns."""
        where = {c: j for j, c in enumerate(self.columns_)}
        return (
            [where[c] for c in self.overlap_],
            [where[c] for c in self.internal_only_],
            [where[c] for c in self.external_only_],
        )

    def _sample_codes(self, n: int, rng: np.random.Generator) -> np.ndarray:
        keys = rng.choice(len(self._combos), size=n, p=self.overlap_proba_)
        pos_o, pos_i, pos_e = self._positions()
        out = np.empty((n, len(self.columns_)), dtype=np.int64)
        out[:, pos_o] = self._combos[keys]
        out[:, pos_i] = self._int.sample(keys, rng)
        out[:, pos_e] = self._ext.sample(keys, rng)
        return out

    def _joint_proba_codes(self, codes: np.ndarray) -> np.ndarray:
        pos_o, pos_i, pos_e = self._positions()
        keys = lookup(self._combos, codes[:, pos_o])
        out = np.zeros(len(codes))
        ok = keys >= 0
        k = keys[ok]
        out[ok] = (
            self.overlap_proba_[k]
            * self._int.proba(k, codes[ok][:, pos_i])
            * self._ext.proba(k, codes[ok][:, pos_e])
        )
        return out

    def _side_marginal(self, side: SideTable, own_cols: list[str], wanted: list[str]):
        """p_hat(wanted | o) as a DataFrame with columns key, *wanted, p."""
        frame = pd.DataFrame(side.own, columns=own_cols)
        frame["key"] = side.keys
        frame["p"] = side.conditional
        return frame.groupby(["key", *wanted], sort=False, as_index=False)["p"].sum()

    def _proba_table(self, columns: list[str]) -> pd.DataFrame:
        overlap = pd.DataFrame(self._combos, columns=self.overlap_)
        overlap["key"] = np.arange(len(self._combos))
        overlap["p"] = self.overlap_proba_
        keep = ["key", *[c for c in columns if c in self.overlap_], "p"]
        merged = overlap[overlap["p"] > 0][keep]
        for side, own in ((self._int, self.internal_only_), (self._ext, self.external_only_)):
            wanted = [c for c in columns if c in own]
            part = self._side_marginal(side, own, wanted)
            merged = merged.merge(part, on="key", suffixes=("", "_side"))
            merged["p"] = merged["p"] * merged.pop("p_side")
        table = merged.groupby(columns, as_index=False)["p"].sum()
        result = self._decode(table[columns].to_numpy(), columns)
        result["proba"] = table["p"].to_numpy()
        return result
