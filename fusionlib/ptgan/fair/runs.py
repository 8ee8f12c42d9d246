"""One run of the fair data generation study (seed 001, Section 5.2, Appendix D.3).

A run trains one model on the 90% training split of a dataset and scores synthetic sets drawn
from its *last iterate* with the three downstream classifiers on the real 10% test split
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

import numpy as np
import pandas as pd

from fusionlib.checks import check_choice, check_positive_int
from fusionlib.encoding.tabular import TabularEncoder
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.fair.baselines import FairnessPenalty, geometric_repair, repair_levels
from fusionlib.ptgan.fair.evaluation import evaluate_set
from fusionlib.ptgan.fair.mixing import FAIR_R, GroupMixing
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


def _model(method: str, table: FairTable, n_iter: int, batch_size: int, seed: object,
           device: str):
    from fusionlib.ptgan.tabular.model import TabularPTGAN

    if method == "fairptgan":
        return TabularPTGAN("pt+cp", "nd", discrete_columns=table.discrete_columns,
                            n_iter=n_iter, overrides={"r": FAIR_R, "batch_size": batch_size},
                            minibatch=GroupMixing(table.sensitive, table.privileged),
                            seed=seed, device=device)
    return TabularPTGAN("gp", "nd", discrete_columns=table.discrete_columns, n_iter=n_iter,
                        overrides={"batch_size": batch_size}, seed=seed, device=device)


def _fairptgan_sets(model, scorer: _Scorer, n_sets: int, n_rows: int, seed: object) -> list:
    rows = []
    for k, alpha in enumerate(np.linspace(0.5, 1.0, n_sets)):
        syn = model.sample(n_rows, child(seed, "set", k), alpha=float(alpha))
        rows += scorer.score(scorer.features(syn), syn[scorer.table.target].to_numpy(),
                             ("fairptgan", k), method="FairPTGAN", set=k, level=float(alpha))
    levels = repair_levels(5)
    for k in range(n_sets):
        lam = float(levels[k % len(levels)])
        syn = model.sample(n_rows, child(seed, "geo", k), alpha=1.0)
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


def run_fair(method: str, table: FairTable, *, seed: object, n_iter: int, n_sets: int,
             n_rows: int, batch_size: int = 200, n_test: int | None = None,
             device: str = "cpu") -> tuple[pd.DataFrame, dict]:
    """Train ``method`` (``fairptgan`` or ``fairwgangp``) on one split and score its sets.

    The ``fairptgan`` run also scores ``n_rows`` real training rows (method "Real data"), the
    reference a synthetic set of the same size is measured against.

    Returns the per-set scores (method, set, level, classifier, auc, sp, positive_rate) and
    timings ``{"train_s", "eval_s", "n_train", "n_test"}``. ``n_test`` caps the test rows
    (smoke runs); None keeps the whole 10% split.
    """
    from fusionlib.ptgan.utility import split_train_test

    check_choice("method", method, ("fairptgan", "fairwgangp"))
    for name, value in (("n_iter", n_iter), ("n_sets", n_sets), ("n_rows", n_rows)):
        check_positive_int(name, value)
    if method == "fairptgan" and n_sets < 5:
        raise InvalidInputError(f"n_sets must be >= 5 (one GeoRepair set per lambda_p), got "
                                f"{n_sets}")
    train, test = split_train_test(table.frame, child(seed, "split"))
    if n_test is not None and n_test < len(test):
        test = test.iloc[:n_test]
    scorer = _Scorer(table, test, seed)
    t0 = time.perf_counter()
    model = _model(method, table, n_iter, batch_size, child(seed, "model"), device)
    model.fit(train)
    if method == "fairwgangp":  # second phase: T / 2 more iterations with the penalty
        model.fit_more(n_iter + n_iter // 2, generator_term=FairnessPenalty(
            table.sensitive, table.privileged, table.target, "1"))
    t1 = time.perf_counter()
    if method == "fairptgan":
        rows = _fairptgan_sets(model, scorer, n_sets, n_rows, seed)
        # reference: the same classifiers on n_rows real training rows (the sets' size)
        real = train.sample(n=min(n_rows, len(train)), random_state=seed_int(seed, "real"))
        rows += scorer.score(scorer.features(real), real[table.target].to_numpy(), ("real",),
                             method="Real data", set=0, level=np.nan)
    else:
        rows = []
        for k in range(n_sets):
            syn = model.sample(n_rows, child(seed, "set", k))
            rows += scorer.score(scorer.features(syn), syn[table.target].to_numpy(),
                                 ("fairwgangp", k), method="FairWGANGP", set=k, level=np.nan)
    timing = {"train_s": t1 - t0, "eval_s": time.perf_counter() - t1, "n_train": len(train),
              "n_test": len(test)}
    return pd.DataFrame(rows), timing
