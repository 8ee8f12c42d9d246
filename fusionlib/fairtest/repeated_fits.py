"""Repeated fits of seed 002's stochastic generators: how much a result moves between fits.

Independence given Overlap, Marginal Preservation and the Independent baseline are fitted by
counting: the same training rows give the same model, so a synthetic set varies only by its
random draw, which the bootstrap of :mod:`fusionlib.fairtest.uncertainty` measures. The Latent
naive Bayes (EM from one random start, the paper's protocol) and CTGAN (one training run) are
*stochastic fits*: another start or run gives another model, often another EM optimum. One fit
says nothing about that spread, so each is repeated and the chapter compares the mean over fits
(with its standard error) with the paper's single fit.

- :func:`latent_fits`: ``cfg.latent_fits`` single-start Latent fits per separation (fit 0 has
  the protocol's own seeds, so it is the protocol's Latent set); each scored on every fidelity
  score (DM from one forest per fit, so that the ``dm_seeds`` trials of the paper fall on as
  many fits) and on Table 9's differences.
- :func:`ctgan_run`: one CTGAN training run on the complete training table (run 0 has the
  protocol's seeds), scored like every other set, with its wall and CPU time, the steps it
  trained, the hyperparameters read back from the model and its loss trace. The chapter's
  cells run one per (dataset, run), in parallel with the rest of the protocol.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pandas as pd

from fusionlib.fairtest.audit import fairness_bootstraps, table9, train_audited_tree
from fusionlib.fairtest.protocol.records import Prepared, ProtocolConfig, SyntheticSet
from fusionlib.fairtest.protocol.runs import make_estimator, training_sources
from fusionlib.fairtest.scoring import fidelity_table, score_set
from fusionlib.fairtest.separation import separate
from fusionlib.metrics.association import dcc_matrix
from fusionlib.rng import child

__all__ = ["fit_seeds", "latent_fits", "ctgan_run"]


def fit_seeds(seed: int, method: str, overlap: str, fit: int) -> tuple[tuple, tuple]:
    """(fit seed, sample seed) of fit number ``fit``; fit 0 has the protocol's seeds
    (:func:`fusionlib.fairtest.protocol.runs.synthesize`)."""
    extra = () if fit == 0 else ("fit", fit)
    return (child(seed, "fit", method, overlap or "-", *extra),
            child(seed, "sample", method, overlap or "-", *extra))


def _draw(prep: Prepared, cfg: ProtocolConfig, method: str, overlap: str, seed: int,
          fit: int) -> tuple[Any, pd.DataFrame]:
    fit_seed, sample_seed = fit_seeds(seed, method, overlap, fit)
    model = make_estimator(method, cfg, seed=fit_seed)
    model.fit(training_sources(prep, cfg, model, overlap, seed=seed))
    data = model.sample(len(prep.test), seed=sample_seed)
    return model, data[list(prep.test.columns)].astype(prep.test.dtypes.to_dict())


def latent_fits(prep: Prepared, cfg: ProtocolConfig, *, seed: int = 0
                ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``cfg.latent_fits`` single-start Latent fits per separation of Table 2.

    Returns ``(scores, differences)``: one row per (overlap, fit) with 1-TVD, CS, DM (one
    forest), KL (<A>) and DCC; and Table 9's ``abs_diff`` per (overlap, fit, attribute,
    metric), each fit scored under its separation's audited tree.
    """
    one = dataclasses.replace(cfg, latent_restarts=1)
    scores, diffs = [], []
    for fit in range(cfg.latent_fits):
        sets = []
        for overlap in prep.spec.overlaps:
            _, data = _draw(prep, one, "Latent", overlap, seed, fit)
            sets.append(SyntheticSet("Latent", overlap, data))
            row = score_set(prep, data, cfg, seed=child(seed, "latent-fit-dm", overlap, fit),
                            boot_seed=None, dm_seeds=1)
            scores.append({"dataset": prep.dataset, "method": "Latent", "overlap": overlap,
                           "fit": fit, **row})
        t9 = table9(fairness_bootstraps(prep, sets, cfg, seed=seed))
        diffs.append(t9[["dataset", "method", "overlap", "attribute", "metric", "abs_diff"]]
                     .assign(fit=fit))
    return pd.DataFrame(scores), pd.concat(diffs, ignore_index=True)


def _accuracy(prep: Prepared, data: pd.DataFrame, seed: int) -> dict[str, float]:
    """Accuracy of each separation's audited tree on ``data`` (the memorisation check)."""
    spec, out = prep.spec, {}
    for overlap in spec.overlaps:
        internal, _ = separate(prep.train, prep.dataset, overlap)
        tree = train_audited_tree(internal, spec.label, spec.favourable, spec.protected,
                                  seed=seed)
        y = (data[spec.label] == spec.favourable).to_numpy()
        out[overlap] = float((tree.predict_favourable(data) == y).mean())
    return out


def ctgan_run(prep: Prepared, cfg: ProtocolConfig, *, seed: int = 0, run: int = 0
              ) -> dict[str, Any]:
    """One CTGAN training run (``cfg.ctgan_epochs`` epochs on the complete training table,
    capped at ``cfg.ctgan_max_rows``), its test-sized synthetic set and every score of it.

    Returns ``fidelity`` (one row, as :func:`~fusionlib.fairtest.scoring.fidelity_table`),
    ``boots`` (its bootstrap fairness metrics under every tree, as
    :func:`~fusionlib.fairtest.audit.fairness_bootstraps`, real rows left out), ``table9`` (its
    Table 9 rows), ``accuracy`` (tree -> accuracy on the set), ``dcc`` (Figure 5's matrix) and
    ``info`` (run, epochs, rows, steps, ``fit_wall_s``, ``fit_cpu_s``, ``settings``, ``losses``).
    """
    t_wall, t_cpu = time.perf_counter(), time.process_time()
    model, data = _draw(prep, cfg, "CTGAN", "", seed, run)
    wall, cpu = time.perf_counter() - t_wall, time.process_time() - t_cpu
    one = SyntheticSet("CTGAN", "", data)
    scored = dataclasses.replace(cfg, reference=False)
    boots = fairness_bootstraps(prep, [one], scored, seed=seed)
    src = training_sources(prep, cfg, model, "", seed=seed)
    info = {"run": run, "epochs": cfg.ctgan_epochs, "rows": len(src[src.names[0]]),
            "train_rows": len(prep.train), "steps": int(model.steps_),
            "fit_wall_s": round(wall, 2), "fit_cpu_s": round(cpu, 2),
            "settings": {k: list(v) if isinstance(v, tuple) else v
                         for k, v in model.settings_.items()},
            "losses": model.losses_.astype(float).to_numpy().tolist()}
    return {"fidelity": fidelity_table(prep, [one], scored, seed=seed),
            "boots": boots[boots["kind"] != "real"].reset_index(drop=True),
            "table9": table9(boots).assign(status="run", reason=""),
            "accuracy": _accuracy(prep, data, seed), "dcc": dcc_matrix(prep.test, data),
            "info": info}
