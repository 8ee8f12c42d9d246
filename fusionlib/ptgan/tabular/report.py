"""Summaries of the tabular S_T runs for the chapter: S_T per repetition, tables beside the
paper's, the verdicts' estimates, the Table 9 check.

* :func:`s_t_from_curves`: S_T of every member (repetition, setting) of the stacked cells from
  their AUC curves and the data set's ``S_train``.
* :func:`s_t_summary`: mean and sd of S_T over repetitions, one row per (dataset, discrepancy,
  method), with columns ``RF``, ``RF sd``, ``SVM``, ... as in the paper's tables.
* :func:`ours_for_paper`: our summary aligned with a paper table, every paper row present, with a
  ``status`` ("run" / "not run") and the ``reason`` (missing data, or a paper-scale-only row).
* :func:`protocol_reductions`: how a scale's protocol departs from the paper's (each departure
  changes the quantity S_T, so a claim on it is "not comparable").
* :func:`estimates_fn` / :func:`paired_difference`: the Estimates (mean, standard error,
  repetitions) that the verdicts compare.
* :func:`table9_architecture`: the layer counts and widths of the built Table 9 networks.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np
import pandas as pd
from torch import nn

from fusionlib.compendium.verdicts import Estimate
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.tabular.runs import counted_points
from fusionlib.ptgan.utility import s_t_normaliser, s_t_score

__all__ = ["COLUMNS", "S_T_MARGIN", "estimates_fn", "ours_for_paper", "paired_difference",
           "protocol_reductions", "s_t_from_curves", "s_t_runs", "s_t_summary",
           "table9_architecture"]

#: classifier key -> the paper's column name
COLUMNS: dict[str, str] = {"rf": "RF", "svm": "SVM", "lr": "LR"}
#: equivalence margin of an S_T claim: half the smallest gap between PT+CP and MP that Table 3
#: reports (Adult SVM and LR, 0.022), so a smaller difference changes no conclusion of the paper
S_T_MARGIN = 0.011
_KEYS = ["dataset", "discrepancy", "method"]


def s_t_from_curves(rows: pd.DataFrame, figures: Mapping[str, dict], n_eval: int
                    ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``(curves, scores, runs)`` from the rows and figures of the ``ptgan_tabular`` cells.

    A member gets an S_T per classifier when its data set's reference is present and every
    point of the second half was evaluated (a member that diverged lacks them and is left out;
    ``runs`` lists it).
    """
    rows = rows.assign(variant=rows["variant"].fillna("")) if "variant" in rows else \
        rows.assign(variant="")
    ref = rows[rows["kind"] == "reference"].set_index(["dataset", "variant", "classifier"])["auc"]
    curves = rows[rows["kind"] == "curves"].rename(columns={"label": "method"}).copy()
    curves["rep"] = curves["rep"].astype(int)
    curves["auc_train"] = [ref.get((d, v, c), np.nan) for d, v, c in
                           zip(curves["dataset"], curves["variant"], curves["classifier"],
                               strict=True)]
    need = counted_points(n_eval)
    scores = []
    for key, g in curves.groupby([*_KEYS, "rep", "classifier"], sort=False):
        part = g.set_index("point")["auc"]
        if not set(need) <= set(part.index) or not np.isfinite(g["auc_train"].iloc[0]):
            continue
        s_t = s_t_score(float(g["auc_train"].iloc[0]), part.loc[need].to_numpy(), k=n_eval)
        scores.append(dict(zip([*_KEYS, "rep", "classifier"], key, strict=True), s_t=s_t,
                           s_train=float(g["auc_train"].iloc[0])))
    runs = []
    for cell_id, fig in figures.items():
        if "train_s" not in fig:
            continue
        first = rows[rows["cell_id"] == cell_id].iloc[0] if (rows["cell_id"] == cell_id).any() \
            else None
        runs.append(dict(cell_id=cell_id,
                         dataset=None if first is None else first["dataset"],
                         discrepancy=None if first is None else first["discrepancy"],
                         group=None if first is None else first["group"],
                         members=fig["n_members"], n_iter=fig["n_iter"], train_s=fig["train_s"],
                         eval_s=fig["eval_s"], diverged=len(fig["diverged"]),
                         diverged_members=", ".join(f"{d['label']} rep {d['rep']} (iteration "
                                                    f"{d['iteration']})"
                                                    for d in fig["diverged"])))
    return (curves.reset_index(drop=True),
            pd.DataFrame(scores, columns=[*_KEYS, "rep", "classifier", "s_t", "s_train"]),
            pd.DataFrame(runs))


