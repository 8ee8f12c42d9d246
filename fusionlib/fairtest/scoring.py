"""Scores of one synthetic set against the real test set (seed 002, Tables 3, 7, 8, Figure 5).

:func:`score_set` gives every fidelity score of one set with its uncertainty; :func:`fidelity_table`
does it for every synthetic set of a dataset (one row each) and is what
:mod:`fusionlib.fairtest.protocol.runs` calls.

Per set: ``1-TVD``, ``CS``, ``DM`` (the mean over ``cfg.dm_seeds`` forests, Section 5.1: "five
trials with different random seeds"), ``KL (<A>)`` per protected attribute and ``DCC`` (mean
``|V_syn - V_real|`` over column pairs, Figure 5's summary); the uncertainty of each:
``<score> se`` (bootstrap standard error of 1-TVD, CS, DCC and KL, both tables resampled,
:mod:`fusionlib.fairtest.uncertainty`) and ``DM sd`` / ``DM n`` (the spread of the forests'
accuracies and their number).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from fusionlib.fairtest.protocol.records import (
    REFERENCE_LABEL,
    Prepared,
    ProtocolConfig,
    SyntheticSet,
)
from fusionlib.fairtest.uncertainty import fidelity_se
from fusionlib.metrics.association import dcc_matrix
from fusionlib.metrics.fidelity import (
    ContingencySimilarity,
    DiscriminatorMeasure,
    JointKL,
    TVComplement,
)
from fusionlib.rng import Seed, child, seed_int

__all__ = ["score_set", "fidelity_table", "reference_rows"]


def score_set(prep: Prepared, data: pd.DataFrame, cfg: ProtocolConfig, *, seed: Seed,
              boot_seed: Seed | None, dm_seeds: int | None = None) -> dict[str, float]:
    """Every score of ``data`` against ``prep.test`` with its uncertainty (see the module).

    ``seed`` seeds the discriminator's trials (the same for every set of a dataset, as the
    protocol always did); ``boot_seed`` the bootstrap of this set (None: no ``se`` columns);
    ``dm_seeds`` overrides ``cfg.dm_seeds`` (one trial per fit for repeated Latent fits).
    """
    spec = prep.spec
    dm = DiscriminatorMeasure(n_seeds=cfg.dm_seeds if dm_seeds is None else dm_seeds,
                              seed=seed, n_estimators=cfg.dm_n_estimators,
                              max_rows=cfg.dm_max_rows)
    trials = dm.trial_scores(prep.test, data)
    se = {} if boot_seed is None else fidelity_se(
        prep.test, data, protected=spec.protected, label=spec.label, n_boot=cfg.fidelity_boot,
        seed=boot_seed, epsilon=cfg.kl_epsilon)
    # the values themselves from the metric objects (tested against SDMetrics)
    row = {"1-TVD": TVComplement().compute(prep.test, data),
           "CS": ContingencySimilarity().compute(prep.test, data), "DM": float(trials.mean())}
    for attr in spec.protected:
        row[f"KL ({attr})"] = JointKL(attr, spec.label, epsilon=cfg.kl_epsilon).compute(
            prep.test, data)
    dcc = dcc_matrix(prep.test, data).to_numpy()
    row["DCC"] = float(dcc[np.tril_indices(len(dcc), -1)].mean())
    row.update({f"{k} se": v for k, v in se.items()})
    row["DM sd"] = float(trials.std(ddof=1)) if len(trials) > 1 else np.nan
    row["DM n"] = len(trials)
    return row


def reference_rows(prep: Prepared, seed: Seed) -> pd.DataFrame:
    """A test-sized sample of the *real training rows*: what a perfect generator would give."""
    n = min(len(prep.test), len(prep.train))
    return prep.train.sample(n, random_state=seed_int(seed, "reference")).reset_index(drop=True)


def fidelity_table(prep: Prepared, synthetic: Sequence[SyntheticSet], cfg: ProtocolConfig,
                   *, seed: int = 0) -> pd.DataFrame:
    """One row per synthetic set: the scores of :func:`score_set` (Tables 3, 7, 8).

    With ``cfg.reference`` a last row (method ``"Reference"``) scores a test-sized sample of
    the *real training rows* the same way: the value a perfect generator would get, i.e. the
    sampling-noise floor of each metric (not part of the paper's tables).
    """
    sets = [(s.method, s.overlap, s.label, s.data) for s in synthetic]
    if cfg.reference:  # real rows the estimators saw, test-sized: what a perfect generator gets
        sets.append(("Reference", "", REFERENCE_LABEL, reference_rows(prep, seed)))
    rows = [{"dataset": prep.dataset, "method": method, "overlap": overlap, "label": label,
             **score_set(prep, data, cfg, seed=seed,
                         boot_seed=child(seed, "fidelity-boot", label))}
            for method, overlap, label, data in sets]
    return pd.DataFrame(rows).assign(status="run", reason="")
