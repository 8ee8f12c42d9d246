"""Summaries of the tabular S_T runs for the chapter: tables beside the paper's, Table 9 check.

* :func:`s_t_summary`: mean and sd of S_T over repetitions, one row per (dataset, discrepancy,
  method), with columns ``RF``, ``RF sd``, ``SVM``, ... as in the paper's tables.
* :func:`ours_for_paper`: our summary aligned with a paper table, every paper row present, with a
  ``status`` ("run" / "not run") and the ``reason`` (missing data, or a paper-scale-only row).
* :func:`tolerance_fn`: the tolerance of a claim: twice the standard error of the difference of
  the paper's mean of 10 runs and ours of n runs, both with the paper's run-to-run sd (a few
  reduced-scale runs cannot estimate a spread; two runs gave sds from 0.0006 to 0.07), at least
  0.005.
* :func:`table9_architecture`: the layer counts and widths of the built Table 9 networks.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd
from torch import nn

from fusionlib.errors import InvalidInputError

__all__ = ["COLUMNS", "ours_for_paper", "s_t_summary", "table9_architecture", "tolerance_fn"]

#: classifier key -> the paper's column name
COLUMNS: dict[str, str] = {"rf": "RF", "svm": "SVM", "lr": "LR"}
_KEYS = ["dataset", "discrepancy", "method"]


def s_t_summary(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean, sd and number of runs of S_T per (dataset, discrepancy, method) and classifier."""
    if scores.empty:
        return pd.DataFrame(columns=[*_KEYS, "runs", *(f"{c}{s}" for c in COLUMNS.values()
                                                       for s in ("", " sd"))])
    g = scores.groupby([*_KEYS, "classifier"])["s_t"]
    stats = pd.DataFrame({"mean": g.mean(), "sd": g.std(ddof=1), "runs": g.size()}).reset_index()
    out = None
    for key, col in COLUMNS.items():
        part = stats[stats.classifier == key].rename(
            columns={"mean": col, "sd": f"{col} sd"}).drop(columns="classifier")
        out = part if out is None else out.drop(columns="runs").merge(part, on=_KEYS)
    cols = [*_KEYS, "runs", *(f"{c}{s}" for c in COLUMNS.values() for s in ("", " sd"))]
    return out[cols].reset_index(drop=True)


def ours_for_paper(paper: pd.DataFrame, summary: pd.DataFrame,
                   missing: Mapping[str, str | None], scale: str) -> pd.DataFrame:
    """Our rows for every row of ``paper`` with ``status`` and ``reason``.

    ``missing`` maps a dataset to why its files are absent (None when present).
    """
    merged = paper[_KEYS].merge(summary, on=_KEYS, how="left")
    status, reason = [], []
    for r in merged.to_dict("records"):
        why_missing = missing.get(r["dataset"])
        if why_missing:
            status.append("not run")
            reason.append(f"data absent: {why_missing}")
        elif pd.isna(r.get("RF")):
            status.append("not run")
            reason.append(f"paper scale only (the {scale} scale runs a reduced grid); run the "
                          "ptgan_tabular cells at scale paper (GPU runners)")
        else:
            status.append("run")
            reason.append("")
    return merged.assign(status=status, reason=reason)


def tolerance_fn(ours: pd.DataFrame, paper: pd.DataFrame, *, n_paper: int = 10,
                 floor: float = 0.005):
    """``f(row, metric)``: 2 sd_paper sqrt(1 / n_paper + 1 / n_ours), at least ``floor``.

    ``row`` is a row of :func:`fusionlib.compendium.paper.side_by_side`; the paper's sd and our
    number of runs are looked up in ``paper`` and ``ours`` by (dataset, discrepancy, method).
    """
    def lookup(frame: pd.DataFrame, row: Mapping, col: str) -> float:
        hit = frame[(frame.dataset == row["dataset"]) & (frame.discrepancy == row["discrepancy"])
                    & (frame.method == row["method"])]
        if hit.empty:
            raise InvalidInputError(f"no row for {row['dataset']}/{row['method']}")
        return float(hit.iloc[0][col])

    def tolerance(row: Mapping, metric: str) -> float:
        sd_p, n_o = lookup(paper, row, f"{metric} sd"), lookup(ours, row, "runs")
        if not (math.isfinite(n_o) and n_o >= 1):
            return math.inf  # no run: no tolerance (register_table: "not run")
        return max(2.0 * sd_p * math.sqrt(1.0 / n_paper + 1.0 / n_o), floor)

    return tolerance


def _dense_stack(seq: nn.Sequential) -> tuple[list[int], int, int]:
    """Widths of the Linear layers of ``seq``, and its numbers of BatchNorm1d and ReLU layers."""
    widths = [m.out_features for m in seq if isinstance(m, nn.Linear)]
    return (widths, sum(isinstance(m, nn.BatchNorm1d) for m in seq),
            sum(isinstance(m, nn.ReLU) for m in seq))


def table9_architecture(generator: nn.Module, critic: nn.Module) -> pd.DataFrame:
    """Rows ``network, part, quantity, value`` of the built networks, in Table 9's terms."""
    c_widths, _, c_relu = _dense_stack(critic.net)
    g_widths, g_bn, g_relu = _dense_stack(generator.body)
    head = generator.head
    spans = getattr(head, "spans", ())
    rows = [
        ("critic", "hidden", "dense layers", len(c_widths) - 1),
        ("critic", "hidden", "width", max(c_widths[:-1])),
        ("critic", "hidden", "ReLU layers", c_relu),
        ("critic", "output", "width", c_widths[-1]),
        ("critic", "input", "extra t(alpha) column", int(critic.conditional)),
        ("generator", "input", "latent dimension", generator.latent_dim),
        ("generator", "input", "extra t(alpha) column", int(generator.conditional)),
        ("generator", "common", "dense layers", len(g_widths)),
        ("generator", "common", "width", max(g_widths)),
        ("generator", "common", "batch-norm layers", g_bn),
        ("generator", "common", "ReLU layers", g_relu),
        ("generator", "continuous", "linear outputs",
         sum(s.stop - s.start for s in spans if s.kind == "continuous")),
        ("generator", "discrete", "Gumbel-softmax blocks",
         sum(s.kind == "discrete" for s in spans)),
    ]
    return pd.DataFrame(rows, columns=["network", "part", "quantity", "value"])
