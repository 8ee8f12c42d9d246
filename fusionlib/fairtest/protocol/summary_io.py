"""What a cell of ``fairtest_protocol`` stores, read back, and CTGAN's runs merged in.

:func:`summary_figures` / :func:`summary_from` turn a
:class:`~fusionlib.fairtest.protocol.records.DatasetSummary` into the JSON figure data of a shard
and back; :func:`ctgan_figures` / :func:`ctgan_from` do the same for one CTGAN run
(:func:`~fusionlib.fairtest.repeated_fits.ctgan_run`); :func:`with_ctgan` puts the runs of a
dataset into its summary: run 0 where :func:`~fusionlib.fairtest.protocol.runs.run_dataset` puts the
CTGAN set (before the Independent baseline in every table), every run in ``ctgan_runs``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pandas as pd

from fusionlib.compendium.cells import frame_from_json, frame_to_json
from fusionlib.fairtest.protocol.records import DatasetSummary

__all__ = ["CTGAN_TIMINGS", "summary_figures", "summary_from", "ctgan_figures", "ctgan_from",
           "with_ctgan"]


def _matrices(dcc: dict[str, pd.DataFrame], overlaps: dict[str, str]) -> list[dict]:
    return [{"label": k, "overlap": overlaps[k], "names": [str(c) for c in m.columns],
             "values": m.to_numpy().tolist()} for k, m in dcc.items()]


def summary_figures(summary: DatasetSummary) -> dict[str, Any]:
    """The JSON figure data of a dataset's summary (frames as ``frame_to_json`` writes them)."""
    acc = summary.accuracy
    return {
        "frame": frame_to_json(summary.fidelity),
        "status": summary.status, "reason": summary.reason, "train_rows": summary.train_rows,
        "test_rows": summary.test_rows, "protected": list(summary.protected),
        "label": summary.label, "overlaps": list(summary.overlaps),
        "table9": frame_to_json(summary.table9), "boots": frame_to_json(summary.boots),
        "kl_floors": frame_to_json(summary.kl_floors),
        "accuracy": None if acc is None else {
            "frame": frame_to_json(acc.reset_index()), "index": acc.index.name,
            "columns": acc.columns.name},
        # lists, not dicts, where the order matters: shard files are written with sorted keys
        "mutual_information": [[a, v] for a, v in summary.mutual_information.items()],
        "unique_internal": summary.unique_internal,
        "dcc": _matrices(summary.dcc, summary.set_overlaps),
        "latent_fit_scores": frame_to_json(summary.latent_fit_scores),
        "latent_fit_diffs": frame_to_json(summary.latent_fit_diffs),
    }


def summary_from(fig: dict[str, Any]) -> DatasetSummary:
    """The summary that :func:`summary_figures` stored."""
    acc = fig["accuracy"]
    if acc is not None:
        frame = frame_from_json(acc["frame"]).set_index(acc["index"])
        frame.columns.name = acc["columns"]
        acc = frame
    dcc = {m["label"]: pd.DataFrame(m["values"], index=m["names"], columns=m["names"],
                                    dtype=float) for m in fig["dcc"]}
    rows = frame_from_json(fig["frame"])
    return DatasetSummary(
        rows["dataset"].iloc[0] if len(rows) else "", fig["status"], fig["reason"], rows,
        frame_from_json(fig["boots"]), frame_from_json(fig["table9"]), fig["train_rows"],
        fig["test_rows"], tuple(fig["protected"]), fig["label"], tuple(fig["overlaps"]), acc,
        frame_from_json(fig["kl_floors"]), dict(fig["mutual_information"]),
        fig["unique_internal"], dcc, {m["label"]: m["overlap"] for m in fig["dcc"]},
        latent_fit_scores=frame_from_json(fig["latent_fit_scores"]),
        latent_fit_diffs=frame_from_json(fig["latent_fit_diffs"]))


#: keys of a CTGAN run's ``info`` that are timings: stored under the figure key ``timing``, which
#: the shard file keeps in its ``run`` part, so that two runs of one cell have equal results
CTGAN_TIMINGS = ("fit_wall_s", "fit_cpu_s")


