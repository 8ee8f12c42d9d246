"""Group fairness metrics DI, AOD, EOD (seed 002, Section 5.3, Eqs. 1, 6, 7) with a bootstrap.

Definitions follow AIF360 (``ClassificationMetric``), with ``u`` the unprivileged and ``p`` the
privileged group and "positive" the *favourable* outcome (e.g. income >50K, good credit)::

    DI  = P(Yhat=+ | u) / P(Yhat=+ | p)
    AOD = 0.5 * [(FPR_u - FPR_p) + (TPR_u - TPR_p)]
    EOD = TPR_u - TPR_p

One disaggregation engine serves all three: the eight counts ``n[g, y, yhat]`` (group g in
{0 = unprivileged, 1 = privileged}, true label y and prediction yhat in {0, 1}) determine every
rate, so metrics are functions of a count array of shape ``(..., 2, 2, 2)`` and are vectorised
over leading (bootstrap) axes.

Undefined values (documented rule, tested): a rate whose denominator is zero is ``nan`` - a group
with no rows has no selection rate, TPR or FPR; a group with no true positives has no TPR (so EOD
and AOD are ``nan``); a group with no true negatives has no FPR (AOD ``nan``); DI is ``nan`` when
the privileged selection rate is 0 (the ratio is undefined or infinite). Bootstrap summaries drop
``nan`` draws (``np.nanmean``) and report how many there were.

The bootstrap resamples the evaluation rows with replacement, ``n`` rows per draw. Because every
metric depends on the rows only through the eight cell counts, a draw of ``n`` rows with
replacement is exactly a multinomial draw of the counts with the observed cell proportions;
that is how it is computed (same distribution, no ``n``-sized index arrays).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from fusionlib.errors import InvalidInputError
from fusionlib.rng import numpy_rng

__all__ = [
    "FAIRNESS_METRICS",
    "confusion_counts",
    "group_confusion",
    "metrics_from_counts",
    "fairness_metrics",
    "bootstrap_fairness",
    "bootstrap_mean_difference",
    "plot_fairness_boxes",
]


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num, den = np.broadcast_arrays(np.asarray(num, float), np.asarray(den, float))
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _rates(counts: np.ndarray) -> dict[str, np.ndarray]:
    """Per-group rates, each of shape ``(..., 2)`` (group axis last: 0 = u, 1 = p)."""
    return {
        "selection": _ratio(counts[..., :, 1].sum(-1), counts.sum((-1, -2))),
        "tpr": _ratio(counts[..., 1, 1], counts[..., 1, :].sum(-1)),
        "fpr": _ratio(counts[..., 0, 1], counts[..., 0, :].sum(-1)),
    }


_METRICS: dict[str, Callable[[dict[str, np.ndarray]], np.ndarray]] = {
    "DI": lambda r: _ratio(r["selection"][..., 0], r["selection"][..., 1]),
    "AOD": lambda r: 0.5 * ((r["fpr"][..., 0] - r["fpr"][..., 1])
                            + (r["tpr"][..., 0] - r["tpr"][..., 1])),
    "EOD": lambda r: r["tpr"][..., 0] - r["tpr"][..., 1],
}
#: the metrics of Table 9, in its column order
FAIRNESS_METRICS: tuple[str, ...] = ("AOD", "DI", "EOD")


def _binary(name: str, values: Any) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise InvalidInputError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.dtype == bool:
        return arr.astype(np.int64)
    n_missing = int(pd.isna(arr).sum())
    if n_missing:
        raise InvalidInputError(
            f"{name} has {n_missing} missing values (NaN/None); drop those rows from all three "
            "arrays (or impute them) before computing fairness metrics")
    if not np.isin(arr, [0, 1]).all():
        raise InvalidInputError(
            f"{name} must be binary (bool or 0/1 with 1 = favourable / privileged); map the "
            "labels first, e.g. (df['income'] == '>50K')"
        )
    return arr.astype(np.int64)


def confusion_counts(y_true: Any, y_pred: Any, privileged: Any) -> np.ndarray:
    """Counts ``n[g, y, yhat]``, shape ``(2, 2, 2)``, for binary arrays of equal length.

    ``y_true``/``y_pred``: 1 = favourable outcome; ``privileged``: 1 = privileged group.
    """
    y, yhat, g = (_binary(n, v) for n, v in
                  (("y_true", y_true), ("y_pred", y_pred), ("privileged", privileged)))
    if not len(y) == len(yhat) == len(g):
        raise InvalidInputError(
            f"y_true, y_pred and privileged need equal lengths, got {len(y)}, {len(yhat)}, {len(g)}"
        )
    if len(y) == 0:
        raise InvalidInputError(
            "y_true, y_pred and privileged are empty; fairness metrics need at least one row "
            "(check the filter that selected the evaluation set)")
    return np.bincount(g * 4 + y * 2 + yhat, minlength=8).reshape(2, 2, 2)


def group_confusion(y_true: Any, y_pred: Any, privileged: Any) -> pd.DataFrame:
    """Per-group confusion table: rows unprivileged/privileged; n, TP, FP, TN, FN and rates."""
    c = confusion_counts(y_true, y_pred, privileged)
    rates = _rates(c)
    return pd.DataFrame(
        {"n": c.sum((1, 2)), "TP": c[:, 1, 1], "FP": c[:, 0, 1], "TN": c[:, 0, 0],
         "FN": c[:, 1, 0], "selection_rate": rates["selection"], "TPR": rates["tpr"],
         "FPR": rates["fpr"]},
        index=pd.Index(["unprivileged", "privileged"], name="group"),
    )


def metrics_from_counts(
    counts: np.ndarray, metrics: Sequence[str] = FAIRNESS_METRICS
) -> dict[str, np.ndarray]:
    """Metrics from counts of shape ``(..., 2, 2, 2)``; each value has shape ``(...)``."""
    unknown = [m for m in metrics if m not in _METRICS]
    if unknown:
        raise InvalidInputError(f"unknown fairness metrics {unknown}; allowed: {list(_METRICS)}")
    counts = np.asarray(counts)
    if counts.shape[-3:] != (2, 2, 2):
        raise InvalidInputError(f"counts must end in shape (2, 2, 2), got {counts.shape}")
    with np.errstate(invalid="ignore"):
        rates = _rates(counts)
        return {m: _METRICS[m](rates) for m in metrics}


def fairness_metrics(
    y_true: Any, y_pred: Any, privileged: Any, metrics: Sequence[str] = FAIRNESS_METRICS
) -> dict[str, float]:
    """Point estimates of the metrics on one evaluation set."""
    values = metrics_from_counts(confusion_counts(y_true, y_pred, privileged), metrics)
    return {m: float(v) for m, v in values.items()}


def bootstrap_fairness(
    y_true: Any, y_pred: Any, privileged: Any, *, n_boot: int, seed: int,
    metrics: Sequence[str] = FAIRNESS_METRICS,
) -> pd.DataFrame:
    """Metrics on ``n_boot`` bootstrap resamples (with replacement, same size as the input).

    Returns a DataFrame of shape ``(n_boot, len(metrics))``; undefined draws are ``nan``.
    Seeded by the stream ``(seed, "bootstrap")`` of :mod:`fusionlib.rng`: same seed, same draws.
    """
    if not (isinstance(n_boot, int) and n_boot >= 1):
        raise InvalidInputError(f"n_boot must be an int >= 1, got {n_boot!r}")
    counts = confusion_counts(y_true, y_pred, privileged)  # refuses an empty set
    n = int(counts.sum())
    draws = numpy_rng(seed, "bootstrap").multinomial(n, counts.ravel() / n, size=n_boot)
    values = metrics_from_counts(draws.reshape(n_boot, 2, 2, 2), metrics)
    return pd.DataFrame(values, columns=list(metrics))


def bootstrap_mean_difference(synthetic: pd.DataFrame, real: pd.DataFrame) -> pd.DataFrame:
    """Table 9's quantity ``|mean_boot(synthetic) - mean_boot(real)|`` per metric.

    Both frames must hold the same metric columns (as :func:`bootstrap_fairness` returns them,
    in any order). Means ignore ``nan`` draws; the columns ``nan_synthetic``/``nan_real`` count
    them, so a metric undefined in every draw shows ``abs_diff = nan`` with its count.
    ``sd_synthetic``/``sd_real`` are the bootstrap standard deviations (``ddof=1``): each
    estimates the sampling standard deviation of the metric on a set of that size, so
    ``sqrt(sd_synthetic**2 + sd_real**2)`` is the standard error of the difference of the two
    sets' metrics.
    """
    for name, df in (("synthetic", synthetic), ("real", real)):
        if not isinstance(df, pd.DataFrame) or df.shape[1] == 0:
            raise InvalidInputError(
                f"{name} must be a DataFrame of bootstrap draws with one column per metric")
    if set(real.columns) != set(synthetic.columns):
        raise InvalidInputError(
            "synthetic and real bootstrap frames must hold the same metric columns; only in "
            f"synthetic: {sorted(set(synthetic.columns) - set(real.columns))}, only in real: "
            f"{sorted(set(real.columns) - set(synthetic.columns))}. Bootstrap both with the same "
            "metrics=")
    cols = list(real.columns)
    out = pd.DataFrame({
        "mean_synthetic": synthetic[cols].mean(skipna=True),
        "mean_real": real[cols].mean(skipna=True),
        "sd_synthetic": synthetic[cols].std(ddof=1, skipna=True),
        "sd_real": real[cols].std(ddof=1, skipna=True),
        "nan_synthetic": synthetic[cols].isna().sum(),
        "nan_real": real[cols].isna().sum(),
    })
    out.insert(0, "abs_diff", (out["mean_synthetic"] - out["mean_real"]).abs())
    return out


def plot_fairness_boxes(
    distributions: Mapping[str, pd.DataFrame], panels: Sequence[tuple[str, str]],
    *, kinds: Mapping[str, str], title: str = "",
) -> Any:
    """Figure 4 style box plots: one panel per ``(attribute, metric)``, one box per source.

    ``distributions`` maps a source name (``"Real test"``, ``"IGO (relationship)"``, ...) to a
    long frame with columns ``attribute``, ``metric``, ``value``; sources are drawn top to bottom
    in the mapping's order. ``kinds`` maps each source to ``"real"`` (blue), ``"ours"`` (green)
    or ``"baseline"`` (white).
    """
    import matplotlib.pyplot as plt

    colours = {"real": "tab:blue", "ours": "tab:green", "baseline": "white"}
    names = list(distributions)
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), 0.35 * len(names) + 1.6),
                             squeeze=False)
    for ax, (attribute, metric) in zip(axes[0], panels, strict=True):
        data = []
        for name in names:
            d = distributions[name]
            v = d.loc[(d["attribute"] == attribute) & (d["metric"] == metric), "value"]
            data.append(v.dropna().to_numpy())
        boxes = ax.boxplot(data, orientation="horizontal", patch_artist=True, widths=0.6,
                           showfliers=False)
        for patch, name in zip(boxes["boxes"], names, strict=True):
            patch.set_facecolor(colours[kinds[name]])
        ax.set_title(f"{metric} ({attribute})", fontsize=9)
        ax.set_yticks(range(1, len(names) + 1), names if ax is axes[0][0] else [], fontsize=8)
        ax.invert_yaxis()
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
