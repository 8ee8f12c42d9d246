"""What the fair-generation chapter compares, and with which uncertainty (Tables 4, 12, Figure 7).

* :func:`fair_reductions`: how a scale's protocol departs from Appendix D.3's. The statistic of
  Tables 4 and 12 *selects* the 10 smallest SP among 200 sets of 10 converged runs; fewer runs,
  sets or iterations change what it selects from, so its claims are "not comparable" then.
* :func:`statistic_estimate`: the statistic with a bootstrap standard error over runs (the runs
  are resampled with replacement and their sets pooled, as the paper pools them).
* :func:`lowest_gap_estimate`: FairPTGAN's statistic minus the smallest of the baselines', with
  its bootstrap standard error (Figure 7's reading: FairPTGAN reaches the lowest SP).
* :func:`collapsed_reps` and :func:`lowest_gap_reading`: a repetition whose every synthetic set
  carries one label class (the generator collapsed the label: nobody, or everybody, positive) is
  not evidence about its method. Its method's rows of Tables 4 and 12 are "not comparable" (the
  statistic would select from the other repetitions' sets only), and Figure 7's "FairPTGAN is
  lowest" is read against the baselines that did not collapse: it can then differ (FairPTGAN
  above a kept baseline is above the lowest one too) but never be reproduced.
* :func:`equivalence_margins`: half the smallest gap between FairPTGAN and its nearest
  competitor in the paper's table, per (dataset, classifier): a smaller difference would change
  none of the paper's orderings.
* :func:`present_paper_scores`: a data set's scores at the paper scale when every one of its
  paper cells is present (computed here or installed from a bundle; nothing is computed), for a
  cpu chapter to decide that data set's rows of Tables 4 and 12 at the paper's protocol.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fusionlib.compendium.paper import paper_table
from fusionlib.compendium.verdicts import Estimate, direction
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.fair.evaluation import CLASSIFIERS, smallest_sp, smallest_sp_table
from fusionlib.rng import numpy_rng

__all__ = ["BASELINES", "SCORE_COLUMNS", "GapReading", "by_level", "collapsed_reps",
           "collapse_table", "equivalence_margins", "fair_reductions", "lowest_gap_estimate",
           "lowest_gap_reading", "our_table", "present_paper_scores", "register_smallest_sp",
           "shown", "statistic_estimate"]

#: the columns of the per-set scores (``fair_scores`` and :func:`present_paper_scores`)
SCORE_COLUMNS: tuple[str, ...] = ("dataset", "rep", "method", "set", "level", "classifier",
                                  "auc", "sp", "positive_rate")

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
                        *, k: int = 10, seed: object = 0,
                        baselines: Sequence[str] = BASELINES) -> Estimate:
    """FairPTGAN's statistic minus the smallest of ``baselines``' (negative: FairPTGAN lowest)."""
    if not baselines:
        raise InvalidInputError("lowest_gap_estimate needs at least one baseline")
    subs = {m: _pick(scores, dataset, m, classifier) for m in ("FairPTGAN", *baselines)}
    reps = np.sort(subs["FairPTGAN"]["rep"].unique())

    def gap(rs) -> float:
        ours = _stat(subs["FairPTGAN"], rs, threshold, k, "mean")
        others = [_stat(subs[m], rs, threshold, k, "mean") for m in baselines]
        return ours - min(others) if np.isfinite([ours, *others]).all() else float("nan")

    point = gap(reps)
    if len(reps) < 2:
        return Estimate(point, None, len(reps) or None)
    keys = ("gap",) if tuple(baselines) == BASELINES else ("gap", *baselines)
    est = Estimate.from_bootstrap(point, [gap(r) for r in _resampled(reps, seed, dataset,
                                                                     classifier, *keys)])
    return Estimate(est.value, est.se, len(reps), None)


def collapsed_reps(scores: pd.DataFrame, dataset: str, method: str) -> list:
    """The repetitions of ``method`` on ``dataset`` whose every synthetic set has a single-class
    label (positive rate 0 or 1 in every set: a classifier trained on it predicts one class for
    everybody, AUC 0.5, SP 0). Empty when ``scores`` has no ``positive_rate`` column."""
    if "positive_rate" not in scores:
        return []
    sub = scores[(scores["dataset"] == dataset) & (scores["method"] == method)]
    single = sub["positive_rate"].isin((0.0, 1.0))
    per_rep = single.groupby(sub["rep"]).all()
    return sorted(per_rep.index[per_rep.to_numpy()].tolist())


def collapse_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, method) of the synthetic methods: repetitions, how many collapsed to a
    single-class label (:func:`collapsed_reps`), which, and the positive rate of their sets."""
    rows = []
    synthetic = scores[scores["method"] != "Real data"]
    for (ds, method), sub in synthetic.groupby(["dataset", "method"], sort=False):
        gone = collapsed_reps(scores, ds, method)
        rates = (sub.drop_duplicates(["rep", "set"])["positive_rate"].dropna()
                 if "positive_rate" in sub else pd.Series([], dtype=float))
        rows.append({"dataset": ds, "method": method, "repetitions": sub["rep"].nunique(),
                     "collapsed": len(gone), "which": ", ".join(str(r) for r in gone) or "-",
                     "positive rate of the sets (min)": float(rates.min()) if len(rates)
                     else float("nan"),
                     "positive rate of the sets (median)": float(rates.median()) if len(rates)
                     else float("nan")})
    return pd.DataFrame(rows)


