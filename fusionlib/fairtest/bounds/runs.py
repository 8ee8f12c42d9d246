"""Fairness bounds on seed 002's separations: intervals, real values and estimator points.

For one dataset (:func:`dataset_bounds`), with seed 002's protocol (Section 4.2: 30 % real test
hold-out; Table 2 separations; the audited decision tree trained on the internal table of the
training rows):

- the sharp interval of DI, AOD, EOD and DP over every joint of the two training tables
  (:func:`fusionlib.fairtest.bounds.sharp.fairness_bounds`, with certified gaps and the LP-grid
  cross-check), per separation and protected attribute;
- the *real* values: on the complete training rows (the joint the two tables were cut from:
  inside its interval by construction, a check of the solver) and on the real test set
  ``D_test`` (seed 002's reference; a different sample, so it may fall outside by sampling noise:
  its bootstrap 95 % interval is given);
- each seed-002 estimator's point value: the metric of the same tree on that estimator's
  synthetic test set (:func:`fusionlib.fairtest.protocol.runs.synthesize`, same seeds as the
  ``fairness_testing`` chapter).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fusionlib.fairtest.audit import train_audited_tree
from fusionlib.fairtest.bounds.sharp import (
    BOUND_METRICS,
    coupling_margins,
    fairness_bounds,
    metrics_of_counts,
)
from fusionlib.fairtest.protocol.runs import ProtocolConfig, prepare, synthesize
from fusionlib.fairtest.separation import dataset_spec, separate
from fusionlib.metrics.fairness import confusion_counts
from fusionlib.rng import child, numpy_rng

__all__ = ["dataset_bounds", "REAL_TRAIN", "REAL_TEST"]

REAL_TRAIN = "Real training rows"
REAL_TEST = "Real test"


def _labels(df: pd.DataFrame, spec, tree) -> tuple[np.ndarray, np.ndarray]:
    y = (df[spec.label].astype(str) == str(spec.favourable)).to_numpy()
    return y, tree.predict_favourable(df)


def _group(df: pd.DataFrame, spec, attr: str) -> np.ndarray:
    return (df[attr].astype(str) == str(spec.privileged[attr])).to_numpy()


def _metrics(y, yhat, g) -> dict[str, float]:
    return {k: float(v) for k, v in metrics_of_counts(confusion_counts(y, yhat, g)).items()}


def _bootstrap(y, yhat, g, n_boot: int, seed) -> dict[str, np.ndarray]:
    """Every bound metric on ``n_boot`` resamples of the rows: the draws of
    :func:`fusionlib.metrics.fairness.bootstrap_fairness` (same stream, multinomial counts)."""
    counts = confusion_counts(y, yhat, g)
    n = int(counts.sum())
    draws = numpy_rng(seed, "bootstrap").multinomial(n, counts.ravel() / n, size=n_boot)
    with np.errstate(invalid="ignore"):
        return metrics_of_counts(draws.reshape(n_boot, 2, 2, 2))


def _real_rows(prep, spec, tree, attr: str, n_boot: int, seed) -> list[dict]:
    rows = []
    for name, df in ((REAL_TRAIN, prep.train), (REAL_TEST, prep.test)):
        y, yhat = _labels(df, spec, tree)
        g = _group(df, spec, attr)
        point = _metrics(y, yhat, g)
        boot = (_bootstrap(y, yhat, g, n_boot, child(seed, name, attr))
                if name == REAL_TEST else None)
        for m in BOUND_METRICS:
            lo, hi = ((np.nanquantile(boot[m], 0.025), np.nanquantile(boot[m], 0.975))
                      if boot is not None else (np.nan, np.nan))
            rows.append({"source": name, "kind": "real", "attribute": attr, "metric": m,
                         "value": point[m], "boot_lo": lo, "boot_hi": hi})
    return rows


def _point_rows(synthetic, overlap: str, spec, tree, attr: str) -> list[dict]:
    rows = []
    for s in synthetic:
        if s.overlap not in ("", overlap):
            continue
        y, yhat = _labels(s.data, spec, tree)
        point = _metrics(y, yhat, _group(s.data, spec, attr))
        kind = "baseline" if s.overlap == "" else "ours"
        rows += [{"source": s.label, "kind": kind, "attribute": attr, "metric": m,
                  "value": point[m], "boot_lo": np.nan, "boot_hi": np.nan}
                 for m in BOUND_METRICS]
    return rows


def dataset_bounds(dataset: str, cfg: ProtocolConfig, *, seed=0, n_grid: int = 41,
                   tol: float = 1e-10, n_boot: int = 200, table: pd.DataFrame | None = None
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(intervals, points)`` for every separation and protected attribute of ``dataset``.

    intervals: dataset, overlap, attribute, metric, lower, upper, lower_gap, upper_gap
    (certified gaps; the search stops at ``tol``), method, grid_lower, grid_upper (the
    ``n_grid``-point LP grid cross-check of EOD/AOD), tables
    (``"training"``: the two tables cut from the training rows, what the estimators are fitted
    on and the tree was trained on; ``"test"``: the two tables cut from ``D_test``, where the
    tree predicts out of sample).
    points: dataset, overlap, attribute, metric, source, kind, value, boot_lo, boot_hi, inside,
    inside_test_tables (``value`` within the training / test-table interval up to 1e-9; real
    test rows also carry their bootstrap 95 % interval).
    ``table``: an already discretised complete table instead of the real data (tests).
    Raises :class:`~fusionlib.errors.DataUnavailableError` when the dataset is missing.
    """
    prep = prepare(dataset, test_size=cfg.test_size, seed=seed, max_rows=cfg.max_rows,
                   table=table)
    spec = prep.spec
    synthetic = synthesize(prep, cfg, seed=seed)
    intervals, points = [], []
    for overlap in spec.overlaps:
        internal, _ = separate(prep.train, dataset, overlap)
        tree = train_audited_tree(internal, spec.label, spec.favourable, list(spec.protected),
                                  seed=seed)
        for attr in spec.protected:
            b = _intervals(prep.train, "training", dataset, overlap, attr, tree, n_grid, tol)
            bt = _intervals(prep.test, "test", dataset, overlap, attr, tree, n_grid, tol)
            intervals += [b, bt]
            pts = pd.DataFrame(_real_rows(prep, spec, tree, attr, n_boot,
                                          child(seed, "bounds", overlap))
                               + _point_rows(synthetic, overlap, spec, tree, attr))
            for name, iv in (("inside", b), ("inside_test_tables", bt)):
                m = pts.merge(iv[["metric", "lower", "upper"]], on="metric")
                pts[name] = ((m["value"] >= m["lower"] - 1e-9)
                             & (m["value"] <= m["upper"] + 1e-9)).to_numpy()
            points.append(pts.assign(dataset=dataset, overlap=overlap))
    return pd.concat(intervals, ignore_index=True), pd.concat(points, ignore_index=True)


def _intervals(rows: pd.DataFrame, tables: str, dataset: str, overlap: str, attr: str, tree,
               n_grid: int, tol: float) -> pd.DataFrame:
    """Bounds from the (internal, external) tables cut from ``rows``."""
    spec = dataset_spec(dataset)
    internal, external = separate(rows, dataset, overlap)
    y, yhat = _labels(internal, spec, tree)
    margins = coupling_margins(internal[overlap], y, yhat, external[overlap],
                               _group(external, spec, attr))
    return fairness_bounds(margins, tol=tol, n_grid=n_grid).assign(
        dataset=dataset, overlap=overlap, attribute=attr, tables=tables)
