"""Summaries of the image runs for ``notebooks/ptgan_images.md`` (seed 001, Section 5.1).

Turns the shards of :mod:`fusionlib.ptgan.image_cells` into frames (variance curves, classifier
scores), summarises Figure 5's variance comparison, and registers one claim for every number of
the paper's Tables 1, 2, 7 and 8 (paper-scale cells that did not run are "not run" with what they
need; nothing here is compared with a number of another kind).
"""

from __future__ import annotations

import base64
import io
import os

import numpy as np
import pandas as pd

from fusionlib.compendium.cells import results
from fusionlib.compendium.paper import paper_table
from fusionlib.ptgan.image_cells import decode_images

__all__ = ["NEEDS", "classifier", "classifier_score_table", "proxy_runs", "register_paper_tables",
           "variance_summary"]

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
    """``(rows, variance curves, samples)`` of the Fashion-MNIST slice at ``scale``."""
    rows, figures = results("ptgan_images", scale, seed=seed, root=root)
    curves, samples = [], {}
    for r in rows.itertuples():
        fig = figures[r.cell_id]
        curves.append(pd.DataFrame(fig["variance"]).assign(method=r.method, rep=r.rep))
        samples[(r.method, int(r.rep))] = decode_images(fig["samples"])
    return rows, pd.concat(curves, ignore_index=True), samples


def variance_summary(curves: pd.DataFrame, value: str = "var_loss") -> pd.DataFrame:
    """Mean over the second half of training of ``log10(value)``, per method: mean and sd over
    seeds, and the number of seeds."""
    last = curves.iteration.max()
    late = curves[curves.iteration > last / 2].assign(log=lambda d: np.log10(d[value]))
    per_seed = late.groupby(["method", "rep"]).log.mean()
    out = per_seed.groupby("method").agg(["mean", "std", "count"])
    return out.rename(columns={"mean": f"late mean log10 {value}", "std": "sd over seeds",
                               "count": "seeds"})


def classifier_score_table(model, real: np.ndarray, samples: dict, reference: np.ndarray
                           ) -> pd.DataFrame:
    """Classifier-FID (vs ``real``) and classifier-IS per run, plus a real-vs-real floor row."""
    from fusionlib.data.images import to_unit
    from fusionlib.metrics.image_classifier import classifier_scores

    rows = []
    n = min(len(x) for x in samples.values())
    ref = classifier_scores(model, to_unit(real), to_unit(reference[:n]))
    rows.append({"method": "real (train images)", "rep": np.nan, **ref})
    for (m, rep), x in samples.items():
        rows.append({"method": m, "rep": rep, **classifier_scores(model, to_unit(real),
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
        sel = sel[sel[k] == v] if k in sel else sel.iloc[0:0]
    return sel


def _claims_for(run, table: str, frame: pd.DataFrame, metrics: tuple[str, ...],
                ours_rows: pd.DataFrame | None, extra_key: str | None, not_built: set[str]
                ) -> int:
    n = 0
    for r in frame.to_dict("records"):
        tag = "-".join(str(x) for x in (r["dataset"], r["discrepancy"], r["method"],
                                         r.get(extra_key) if extra_key else None) if x is not None)
        # the cells of this table; Table 8's r = 0.9 column is Table 1's default PT+CP run
        source = "Table 1" if (table == "Table 8" and float(r["r"]) == 0.9) else table
        key = {"dataset": r["dataset"], "discrepancy": r["discrepancy"], "method": r["method"],
               "table": source}
        if extra_key:
            key["penalty_weight" if extra_key == "lambda" else "r"] = float(r[extra_key])
        ours = _ours(ours_rows, key)
        for m in metrics:
            for stat in ("", "_sd"):
                col = f"{m}{stat}"
                where_what = f"{r['dataset']}, {r['discrepancy'].upper()}, {r['method']}" + (
                    f", {extra_key} {r[extra_key]:g}" if extra_key else "")
                cid = f"001-{table.replace('Table ', 'T')}-{tag}-{col}"
                quantity = f"{where_what}: {m} {'sd over 10 runs' if stat else 'mean'}"
                unbuilt = m in not_built or r["dataset"] == "bloodmnist"
                if unbuilt or len(ours) < 2 or m.lower() not in ours:
                    need = NEEDS.get(r["dataset"], "")
                    reason = (f"needs {need}; then {_GPU}" if unbuilt
                              else f"paper scale only: needs {need} and {_GPU}")
                    run.claim(cid, "001", table, quantity, r[col], None, not_run=reason)
                else:
                    vals = ours[m.lower()].astype(float)
                    val = vals.mean() if not stat else vals.std(ddof=1)
                    tol = 3 * float(r[f"{m}_sd"]) / np.sqrt(len(vals)) + 0.05 * abs(r[f"{m}"])
                    run.claim(cid, "001", table, quantity, r[col], round(float(val), 4),
                              tolerance=tol if not stat else float(r[col]),
                              why="different Inception weights or software versions")
                n += 1
    return n


def register_paper_tables(run, scale: str, seed: int = 0, *,
                          root: str | os.PathLike[str] | None = None) -> dict[str, int]:
    """One claim per number (means and sds) of Tables 1, 2, 7, 8; returns counts per table."""
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
