"""One run of the fair data generation study (seed 001, Section 5.2, Appendix D.3).

A run trains R repetitions of one method as one stacked model
(:class:`~fusionlib.ptgan.fair.stacked.StackedFairGAN`), each on the 90% training split of its
own seed, and scores synthetic sets drawn from each repetition's *last iterate* with the three
downstream classifiers on that repetition's real 10% test split
(:mod:`fusionlib.ptgan.fair.evaluation`):

``fairptgan``
    FairPTGAN (PT+CP with Algorithm 2's minibatches, r = 0.2, batch 200) for ``T`` iterations.
    Its sets are drawn at ``n_sets`` equally spaced levels ``alpha`` in [0.5, 1] (one set per
    level: the same model at every fairness level; ``alpha`` and ``1 - alpha`` give the same
    law). GeoRepair is applied to the same model's ``alpha = 1`` samples: ``n_sets`` further
    sets, an equal number at each of the 5 levels ``lambda_p``. Geometric repair as published
    (Feldman et al. 2015) repairs the data the classifier is trained on *and* the data it is
    applied to: method ``GeoRepair`` repairs the synthetic training covariates and, at the same
    ``lambda_p``, the test covariates (each set by its own group distributions; the groups of
    the test rows are known, as SP needs them). ``GeoRepair (train only)`` repairs only the
    synthetic training covariates and scores the unrepaired test rows (this package's earlier
    variant, kept for comparison; the chapter says which is compared).
``fairwgangp``
    WGAN-GP (one critic step, lambda 10, batch 200) for ``T`` iterations, then ``T / 2`` more
    with the fairness penalty (``lambda_f = 10``); ``n_sets`` sets from ``G^(1.5 T)``.

The classifiers see the covariates ``C`` only (every column but the label and the sensitive
attribute), encoded as the generator's input layout (continuous columns in [-1, 1], one-hot
categories) by an encoder whose layout is fitted on the whole table (so that a test row with a
category absent from a synthetic set still encodes).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fusionlib.checks import check_choice, check_positive_int
from fusionlib.encoding.tabular import TabularEncoder
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.fair.baselines import geometric_repair, repair_levels
from fusionlib.ptgan.fair.evaluation import evaluate_set
from fusionlib.rng import child, seed_int

__all__ = ["FAIR_DATASETS", "FairTable", "fair_table", "run_fair"]

#: dataset -> (sensitive column, its level that is A = 1); Adult: race binarised to White /
#: Non-white; Law School: "White" derived from Race (Race then dropped), as Appendix D.3 says
FAIR_DATASETS: dict[str, tuple[str, str]] = {"adult": ("race", "White"),
                                             "law_school": ("White", "1")}


@dataclass(frozen=True)
class FairTable:
    """A table prepared for fair generation: binary label ``target`` (0/1) and sensitive
    attribute ``sensitive`` (``privileged`` is ``A = 1``)."""

    name: str
    frame: pd.DataFrame
    target: str
    discrete_columns: tuple[str, ...]
    sensitive: str
    privileged: str


def fair_table(name: str) -> FairTable:
    """Load ``name`` (``adult`` or ``law_school``) with its sensitive attribute binarised."""
    from fusionlib.ptgan.tabular.data import load_tabular  # lazy: reads the data files

    check_choice("dataset", name, tuple(FAIR_DATASETS))
    data = load_tabular(name)
    frame = data.frame.copy()
    sensitive, privileged = FAIR_DATASETS[name]
    discrete = list(data.discrete_columns)
    if name == "adult":
        frame["race"] = np.where(frame["race"] == "White", "White", "Non-white")
    else:
        frame.insert(0, "White", np.where(frame["Race"].str.lower() == "white", "1", "0"))
        frame = frame.drop(columns=["Race"])
        discrete = ["White", *(c for c in discrete if c != "Race")]
    return FairTable(name, frame, data.target, tuple(discrete), sensitive, privileged)


class _Scorer:
    """Encodes covariates and scores synthetic sets against the real test rows."""

    def __init__(self, table: FairTable, test: pd.DataFrame, seed: object) -> None:
        self.table, self.seed = table, seed
        self.encoder = TabularEncoder(table.discrete_columns).fit(table.frame)
        drop = {table.target, table.sensitive}
        self.keep = np.concatenate([np.arange(s.start, s.stop) for s in self.encoder.spans_
                                    if s.column not in drop])
        self.x_test = self.features(test)
        self.y_test = test[table.target].to_numpy()
        self.a_test = self.group(test)
        self._repaired: dict[float, np.ndarray] = {}

    def features(self, frame: pd.DataFrame) -> np.ndarray:
        return self.encoder.transform(frame)[:, self.keep].astype(np.float64)

    def group(self, frame: pd.DataFrame) -> np.ndarray:
        return (frame[self.table.sensitive].astype(str) == self.table.privileged).to_numpy(int)

    def repaired_test(self, lam: float) -> np.ndarray:
        """The test covariates repaired at level ``lam`` (by their own group distributions)."""
        if lam not in self._repaired:
            self._repaired[lam] = geometric_repair(self.x_test, self.a_test, lam)
        return self._repaired[lam]

    def score(self, x: np.ndarray, y: np.ndarray, key: tuple, *,
              x_test: np.ndarray | None = None, **labels: object) -> list[dict]:
        scores = evaluate_set(x, y, self.x_test if x_test is None else x_test, self.y_test,
                              self.a_test, seed=child(self.seed, "classifiers", *key))
        return [{**labels, "classifier": s.classifier, "auc": s.auc, "sp": s.sp,
                 "positive_rate": s.positive_rate} for s in scores]


def _split_rows(n: int, seed: object) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the training and test rows of the 90/10 split on ``(seed, "split")``
    (those of :func:`~fusionlib.ptgan.utility.split_train_test`, in increasing order)."""
    from fusionlib.ptgan.utility import split_train_test

    train, test = split_train_test(pd.DataFrame({"pos": np.arange(n)}), child(seed, "split"))
    return train["pos"].to_numpy(), test["pos"].to_numpy()


