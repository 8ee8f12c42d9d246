"""Summaries of the image runs for ``notebooks/ptgan_images.md`` (seed 001, Section 5.1).

Turns the shards of :mod:`fusionlib.ptgan.images.cells` into frames (variance curves, classifier
scores), summarises Figure 5's variance comparison, and registers one claim for every number of
the paper's Tables 1, 2, 7 and 8 (paper-scale cells that did not run are "not run" with what they
need; nothing here is compared with a number of another kind), and the orderings the paper
reads from them (:func:`register_orderings`): PT+CP against the best other method of each row
group of Tables 1 and 2, and PT+CP at r = 0.9 against r = 1 (Table 8).
"""

from __future__ import annotations

import base64
import io
import os

import numpy as np
import pandas as pd

from fusionlib.compendium.cells import results
from fusionlib.compendium.paper import paper_table
from fusionlib.compendium.verdicts import Estimate
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.images.cells import TABLE1_R, decode_images

__all__ = ["NEEDS", "TABLE_MARGIN", "METHOD_NAMES", "check_architecture", "classifier",
           "classifier_score_table", "late_log10", "panel_claim", "proxy_runs",
           "register_orderings", "register_paper_tables", "run_difference", "variance_summary"]

#: the names the chapter gives the image methods
METHOD_NAMES = {"pt+cp": "PTGAN", "mp": "LGAN (MP)", "sn": "SNGAN (SN)"}

#: what a paper-scale image cell needs, by dataset
NEEDS = {
    "cifar10": "data/cifar10/cifar-10-python.tar.gz (`python -m fusionlib.data provision cifar10` "
               "on a machine with web access)",
    "bloodmnist": "data/bloodmnist/bloodmnist_64.npz (`python -m fusionlib.data provision "
                  "bloodmnist`) and an InceptionV3 fine-tuned on BloodMNIST (SM D.2.1; not built)",
    "celeba_hq": "data/celeba_hq/celeba_hq_256.zip (provided by the user) and, for MLL-FID, an "
                 "InceptionV3 fine-tuned on the 40 attributes (SM D.2.1; not built)",
}
_GPU = ("a GPU runner with the torch-fidelity extra (InceptionV3 weights need network access) "
        "running experiment ptgan_images_paper at paper scale (100k iterations, 10 seeds)")


def classifier(scale: str, seed: int = 0, *, root: str | os.PathLike[str] | None = None):
    """The trained feature classifier of ``scale`` and its row (test accuracy)."""
    import torch

    from fusionlib.metrics.image_classifier import FeatureClassifier

    rows, figures = results("ptgan_images_classifier", scale, seed=seed, root=root)
    state = torch.load(io.BytesIO(base64.b64decode(figures[rows.cell_id[0]]["state"])),
                       weights_only=True)
    model = FeatureClassifier(1, 32, 10)
    model.load_state_dict(state)
    return model.eval(), rows.drop(columns="cell_id")


def proxy_runs(scale: str, seed: int = 0, *, root: str | os.PathLike[str] | None = None
               ) -> tuple[pd.DataFrame, pd.DataFrame, dict[tuple[str, int], np.ndarray]]:
    """``(rows, variance curves, samples)`` of the Fashion-MNIST slice at ``scale``; curves
    carry the run's ``arm`` (:func:`~fusionlib.ptgan.images.cells.arm_label`) and ``rep``,
    samples are keyed by ``(arm, rep)``."""
    rows, figures = results("ptgan_images", scale, seed=seed, root=root)
    curves, samples = [], {}
    for r in rows.itertuples():
        fig = figures[r.cell_id]
        curves.append(pd.DataFrame(fig["variance"]).assign(arm=r.arm, method=r.method,
                                                           rep=r.rep))
        samples[(r.arm, int(r.rep))] = decode_images(fig["samples"])
    return rows, pd.concat(curves, ignore_index=True), samples


def late_log10(curves: pd.DataFrame, value: str = "var_loss") -> pd.DataFrame:
    """Per seed (rows: ``rep``) and arm (columns): the mean of ``log10(value)`` over the second
    half of training (measurements after half the last iteration)."""
    last = curves.iteration.max()
    late = curves[curves.iteration > last / 2].assign(log=lambda d: np.log10(d[value]))
    return late.groupby(["rep", "arm"]).log.mean().unstack("arm")


