"""Our values of seed 002's claims as estimates with their uncertainty, and what a difference is.

The chapter compares each number of Tables 3, 7, 8, 9, Figure 5 and Sections 5.1-5.3 with ours
(:mod:`fusionlib.compendium.verdicts`). The paper reports single runs without spread, so its
values are exact; ours are :class:`~fusionlib.compendium.verdicts.Estimate` objects:

- IGO, Marginal, the Independent baseline and the real-row reference are fitted by counting
  (the same rows give the same model), so a set varies by its draw only. 1-TVD, CS, KL and DCC
  get the bootstrap se (both tables resampled, :mod:`~fusionlib.fairtest.uncertainty`); DM the
  spread of its forests (mean of ``dm_seeds`` trials, t with ``n - 1`` degrees of freedom); a
  Table 9 entry the bootstrap standard deviations of the metric on the two sets,
  ``sqrt(sd_s**2 + sd_r**2)``.
- Latent is a stochastic fit (EM from one random start): the mean over ``latent_fits``
  single-start fits and its standard error (DM: one forest per fit).
- CTGAN is a stochastic fit (one training run): the mean over the runs; with one run the
  spread is unknown (``se=None``) and the verdict inconclusive.

The tolerances of the claims are *equivalence margins*: the difference that would matter to
the paper's conclusions (:data:`MARGINS`, :func:`kl_margin`), not noise, which the estimates
carry. :func:`mean_estimate` and :func:`difference` combine estimates for the claims on means
and on orderings.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from fusionlib.compendium.verdicts import Estimate
from fusionlib.fairtest.protocol.records import DatasetSummary

__all__ = ["MARGINS", "PAPER_ROUNDING", "FIT_METHODS", "kl_margin", "fidelity_estimates",
           "table9_estimates", "lookup", "mean_estimate", "difference", "with_estimates",
           "ctgan_reduction"]

#: equivalence margins: a difference below the smallest gap the paper draws a conclusion from
#: (1-TVD, CS: German, ours 0.966 vs CTGAN 0.946; DM: half the smallest DM gap, about 0.09),
#: half the width of AIF360's band of "fair" values (AOD, EOD within +-0.1; DI within 0.8-1.25)
MARGINS: dict[str, float] = {"1-TVD": 0.02, "CS": 0.02, "DM": 0.05, "DCC": 0.02, "AOD": 0.05,
                             "EOD": 0.05, "DI": 0.10}
#: half the last digit the paper prints (three decimals)
PAPER_ROUNDING = 0.0005
#: methods whose fit is stochastic, and the column that numbers their repetitions
FIT_METHODS: dict[str, tuple[str, str]] = {"Latent": ("latent_fit", "fit"),
                                           "CTGAN": ("ctgan", "run")}
_FIDELITY = ("1-TVD", "CS", "DM", "DCC")


def kl_margin(paper_value: float) -> float:
    """KL margin: the paper's rounding plus half its value (the same order of magnitude)."""
    return PAPER_ROUNDING + 0.5 * float(paper_value)


def _opt(value: float) -> float | None:
    """A bootstrap standard error; missing, or 0 (every replicate equal: no evidence of the
    spread, see :meth:`~fusionlib.compendium.verdicts.Estimate.from_bootstrap`), is unknown."""
    return None if value is None or not np.isfinite(value) or value == 0 else float(value)


def _repeated(values: pd.Series) -> Estimate:
    return Estimate.from_sample(values.dropna().to_numpy(dtype=float))


def fidelity_estimates(summary: DatasetSummary) -> pd.DataFrame:
    """Long table: dataset, method, overlap, metric, estimate (an Estimate), basis (text)."""
    if summary.status != "run":
        return pd.DataFrame(columns=["dataset", "method", "overlap", "metric", "estimate",
                                     "basis"])
    metrics = [*_FIDELITY, *(f"KL ({a})" for a in summary.protected)]
    rows = []
    for r in summary.fidelity.to_dict("records"):
        if r["method"] in FIT_METHODS:
            continue
        for m in metrics:
            if m == "DM":
                est = Estimate.from_mean_sd(r["DM"], r["DM sd"], int(r["DM n"]))
                basis = f"{int(r['DM n'])} forests"
            else:
                est = Estimate(float(r[m]), _opt(r.get(f"{m} se")))
                basis = "bootstrap"
            rows.append({**{k: r[k] for k in ("dataset", "method", "overlap")}, "metric": m,
                         "estimate": est, "basis": basis})
    for method, frame, col in (("Latent", summary.latent_fit_scores, "fit"),
                               ("CTGAN", summary.ctgan_runs, "run")):
        if frame.empty:
            continue
        word = "single-start fits" if method == "Latent" else "training runs"
        for overlap, grp in frame.groupby("overlap", sort=False):
            for m in metrics:
                rows.append({"dataset": summary.dataset, "method": method, "overlap": overlap,
                             "metric": m, "estimate": _repeated(grp[m]),
                             "basis": f"{grp[col].nunique()} {word}"})
    return pd.DataFrame(rows)


