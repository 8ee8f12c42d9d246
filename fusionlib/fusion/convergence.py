"""Has a FusionGAN run learned? A held-out criterion against the noise floor of its metrics.

The appendix gives no epoch count (section C), so "trained" must be decided from data. Every
source keeps a holdout (20 %, section C) that training never reads. At a check, for every
source k, with ``m`` held-out rows ``H_k`` (at most ``rule.rows``) on its encoded columns:

- **the noise floor**, computed once: the section F MMD (biased V-statistic, so that it is
  positive and stable near 0) and the section E coverage between ``H_k`` and ``m`` *training*
  rows of source k (drawn on stream ``(seed, "floor", k)``): what two real samples of that size
  from one law give;
- **the run's scores**: the same two numbers between ``H_k`` and ``m`` generated records
  projected on source k's columns.

All three sets are standardised with ``H_k``'s column statistics. A run has **learned** at a
check when, for every source, ``MMD <= rule.mmd_factor * floor``, ``coverage <=
rule.coverage_factor * floor`` and at most ``rule.uncovered`` of the held-out rows are farther
from every generated record than twice the floor's 99th percentile of nearest-neighbour
distances (a missing mode of a few per cent hardly moves the means, but leaves its rows uncovered).
The criterion reads only what a user of the method has (the sources and their holdouts),
never the truth of a simulation; it checks the laws the sources
identify (each source's own columns), not the cross-source dependence that no source observes
(the identification study's subject).

**Weighted runs** (section D) aim at each source's law *reweighted* by its weights ``w`` (the
discriminator's optimum for a loss with weighted real terms is ``w p / (w p + q)``, so the
generator's target is ``q = w p``; the origin project's weighted sampling squares ``w``). Their
check compares the generator with that law: the held-out rows are drawn with probability
proportional to the weighting function evaluated at them
(:func:`fusionlib.fusion.weighting.weights_at`, fitted on the training rows only), and the
floor's training rows with probability proportional to the run's own training weights, both
with replacement. Checked against the unweighted law instead, a generator that has converged
to its target fails whenever the weights move much mass, exactly like one that has not learned.

The default multiples (MMD 5x, coverage 2.5x the floor, 400 held-out rows) were read off trial
runs of the FusionGAN chapter's mixture (5 seeds, 2,000 rows per source, checks every 20
epochs): generators collapsed onto one or two of the three modes sat well above them (but
generators that missed only the 5 % mode could pass them, hence the uncovered share), and
generators that had found all three modes oscillated around them from check to check (the
chapter tabulates the ratios of its own runs). The section A networks at these sizes do not
reach the floor itself: "learned" means each source's modes and scales are found, not that
the records are indistinguishable from real ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fusionlib.checks import check_positive, check_positive_int
from fusionlib.errors import InvalidInputError
from fusionlib.metrics.coverage import coverage_distances
from fusionlib.metrics.mmd import mmd
from fusionlib.rng import child, numpy_rng

__all__ = ["ConvergenceRule", "HeldoutCriterion", "DEFAULT_RULE"]


@dataclass(frozen=True)
class ConvergenceRule:
    """When a run is checked and what counts as learned.

    Attributes
    ----------
    every:
        Epochs between checks.
    mmd_factor, coverage_factor:
        A run has learned when every source's held-out MMD is at most ``mmd_factor`` times its
        floor and its coverage at most ``coverage_factor`` times its floor ...
    uncovered:
        ... and at most this share of the held-out rows is *uncovered*: farther from every
        generated record than twice the distance that 99 % of the held-out rows stay within
        from the training rows (the floor's 99th percentile of nearest-neighbour distances,
        doubled so that a sample of the law itself leaves almost no row uncovered, whatever
        the noise of that percentile). A mean such as coverage barely moves when a mode of a few
        per cent is missing; this share moves by the mode's whole weight.
    rows:
        Held-out rows per source used by a check (at most; fewer if the holdout is smaller).
    """

    every: int = 20
    mmd_factor: float = 5.0
    coverage_factor: float = 2.5
    uncovered: float = 0.03
    rows: int = 400

    def __post_init__(self) -> None:
        check_positive_int("every", self.every)
        check_positive_int("rows", self.rows)
        for name in ("mmd_factor", "coverage_factor"):
            check_positive(name, getattr(self, name))
            if getattr(self, name) < 1:
                raise InvalidInputError(f"{name} must be >= 1 (a multiple of the noise floor), "
                                        f"got {getattr(self, name)}")
        if not 0.0 < float(self.uncovered) < 1.0:
            raise InvalidInputError(f"uncovered must be a share in (0, 1), got "
                                    f"{self.uncovered!r}; e.g. 0.03")


DEFAULT_RULE = ConvergenceRule()


def _ratio(value: float, floor: float) -> float:
    """``value / floor``; a floor of 0 (two real samples that coincide, e.g. a source of few
    discrete values, where every held-out row has an exact twin) gives 0 for a value of 0 and
    inf otherwise, never a division error."""
    if floor > 0:
        return value / floor
    return 0.0 if value <= 0 else float("inf")


def _standardised(ref: np.ndarray, *arrays: np.ndarray) -> list[np.ndarray]:
    mu, sd = ref.mean(axis=0), ref.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return [(a - mu) / sd for a in arrays]


class HeldoutCriterion:
    """The held-out check of one run (see the module docstring).

    Parameters
    ----------
    train, holdout:
        Per source, the encoded training and held-out rows (n_k, |V_k|) on its own columns.
    indices:
        Per source, the schema positions of its columns (the projection of generated records).
    rule:
        A :class:`ConvergenceRule`.
    seed:
        Stream of the floor's training subsample and of the metrics' internal draws.
    names:
        Source names (for the rows of :meth:`evaluate`).
    weights:
        ``None`` (an unweighted run) or, per source, ``None`` or a pair ``(w_train,
        w_holdout)`` of positive weights of its training and held-out rows: the law the run
        aims at (see the module docstring); the rows of the check are then drawn with
        probability proportional to them, with replacement.
    """

    def __init__(self, train: Sequence[np.ndarray], holdout: Sequence[np.ndarray],
                 indices: Sequence[Sequence[int]], rule: ConvergenceRule = DEFAULT_RULE, *,
                 seed: object = 0, names: Sequence[str] | None = None,
                 weights: Sequence[tuple[np.ndarray, np.ndarray] | None] | None = None
                 ) -> None:
        if not (len(train) == len(holdout) == len(indices)):
            raise InvalidInputError("give training rows, held-out rows and indices per source")
        weights = [None] * len(train) if weights is None else list(weights)
        if len(weights) != len(train):
            raise InvalidInputError(f"give weights for each of the {len(train)} sources (or "
                                    f"None), got {len(weights)}")
        self.rule, self.seed = rule, seed
        self.indices = [list(i) for i in indices]
        self.names = [str(n) for n in (names or range(len(train)))]
        self.holdout, self.floors, self.radius = [], [], []
        for k, (tr, ho) in enumerate(zip(train, holdout, strict=True)):
            tr, ho = np.asarray(tr, dtype=np.float64), np.asarray(ho, dtype=np.float64)
            self._check_columns(self.names[k], tr, ho, self.indices[k])
            m = min(rule.rows, len(ho), len(tr))
            if m < 10:
                raise InvalidInputError(
                    f"source {self.names[k]!r} has {len(ho)} held-out rows; the convergence "
                    "check needs at least 10 (raise holdout or give more rows)")
            if weights[k] is None:
                h = ho[numpy_rng(seed, "holdout-rows", k).choice(len(ho), m, replace=False)]
                t = tr[numpy_rng(seed, "floor", k).choice(len(tr), m, replace=False)]
            else:
                w_tr, w_ho = (self._probabilities(self.names[k], part, w, len(rows))
                              for part, w, rows in zip(("training", "held-out"), weights[k],
                                                       (tr, ho), strict=True))
                h = ho[numpy_rng(seed, "holdout-rows", k).choice(len(ho), m, p=w_ho)]
                t = tr[numpy_rng(seed, "floor", k).choice(len(tr), m, p=w_tr)]
            hs, ts = _standardised(h, h, t)
            self.holdout.append(h)
            m_floor, dist = self._scores(hs, ts, child(seed, "floor-metric", k))
            self.floors.append((m_floor, float(dist.mean())))
            self.radius.append(2.0 * float(np.quantile(dist, 0.99)))

    @staticmethod
    def _check_columns(name: str, tr: np.ndarray, ho: np.ndarray, idx: list) -> None:
        """The training and held-out rows of one source: tables of one width, and one distinct
        schema position >= 0 per column (a wrong count broadcast silently before)."""
        for part, rows in (("training", tr), ("held-out", ho)):
            if rows.ndim != 2:
                raise InvalidInputError(f"source {name!r}: the {part} rows must be a table "
                                        f"(n, columns), got shape {rows.shape}")
        if tr.shape[1] != ho.shape[1]:
            raise InvalidInputError(f"source {name!r}: training rows have {tr.shape[1]} "
                                    f"columns, held-out rows {ho.shape[1]}; give both on the "
                                    "source's own encoded columns")
        if len(idx) != tr.shape[1]:
            raise InvalidInputError(f"source {name!r} has {tr.shape[1]} columns but "
                                    f"{len(idx)} indices {idx}; give one schema position per "
                                    "column")
        if not all(isinstance(i, int | np.integer) and not isinstance(i, bool) and i >= 0
                   for i in idx) or len(set(idx)) != len(idx):
            raise InvalidInputError(f"indices of source {name!r} must be distinct column "
                                    f"positions >= 0 in the generated records, got {idx}")

    @staticmethod
    def _probabilities(name: str, part: str, w: object, n: int) -> np.ndarray:
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (n,) or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
            raise InvalidInputError(
                f"source {name!r}: the {part} weights must be {n} finite non-negative numbers "
                f"with a positive sum (one per row), got shape {w.shape}")
        return w / w.sum()

    @property
    def rows(self) -> int:
        """Generated records a check needs (the largest per-source sample)."""
        return max(len(h) for h in self.holdout)

    @staticmethod
    def _scores(h: np.ndarray, s: np.ndarray, seed: object) -> tuple[float, np.ndarray]:
        """Biased MMD and the held-out rows' nearest-neighbour distances (their mean is the
        section E coverage).

        The MMD's bandwidth is the median heuristic's. Where over half of the pooled rows
        coincide (a source of one constant value, or of very few) the median distance is 0 and
        there is no such bandwidth: the rows are standardised by the held-out rows' spread, so
        the bandwidth is then one unit (``gamma = 1/2``); two samples that coincide still give
        0, whatever the bandwidth."""
        try:
            m = mmd(h, s, unbiased=False, seed=seed)
        except InvalidInputError:  # no median bandwidth (any other bad input fails again here)
            m = mmd(h, s, unbiased=False, seed=seed, gamma=0.5)
        return m.mmd, coverage_distances(h, s)

    def evaluate(self, generated: np.ndarray, *, seed: object = 0) -> pd.DataFrame:
        """One row per source: ``mmd``, ``mmd_floor``, ``coverage``, ``coverage_floor``, the
        ratios, the ``uncovered`` share and ``learned`` (all three within the rule), from
        encoded generated records (n, |V|) with n >= :attr:`rows`."""
        x = np.asarray(generated, dtype=np.float64)
        if x.ndim != 2 or len(x) < self.rows:
            raise InvalidInputError(f"a check needs at least {self.rows} generated records "
                                    f"(n, |V|), got shape {x.shape}")
        for name, idx in zip(self.names, self.indices, strict=True):
            if max(idx, default=-1) >= x.shape[1]:
                raise InvalidInputError(
                    f"generated records have {x.shape[1]} columns; source {name!r} reads "
                    f"column {max(idx)} (its indices {idx}): give records on the whole schema")
        rows = []
        for k, (h, idx) in enumerate(zip(self.holdout, self.indices, strict=True)):
            hs, ss = _standardised(h, h, x[:len(h), idx])
            m, dist = self._scores(hs, ss, child(seed, "check-metric", k))
            fm, fc = self.floors[k]
            c = float(dist.mean())
            rows.append({"source": self.names[k], "mmd": m, "mmd_floor": fm,
                         "coverage": c, "coverage_floor": fc, "mmd_ratio": _ratio(m, fm),
                         "coverage_ratio": _ratio(c, fc),
                         "uncovered": float((dist > self.radius[k]).mean())})
        out = pd.DataFrame(rows)
        out["learned"] = ((out["mmd_ratio"] <= self.rule.mmd_factor)
                          & (out["coverage_ratio"] <= self.rule.coverage_factor)
                          & (out["uncovered"] <= self.rule.uncovered))
        return out

    def learned(self, generated: np.ndarray, *, seed: object = 0) -> bool:
        """Whether every source passes the check."""
        return bool(self.evaluate(generated, seed=seed)["learned"].all())