def variance_summary(curves: pd.DataFrame, value: str = "var_loss") -> pd.DataFrame:
    """Per arm, the late mean ``log10(value)`` (:func:`late_log10`): mean, sd and standard
    error over seeds, and the number of seeds."""
    per_seed = late_log10(curves, value)
    out = pd.DataFrame({f"late mean log10 {value}": per_seed.mean(),
                        "sd over seeds": per_seed.std(), "seeds": per_seed.count()})
    out["se"] = out["sd over seeds"] / np.sqrt(out["seeds"])
    return out.rename_axis("arm")


def classifier_score_table(model, real: np.ndarray, samples: dict, reference: np.ndarray
                           ) -> pd.DataFrame:
    """Classifier-FID (vs ``real``) and classifier-IS per run (``samples`` keyed by (arm, rep)),
    plus a real-vs-real floor row."""
    from fusionlib.data.images import to_unit
    from fusionlib.metrics.image_classifier import classifier_scores

    rows = []
    n = min(len(x) for x in samples.values())
    ref = classifier_scores(model, to_unit(real), to_unit(reference[:n]))
    rows.append({"arm": "real (train images)", "rep": np.nan, **ref})
    for (arm, rep), x in samples.items():
        rows.append({"arm": arm, "rep": rep, **classifier_scores(model, to_unit(real),
                                                                   to_unit(x[:n]))})
    return pd.DataFrame(rows).astype({"rep": "Int64"}).rename(columns={
        "fid": "classifier-FID", "is": "classifier-IS",
                                              "is_std": "classifier-IS sd"})


def _paper_results(scale: str, seed: int, root) -> pd.DataFrame | None:
    if scale != "paper":
        return None
    rows, _ = results("ptgan_images_paper", scale, seed=seed, root=root)
    return rows


def _ours(paper_rows: pd.DataFrame | None, key: dict) -> pd.DataFrame:
    if paper_rows is None:
        return pd.DataFrame()
    sel = paper_rows[paper_rows.status == "run"]
    for k, v in key.items():
        if k not in sel:
            return sel.iloc[0:0]
        numeric = k in ("r", "penalty_weight")
        sel = sel[np.isclose(sel[k].astype(float), v) if numeric else sel[k] == v]
    return sel


#: equivalence margin of an IS or FID mean, relative to the paper's mean: 5 % (the gaps between
#: the methods of Table 1 are 2-20 %); an sd's margin is the paper's sd itself
TABLE_MARGIN = 0.05


def _sd_estimate(sd: float, n: int) -> Estimate:
    """An sd of ``n`` runs with its approximate standard error ``sd / sqrt(2 (n - 1))``."""
    return Estimate(float(sd), float(sd) / np.sqrt(2 * (n - 1)), int(n), float(n - 1))


def _runs(ours_rows, table: str, r: dict, extra_key: str | None
          ) -> dict[float | None, pd.DataFrame]:
    """The runs behind one row of the paper's table, by the r they ran at.

    Table 1's PT+CP is the better of r in :data:`TABLE1_R` (Section 5.1): both are returned.
    Table 8's r = 0.9 column is the r = 0.9 run of Table 1's grid; its r = 1 column has its own
    cells."""
    key = {"dataset": r["dataset"], "discrepancy": r["discrepancy"], "method": r["method"]}
    if table == "Table 1" and r["method"] == "pt+cp":
        return {rr: _ours(ours_rows, {**key, "table": "Table 1", "r": rr}) for rr in TABLE1_R}
    if table == "Table 8":
        rr = float(r["r"])
        return {rr: _ours(ours_rows, {**key, "r": rr,
                                      "table": "Table 1" if rr in TABLE1_R else "Table 8"})}
    if extra_key == "lambda":
        key["penalty_weight"] = float(r["lambda"])
    return {None: _ours(ours_rows, {**key, "table": table})}


def _chosen(runs: dict, metric: str) -> tuple[float | None, pd.DataFrame, str]:
    """The runs Table 1 reports for ``metric``: with several r, the r with the better mean
    (IS: higher, FID: lower), as the paper chooses; ``(r, runs, note)``."""
    col = metric.lower()
    ok = {rr: d for rr, d in runs.items() if len(d) >= 2 and col in d}
    if len(runs) == 1 or len(ok) < len(runs):
        rr, d = next(iter(runs.items()))
        return rr, d if len(ok) == len(runs) else d.iloc[0:0], ""
    means = {rr: d[col].astype(float).mean() for rr, d in ok.items()}
    best = (max if metric == "IS" else min)(means, key=means.get)
    note = "r chosen from " + ", ".join(f"{rr:g} ({m:.4g})" for rr, m in means.items())
    return best, ok[best], f"{note}: r = {best:g}"


