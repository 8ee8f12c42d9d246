"""Claims and table helpers of the fairness-testing chapter (``notebooks/fairness_testing.md``).

The chapter's numbers come from the protocol's cells
(:mod:`fusionlib.fairtest.protocol.cells`, which import
:mod:`fusionlib.fairtest.protocol.report` and :mod:`fusionlib.fairtest.evidence`, so those are
part of the ``fairtest_protocol`` code key). This module is read by the notebook only, so
changing it recomputes nothing: why a value may differ from the paper's, the equivalence margin
of a metric, the registration of a paper-beside-ours table cell by cell, and the means over our
synthetic sets.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from fusionlib.compendium.paper import register_table
from fusionlib.compendium.verdicts import Estimate
from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.evidence import MARGINS, difference, kl_margin, lookup, mean_estimate
from fusionlib.fairtest.protocol.report import difference_reason

__all__ = ["OURS", "difference_why", "equivalence_margin", "ctgan_not_comparable",
           "paper_and_ours", "register", "shown", "ours_sets", "dm_gap", "mean_abs_diff"]

#: our three estimators (the rest of a table's methods are baselines)
OURS: tuple[str, ...] = ("IGO", "Marginal", "Latent")


def difference_why(method: str, metric: str, dataset: str, *, scale: str, compas_mi: str,
                   ctgan_cfg: Mapping[str, Mapping], latent_fits: int) -> str:
    """The known cause of a difference between our value and the paper's
    (:func:`fusionlib.fairtest.protocol.report.difference_reason`), and, above ``smoke`` scale, the
    Independent model's CS and DM, whose cause is not known.

    ``ctgan_cfg`` maps a dataset to its CTGAN settings (``runs``: the repeated trainings, 1 if
    absent); ``metric`` is the metric's first word.
    """
    if method == "Indep" and metric in ("CS", "DM") and scale != "smoke":
        return ("the Independent model is fitted by counting (no training length or seed to "
                "vary) and our CS and DM agree with SDMetrics and the paper's definition; the "
                "cause is not known")
    runs = ctgan_cfg.get(dataset, {}).get("runs", 1)
    return difference_reason(method, metric, dataset, scale=scale, compas_mi=compas_mi,
                             ctgan_runs=runs, latent_fits=latent_fits)


def equivalence_margin(row: Mapping, metric: str) -> float:
    """The equivalence margin of ``metric`` in a paper-beside-ours ``row``: for ``KL (...)``
    relative to the paper's value (:func:`fusionlib.fairtest.evidence.kl_margin`), else the
    fixed margin of :data:`fusionlib.fairtest.evidence.MARGINS`."""
    if re.fullmatch(r"KL \((.+)\)", metric):
        return kl_margin(row[f"{metric} paper"])
    if metric not in MARGINS:
        raise InvalidInputError(f"no equivalence margin for metric {metric!r}")
    return MARGINS[metric]


def ctgan_not_comparable(reduced: Mapping[str, str | None]
                         ) -> Callable[[Mapping, str], str | None]:
    """``not_comparable(row, metric)``: a CTGAN row of a dataset whose CTGAN trained shorter
    than its published protocol (``reduced``: dataset -> reason or None) changes the quantity
    itself; other rows are comparable."""
    def not_comparable(row: Mapping, metric: str) -> str | None:
        return reduced.get(row["dataset"]) if row["method"] == "CTGAN" else None
    return not_comparable


def paper_and_ours(est: pd.DataFrame, keys: Sequence[str]
                   ) -> Callable[[Mapping, str], tuple[Estimate, Estimate]]:
    """``estimates(row, metric)``: the paper's value (exact) and ours with its uncertainty,
    looked up in ``est`` by the row's ``keys`` and the metric."""
    keys = list(keys)

    def pair(row: Mapping, metric: str) -> tuple[Estimate, Estimate]:
        return (Estimate.exact(row[f"{metric} paper"]),
                lookup(est, **{k: row[k] for k in keys}, metric=metric))
    return pair


def register(run, table: pd.DataFrame, tag: str, where: str, metrics: Sequence[str], *,
             est: pd.DataFrame, reduced: Mapping[str, str | None],
             why: Callable[[str, str, str], str],
             keys: Sequence[str] = ("method", "overlap"),
             ctgan_scales: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Every cell of a paper-vs-ours ``table`` as a seed-002 claim ``002-<tag>-...``
    (:func:`fusionlib.compendium.paper.register_table`), under :func:`equivalence_margin`.

    ``est`` holds our estimates, ``reduced`` the CTGAN reductions per dataset, ``why(method,
    metric's first word, dataset)`` the known cause of a difference; ``ctgan_scales`` maps a
    dataset to the scale whose cells its CTGAN rows were read from, when not the chapter's
    (:func:`~fusionlib.fairtest.protocol.present.with_source_ctgan`): those claims carry it.
    Returns the verdict rows.
    """
    if ctgan_scales:
        table = table.assign(scale=[
            ctgan_scales.get(d) if m == "CTGAN" else None
            for d, m in zip(table["dataset"], table["method"], strict=True)])
    return register_table(run, table, seed_file="002", tag=tag, where=where, metrics=metrics,
                          tolerance=equivalence_margin, keys=keys,
                          not_comparable=ctgan_not_comparable(reduced),
                          estimates=paper_and_ours(est, ["dataset", *keys]), kind="result",
                          why=lambda r, m: why(r["method"], m.split(" ")[0], r["dataset"]))


def shown(table: pd.DataFrame, metrics: Sequence[str], keys: Sequence[str],
          est: pd.DataFrame) -> pd.DataFrame:
    """A paper-vs-ours table for display: the standard error of ours (from ``est``) after each
    ``<metric> ours`` column; the ``reason`` column dropped."""
    out = table.drop(columns=["reason"], errors="ignore").copy()
    for m in metrics:
        se = [lookup(est, **{k: r[k] for k in keys}, metric=m).se
              for r in out.to_dict("records")]
        out.insert(out.columns.get_loc(f"{m} ours") + 1, f"{m} se",
                   [np.nan if v is None else v for v in se])
    return out


def ours_sets(fidelity: pd.DataFrame, dataset: str,
              ours: Sequence[str] = OURS) -> list[tuple[str, str]]:
    """(method, overlap) of our synthetic sets of ``dataset`` in the fidelity table."""
    f = fidelity[(fidelity["dataset"] == dataset) & fidelity["method"].isin(list(ours))]
    return list(zip(f["method"], f["overlap"], strict=True))


def dm_gap(est: pd.DataFrame, fidelity: pd.DataFrame, base: str, datasets: Sequence[str]
           ) -> Estimate:
    """Mean over our synthetic sets of every dataset in ``datasets`` of ``DM(base) - DM(set)``,
    with the standard error of :func:`fusionlib.fairtest.evidence.mean_estimate`."""
    parts = [difference(lookup(est, dataset=d, method=base, overlap="", metric="DM"),
                        lookup(est, dataset=d, method=me, overlap=o, metric="DM"))
             for d in datasets for me, o in ours_sets(fidelity, d)]
    if not parts:
        raise InvalidInputError(f"no synthetic set of ours in {list(datasets)}")
    return mean_estimate(parts)


def mean_abs_diff(table9: pd.DataFrame, col: str, ours: Sequence[str] = OURS) -> pd.Series:
    """Mean of ``col`` over our methods' rows of a long Table 9, per (dataset, metric)."""
    return (table9[table9["method"].isin(list(ours))]
            .groupby(["dataset", "metric"])[col].mean())