def _fairptgan_sets(draw, scorer: _Scorer, n_sets: int) -> list:
    """The FairPTGAN and GeoRepair sets of one repetition; ``draw(stream, k, alpha)`` gives its
    synthetic rows on the stream ``(seed, stream, k)``."""
    rows = []
    for k, alpha in enumerate(np.linspace(0.5, 1.0, n_sets)):
        syn = draw("set", k, float(alpha))
        rows += scorer.score(scorer.features(syn), syn[scorer.table.target].to_numpy(),
                             ("fairptgan", k), method="FairPTGAN", set=k, level=float(alpha))
    levels = repair_levels(5)
    for k in range(n_sets):
        lam = float(levels[k % len(levels)])
        syn = draw("geo", k, 1.0)
        x, g = scorer.features(syn), scorer.group(syn)
        # with one group only, the median over groups is that group: the repair is the identity
        if 0 < g.sum() < len(g):
            x = geometric_repair(x, g, lam)
        y = syn[scorer.table.target].to_numpy()
        # the same classifiers (same seed), scored on repaired and on unrepaired test rows
        rows += scorer.score(x, y, ("georepair", k), x_test=scorer.repaired_test(lam),
                             method="GeoRepair", set=k, level=lam)
        rows += scorer.score(x, y, ("georepair", k), method="GeoRepair (train only)", set=k,
                             level=lam)
    return rows


class _Draws:
    """Synthetic sets of every repetition, drawn together and handed out one repetition at a
    time (repetition r's set k on ``(seeds[r], stream, k)``, as a separate run draws it)."""

    def __init__(self, model, seeds: list, n_rows: int) -> None:
        self.model, self.seeds, self.n_rows = model, seeds, n_rows
        self._cache: dict[tuple, np.ndarray] = {}

    def __call__(self, r: int, stream: str, k: int, alpha: float) -> pd.DataFrame:
        key = (stream, k, alpha)
        if key not in self._cache:
            self._cache[key] = self.model.sample_encoded(
                self.n_rows, [child(s, stream, k) for s in self.seeds], alpha=alpha)
        # decoded one repetition at a time: a diverged repetition's draws are never decoded
        return self.model.encoder_.inverse_transform(self._cache[key][r])