def s_t_summary(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean, sd and number of runs of S_T per (dataset, discrepancy, method) and classifier."""
    cols = [*_KEYS, "runs", *(f"{c}{s}" for c in COLUMNS.values() for s in ("", " sd"))]
    if scores.empty:
        return pd.DataFrame(columns=cols)
    g = scores.groupby([*_KEYS, "classifier"])["s_t"]
    stats = pd.DataFrame({"mean": g.mean(), "sd": g.std(ddof=1), "runs": g.size()}).reset_index()
    out = None
    for key, col in COLUMNS.items():
        part = stats[stats.classifier == key].rename(
            columns={"mean": col, "sd": f"{col} sd"}).drop(columns="classifier")
        out = part if out is None else out.drop(columns="runs").merge(part, on=_KEYS)
    return out[cols].reset_index(drop=True)


def ours_for_paper(paper: pd.DataFrame, summary: pd.DataFrame,
                   missing: Mapping[str, str | None], scale: str) -> pd.DataFrame:
    """Our rows for every row of ``paper`` with ``status`` and ``reason``.

    ``missing`` maps a dataset to why its files are absent (None when present). A ``scale``
    column of ``summary`` (the scale each row was computed at) is carried.
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
            reason.append(f"paper scale only (the {scale} scale runs a reduced grid) and its cell "
                          "is not computed yet: `make paper-cells ONLY=ptgan_tabular` computes "
                          "it on CPU (no GPU needed)")
        else:
            status.append("run")
            reason.append("")
    return merged.assign(status=status, reason=reason)


def protocol_reductions(cfg: Mapping, paper: Mapping, dataset: str,
                        n_iter: int | None = None) -> list[str]:
    """How the protocol of the scale settings ``cfg`` departs from ``paper``'s on ``dataset``.

    Each item names one departure that changes S_T itself (a shorter run, another number of
    evaluation points and so another normaliser, other generated or reference rows); fewer
    repetitions only widen the uncertainty and are not listed.
    """
    out = []
    ours_t, paper_t = n_iter or cfg["n_iter"][dataset], paper["n_iter"][dataset]
    if ours_t != paper_t:
        out.append(f"{ours_t:,} of the paper's {paper_t:,} iterations")
    if cfg["n_eval"] != paper["n_eval"]:
        k, kp = cfg["n_eval"], paper["n_eval"]
        out.append(f"{k} evaluation points instead of {kp} (normaliser "
                   f"{k - s_t_normaliser(k) + 2}/{s_t_normaliser(k)} instead of "
                   f"{kp - s_t_normaliser(kp) + 2}/{s_t_normaliser(kp)})")
    if cfg["n_rows"] != paper["n_rows"]:
        out.append(f"{cfg['n_rows']:,} generated rows per point instead of {paper['n_rows']:,}")
    if cfg["real_rows"] != paper["real_rows"]:
        out.append(f"S_train from {cfg['real_rows']:,} rows of D_train instead of all of it")
    return out


def estimates_fn(scores: pd.DataFrame, paper: pd.DataFrame, *, n_paper: int = 10):
    """``f(row, metric) -> (paper, ours)``: the paper's mean (sd) of ``n_paper`` runs and our
    mean of the repetitions, each with its standard error (:class:`Estimate`)."""
    def estimates(row: Mapping, metric: str) -> tuple[Estimate, Estimate]:
        hit = paper[(paper.dataset == row["dataset"]) & (paper.discrepancy == row["discrepancy"])
                    & (paper.method == row["method"])]
        if hit.empty:
            raise InvalidInputError(f"no paper row for {row['dataset']}/{row['method']}")
        clf = {v: k for k, v in COLUMNS.items()}[metric]
        mine = scores[(scores.dataset == row["dataset"]) & (scores.method == row["method"])
                      & (scores.discrepancy == row["discrepancy"]) & (scores.classifier == clf)]
        return (Estimate.from_mean_sd(float(hit.iloc[0][metric]),
                                      float(hit.iloc[0][f"{metric} sd"]), n_paper),
                Estimate.from_sample(mine["s_t"].to_numpy()))
    return estimates


def paired_difference(scores: pd.DataFrame, dataset: str, discrepancy: str, classifier: str,
                      a: str = "pt+cp", b: str = "mp-1") -> tuple[Estimate, int]:
    """S_T(a) - S_T(b) per repetition (paired by repetition: the same split and evaluation
    draws), as an :class:`Estimate` over the repetitions, and the number of pairs."""
    sub = scores[(scores.dataset == dataset) & (scores.discrepancy == discrepancy)
                 & (scores.classifier == classifier)]
    wide = sub.pivot_table(index="rep", columns="method", values="s_t")
    if a not in wide or b not in wide:
        return Estimate(float("nan"), None), 0
    diff = (wide[a] - wide[b]).dropna().to_numpy()
    return Estimate.from_sample(diff), int(diff.size)


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


def s_t_runs(scale: str, seed: int = 0, *, root: str | os.PathLike[str] | None = None,
             progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``(curves, scores, runs)`` of every ``ptgan_tabular`` cell at ``scale``, computing
    missing cells (:func:`s_t_from_curves`).

    ``curves``: one row per (dataset, discrepancy, method, rep, point, classifier) with the AUC
    and ``auc_train`` (S_train); ``scores``: one row per (dataset, discrepancy, method, rep,
    classifier) with ``s_t`` (members that diverged or lack a counted point are left out);
    ``runs``: one row per stacked cell with its members, wall seconds and diverged members.
    """
    from fusionlib.compendium.cells import results
    from fusionlib.ptgan.tabular.cells import TABULAR_CONFIG

    rows, figures = results("ptgan_tabular", scale, seed=seed, root=root, progress=progress)
    return s_t_from_curves(rows, figures, TABULAR_CONFIG[scale]["n_eval"])