def ctgan_figures(run: dict[str, Any]) -> dict[str, Any]:
    """The JSON figure data of one CTGAN run (its timings under ``timing``)."""
    info = {k: v for k, v in run["info"].items() if k not in CTGAN_TIMINGS}
    return {"status": "run", "fidelity": frame_to_json(run["fidelity"]),
            "boots": frame_to_json(run["boots"]), "table9": frame_to_json(run["table9"]),
            "accuracy": [[k, v] for k, v in run["accuracy"].items()],
            "dcc": _matrices({"CTGAN": run["dcc"]}, {"CTGAN": ""})[0], "info": info,
            "timing": {k: run["info"][k] for k in CTGAN_TIMINGS if k in run["info"]}}


def ctgan_from(fig: dict[str, Any]) -> dict[str, Any]:
    """The run that :func:`ctgan_figures` stored (its timings back in ``info``)."""
    m = fig["dcc"]
    return {"fidelity": frame_from_json(fig["fidelity"]), "boots": frame_from_json(fig["boots"]),
            "table9": frame_from_json(fig["table9"]), "accuracy": dict(fig["accuracy"]),
            "dcc": pd.DataFrame(m["values"], index=m["names"], columns=m["names"], dtype=float),
            "info": {**fig["info"], **fig.get("timing", {})}}


def _before_indep(frame: pd.DataFrame, rows: pd.DataFrame, column: str = "method"
                  ) -> pd.DataFrame:
    """``frame`` with ``rows`` inserted before its first Independent-baseline row."""
    at = frame.index[frame[column] == "Indep"]
    cut = frame.index.get_loc(at[0]) if len(at) else len(frame)
    return pd.concat([frame.iloc[:cut], rows, frame.iloc[cut:]], ignore_index=True)


def _table9_with(table9: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Table 9 rows in :func:`~fusionlib.fairtest.audit.table9`'s order: per (tree, attribute)
    in order of appearance, the sets in table order with CTGAN before the Independent one."""
    both = pd.concat([table9, rows], ignore_index=True)
    labels = list(dict.fromkeys(table9["label"]))
    at = labels.index("Indep") if "Indep" in labels else len(labels)
    labels = [*labels[:at], *dict.fromkeys(rows["label"]), *labels[at:]]
    rank = {c: {v: i for i, v in enumerate(dict.fromkeys(both[c]))} for c in ("tree", "attribute")}
    rank["label"] = {v: i for i, v in enumerate(labels)}
    keys = pd.DataFrame({c: both[c].map(r) for c, r in rank.items()})
    order = keys.sort_values(["tree", "attribute", "label"], kind="mergesort").index
    return both.loc[order].reset_index(drop=True)


def with_ctgan(summary: DatasetSummary, runs: list[dict[str, Any]]) -> DatasetSummary:
    """``summary`` with the CTGAN runs of its dataset (run 0 in the protocol's tables)."""
    if summary.status != "run" or not runs:
        return summary
    first = runs[0]
    acc = summary.accuracy
    if acc is not None:
        row = pd.DataFrame([first["accuracy"]], index=pd.Index(["CTGAN"], name=acc.index.name))
        row.columns.name = acc.columns.name
        at = list(acc.index).index("Indep") if "Indep" in acc.index else len(acc)
        acc = pd.concat([acc.iloc[:at], row[acc.columns], acc.iloc[at:]])
    labels = list(summary.dcc)
    at = labels.index("Indep") if "Indep" in labels else len(labels)
    order = [*labels[:at], "CTGAN", *labels[at:]]
    dcc = {**summary.dcc, "CTGAN": first["dcc"]}
    fits = pd.concat([r["fidelity"].assign(run=r["info"]["run"]) for r in runs],
                     ignore_index=True)
    diffs = pd.concat([r["table9"].assign(run=r["info"]["run"]) for r in runs],
                      ignore_index=True)
    return dataclasses.replace(
        summary, fidelity=_before_indep(summary.fidelity, first["fidelity"]),
        boots=pd.concat([summary.boots, first["boots"]], ignore_index=True),
        table9=_table9_with(summary.table9, first["table9"]), accuracy=acc,
        dcc={k: dcc[k] for k in order},
        set_overlaps={k: {**summary.set_overlaps, "CTGAN": ""}[k] for k in order},
        ctgan_runs=fits, ctgan_diffs=diffs, ctgan_info=[r["info"] for r in runs])