def run_fair(method: str, table: FairTable, *, seeds: list, n_iter: int, n_sets: int,
             n_rows: int, batch_size: int = 200, n_test: int | None = None,
             device: str = "cpu", checkpoint: str | None = None,
             checkpoint_every: int = 0) -> tuple[pd.DataFrame, dict]:
    """Train ``method`` (``fairptgan`` or ``fairwgangp``) for every seed of ``seeds`` as one
    stacked model (:class:`~fusionlib.ptgan.fair.stacked.StackedFairGAN`), each repetition on
    its own 90/10 split, and score each repetition's sets on its own test rows.

    The generator's encoding is fitted on the whole table: the stacked model trains every
    repetition on one encoded matrix (its rows selected per repetition), so the repetitions
    share one encoding; a separate run fits it on its training rows (on Adult the two are the
    same: the training rows hold every category and both ends of every range). A ``fairptgan``
    repetition also scores ``n_rows`` real training rows (method "Real data"), the reference a
    synthetic set of the same size is measured against. A repetition whose loss turned
    non-finite (the others train on) is not scored: ``timing["diverged"]`` names it with the
    iteration.

    Returns the per-set scores (rep_index: position in ``seeds``; method, set, level,
    classifier, auc, sp, positive_rate) and timings ``{"train_s", "eval_s", "n_train",
    "n_test", "n_reps", "resumed_at", "diverged"}`` (resumed_at: the iteration of the
    checkpoint the run resumed from, 0: none; diverged: repetition index -> iteration).
    ``n_test`` caps the test rows (smoke runs); None keeps the whole 10 % split.
    ``checkpoint``: resume from and save to this file every ``checkpoint_every`` iterations
    (removed once the run is scored).
    """
    from fusionlib.ptgan.fair.stacked import StackedFairGAN, checkpoint_iteration

    check_choice("method", method, ("fairptgan", "fairwgangp"))
    for name, value in (("n_iter", n_iter), ("n_sets", n_sets), ("n_rows", n_rows)):
        check_positive_int(name, value)
    if method == "fairptgan" and n_sets < 5:
        raise InvalidInputError(f"n_sets must be >= 5 (one GeoRepair set per lambda_p), got "
                                f"{n_sets}")
    if not isinstance(seeds, (list, tuple)) or not seeds:
        raise InvalidInputError("seeds must be a non-empty list (one seed per repetition)")
    frame = table.frame
    splits = [_split_rows(len(frame), s) for s in seeds]
    tests = [frame.iloc[te[:n_test] if n_test is not None else te].reset_index(drop=True)
             for _, te in splits]
    scorers = [_Scorer(table, test, s) for test, s in zip(tests, seeds, strict=True)]
    t0 = time.perf_counter()
    model = StackedFairGAN(method, sensitive=table.sensitive, privileged=table.privileged,
                           seeds=[child(s, "model") for s in seeds],
                           discrete_columns=table.discrete_columns, n_iter=n_iter,
                           batch_size=batch_size, device=device, checkpoint_path=checkpoint,
                           checkpoint_every=checkpoint_every)
    rows = np.stack([tr for tr, _ in splits])
    resumed_at = checkpoint_iteration(checkpoint)
    if method == "fairwgangp":  # second phase: T / 2 more iterations with the penalty
        model.fit_two_phases(frame, rows=rows, total=n_iter + n_iter // 2, target=table.target,
                             positive="1")
    else:
        model.fit(frame, rows=rows)
    t1 = time.perf_counter()
    draws = _Draws(model, list(seeds), n_rows)
    diverged = model.diverged_
    out = []
    for r, (seed, scorer) in enumerate(zip(seeds, scorers, strict=True)):
        if r in diverged:
            continue
        if method == "fairptgan":
            part = _fairptgan_sets(lambda stream, k, a, r=r: draws(r, stream, k, a), scorer,
                                   n_sets)
            # reference: the same classifiers on n_rows real training rows (the sets' size)
            train = frame.iloc[splits[r][0]].reset_index(drop=True)
            real = train.sample(n=min(n_rows, len(train)), random_state=seed_int(seed, "real"))
            part += scorer.score(scorer.features(real), real[table.target].to_numpy(),
                                 ("real",), method="Real data", set=0, level=np.nan)
        else:
            part = []
            for k in range(n_sets):
                syn = draws(r, "set", k, 1.0)
                part += scorer.score(scorer.features(syn), syn[table.target].to_numpy(),
                                     ("fairwgangp", k), method="FairWGANGP", set=k,
                                     level=np.nan)
        out += [{**row, "rep_index": r} for row in part]
    timing = {"train_s": t1 - t0, "eval_s": time.perf_counter() - t1,
              "n_train": int(rows.shape[1]), "n_test": len(tests[0]), "n_reps": len(seeds),
              "resumed_at": resumed_at, "diverged": {int(r): int(it) for r, it in
                                                      sorted(diverged.items())}}
    if checkpoint is not None:
        Path(checkpoint).unlink(missing_ok=True)
    return pd.DataFrame(out), timing