def _claims_for(run, table: str, frame: pd.DataFrame, metrics: tuple[str, ...],
                ours_rows: pd.DataFrame | None, extra_key: str | None, not_built: set[str]
                ) -> int:
    n = 0
    for r in frame.to_dict("records"):
        tag = "-".join(str(x) for x in (r["dataset"], r["discrepancy"], r["method"],
                                         r.get(extra_key) if extra_key else None) if x is not None)
        runs = _runs(ours_rows, table, r, extra_key)
        for m in metrics:
            rr, ours, note = _chosen(runs, m)
            for stat in ("", "_sd"):
                col = f"{m}{stat}"
                where_what = f"{r['dataset']}, {r['discrepancy'].upper()}, {r['method']}" + (
                    f", {extra_key} {r[extra_key]:g}" if extra_key else "")
                cid = f"001-{table.replace('Table ', 'T')}-{tag}-{col}"
                quantity = f"{where_what}: {m} {'sd over 10 runs' if stat else 'mean'}"
                if len(runs) > 1:
                    quantity += " (the better of r = 0.9 and r = 0.99, as Section 5.1 chooses)"
                unbuilt = m in not_built or r["dataset"] == "bloodmnist"
                if unbuilt or len(ours) < 2 or m.lower() not in ours:
                    need = NEEDS.get(r["dataset"], "")
                    both = " (runs at both r = 0.9 and r = 0.99)" if len(runs) > 1 else ""
                    reason = (f"needs {need}; then {_GPU}" if unbuilt
                              else f"paper scale only: needs {need} and {_GPU}{both}")
                    run.claim(cid, "001", table, quantity, r[col], None, kind="result",
                              not_run=reason)
                else:
                    vals = ours[m.lower()].astype(float).to_numpy()
                    if stat:
                        paper = _sd_estimate(r[col], 10)
                        mine = _sd_estimate(vals.std(ddof=1), len(vals))
                        tol = float(r[col])
                    else:
                        paper = Estimate.from_mean_sd(r[m], r[f"{m}_sd"], 10)
                        mine = Estimate.from_sample(vals)
                        tol = TABLE_MARGIN * abs(float(r[m]))
                    why = "different Inception weights or software versions"
                    run.claim(cid, "001", table, quantity, paper, mine, kind="result",
                              tolerance=tol, why=f"{why}; {note}" if note else why)
                n += 1
    return n


def run_difference(a: np.ndarray, b: np.ndarray) -> Estimate:
    """``mean(a) - mean(b)`` of two independent sets of runs (each at least two), with the
    standard error of two independent means and Welch-Satterthwaite degrees of freedom."""
    ea, eb = Estimate.from_sample(a), Estimate.from_sample(b)
    if ea.n is None or eb.n is None or ea.n < 2 or eb.n < 2:
        raise InvalidInputError(f"run_difference needs at least two runs on each side, got "
                                f"{np.size(a)} and {np.size(b)}")
    va, vb = float(ea.se) ** 2, float(eb.se) ** 2
    se = float(np.sqrt(va + vb))
    if se == 0:
        return Estimate(ea.value - eb.value, None, None)
    df = se**4 / (va**2 / ea.df + vb**2 / eb.df)
    return Estimate(ea.value - eb.value, se, None, float(df))


def _better(metric: str) -> str:
    """``">0"`` when a higher value of ``metric`` is better (IS), ``"<0"`` otherwise (FIDs)."""
    return ">0" if metric == "IS" else "<0"


def _values(runs: pd.DataFrame, metric: str) -> np.ndarray | None:
    col = metric.lower()
    if len(runs) < 2 or col not in runs:
        return None
    return runs[col].astype(float).to_numpy()


