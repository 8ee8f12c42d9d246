"""One benchmark across the papers: every generator on seed 002's separated-data tasks.

A *task* is one dataset of seed 002 (Adult, COMPAS, German credit) with one Table 2 separation:
the discretised training rows split by column into an internal and an external table sharing
one overlap attribute, a real test set ``D_test`` (30 %, Section 4.2) and the audited decision
tree trained on the internal table. Every generator of the compendium is fitted on what it can
use and draws ``len(D_test)`` synthetic rows (capped by ``n_eval``), scored against ``D_test``
with:

- seed 002's fidelity metrics (1-TVD, CS, DM; KL of ``p(A, Y)`` averaged over the protected
  attributes; :mod:`fusionlib.metrics.fidelity`);
- seed 002's fairness gaps ``|metric(synthetic) - metric(D_test)|`` of DI, AOD and EOD under the
  task's tree, averaged over the protected attributes (point values, not Table 9's bootstrap
  means);
- seed 000's coverage (mean nearest-neighbour distance from real to synthetic rows) and MMD
  (RBF kernel, median heuristic), on the one-hot encoding of both tables (fitted on ``D_test``);
- the wall time of ``fit``.

FusionGAN trains until the held-out check of :mod:`fusionlib.fusion.convergence` passes (its
``fusion_epochs`` are a budget); its rows say whether it ``learned`` and at which epoch.

Generators (:data:`GENERATORS`) and what they are given:

===========  ==========================================  ========================
name         model                                        trained on
===========  ==========================================  ========================
Indep        seed 002 Independent baseline                the two tables
IGO          seed 002 Independence given Overlap          the two tables
Marginal     seed 002 Marginal Preservation               the two tables
Latent       seed 002 latent naive Bayes (EM)             the two tables
CIA match    random hot-deck within overlap classes       the two tables
FusionGAN    seed 000 (one critic per table)              the two tables
CTGAN        seed 002 baseline                            the complete training table
PTGAN        seed 001 tabular PTGAN (pt+cp)               the complete training table
===========  ==========================================  ========================

CTGAN and PTGAN see the *complete* training rows, which no other generator does (seed 002 gives
CTGAN this advantage too, Section 4.3): they are reference points, not competitors on the task.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fusionlib.checks import check_choice
from fusionlib.data.sources import SourceSet
from fusionlib.fairtest.audit import train_audited_tree
from fusionlib.fairtest.protocol.records import Prepared
from fusionlib.fairtest.protocol.runs import ProtocolConfig, make_estimator, prepare
from fusionlib.fairtest.separation import separate
from fusionlib.metrics.fairness import fairness_metrics
from fusionlib.metrics.fidelity import (
    ContingencySimilarity,
    DiscriminatorMeasure,
    JointKL,
    TVComplement,
)
from fusionlib.rng import child, seed_int

__all__ = ["GENERATORS", "COMPLETE_DATA", "SCORE_COLUMNS", "BenchSettings", "make_generator",
           "score", "run_task", "run_generator"]

GENERATORS: tuple[str, ...] = ("Indep", "IGO", "Marginal", "Latent", "CIA match", "FusionGAN",
                               "CTGAN", "PTGAN")
#: generators fitted on the complete training table (a reference, not the two-table task)
COMPLETE_DATA: tuple[str, ...] = ("CTGAN", "PTGAN")
SCORE_COLUMNS: tuple[str, ...] = ("fit_s", "1-TVD", "CS", "DM", "KL(A,Y)", "|dDI|", "|dAOD|",
                                  "|dEOD|", "coverage", "MMD")
_SEED002 = {"Indep": "Indep", "IGO": "IGO", "Marginal": "Marginal", "Latent": "Latent",
            "CTGAN": "CTGAN"}


@dataclass(frozen=True)
class BenchSettings:
    """Knobs of one benchmark run (see ``fusionlib.studies.benchmark.cells.BENCH_CONFIG``)."""

    max_rows: int | None = None  # rows of the dataset (None: all)
    n_eval: int = 2000  # synthetic / test rows scored (coverage and MMD are O(n^2))
    ctgan_epochs: int = 300
    ctgan_max_rows: int | None = None
    fusion_epochs: int = 100  # FusionGAN's budget: it stops at the first passing held-out check
    fusion_every: int = 10  # epochs between FusionGAN's held-out checks
    fusion_max_rows: int | None = None
    ptgan_iter: int = 1000
    ptgan_max_rows: int | None = None
    dm_n_estimators: int = 50


def _cap(df: pd.DataFrame, n: int | None, seed: Any, key: str) -> pd.DataFrame:
    if n is None or len(df) <= n:
        return df
    return df.sample(n, random_state=seed_int(seed, key)).reset_index(drop=True)


def make_generator(name: str, s: BenchSettings, *, seed: Any, columns: list[str]) -> Any:
    """A fresh, unfitted generator ``name`` (one of :data:`GENERATORS`)."""
    check_choice("generator", name, GENERATORS)
    if name in _SEED002:
        cfg = ProtocolConfig(ctgan_epochs=s.ctgan_epochs, ctgan_max_rows=s.ctgan_max_rows,
                             latent_restarts=1)
        return make_estimator(_SEED002[name], cfg, seed=seed)
    if name == "CIA match":
        from fusionlib.matching import HotDeckMatcher

        return HotDeckMatcher(method="random", seed=seed_int(seed, "hotdeck"))
    if name == "FusionGAN":
        from fusionlib.fusion.convergence import ConvergenceRule
        from fusionlib.fusion.synthesizer import FusionGAN

        return FusionGAN(epochs=s.fusion_epochs, discrete_columns=tuple(columns),
                         convergence=ConvergenceRule(every=s.fusion_every),
                         seed=seed_int(seed, "fusiongan"))
    from fusionlib.ptgan.tabular.model import TabularPTGAN

    return TabularPTGAN(method="pt+cp", discrete_columns=tuple(columns), n_iter=s.ptgan_iter,
                        seed=child(seed, "ptgan"))


def _training_data(name: str, prep: Prepared, overlap: str, s: BenchSettings, seed: Any):
    if name in COMPLETE_DATA:
        rows = s.ctgan_max_rows if name == "CTGAN" else s.ptgan_max_rows
        return _cap(prep.train, rows, seed, "complete-rows")
    internal, external = separate(prep.train, prep.dataset, overlap)
    if name == "FusionGAN":
        internal = _cap(internal, s.fusion_max_rows, seed, "internal-rows")
        external = _cap(external, s.fusion_max_rows, seed, "external-rows")
    return SourceSet.pair(internal, external)


def _encode(test: pd.DataFrame, synthetic: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.preprocessing import OneHotEncoder

    enc = OneHotEncoder(handle_unknown="ignore").fit(test.astype(str))
    return (enc.transform(test.astype(str)).toarray(),
            enc.transform(synthetic[test.columns].astype(str)).toarray())


def score(prep: Prepared, test: pd.DataFrame, synthetic: pd.DataFrame, tree: Any, *,
          seed: Any, dm_n_estimators: int = 50) -> dict[str, float]:
    """Fidelity, fairness gaps, coverage and MMD of ``synthetic`` against ``test``."""
    from fusionlib.metrics.coverage import coverage
    from fusionlib.metrics.mmd import mmd

    spec = prep.spec
    out = {"1-TVD": TVComplement().compute(test, synthetic),
           "CS": ContingencySimilarity().compute(test, synthetic),
           "DM": DiscriminatorMeasure(n_seeds=1, seed=seed, n_estimators=dm_n_estimators)
           .compute(test, synthetic),
           "KL(A,Y)": float(np.mean([JointKL(a, spec.label).compute(test, synthetic)
                                     for a in spec.protected]))}
    gaps: dict[str, list[float]] = {"DI": [], "AOD": [], "EOD": []}
    for attr in spec.protected:
        vals = []
        for df in (test, synthetic):
            y = (df[spec.label].astype(str) == str(spec.favourable)).to_numpy()
            g = (df[attr].astype(str) == str(spec.privileged[attr])).to_numpy()
            vals.append(fairness_metrics(y, tree.predict_favourable(df), g))
        for m in gaps:
            gaps[m].append(abs(vals[1][m] - vals[0][m]))
    out.update({f"|d{m}|": float(np.nanmean(v)) if np.isfinite(v).any() else np.nan
                for m, v in gaps.items()})
    real, syn = _encode(test, synthetic)
    out["coverage"] = coverage(real, syn)
    out["MMD"] = mmd(real, syn, seed=child(seed, "mmd")).mmd
    return out


def run_task(name: str, prep: Prepared, overlap: str, s: BenchSettings, *, seed: Any
             ) -> dict[str, Any]:
    """Fit ``name`` on one task, sample, score; one row (status "run")."""
    internal, _ = separate(prep.train, prep.dataset, overlap)
    spec = prep.spec
    tree = train_audited_tree(internal, spec.label, spec.favourable, list(spec.protected),
                              seed=seed)
    model = make_generator(name, s, seed=child(seed, "fit", name, overlap),
                           columns=list(prep.test.columns))
    data = _training_data(name, prep, overlap, s, child(seed, "rows", name, overlap))
    t0 = time.perf_counter()
    model.fit(data)
    fit_s = time.perf_counter() - t0
    test = _cap(prep.test, s.n_eval, seed, "eval-rows")
    synthetic = model.sample(len(test), seed=child(seed, "sample", name, overlap))
    synthetic = synthetic[list(test.columns)].astype(str).astype(test.dtypes.to_dict())
    scores = score(prep, test, synthetic, tree, seed=child(seed, "score", name, overlap),
                   dm_n_estimators=s.dm_n_estimators)
    learned = {}
    if getattr(model, "convergence", None) is not None:  # FusionGAN: did it learn?
        learned = {"learned": model.learned_epoch_ is not None,
                   "learned_epoch": model.learned_epoch_, "epochs": model.epochs_}
    return {"generator": name, "dataset": prep.dataset, "overlap": overlap, "fit_s": fit_s,
            **scores, **learned, "status": "run", "reason": ""}


def run_generator(name: str, dataset: str, overlaps: list[str], s: BenchSettings, *,
                  seed: Any) -> pd.DataFrame:
    """:func:`run_task` for every overlap of ``dataset``; failures become "not run" rows."""
    from fusionlib.errors import DataUnavailableError

    try:
        prep = prepare(dataset, seed=seed, max_rows=s.max_rows)
    except DataUnavailableError as err:
        return pd.DataFrame([_not_run(name, dataset, o, f"data unavailable: {err}")
                             for o in overlaps])
    rows = []
    for overlap in overlaps:
        try:
            rows.append(run_task(name, prep, overlap, s, seed=seed))
        except ImportError as err:  # a generator whose package is not installed here
            rows.append(_not_run(name, dataset, overlap, f"not available: {err}"))
    return pd.DataFrame(rows)


def _not_run(name: str, dataset: str, overlap: str, reason: str) -> dict[str, Any]:
    return {"generator": name, "dataset": dataset, "overlap": overlap,
            **{c: np.nan for c in SCORE_COLUMNS}, "status": "not run", "reason": reason}