def _collapse_reason(scores: pd.DataFrame, dataset: str, method: str) -> str | None:
    gone = collapsed_reps(scores, dataset, method)
    if not gone:
        return None
    n = scores.loc[(scores["dataset"] == dataset) & (scores["method"] == method), "rep"].nunique()
    return (f"{len(gone)} of {n} {method} repetitions end with a single-class label in every "
            "set (a collapsed generator: not evidence about the method; the statistic would "
            f"select from the other {n - len(gone)} repetitions' sets only)")


@dataclass(frozen=True)
class GapReading:
    """What Figure 7's "FairPTGAN is lowest" can be decided against.

    ``estimate`` is the gap to the lowest of ``against`` (None when it cannot decide);
    ``not_comparable`` says why not; ``dropped`` names the baselines left out (collapsed)."""

    estimate: Estimate | None
    not_comparable: str | None
    against: tuple[str, ...]
    dropped: tuple[str, ...]


def lowest_gap_reading(scores: pd.DataFrame, dataset: str, classifier: str, threshold: float,
                       *, k: int = 10, seed: object = 0) -> GapReading:
    """:func:`lowest_gap_estimate` against the baselines that did not collapse.

    With every baseline healthy it is that estimate. With a collapsed baseline left out, the gap
    to the lowest *kept* baseline bounds the gap to the lowest of all from below (a minimum over
    more methods is no larger), so it decides only "differs" (FairPTGAN resolved above a kept
    baseline); any other outcome is "not comparable", with the estimate in the reason. A
    collapsed FairPTGAN, or no kept baseline, is "not comparable".
    """
    mine = _collapse_reason(scores, dataset, "FairPTGAN")
    if mine:
        return GapReading(None, mine, (), ())
    reasons = {m: _collapse_reason(scores, dataset, m) for m in BASELINES}
    dropped = tuple(m for m in BASELINES if reasons[m])
    kept = tuple(m for m in BASELINES if m not in dropped)
    if not dropped:
        return GapReading(lowest_gap_estimate(scores, dataset, classifier, threshold, k=k,
                                              seed=seed), None, kept, ())
    why = "; ".join(reasons[m] for m in dropped)
    if not kept:
        return GapReading(None, why, (), dropped)
    est = lowest_gap_estimate(scores, dataset, classifier, threshold, k=k, seed=seed,
                              baselines=kept)
    if direction(est, "<0").verdict == "differs":
        return GapReading(est, None, kept, dropped)
    return GapReading(None, f"{why}; against {', '.join(kept)} alone the gap is {est.text()}, "
                      "which can show FairPTGAN above the lowest baseline but not at it",
                      kept, dropped)


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


def by_level(scores: pd.DataFrame, method: str) -> pd.DataFrame:
    """Mean AUC and SP of ``method``'s synthetic sets per (classifier, level): the curve of one
    model sampled at every fairness level (FairPTGAN's alpha, GeoRepair's lambda_p)."""
    sub = scores[scores["method"] == method]
    return sub.groupby(["classifier", "level"], as_index=False)[["auc", "sp"]].mean()


def our_table(scores: pd.DataFrame, name: str, thresholds: Mapping[str, float],
              classifiers: Sequence[str] = CLASSIFIERS) -> pd.DataFrame:
    """The paper's ``name`` (Table 4 or 12) beside ours: per (dataset, method), the mean and sd
    of the 10 smallest SP among the synthetic sets whose AUC reaches the dataset's threshold
    (``thresholds``), and how many reach it.

    The paper's rows come first, then our variants (shown, not compared); a classifier column
    we have no value for is NaN; ``threshold`` gives each row's AUC threshold.
    """
    synthetic = scores[scores["method"] != "Real data"]
    ours = smallest_sp_table(synthetic, thresholds) if len(synthetic) else pd.DataFrame()
    paper = paper_table("001", name)
    # the paper's rows, then our variant (GeoRepair (train only)), shown but not compared
    merged = paper.merge(ours, on=["dataset", "method"], how="outer", sort=False,
                         suffixes=(" paper", " ours"))
    merged = merged[merged["dataset"].isin(set(paper["dataset"]))].reset_index(drop=True)
    for clf in classifiers:
        for col in (f"{clf} ours", f"{clf} sd ours", f"{clf} n"):
            if col not in merged:
                merged[col] = np.nan
    merged["threshold"] = merged["dataset"].map(thresholds)
    return merged


