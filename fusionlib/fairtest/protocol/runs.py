"""The experiment protocol of seed 002 (Sections 4-5, Appendix C): what the notebook calls.

Per dataset (:func:`run_dataset`):

1. :func:`prepare` loads the raw table, discretises it (Appendix B) and holds out 30 % of the
   rows as the real test set ``D_test`` (Section 4.2), seeded.
2. :func:`synthesize` separates the remaining rows by column for every overlap of Table 2, fits
   the three joint estimators (Independence given Overlap, Marginal Preservation, Latent naive
   Bayes) on each (internal, external) pair, and adds the two baselines (CTGAN on the complete
   training table, the Independent model); each draws a synthetic test set of ``len(D_test)``.
3. :func:`~fusionlib.fairtest.scoring.fidelity_table` scores every synthetic set against
   ``D_test``: 1-TVD, CS, DM, the KL divergence of ``p(A, Y)`` per protected attribute and the
   mean Cramér's V difference, each with its uncertainty (Tables 3, 7, 8, Figure 5); it lives
   in :mod:`fusionlib.fairtest.scoring` and is re-exported here.
4. :func:`~fusionlib.fairtest.audit.fairness_bootstraps` trains the audited decision tree on
   the *internal* table of each separation (features = internal columns minus the label; never
   a protected attribute), predicts on ``D_test`` and on each synthetic set, and bootstraps DI,
   AOD and EOD (Figure 4); :func:`~fusionlib.fairtest.audit.table9` reduces them to
   ``|mean_boot(synthetic) - mean_boot(real)|`` (Table 9). Both live in
   :mod:`fusionlib.fairtest.audit` and are re-exported here.

A dataset whose files are missing (:class:`~fusionlib.errors.DataUnavailableError`) yields rows
with ``status == "not run"`` and the reason, instead of stopping the other datasets.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fusionlib.data.sources import SourceSet
from fusionlib.errors import DataUnavailableError, InvalidInputError
from fusionlib.fairtest.audit import (
    AuditedTree,
    fairness_bootstraps,
    table9,
    train_audited_tree,
)
from fusionlib.fairtest.discretise import discretise
from fusionlib.fairtest.estimators import (
    CTGANBaseline,
    IndependenceGivenOverlap,
    IndependentModel,
    LatentNaiveBayes,
    MarginalPreservation,
)
from fusionlib.fairtest.protocol.records import (
    BASELINES,
    OUR_METHODS,
    PAPER_NAMES,
    PAPER_PROTOCOL,
    Prepared,
    ProtocolConfig,
    SyntheticSet,
)
from fusionlib.fairtest.scoring import fidelity_table
from fusionlib.fairtest.separation import DatasetSpec, dataset_spec, separate
from fusionlib.metrics.association import dcc_matrix
from fusionlib.metrics.fairness import FAIRNESS_METRICS
from fusionlib.rng import Seed, child, numpy_rng, seed_int

__all__ = [
    "ProtocolConfig", "PAPER_PROTOCOL", "Prepared", "SyntheticSet", "AuditedTree",
    "DatasetResult", "OUR_METHODS", "BASELINES", "PAPER_NAMES", "make_estimator",
    "not_run_result", "planned_sets", "prepare", "synthesize", "fidelity_table",
    "train_audited_tree", "fairness_bootstraps", "table9", "run_dataset", "run_protocol",
    "disjoint_rows_table9",
    "dcc_matrices",
]


def make_estimator(method: str, cfg: ProtocolConfig, *, seed: int) -> object:
    """A fresh, unfitted estimator for ``method`` (one of OUR_METHODS + BASELINES)."""
    factories = {
        "IGO": IndependenceGivenOverlap,
        "Marginal": lambda: MarginalPreservation(keep="internal"),  # eq. 4 keeps the internal
        "Latent": lambda: LatentNaiveBayes(n_restarts=cfg.latent_restarts, seed=seed),
        "Indep": IndependentModel,
        "CTGAN": lambda: CTGANBaseline(epochs=cfg.ctgan_epochs, seed=seed),
    }
    if method not in factories:
        raise InvalidInputError(f"unknown method {method!r}; choose one of {list(factories)}")
    return factories[method]()


def prepare(dataset: str, *, test_size: float = 0.3, seed: int = 0,
            max_rows: int | None = None, table: pd.DataFrame | None = None) -> Prepared:
    """Load, discretise and split ``dataset`` into training rows and ``D_test``.

    ``table``: an already discretised complete table to use instead of loading (tests).
    Raises :class:`DataUnavailableError` when the dataset's files are missing.
    """
    if not 0.0 < test_size < 1.0:
        raise InvalidInputError(f"test_size must lie in (0, 1), got {test_size!r}")
    spec = dataset_spec(dataset)
    if table is None:
        from fusionlib.data import load

        table = discretise(dataset, load(dataset))
    missing = [c for c in spec.columns if c not in table.columns]
    if missing:
        raise InvalidInputError(f"the {dataset} table lacks columns {missing}; discretise it")
    table = table[list(spec.columns)]
    rng = numpy_rng(seed, "split")
    order = rng.permutation(len(table))
    if max_rows is not None:
        order = order[:max_rows]
    n_test = int(round(test_size * len(order)))
    test = table.iloc[order[:n_test]].reset_index(drop=True)
    train = table.iloc[order[n_test:]].reset_index(drop=True)
    return Prepared(dataset, train, test, spec)


def planned_sets(spec: DatasetSpec, cfg: ProtocolConfig) -> list[tuple[str, str]]:
    """``(method, overlap)`` of every synthetic set, in table order (baselines: overlap ``""``)."""
    unknown = [b for b in cfg.baselines if b not in BASELINES]
    if unknown:
        raise InvalidInputError(f"unknown baselines {unknown}; choose from {list(BASELINES)}")
    return [(m, o) for o in spec.overlaps for m in OUR_METHODS] + [(m, "") for m in cfg.baselines]


def training_sources(prep: Prepared, cfg: ProtocolConfig, model: object, overlap: str, *,
                     seed: Seed = 0) -> SourceSet:
    """The sources ``model`` is fitted on.

    Models that train on the complete table (``trains_on_complete``: the CTGAN baseline, which
    the paper gave the complete training data, Section 4.3) get it as one source, capped at
    ``cfg.ctgan_max_rows`` rows when set; every other model gets the (internal, external)
    separation of ``overlap`` (a baseline without an overlap uses the dataset's first).
    """
    if getattr(model, "trains_on_complete", False):
        train = prep.train
        if cfg.ctgan_max_rows is not None and len(train) > cfg.ctgan_max_rows:
            train = train.sample(cfg.ctgan_max_rows, random_state=seed_int(seed, "complete-rows"))
        return SourceSet.single(train)
    internal, external = separate(prep.train, prep.dataset, overlap or prep.spec.overlaps[0])
    return SourceSet.pair(internal, external)


def synthesize(prep: Prepared, cfg: ProtocolConfig, *, seed: int = 0,
               progress: bool = False) -> list[SyntheticSet]:
    """Fit every estimator of every separation plus both baselines; sample ``len(test)`` rows."""
    from tqdm import tqdm

    n, out, cols = len(prep.test), [], list(prep.test.columns)
    jobs = planned_sets(prep.spec, cfg)
    for method, overlap in tqdm(jobs, desc=prep.dataset, disable=not progress):
        model = make_estimator(method, cfg, seed=child(seed, "fit", method, overlap or "-"))
        model.fit(training_sources(prep, cfg, model, overlap, seed=seed))
        data = model.sample(n, seed=child(seed, "sample", method, overlap or "-"))
        data = data[cols].astype(prep.test.dtypes.to_dict())
        out.append(SyntheticSet(method, overlap, data))
    return out


@dataclass
class DatasetResult:
    """Everything one dataset contributes to Tables 3, 7, 8, 9 and Figures 4, 5."""

    dataset: str
    status: str
    reason: str = ""
    fidelity: pd.DataFrame = field(default_factory=pd.DataFrame)
    boots: pd.DataFrame = field(default_factory=pd.DataFrame)
    table9: pd.DataFrame = field(default_factory=pd.DataFrame)
    prepared: Prepared | None = None
    synthetic: list[SyntheticSet] = field(default_factory=list)


def run_dataset(dataset: str, cfg: ProtocolConfig = PAPER_PROTOCOL, *, seed: int = 0,
                progress: bool = False, table: pd.DataFrame | None = None) -> DatasetResult:
    """The whole protocol for one dataset; a missing dataset gives ``status="not run"``."""
    try:
        prep = prepare(dataset, test_size=cfg.test_size, seed=seed, max_rows=cfg.max_rows,
                       table=table)
    except DataUnavailableError as err:
        return not_run_result(dataset, cfg, f"data unavailable: {err}")
    synthetic = synthesize(prep, cfg, seed=seed, progress=progress)
    boots = fairness_bootstraps(prep, synthetic, cfg, seed=seed)
    t9 = table9(boots).assign(status="run", reason="")
    return DatasetResult(dataset, "run", "", fidelity_table(prep, synthetic, cfg, seed=seed),
                         boots, t9, prep, synthetic)


def disjoint_rows_table9(prep: Prepared, cfg: ProtocolConfig, *, seed: Seed = 0
                         ) -> pd.DataFrame:
    """Table 9 under a variant where the audited tree never saw the estimators' rows.

    In the paper's protocol the audited tree is trained on the internal table of the very rows
    the estimators are fitted on, and IGO and Marginal resample those rows, so the tree is scored
    on copies of its own training rows (on German it is then 100 % accurate and AOD = EOD = 0).
    Here the training rows are split in half (seeded): the estimators (ours and the Independent
    baseline; CTGAN is left out of the variant for its cost) are fitted on one half, the tree of
    each separation on the other half's internal table; the comparison with the real test set is
    the paper's. Returns :func:`table9` rows.
    """
    order = numpy_rng(seed, "disjoint-split").permutation(len(prep.train))
    half = len(order) // 2
    fit_rows = Prepared(prep.dataset, prep.train.iloc[order[:half]].reset_index(drop=True),
                        prep.test, prep.spec)
    tree_rows = Prepared(prep.dataset, prep.train.iloc[order[half:]].reset_index(drop=True),
                         prep.test, prep.spec)
    variant = dataclasses.replace(cfg, reference=False,
                                  baselines=tuple(b for b in cfg.baselines if b != "CTGAN"))
    synthetic = synthesize(fit_rows, variant, seed=child(seed, "disjoint"))
    return table9(fairness_bootstraps(tree_rows, synthetic, variant,
                                      seed=child(seed, "disjoint")))


def not_run_result(dataset: str, cfg: ProtocolConfig, reason: str) -> DatasetResult:
    """Placeholder rows (metrics nan) for every planned synthetic set of a dataset not run."""
    spec = dataset_spec(dataset)
    sets = [SyntheticSet(m, o, pd.DataFrame()) for m, o in planned_sets(spec, cfg)]
    fidelity = pd.DataFrame([
        {"dataset": dataset, "method": s.method, "overlap": s.overlap, "label": s.label,
         **{k: np.nan for k in ("1-TVD", "CS", "DM", *(f"KL ({a})" for a in spec.protected))}}
        for s in sets]).assign(status="not run", reason=reason)
    t9 = pd.DataFrame([
        {"dataset": dataset, "method": s.method, "overlap": s.overlap, "label": s.label,
         "kind": "baseline" if s.method in BASELINES
         else "ours", "tree": s.overlap or spec.overlaps[0], "attribute": a, "metric": m,
         "abs_diff": np.nan} for s in sets for a in spec.protected for m in FAIRNESS_METRICS])
    return DatasetResult(dataset, "not run", reason, fidelity, pd.DataFrame(),
                         t9.assign(status="not run", reason=reason))


def run_protocol(datasets: Sequence[str], cfg: ProtocolConfig = PAPER_PROTOCOL, *,
                 seed: int = 0, progress: bool = False) -> dict[str, DatasetResult]:
    """:func:`run_dataset` for each dataset, in order."""
    return {d: run_dataset(d, cfg, seed=seed, progress=progress) for d in datasets}


def dcc_matrices(result: DatasetResult, overlap: str) -> dict[str, pd.DataFrame]:
    """Figure 5: ``|V_syn - V_real|`` for the methods of ``overlap`` and both baselines."""
    if result.prepared is None:
        return {}
    return {s.label: dcc_matrix(result.prepared.test, s.data)
            for s in result.synthetic if s.overlap in ("", overlap)}