def _best_claims(run, table: str, metrics: tuple[str, ...], ours_rows: pd.DataFrame | None,
                 not_built: set[str]) -> int:
    """Per (dataset, discrepancy) of ``table`` and metric: PT+CP minus the best other method
    of the group (by our mean over runs; the paper's best for the paper's value), a direction
    claim ``001-<T>-<dataset>-<discrepancy>-best-<metric>``. Choosing the best competitor on the
    same runs favours the competitor (the claim is conservative for PT+CP); PT+CP in Table 1
    takes the better of r = 0.9 and 0.99, as the paper does (which favours PT+CP)."""
    paper = paper_table("001", table)
    tag = table.replace("Table ", "T")
    n = 0
    for (dataset, disc), grp in paper.groupby(["dataset", "discrepancy"], sort=False):
        rows = {r["method"]: r for r in grp.to_dict("records")}
        others = [m for m in rows if m != "pt+cp"]
        for m in metrics:
            expect = _better(m)
            pick = max if expect == ">0" else min
            best_paper = pick(others, key=lambda o, m=m: float(rows[o][m]))
            paper_gap = round(float(rows["pt+cp"][m]) - float(rows[best_paper][m]), 4)
            cid = f"001-{tag}-{dataset}-{disc}-best-{m}"
            what = (f"{dataset}, {disc.upper()}: {m} of PT+CP minus that of the best of "
                    f"{', '.join(others)} ({expect}: PTGAN best; mean over runs; the paper's "
                    f"best other: {best_paper})")
            need = NEEDS.get(dataset, "")
            if m in not_built or dataset == "bloodmnist":
                run.claim(cid, "001", table, what, paper_gap, None, kind="result",
                          not_run=f"needs {need}; then {_GPU}")
                n += 1
                continue
            _, pt_runs, note = _chosen(_runs(ours_rows, table, rows["pt+cp"], None), m)
            pt = _values(pt_runs, m)
            theirs = {o: _values(_runs(ours_rows, table, rows[o], None)[None], m)
                      for o in others}
            if pt is None or any(v is None for v in theirs.values()):
                run.claim(cid, "001", table, what, paper_gap, None, kind="result",
                          not_run=f"paper scale only: needs {need} and {_GPU}")
                n += 1
                continue
            best = pick(others, key=lambda o: float(np.mean(theirs[o])))
            run.claim(cid, "001", table, what, paper_gap, run_difference(pt, theirs[best]),
                      kind="result", expect=expect,
                      why=f"our best other method: {best}" + (f"; {note}" if note else ""))
            n += 1
    return n


def _tempering_claims(run, ours_rows: pd.DataFrame | None) -> int:
    """Per dataset and metric of Table 8: PT+CP at r = 0.9 minus PT+CP at r = 1 (tempering's
    own gain), a direction claim ``001-T8-<dataset>-nd-r0.9-vs-r1-<metric>``."""
    paper = paper_table("001", "Table 8")
    n = 0
    for (dataset, disc), grp in paper.groupby(["dataset", "discrepancy"], sort=False):
        rows = {float(r["r"]): r for r in grp.to_dict("records")}
        for m in ("IS", "FID"):
            expect = _better(m)
            paper_gap = round(float(rows[0.9][m]) - float(rows[1.0][m]), 4)
            cid = f"001-T8-{dataset}-{disc}-r0.9-vs-r1-{m}"
            what = (f"{dataset}, {disc.upper()}: {m} of PT+CP at r = 0.9 minus at r = 1 "
                    f"({expect}: tempering, not the coherency penalty alone, gives the gain)")
            need = NEEDS.get(dataset, "")
            if dataset == "bloodmnist":
                run.claim(cid, "001", "Table 8", what, paper_gap, None, kind="result",
                          not_run=f"needs {need}; then {_GPU}")
                n += 1
                continue
            tempered = _values(_runs(ours_rows, "Table 8", rows[0.9], None)[0.9], m)
            untempered = _values(_runs(ours_rows, "Table 8", rows[1.0], None)[1.0], m)
            if tempered is None or untempered is None:
                run.claim(cid, "001", "Table 8", what, paper_gap, None, kind="result",
                          not_run=f"paper scale only: needs {need} and {_GPU}")
            else:
                run.claim(cid, "001", "Table 8", what, paper_gap,
                          run_difference(tempered, untempered), kind="result", expect=expect,
                          why="different Inception weights or software versions")
            n += 1
    return n


def register_orderings(run, scale: str, seed: int = 0, *,
                       root: str | os.PathLike[str] | None = None) -> dict[str, int]:
    """The orderings the paper reads from its tables, one direction claim each (decided by a
    one-sided bound on the difference of means over runs); returns counts:

    - Tables 1 and 2: PT+CP minus the best other method of each (dataset, discrepancy), per
      metric (``001-T1-<dataset>-<discrepancy>-best-<metric>``, ``001-T2-...``);
    - Table 8: PT+CP at r = 0.9 minus at r = 1, per dataset and metric
      (``001-T8-<dataset>-nd-r0.9-vs-r1-<metric>``).

    BloodMNIST's scores and CelebA-HQ's MLL-FID need fine-tuned Inception networks that are not
    built: those claims are "not run" at every scale."""
    ours = _paper_results(scale, seed, root)
    return {"Tables 1 and 2: PT+CP against the best other":
            _best_claims(run, "Table 1", ("IS", "FID"), ours, set())
            + _best_claims(run, "Table 2", ("FID", "MLL-FID"), ours, {"MLL-FID"}),
            "Table 8: r = 0.9 against r = 1": _tempering_claims(run, ours)}