def table9_estimates(summary: DatasetSummary) -> pd.DataFrame:
    """Long table: dataset, method, overlap, attribute, metric, estimate, basis (Table 9)."""
    cols = ["dataset", "method", "overlap", "attribute", "metric", "estimate", "basis"]
    if summary.status != "run":
        return pd.DataFrame(columns=cols)
    rows = []
    keys = ["dataset", "method", "overlap", "attribute", "metric"]
    for r in summary.table9.to_dict("records"):
        if r["method"] in FIT_METHODS:
            continue
        se = math.hypot(r["sd_synthetic"], r["sd_real"])
        rows.append({**{k: r[k] for k in keys}, "basis": "bootstrap sds",
                     "estimate": Estimate(float(r["abs_diff"]), _opt(se))})
    for method, frame, col in (("Latent", summary.latent_fit_diffs, "fit"),
                               ("CTGAN", summary.ctgan_diffs, "run")):
        if frame.empty:
            continue
        word = "single-start fits" if method == "Latent" else "training runs"
        for key, grp in frame.groupby(keys, sort=False):
            rows.append({**dict(zip(keys, key, strict=True)),
                         "estimate": _repeated(grp["abs_diff"]),
                         "basis": f"{grp[col].nunique()} {word}"})
    return pd.DataFrame(rows, columns=cols)


def lookup(estimates: pd.DataFrame, **keys: object) -> Estimate:
    """The one estimate matching ``keys`` (NaN value when there is none)."""
    sub = estimates
    for k, v in keys.items():
        sub = sub[sub[k] == v]
    if len(sub) > 1:
        raise ValueError(f"{len(sub)} estimates match {keys}")
    return sub["estimate"].iloc[0] if len(sub) else Estimate(float("nan"), None)


def _spread(e: Estimate) -> float | None:
    """The standard error the verdict rules use (:meth:`Estimate.spread`): ``None`` for an
    unknown spread, including zero spread from ``n >= 2`` repetitions (two forests with the
    same accuracy), which must not become an exact 0 once combined."""
    return e.spread()[0]


def mean_estimate(estimates: Sequence[Estimate]) -> Estimate:
    """Mean of several estimates. The sets share the real test set, so their errors are not
    independent; the standard error used is the mean of theirs (exact for perfectly correlated
    errors, an upper bound otherwise). Unknown if any is unknown (zero spread from repetitions
    counts as unknown)."""
    ests = list(estimates)
    value = float(np.mean([e.value for e in ests]))
    ses = [_spread(e) for e in ests]
    if any(se is None for se in ses):
        return Estimate(value, None)
    return Estimate(value, float(np.mean(ses)))


def difference(a: Estimate, b: Estimate) -> Estimate:
    """``a - b`` with the root-sum-square standard error (unknown if either is unknown, zero
    spread from repetitions included)."""
    sa, sb = _spread(a), _spread(b)
    if sa is None or sb is None:
        return Estimate(a.value - b.value, None)
    return Estimate(a.value - b.value, math.hypot(sa, sb))


def with_estimates(table: pd.DataFrame, estimates: pd.DataFrame, keys: Sequence[str]
                   ) -> pd.DataFrame:
    """``table`` (wide, one column per metric) with its values replaced by the estimates'
    (the mean over fits for Latent and CTGAN rows)."""
    out = table.copy()
    if estimates.empty:
        return out
    values = estimates.assign(value=[e.value for e in estimates["estimate"]]).pivot_table(
        index=list(keys), columns="metric", values="value", aggfunc="first")
    idx = pd.MultiIndex.from_frame(out[list(keys)])
    for m in values.columns:
        if m in out.columns:
            new = values[m].reindex(idx).to_numpy()
            out[m] = np.where(np.isnan(new), out[m].to_numpy(dtype=float), new)
    return out


def ctgan_reduction(settings: dict, train_rows: int | None, published_epochs: int = 300
                    ) -> str | None:
    """The reduction of CTGAN's published protocol at this scale, or None when there is none.

    ``settings``: the dataset's ``ctgan`` entry of the scale (epochs, max_rows, runs)."""
    parts = []
    if settings["epochs"] < published_epochs:
        parts.append(f"CTGAN trained {settings['epochs']} of its published "
                     f"{published_epochs} epochs")
    cap = settings.get("max_rows")
    if cap is not None and train_rows is not None and cap < train_rows:
        parts.append(f"on {cap:,} of the {train_rows:,} training rows")
    return " ".join(parts) or None
