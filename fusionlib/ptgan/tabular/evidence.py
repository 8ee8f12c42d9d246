"""What the tabular chapter reads beyond its own grid: shards computed elsewhere, the label
balance of every repetition, S_T pooled over root seeds, and the sensitivity to unstated choices.

* :func:`present_runs`: ``(curves, scores, runs, balance)`` of the ``ptgan_tabular`` cells of a
  scale and root seed that have a current shard (computed here, or installed from a results
  bundle), **without computing** the missing ones: the paper-scale sensitivity cells cost about
  half an hour of one core each, so the chapter shows the ones present and says which are not.
* :func:`balance_frame` / :func:`label_collapse`: the share of generated rows with the positive
  label at every evaluation point; a repetition whose share over the counted half of training
  stays far from the data's has collapsed onto one label.
* :func:`pooled_difference`: ``S_T(a) - S_T(b)`` over the repetitions of several root seeds, seed
  as a block (each root seed has its own split and repetition seeds).
* :func:`paper_rows_beside`: the paper scale's main runs of the rows a cpu chapter's own grid
  lacks (Tables 10 and 11), from the cells present.
* :func:`sensitivity_rows`: per unstated choice, each method's S_T (mean, median, se) and the
  paired difference.

None of this is part of a cell's code key (nothing here is imported by the cells).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from fusionlib.compendium.verdicts import Estimate
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.tabular.report import s_t_from_curves
from fusionlib.ptgan.tabular.runs import counted_points

__all__ = ["COLLAPSE_FRACTION", "balance_frame", "label_collapse", "paper_rows_beside",
           "pooled_difference", "present_runs", "sensitivity_rows", "split_variant"]

#: a repetition has collapsed onto one label when its mean positive-label share over the counted
#: half of training is off the data's share by more than this fraction of the data's share
COLLAPSE_FRACTION = 0.5


def split_variant(method: str) -> tuple[str, str]:
    """``"pt+cp tau=1"`` -> ``("pt+cp", "tau=1")``; a main-run member has variant ``""``."""
    base, _, variant = method.partition(" ")
    return base, variant


def balance_frame(figures: Mapping[str, Mapping]) -> pd.DataFrame:
    """The ``balance`` rows of every curve cell's figures, one frame (``method`` = the member's
    label, ``cell_id`` added); empty when no cell recorded them."""
    parts = [pd.DataFrame(f["balance"]).assign(cell_id=cid)
             for cid, f in figures.items() if f.get("balance")]
    if not parts:
        return pd.DataFrame(columns=["cell_id", "method", "rep", "point", "iteration",
                                     "label_share"])
    out = pd.concat(parts, ignore_index=True).rename(columns={"label": "method"})
    out["rep"] = out["rep"].astype(int)
    return out


def present_runs(scale: str, seed: int = 0, *, root: str | os.PathLike[str] | None = None
                 ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame, list[str]]:
    """``(curves, scores, runs, balance, missing)`` of the cells of ``scale`` and root ``seed``
    whose shard is present and current; ``missing`` lists the labels of the others. Nothing is
    computed."""
    from fusionlib.compendium.cells import code_key, get_experiment, load_shard, shard_path
    from fusionlib.compendium.cells.store import resolve_root
    from fusionlib.ptgan.tabular.cells import TABULAR_CONFIG

    exp = get_experiment("ptgan_tabular")
    key, folder = code_key(exp), resolve_root(root)
    frames, figures, missing = [], {}, []
    for cell in exp.cells(scale, seed):
        shard = load_shard(shard_path(folder, exp.name, scale, cell.cell_id), key, cell)
        if shard is None:
            missing.append(cell.label)
            continue
        frames.append(shard.rows.assign(cell_id=cell.cell_id))
        figures[cell.cell_id] = shard.figures
    if not frames:
        empty = pd.DataFrame()
        return empty, empty, empty, balance_frame({}), missing
    rows = pd.concat([f for f in frames if len(f)], ignore_index=True)
    curves, scores, runs = s_t_from_curves(rows, figures, TABULAR_CONFIG[scale]["n_eval"])
    return curves, scores, runs, balance_frame(figures), missing


def label_collapse(balance: pd.DataFrame, data_share: float, n_eval: int, *,
                   fraction: float = COLLAPSE_FRACTION) -> pd.DataFrame:
    """Per (method, rep): the mean and the range of the positive-label share over the counted
    evaluation points, and ``collapsed`` when the mean is off ``data_share`` by more than
    ``fraction * data_share``."""
    if not 0 < data_share < 1:
        raise InvalidInputError(f"data_share must lie in (0, 1), got {data_share!r}")
    if not fraction > 0:
        raise InvalidInputError(f"fraction must be > 0, got {fraction!r}")
    cols = ["method", "rep", "share_mean", "share_min", "share_max", "collapsed"]
    part = balance[balance["point"].isin(counted_points(n_eval))]
    if part.empty:
        return pd.DataFrame(columns=cols)
    g = part.groupby(["method", "rep"])["label_share"]
    out = pd.DataFrame({"share_mean": g.mean(), "share_min": g.min(),
                        "share_max": g.max()}).reset_index()
    out["collapsed"] = (out["share_mean"] - data_share).abs() > fraction * data_share
    return out[cols]


def _paired(scores: pd.DataFrame, classifier: str, a: str, b: str) -> np.ndarray:
    if scores.empty or not {"classifier", "rep", "method", "s_t"} <= set(scores.columns):
        return np.empty(0)
    sub = scores[scores["classifier"] == classifier]
    wide = sub.pivot_table(index="rep", columns="method", values="s_t")
    if a not in wide or b not in wide:
        return np.empty(0)
    return (wide[a] - wide[b]).dropna().to_numpy(dtype=float)


def pooled_difference(per_seed: Mapping[int, pd.DataFrame], classifier: str, a: str = "pt+cp",
                      b: str = "mp-1") -> tuple[Estimate, pd.DataFrame]:
    """``S_T(a) - S_T(b)`` pooled over root seeds with the seed as a block.

    ``per_seed``: root seed -> the scores of one data set and discrepancy at that seed. Each
    seed's repetitions are paired (common split and evaluation draws); the pooled value is the
    mean of the seed means, its standard error ``sqrt(sum se_s^2) / S`` from the within-seed
    standard errors, with ``sum (n_s - 1)`` degrees of freedom. Seeds with fewer than two pairs
    are left out. Returns the estimate and one row per seed (mean, median, se, pairs).
    """
    rows = []
    for s, scores in sorted(per_seed.items()):
        d = _paired(scores, classifier, a, b)
        if d.size >= 2:
            rows.append(dict(seed=s, mean=float(d.mean()), median=float(np.median(d)),
                             se=float(d.std(ddof=1) / math.sqrt(d.size)), pairs=int(d.size)))
    table = pd.DataFrame(rows, columns=["seed", "mean", "median", "se", "pairs"])
    if table.empty:
        return Estimate(float("nan"), None), table
    k = len(table)
    se = float(np.sqrt((table["se"] ** 2).sum()) / k)
    n = int(table["pairs"].sum())
    return Estimate(float(table["mean"].mean()), se, n=n, df=float(n - k)), table


def sensitivity_rows(scores: pd.DataFrame, classifiers: Sequence[str],
                     methods: tuple[str, str] = ("pt+cp", "mp-1")) -> pd.DataFrame:
    """Per unstated choice (the members' variant, ``""`` for the main runs) and classifier:
    each method's S_T mean, median, se and repetitions, and the paired difference a - b."""
    if scores.empty:
        return pd.DataFrame()
    sc = scores.copy()
    sc[["base", "variant"]] = [split_variant(m) for m in sc["method"]]
    out = []
    for (variant, clf), g in sc[sc["classifier"].isin(classifiers)].groupby(
            ["variant", "classifier"], sort=True):
        row: dict[str, object] = dict(variant=variant or "main", classifier=clf)
        for m in methods:
            v = g.loc[g["base"] == m, "s_t"].to_numpy(dtype=float)
            row[f"{m} mean"] = float(v.mean()) if v.size else float("nan")
            row[f"{m} median"] = float(np.median(v)) if v.size else float("nan")
            row[f"{m} n"] = int(v.size)
        d = _paired(g.assign(method=g["base"]), clf, *methods)
        row["difference"] = float(d.mean()) if d.size else float("nan")
        row["difference se"] = (float(d.std(ddof=1) / math.sqrt(d.size)) if d.size >= 2
                                else float("nan"))
        row["pairs"] = int(d.size)
        out.append(row)
    return pd.DataFrame(out)


#: the words of a sensitivity cell's label (``"adult nd pt+cp tau=1 x10"``)
_SENSITIVITY_WORDS = ("tau=", "bn=", "data=")


def paper_rows_beside(main: pd.DataFrame, seed: int = 0, *,
                      root: str | os.PathLike[str] | None = None
                      ) -> tuple[pd.DataFrame, list[str]]:
    """The paper scale's main runs of the (dataset, discrepancy, method) rows ``main`` lacks,
    from the cells present (computed here or installed from a bundle; nothing is computed),
    with ``scale = "paper"``: a cpu chapter shows them for the rows of Tables 10 and 11 that
    only the paper scale runs. Sensitivity members are left out (the chapter reads them
    itself). Returns ``(scores, labels)``: ``labels`` names the paper scale's main cells whose
    shard is missing, reference cells included (without its data set's reference no S_T of that
    data set can be read), sensitivity cells and the cells whose rows ``main`` has left out."""
    from fusionlib.ptgan.tabular.cells import GROUPS

    _, scores, _, _, missing = present_runs("paper", seed, root=root)
    keys = ["dataset", "discrepancy", "method"]
    have = set(map(tuple, main[keys].drop_duplicates().to_numpy())) if len(main) else set()
    # the group cells whose rows main has already (the cpu scale's own) are not wanted
    covered = {f"{d} {disc} {GROUPS[m]}" for d, disc, m in have if m in GROUPS}
    labels = [m for m in missing if not any(w in m for w in _SENSITIVITY_WORDS)
              and m.rsplit(" x", 1)[0] not in covered]
    if not len(scores):
        return pd.DataFrame(columns=list(dict.fromkeys([*main.columns, "scale"]))), labels
    scores = scores[~scores.method.str.contains(" ", regex=False)]
    new = [tuple(k) not in have for k in scores[keys].to_numpy()]
    return scores[new].assign(scale="paper").reset_index(drop=True), labels