def register_paper_tables(run, scale: str, seed: int = 0, *,
                          root: str | os.PathLike[str] | None = None) -> dict[str, int]:
    """One claim per number (means and sds) of Tables 1, 2, 7, 8; returns counts per table.

    Means are compared as estimates (the paper's mean with its sd over 10 runs, ours over our
    runs) within :data:`TABLE_MARGIN` of the paper's mean; Table 1's PT+CP takes the better of
    r = 0.9 and 0.99 per metric, and Table 8 compares each r with the runs at that r. The
    orderings the paper reads from the tables are :func:`register_orderings`."""
    ours = _paper_results(scale, seed, root)
    counts = {}
    counts["Table 1"] = _claims_for(run, "Table 1", paper_table("001", "Table 1"),
                                    ("IS", "FID"), ours, None, set())
    counts["Table 7"] = _claims_for(run, "Table 7", paper_table("001", "Table 7"),
                                    ("IS", "FID"), ours, "lambda", set())
    counts["Table 8"] = _claims_for(run, "Table 8", paper_table("001", "Table 8"),
                                    ("IS", "FID"), ours, "r", set())
    counts["Table 2"] = _claims_for(run, "Table 2", paper_table("001", "Table 2"),
                                    ("FID", "MLL-FID"), ours, None, {"MLL-FID"})
    return counts


def check_architecture(table: str, image_size: int, channels: int = 3
                       ) -> tuple[pd.DataFrame, dict[str, int]]:
    """The networks :func:`fusionlib.gan.cnn.cnn_networks` builds for ``image_size``, read back
    layer by layer and compared with the paper's typed ``table`` ("Table 5": SNGAN, spectral
    norm on the critic; "Table 6": the CelebA-HQ pair, built on the meta device at 256 px).

    Returns
    -------
    (pandas.DataFrame, dict)
        The layer table with a ``matches paper`` column (kind, kernel, stride, filters,
        activation and norm all equal), and the parameter counts of ``generator`` and
        ``critic``.
    """
    from fusionlib.gan.cnn import cnn_networks
    from fusionlib.gan.cnn_specs import layer_table

    if table not in ("Table 5", "Table 6"):
        raise InvalidInputError(f"table must be 'Table 5' or 'Table 6', got {table!r}")
    paper = paper_table("001", table).fillna("")
    gen, critic = cnn_networks(image_size, channels, conditional=False,
                               spectral_norm=table == "Table 5",
                               device="meta" if image_size == 256 else None)  # 62M parameters
    ours = pd.DataFrame(layer_table(gen, critic))
    s_g = {32: 1, 64: 2}.get(image_size, 1)
    paper["stride"] = paper["stride"].replace("S_G", s_g)
    cols = ["kind", "kernel", "stride", "out", "activation", "norm"]

    def norm(d: pd.DataFrame) -> pd.DataFrame:
        return d[cols].astype(str).replace({r"\.0$": "", "nan": "", "None": ""}, regex=True)

    if len(paper) != len(ours):
        raise InvalidInputError(f"{table} lists {len(paper)} layers, the built {image_size} px "
                                f"networks have {len(ours)}")
    match = (norm(paper).values == norm(ours).values).all(axis=1)
    params = {n: sum(p.numel() for p in m.parameters()) for n, m in
              (("generator", gen), ("critic", critic))}
    return ours.assign(**{"matches paper": match}), params