def present_paper_scores(dataset: str, seed: int = 0, *,
                         root: str | os.PathLike[str] | None = None
                         ) -> tuple[pd.DataFrame | None, int, int]:
    """``(scores, present, total)``: the per-set scores of ``dataset``'s paper-scale cells (both
    methods, every block of repetitions) when all ``total`` have a current shard, else None;
    ``present`` counts those that do. Nothing is computed; a provisional shard (a data set
    whose file was absent) does not count."""
    from fusionlib.compendium.cells import code_key, get_experiment, load_shard, shard_path
    from fusionlib.compendium.cells.store import resolve_root

    exp = get_experiment("fairptgan")
    key, folder = code_key(exp), resolve_root(root)
    cells = [c for c in exp.cells("paper", seed) if c.config["dataset"] == dataset]
    frames = []
    for cell in cells:
        shard = load_shard(shard_path(folder, exp.name, "paper", cell.cell_id), key, cell)
        if shard is not None and not shard.provisional:
            frames.append(shard.rows[shard.rows["status"] == "run"])
    if not cells or len(frames) < len(cells):
        return None, len(frames), len(cells)
    scores = pd.concat(frames, ignore_index=True).reindex(columns=list(SCORE_COLUMNS))
    return scores, len(frames), len(cells)


def _per_dataset(value: object, dataset: str) -> object:
    return value.get(dataset) if isinstance(value, Mapping) else value


def register_smallest_sp(run, name: str, tag: str, table: pd.DataFrame, scores: pd.DataFrame,
                         *, reduced: str | None | Mapping[str, str | None],
                         not_run_reason: str, seed: int,
                         classifiers: Sequence[str] = CLASSIFIERS,
                         scales: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Register the paper's mean and sd of every (dataset, method, classifier) of ``table``
    (:func:`our_table`) as claims ``001-<tag>-<dataset>-<method>-<classifier>-<mean|sd>``.

    A dataset absent from ``scores`` is "not run" (``not_run_reason``); ``reduced`` (the
    protocol's departures at this scale; one reason, or one per dataset) or fewer than 10 sets
    above the threshold make a claim "not comparable"; otherwise ours is
    :func:`statistic_estimate` (bootstrap over runs, seeded by ``seed``) under the margin of
    :func:`equivalence_margins`. ``scales``: dataset -> the scale its rows of ``scores`` were
    computed at, when not the chapter's (a cpu chapter reading the paper scale's cells); its
    claims are labelled with it. Our variants are skipped. Returns one row per claim with its
    verdict.
    """
    verdicts, collapse = [], {}
    margins = equivalence_margins(paper_table("001", name), classifiers)
    for r in table.to_dict("records"):
        thr, ds = r["threshold"], r["dataset"]
        if r["method"] not in ("FairPTGAN", *BASELINES):
            continue  # our variants are shown, not compared
        for clf in classifiers:
            n = r[f"{clf} n"]
            for stat, suffix in (("mean", ""), ("sd", " sd")):
                paper_v = r[f"{clf}{suffix} paper"]
                cid = f"001-{tag}-{ds}-{r['method']}-{clf}-{stat}"
                what = (f"{ds}, {r['method']}, {clf}: {stat} of the 10 smallest SP with "
                        f"AUC >= {thr}")
                if ds not in set(scores["dataset"]):
                    c = run.claim(cid, "001", name, what, paper_v, None, not_run=not_run_reason)
                    verdicts.append({"dataset": ds, "method": r["method"], "classifier": clf,
                                     "stat": stat, "verdict": c.verdict})
                    continue
                best = scores.loc[(scores.dataset == ds) & (scores.method == r["method"])
                                  & (scores.classifier == clf), "auc"].max()
                few = (None if n and np.isfinite(n) and n >= 10 else
                       f"only {0 if not np.isfinite(n) else int(n)} synthetic sets reach "
                       f"AUC >= {thr} (best {best:.3f}); the statistic selects 10")
                if (ds, r["method"]) not in collapse:  # once per (dataset, method)
                    collapse[(ds, r["method"])] = _collapse_reason(scores, ds, r["method"])
                collapsed = collapse[(ds, r["method"])]
                why_nc = "; ".join(x for x in (_per_dataset(reduced, ds), collapsed, few)
                                   if x) or None
                ours = (r[f"{clf}{suffix} ours"] if why_nc else
                        statistic_estimate(scores, ds, r["method"], clf, thr, which=stat,
                                           seed=seed))
                c = run.claim(cid, "001", name, what, paper_v, ours, kind="result",
                              tolerance=round(margins[(ds, clf)], 4), not_comparable=why_nc,
                              scale=(scales or {}).get(ds))
                verdicts.append({"dataset": ds, "method": r["method"], "classifier": clf,
                                 "stat": stat, "verdict": c.verdict})
    return pd.DataFrame(verdicts)


def shown(table: pd.DataFrame, classifiers: Sequence[str] = CLASSIFIERS) -> pd.DataFrame:
    """The columns of an :func:`our_table` the chapter displays: per classifier, the paper's and
    our mean and sd and our number of sets above the threshold."""
    cols = ["dataset", "method", "threshold"]
    for clf in classifiers:
        cols += [f"{clf} paper", f"{clf} ours", f"{clf} sd paper", f"{clf} sd ours", f"{clf} n"]
    return table[cols]
