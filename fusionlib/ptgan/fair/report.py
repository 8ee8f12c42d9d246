"""What the fair-generation chapter compares, and with which uncertainty (Tables 4, 12, Figure 7).

* :func:`fair_reductions`: how a scale's protocol departs from Appendix D.3's. The statistic of
  Tables 4 and 12 *selects* the 10 smallest SP among 200 sets of 10 converged runs; fewer runs,
  sets or iterations change what it selects from, so its claims are "not comparable" then.
* :func:`statistic_estimate`: the statistic with a bootstrap standard error over runs (the runs
  are resampled with replacement and their sets pooled, as the paper pools them).
* :func:`lowest_gap_estimate`: FairPTGAN's statistic minus the smallest of the baselines', with
  its bootstrap standard error (Figure 7's reading: FairPTGAN reaches the lowest SP).
* :func:`equivalence_margins`: half the smallest gap between FairPTGAN and its nearest
  competitor in the paper's table, per (dataset, classifier): a smaller difference would change
  none of the paper's orderings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from fusionlib.compendium.verdicts import Estimate
from fusionlib.ptgan.fair.evaluation import smallest_sp
from fusionlib.rng import numpy_rng

__all__ = ["BASELINES", "equivalence_margins", "fair_reductions", "lowest_gap_estimate",
           "statistic_estimate"]

#: the paper's competitors of FairPTGAN in Tables 4 and 12
BASELINES: tuple[str, ...] = ("FairWGANGP", "GeoRepair")
_N_BOOT = 200


def fair_reductions(cfg: Mapping, paper: Mapping) -> list[str]:
    """Departures of the scale settings ``cfg`` from the paper-scale settings ``paper``."""
    out = []
    if cfg["n_iter"] != paper["n_iter"]:
        out.append(f"{cfg['n_iter']:,} of the paper's {paper['n_iter']:,} iterations (an "
                   "unconverged generator)")
    if cfg["n_seeds"] * cfg["n_sets"] < paper["n_seeds"] * paper["n_sets"]:
        out.append(f"{cfg['n_seeds']} run(s) x {cfg['n_sets']} sets instead of "
                   f"{paper['n_seeds']} x {paper['n_sets']} (the statistic selects from fewer "
                   "candidates)")
    if cfg["n_rows"] != paper["n_rows"]:
        out.append(f"{cfg['n_rows']:,} rows per set instead of {paper['n_rows']:,}")
    if cfg.get("n_test") != paper.get("n_test"):
        out.append(f"{cfg['n_test']:,} test rows instead of the whole 10 % split")
    return out


def _pick(scores: pd.DataFrame, dataset: str, method: str, classifier: str) -> pd.DataFrame:
    return scores[(scores["dataset"] == dataset) & (scores["method"] == method)
                  & (scores["classifier"] == classifier)]


def _resampled(reps: np.ndarray, seed: object, *keys: object) -> list[np.ndarray]:
    g = numpy_rng(seed, "bootstrap", *[str(k) for k in keys])
    return [g.choice(reps, size=len(reps), replace=True) for _ in range(_N_BOOT)]


def _stat(sub: pd.DataFrame, reps: Sequence, threshold: float, k: int, which: str) -> float:
    pooled = pd.concat([sub[sub["rep"] == r] for r in reps])
    mean, sd, n = smallest_sp(pooled["auc"], pooled["sp"], threshold, k)
    if n < k:
        return float("nan")
    return mean if which == "mean" else sd


def statistic_estimate(scores: pd.DataFrame, dataset: str, method: str, classifier: str,
                       threshold: float, *, which: str = "mean", k: int = 10,
                       seed: object = 0) -> Estimate:
    """The mean (or sd) of the ``k`` smallest SP with AUC >= ``threshold``, pooled over runs,
    with the sd of its bootstrap over runs as standard error (unknown with one run)."""
    sub = _pick(scores, dataset, method, classifier)
    reps = np.sort(sub["rep"].unique())
    point = _stat(sub, reps, threshold, k, which)
    if len(reps) < 2:
        return Estimate(point, None, len(reps) or None)
    boot = [_stat(sub, r, threshold, k, which)
            for r in _resampled(reps, seed, dataset, method, classifier, which)]
    est = Estimate.from_bootstrap(point, boot)
    return Estimate(est.value, est.se, len(reps), None)


def lowest_gap_estimate(scores: pd.DataFrame, dataset: str, classifier: str, threshold: float,
                        *, k: int = 10, seed: object = 0) -> Estimate:
    """FairPTGAN's statistic minus the smallest baseline's (negative: FairPTGAN lowest)."""
    subs = {m: _pick(scores, dataset, m, classifier) for m in ("FairPTGAN", *BASELINES)}
    reps = np.sort(subs["FairPTGAN"]["rep"].unique())

    def gap(rs) -> float:
        ours = _stat(subs["FairPTGAN"], rs, threshold, k, "mean")
        others = [_stat(subs[m], rs, threshold, k, "mean") for m in BASELINES]
        return ours - min(others) if np.isfinite([ours, *others]).all() else float("nan")

    point = gap(reps)
    if len(reps) < 2:
        return Estimate(point, None, len(reps) or None)
    est = Estimate.from_bootstrap(point, [gap(r) for r in _resampled(reps, seed, dataset,
                                                                     classifier, "gap")])
    return Estimate(est.value, est.se, len(reps), None)


def equivalence_margins(paper: pd.DataFrame, classifiers: Sequence[str]
                        ) -> dict[tuple[str, str], float]:
    """``{(dataset, classifier): margin}``: half the gap between FairPTGAN and the closest
    other method in the paper's table."""
    out = {}
    for dataset, rows in paper.groupby("dataset"):
        rows = rows.set_index("method")
        for clf in classifiers:
            ours = float(rows.loc["FairPTGAN", clf])
            gaps = [abs(float(rows.loc[m, clf]) - ours) for m in BASELINES if m in rows.index]
            out[(dataset, clf)] = 0.5 * min(gaps)
    return out