def panel_claim(run, figure: str, dataset: str, kind: str, methods, *, paper_imgs: dict,
                div: pd.DataFrame, cfg: dict):
    """Draw (at paper scale, when the data and the runs are there) and register the claim of one
    of the paper's image panels (Figures 12-17,
    :data:`fusionlib.ptgan.images.panels.PANEL_FIGURES`).

    Parameters
    ----------
    run : fusionlib.compendium.run.Run
        The chapter's run (its scale and seed decide which branch applies).
    figure, dataset, kind, methods
        One entry of ``PANEL_FIGURES``: ``kind`` is ``"real"`` or ``"generated"``.
    paper_imgs : dict
        ``(dataset, method) -> images`` of the paper-scale runs
        (:func:`fusionlib.ptgan.images.panels.paper_samples`; empty below paper scale).
    div : pandas.DataFrame
        The stand-in panels' diversity (``panel``, ``mean pair distance``).
    cfg : dict
        The chapter's settings (``n_iter``, ``width``).
    """
    import matplotlib.pyplot as plt

    from fusionlib.data.images import image_grid, load_image_dataset
    from fusionlib.data.store import dataset_states
    from fusionlib.ptgan.images.panels import diversity
    from fusionlib.rng import child

    scale, seed = run.scale, run.seed
    present = all(v.startswith("present") for v in dataset_states(dataset).values())
    names = ", ".join(METHOD_NAMES[m] for m in methods) or "real images"
    have = [m for m in methods if (dataset, m) in paper_imgs]
    if scale == "paper" and present and (kind == "real" or len(have) == len(methods)):
        if kind == "real":
            imgs, _ = load_image_dataset(dataset, "train", limit=64)
            fig, ax = plt.subplots(figsize=(5, 5))
            ax.imshow(image_grid(imgs, nrow=8), vmin=0, vmax=255)
            ax.set(title=f"{figure}: real {dataset}", xticks=[], yticks=[])
            run.save_figure(fig, f"{figure.lower().replace(' ', '')}_real")
            plt.show()
            # a panel of real images measures nothing of the paper's: it shows the data this
            # scale loads, so it is an implementation claim (shown, never counted)
            return run.claim(f"001-F{figure[7:]}-panel", "001", figure, f"64 random real "
                             f"{dataset} images", "a panel", "drawn", kind="implementation",
                             verdict="reproduced",
                             reason=f"64 training images of {dataset} as this machine loads "
                             "them, drawn above; a real-image panel shows the data, it measures "
                             "nothing of the paper's results")
        fig, axes = plt.subplots(1, len(methods), figsize=(3.6 * len(methods), 3.8))
        for ax, m in zip(np.atleast_1d(axes), methods, strict=True):
            ax.imshow(image_grid(paper_imgs[(dataset, m)][:64], nrow=8), vmin=0, vmax=255)
            ax.set(title=METHOD_NAMES[m], xticks=[], yticks=[])
        fig.suptitle(f"{figure}: generated {dataset} (paper scale, ND, first seed)")
        run.save_figure(fig, f"{figure.lower().replace(' ', '')}_generated")
        plt.show()
        if figure == "Figure 15":
            pt = diversity(paper_imgs[(dataset, "pt+cp")], child(seed, "f15", "pt"))
            sn = diversity(paper_imgs[(dataset, "sn")], child(seed, "f15", "sn"))
            return run.claim("001-F15-panel", "001", figure, "mean pair distance of PTGAN's "
                             "images minus SNGAN's (SNGAN collapses)", "> 0",
                             Estimate(pt[0] - sn[0], float(np.hypot(pt[1], sn[1]))),
                             kind="result", expect=">0")
        return run.claim(f"001-F{figure[7:]}-panel", "001", figure,
                         f"images generated by {names} (visual only)", "drawn in the paper",
                         "drawn above", kind="result",
                         not_comparable="a visual judgement; Table 1's IS and FID are its "
                         "measured counterpart")
    if scale != "paper":
        extra = ""
        if figure == "Figure 15":
            d = div.set_index("panel")["mean pair distance"]
            extra = (f"; diversity on the stand-in: PTGAN {d['PTGAN']:.3g}, SNGAN "
                     f"{d['SNGAN (SN)']:.3g}")
        theirs = (f"real {dataset} images" if kind == "real" else
                  f"{dataset} after {'70k' if dataset == 'celeba_hq' else '100k'} iterations "
                  "at full width")
        return run.claim(f"001-F{figure[7:]}-panel", "001", figure,
                         f"{'real' if kind == 'real' else 'generated'} {dataset} panel "
                         f"({names})", "drawn in the paper", "stand-in drawn above" + extra,
                         kind="result",
                         not_comparable=f"stand-in: the {scale} slice is Fashion-MNIST at "
                         f"{cfg['n_iter']:,} iterations and width x{cfg['width']:g}; the "
                         f"paper's panel is {theirs}")
    needs = "the paper-scale runs" if kind != "real" else "nothing else"
    return run.claim(f"001-F{figure[7:]}-panel", "001", figure, f"{kind} {dataset} panel "
                     f"({names})", "drawn in the paper", None, kind="result",
                     not_run=f"needs {NEEDS[dataset]} and {needs}")
